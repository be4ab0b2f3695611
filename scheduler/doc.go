// Package scheduler is sparkpack's core: the job model and its state
// machine, the queues (EDF for deadline jobs, demand-ordered for the rest),
// the scheduling loop and cost accounting.
//
// A scheduling pass decides, then applies: decide (decide.go,
// decide_preempt.go) is a pure function from a snapshot of the cluster,
// the queues' entries, the jobs holding resources and the time to a list
// of decisions (start with a plan, reject, wait with a reason, evict); it
// does no I/O, reads no clock and takes no lock, and marks its own starts
// on its copy of the snapshot. apply (apply.go) carries them out: each
// start is one store transaction (Store.StartPlaced), then the power-on of
// the agents it activates, then Cluster.Apply. The rest of the core:
// config.go (Config), core.go (Core, New), intake.go (admission and
// queueing), run.go (Run, Recover), report.go (Report, Cancel), pass.go
// (one pass around decide and apply), views.go (what readers see),
// waiting.go (waiting reasons), preempt.go (the eviction rules).
//
// It talks only to small interfaces, all required (ports.go, cluster.go:
// a Cluster that gives snapshots, applies plans, kills and evicts; a Store;
// a Clock; an Observer that hears what the core does), so the same code
// runs live against Mesos and in the simulator. It must not import Mesos,
// SQL or HTTP packages (no mesos-go, database/sql, lib/pq, net/http);
// encoding/json is allowed for the job's wire form.
package scheduler
