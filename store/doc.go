// Package store keeps sparkpack's durable state in PostgreSQL (through
// github.com/lib/pq): jobs, their append-only event log, placements,
// reservations and the Mesos framework id. Schema changes are embedded,
// versioned SQL migrations applied at start under an advisory lock, so two
// instances starting at once, or a re-run, are safe. Every job state change
// is one transaction (row and event together); all SQL is parametrised.
//
// It implements scheduler.Store. It must not import net/http, mesos-go or
// the api and offers packages.
package store
