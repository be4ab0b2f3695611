// Package api is sparkpack's REST API (gorilla/mux): job submission,
// listing, inspection and cancellation under /api/v1, health endpoints,
// request ids and access logging, and the access policy both listeners
// share (Guard): bearer tokens with names and scopes (submit, cancel, read,
// metrics, admin), the Spark REST listener's client-address allowlist,
// per-token / per-address rate limits and the cap on a token's waiting
// jobs. Every request a token makes runs with a store.Actor in its
// context, so that the events it causes name the token (never the token
// itself) and the client address.
//
// Handlers validate input strictly and answer every error with a 4xx or
// 503 JSON body {"error": "...", "field": "..."}; a job is committed to the
// store before 201 is returned. It talks to the store through the JobStore
// interface and to the scheduler through Notifier; it must not import
// mesos-go, lib/pq or the offers package.
package api
