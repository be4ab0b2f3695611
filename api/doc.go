// Package api is sparkpack's REST API (gorilla/mux): job submission,
// listing, inspection and cancellation under /api/v1, health endpoints,
// bearer-token authentication, request ids and access logging.
//
// Handlers validate input strictly and answer every error with a 4xx or
// 503 JSON body {"error": "...", "field": "..."}; a job is committed to the
// store before 201 is returned. It talks to the store through the JobStore
// interface and to the scheduler through Notifier; it must not import
// mesos-go, lib/pq or the offers package.
package api
