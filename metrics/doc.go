// Package metrics defines sparkpack's Prometheus metrics (served at
// /metrics): offers received and declined, reservations, jobs by state,
// requests refused by the access policy (by listener and reason),
// queue lengths, placement and offer-to-accept latency, cluster cost.
//
// The other packages record into it through the small methods below; it
// must not import the store, api, offers or scheduler packages (they
// import it, or cmd/sparkpack wires it).
package metrics
