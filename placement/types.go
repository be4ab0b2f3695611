package placement

import (
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
)

// Location says where an agent runs: in the operator's own data centre or in
// a public cloud (thesis chapter 5). The zero value means "cloud".
type Location string

const (
	LocationLocal Location = "local"
	LocationCloud Location = "cloud"
)

// Agent is one Mesos agent (a VM) as the placement engine sees it.
// Quantities are plain numbers: cpus as Mesos counts them, memory in MiB.
type Agent struct {
	ID         string
	Hostname   string
	Attributes map[string]string

	CPUs      float64 // capacity
	MemMB     float64 // capacity
	FreeCPUs  float64 // what a new job may still use
	FreeMemMB float64

	// PriceMicroUSDPerHour is the hourly price in micro-dollars, an integer
	// so that costs compare exactly.
	PriceMicroUSDPerHour int64
	Location             Location
	// Active is true while the agent holds any reservation or task of ours:
	// it is paid for already, so placing more on it costs nothing extra.
	Active bool
	// RemainingActive is how long the agent stays active anyway (for GIO's
	// max(0, T_C - T_vm) ordering); zero when unknown or idle.
	RemainingActive time.Duration
}

// Snapshot is a consistent view of the cluster at one instant.
type Snapshot struct {
	Agents []Agent
	// Holdings, when the cluster knows them, lists by agent id what each
	// job holds there (its reservations and its driver). Policies ignore
	// it; the scheduler's cost meter splits an agent's cost by it.
	Holdings map[string][]Holding
}

// Holding is what one job holds on one agent.
type Holding struct {
	JobID string
	CPUs  float64
	MemMB float64
}

// Demand is what one job asks for. All executors of a job are identical.
type Demand struct {
	JobID     string
	Executors int     // E >= 1
	CPUs      float64 // per executor (whole cpus)
	MemMB     float64 // per executor, including Spark's memory overhead
	// EstimatedDuration is the job's expected run time (the learned
	// model's p50 when it has one): what prices a plan; zero when unknown.
	EstimatedDuration time.Duration
	// DeadlineDuration is the run time a deadline is tested with (the
	// learned model's p90 when it has one); zero: EstimatedDuration.
	DeadlineDuration time.Duration
	// App is the job's application type when known (AppWordCount, AppSort,
	// AppPageRank); "" when unknown. Policies that use it fall back to a
	// safe choice for unknown types.
	App string
	// Traits, if set, are the job's own traits learned from its runs (its
	// performance model, package perfmodel): dap uses them instead of
	// DAPTraits[App], which stay the prior. Values outside [0, 1] (or NaN)
	// are ignored.
	Traits *AppTraits
	// Deadline is when the job must have ended; zero when it has none.
	Deadline time.Time
	// Now is the instant of the placement decision (the scheduler's clock,
	// passed in so that policies stay pure); zero when unknown.
	Now time.Time
}

// Application types of Demand.App.
const (
	AppWordCount = "wordcount" // map-heavy, CPU-bound, little shuffle
	AppSort      = "sort"      // shuffles about what it reads
	AppPageRank  = "pagerank"  // iterative: CPU and shuffle every iteration
)

// Assignment places Executors executors of the job on one agent.
type Assignment struct {
	AgentID   string
	Hostname  string
	Executors int
}

// Plan is a complete placement of one job.
type Plan struct {
	Policy      string
	Assignments []Assignment // agents with >= 1 executor, in a deterministic order
	// Activated lists the agents that were idle and the plan makes active.
	Activated []string
	// CostMicroUSDPerHour is the summed hourly price of the activated agents
	// (agents already active cost nothing extra).
	CostMicroUSDPerHour int64
	// Outcome says how the plan was found: "optimal", "heuristic",
	// "incumbent" (ILP stopped on its node bound with a feasible answer),
	// "fallback-bfd" (ILP found nothing usable; the BFD plan is used), or
	// "time-limit" / "time-limit-fallback-bfd" (ILP stopped by its
	// wall-clock safety net: the only plans that depend on the machine's
	// load).
	Outcome string
}

// Executors returns the number of executors the plan places.
func (p Plan) Executors() int {
	n := 0
	for _, a := range p.Assignments {
		n += a.Executors
	}
	return n
}

// NoFit is the structured "does not fit" answer, shown to users as the
// reason a job waits. It is returned as an error by Policy.Place.
type NoFit struct {
	// Resource is the scarce resource: "cpus", "mem", or "agent" when the
	// totals would suffice but no combination of agents holds the executors.
	Resource string
	// Short is how much of Resource is missing (cpus, or MiB of memory) for
	// the whole job; zero when Resource is "agent".
	Short float64
	// MaxPerAgent is the largest number of this job's executors any single
	// agent could take right now.
	MaxPerAgent int
	// Placeable is how many of the job's executors the cluster could hold now.
	Placeable int
	// Never is true when the job could not fit even on an empty cluster
	// (one executor is larger than every agent): such a job is REJECTED.
	Never bool
}

func (n *NoFit) Error() string {
	switch {
	case n.Never:
		return fmt.Sprintf("does not fit: one executor is larger than every agent (short of %s)", n.Resource)
	case n.Resource == "agent":
		return fmt.Sprintf("does not fit: the cluster can hold %s now (at most %d on one agent)", plural.N(n.Placeable, "executor"), n.MaxPerAgent)
	default:
		short := plural.G(n.Short, "cpu")
		if n.Resource != "cpus" {
			short = fmt.Sprintf("%g MiB of memory", n.Short)
		}
		return fmt.Sprintf("does not fit: short of %s; the cluster can hold %s now (at most %d on one agent)",
			short, plural.N(n.Placeable, "executor"), n.MaxPerAgent)
	}
}

// Policy places one job on a snapshot. It must be a pure function of its
// arguments (no I/O, no clock, no global mutable state), and must either
// return a plan placing exactly d.Executors executors within every agent's
// free cpus and memory, or a *NoFit error.
type Policy interface {
	Name() string
	Place(s Snapshot, d Demand) (Plan, error)
}
