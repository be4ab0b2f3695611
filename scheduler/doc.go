// Package scheduler is sparkpack's core: the job model and its state
// machine, the queues (EDF for deadline jobs, demand-ordered for the rest),
// the scheduling loop and cost accounting.
//
// It talks only to small interfaces (a cluster that gives snapshots and
// applies plans, a store, a clock), so the same code runs live against Mesos
// and in the simulator. It must not import Mesos, SQL or HTTP packages
// (no mesos-go, database/sql, lib/pq, net/http); encoding/json is allowed for
// the job's wire form.
package scheduler
