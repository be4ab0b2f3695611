// Package simulate is sparkpack's trace-driven discrete-event simulator
// (`sparkpack simulate`): it replays the SWIM Facebook trace (package
// workload) on a virtual clock through the very same scheduler core
// (package scheduler) and placement policies (package placement) that run
// live, with an in-memory Store and a simulated Cluster in place of
// PostgreSQL and Mesos, and reports cost, deadline violations, completion
// times and scheduling delays per policy (Command).
//
// It must not import Mesos, SQL or HTTP packages (no mesos-go,
// database/sql, lib/pq, net/http): a simulation needs neither a master nor
// a database.
package simulate
