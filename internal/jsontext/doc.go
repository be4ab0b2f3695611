// Package jsontext writes JSON text by hand where encoding/json's
// reflection would cost more than the work itself: a store's group commit
// building one document of many jobs, a load generator building request
// bodies. What it writes is what encoding/json writes for the same value.
//
// It imports only the standard library and must stay that way.
package jsontext
