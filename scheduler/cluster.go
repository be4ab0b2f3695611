package scheduler

import (
	"context"

	"github.com/sparkpack/sparkpack/placement"
)

// Cluster is what the core needs of the cluster: the live implementation
// is the Mesos adapter (package offers), the simulator has its own.
//
// Contract:
//   - Snapshot returns a consistent view in which every plan given to
//     Apply and not yet released is already accounted for (its resources
//     are not free, its agents are Active), even if the reservations are
//     still being made. A pass does not ask again after each start: it
//     marks its starts on its own copy the same way (the executors taken,
//     the agents active; with Config.DriverRoom, the driver's room too).
//   - Apply starts making the plan real (reserve, launch the driver) and
//     should return quickly; progress and the end of the job are reported
//     back with Core.Report from another goroutine. Apply and Release must
//     not call back into the Core synchronously.
//   - Release gives back everything held for the job (it ended, was killed,
//     or goes back to the queue). It must be idempotent.
//   - Whenever resources become free or agents come and go without the
//     core's doing, the owner calls Core.ClusterChanged.
//
// Locking: the core calls Snapshot, Apply and Release with its own lock
// held. ClusterChanged, JobSubmitted and JobCancelled never wait for that
// lock and may be called from anywhere; Report, Cancel, Submit, Schedule
// and Queues take it, so do not call them while holding a lock that the
// Cluster's methods need.
type Cluster interface {
	Snapshot(ctx context.Context) (placement.Snapshot, error)
	Apply(ctx context.Context, job Job, plan placement.Plan) error
	Release(ctx context.Context, jobID string) error
	Killer
	Preempter
}

// Killer stops a running job; the Core uses it for the kill requests of
// jobs that already hold resources (the store marks the kill, JobCancelled
// tells the core, its next pass asks the cluster). The job's end is then
// reported with Core.Report(..., Killed, ...).
type Killer interface {
	Kill(ctx context.Context, jobID string) error
}

// Preempter evicts a running job to make room for a deadline job (the
// core asks only when Config.Preemption is not none): the job's driver is
// stopped, its resources given back, and the job reported back to the
// queue with Core.Report(..., Queued, ...). The core has stored the
// decision (Store.RequestPreemption) before it calls Preempt.
type Preempter interface {
	Preempt(ctx context.Context, jobID, reason string) error
}
