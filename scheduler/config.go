package scheduler

import (
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// AdmissionMode says what happens to a deadline job that cannot finish by
// its deadline even if it started now.
type AdmissionMode string

const (
	// AdmitReject rejects such a job at submission, with the reason (default);
	// with a run-time model, on its median: one only its p90 misses is
	// accepted and flagged at risk.
	AdmitReject AdmissionMode = "reject"
	// AdmitFlag accepts it and flags it at risk.
	AdmitFlag AdmissionMode = "accept-and-flag"
)

// Ordering chooses how waiting jobs are ordered.
type Ordering string

const (
	// OrderAlgorithm3 is thesis Algorithm 3: an EDF queue for deadline jobs
	// tried first, then regular jobs by descending resource demand.
	OrderAlgorithm3 Ordering = "algorithm3"
	// OrderFIFO is the FIFO baseline (Spark's default scheduler): one queue
	// in submission order that ignores deadlines; a job that does not fit is
	// skipped and the next tried.
	OrderFIFO Ordering = "fifo"
	// OrderFeasibleEDF is Algorithm 3 with one change: waiting deadline
	// jobs that can still meet their deadline are tried first (EDF), those
	// that cannot any more (at risk) after them (EDF). See ordering.go.
	// It was the default until 2026-11-26.
	OrderFeasibleEDF Ordering = "feasible-edf"
	// OrderFeasibleLPT is OrderFeasibleEDF with the jobs that cannot meet
	// their deadline any more tried longest estimated run first instead of
	// EDF (ordering.go: their deadline is lost, the bill is what is left).
	// It is the default.
	OrderFeasibleLPT Ordering = "feasible-lpt"
)

// Defaults of Config.
const (
	// DefaultPolicy is the placement policy of a core whose Config names
	// none, and serve's --policy default: dap (docs/placement.md).
	DefaultPolicy = "dap"
	// DefaultOrdering is the queue discipline of a core whose Config names
	// none (serve's --queue default).
	DefaultOrdering     = OrderFeasibleLPT
	DefaultPromoteAfter = 15 * time.Minute
	DefaultRetryBackoff = 5 * time.Second
)

// Reasons stored as a waiting job's reason besides placement's NoFit text.
// reasonKillWhileWaiting ends a job whose kill was requested while it held
// resources and that went back to the queue before the kill was carried out.
const reasonKillWhileWaiting = "kill requested: the job had gone back to the queue; it is not run again"

const (
	ReasonDeadlineFirst = "deadline jobs first"
	ReasonQueued        = "queued"
)

// PlacementStat describes one call of the placement policy.
type PlacementStat struct {
	JobID  string
	Policy string
	// Elapsed is the real (wall-clock) time the policy took: the
	// scheduling delay of the thesis, whatever clock the core runs on.
	Elapsed time.Duration
	Placed  bool
	Outcome string
}

// Config configures a Core. The zero value is usable.
type Config struct {
	// Policy names the placement policy (placement.Names); default
	// DefaultPolicy.
	Policy string
	// PolicyOptions are passed to placement.New. Their Alpha/Beta (default
	// 0.8/0.2) also weigh the regular queue's resource demand RD.
	PolicyOptions placement.Options
	// Placer, if set, is used instead of the named policy.
	Placer placement.Policy
	// Ordering is the queue discipline; default DefaultOrdering.
	Ordering Ordering
	// PromoteAfter: a regular job that has been skipped (did not fit, or
	// deadline jobs came first) for this long is promoted into the deadline
	// queue, keyed by the time of promotion, so that regular jobs behind it
	// wait until it runs. Default DefaultPromoteAfter (15 minutes); negative
	// disables promotion.
	PromoteAfter time.Duration
	// Admission is what happens to a deadline job that cannot make its
	// deadline even if started now; default AdmitReject.
	Admission AdmissionMode
	// RetryBackoff is how long the loop waits after a store or cluster
	// error before trying again; default 5 s.
	RetryBackoff time.Duration
	// DurationScale converts a job's estimatedDurationSeconds into wall
	// time for admission, at-risk and timers (default 1). The demo sets it
	// to 1/--sim-speed, because there a job's estimate is simulated time.
	DurationScale float64
	// Provisioner powers idle agents off and on; default NopProvisioner.
	Provisioner Provisioner
	// DriverRoom: the cluster keeps room for the driver of every job it
	// started until the driver is launched (live Mesos does:
	// offers.Cluster.Snapshot); a pass then keeps it too on its copy of
	// the snapshot, for the jobs it starts.
	DriverRoom bool
	// Standby, if set, gives the agents that are powered off but may be
	// powered on for a plan. A job is placed on them only when it fits no
	// other way (a powered-off agent must boot first); they also count
	// when deciding whether a job could ever run here.
	Standby Standby
	// Budgets, if set, says which teams are held for their budget
	// (budget.go): their waiting jobs wait with the reason.
	Budgets BudgetHolds
	// Log receives structured logs; default logrus.StandardLogger().
	Log logrus.FieldLogger
	// Model, if set, is the learned run-time model the pass asks for
	// run times and dap's traits (predict.go, docs/learning.md); nil: the
	// users' estimates as given.
	Model RunModel
	// Observer hears what the core does (job changes, placements, passes,
	// evictions); default NopObserver.
	Observer Observer

	// Preemption is the eviction policy for waiting deadline jobs that
	// would miss their deadline waiting (see preempt.go): PreemptNone
	// (default), PreemptMDF, PreemptMLF or PreemptSRT.
	Preemption PreemptionPolicy
	// PreemptProtect: a running job expected to end within this is never
	// evicted (default DefaultPreemptProtect; negative: no protection).
	PreemptProtect time.Duration
	// PreemptMaxShare: at most this share of the running jobs' cpus is
	// evicted per minute (default DefaultPreemptMaxShare).
	PreemptMaxShare float64
	// MaxPreemptions: a job evicted this often is not evicted again
	// (default DefaultMaxPreemptions).
	MaxPreemptions int

	// Teams, if set, holds the teams configuration in force (teams.go):
	// maximums, fair shares and guarantees between teams. Nil, or a holder
	// without a configuration, changes nothing.
	Teams *teams.Holder
}

// PassStat describes one scheduling pass.
type PassStat struct {
	// Full is true when the pass looked at every waiting job (something
	// was freed, a timer was due); otherwise it looked only at the jobs
	// that entered a queue since the last pass.
	Full bool
	// Elapsed is the pass's wall-clock time, store and cluster calls included.
	Elapsed time.Duration
	// Admitted is how many jobs the pass moved from the intake to a queue
	// or rejected; Started how many it started.
	Admitted, Started int
	// Waiting is the number of queued jobs after the pass.
	Waiting int
}
