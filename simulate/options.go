package simulate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/teams"
	"github.com/sparkpack/sparkpack/workload"
)

// The simulator's policies, options and results (moved from sim.go
// unchanged).

// PolicySpec is a simulator policy: a queue discipline and a placement policy.
type PolicySpec struct {
	Name      string
	Ordering  scheduler.Ordering
	Placement string
	About     string
	// Preemption is the eviction policy (none when empty); WithPreemption
	// names the combination.
	Preemption scheduler.PreemptionPolicy
}

// WithPreemption is p with eviction policy pre, named "<name>+<pre>"
// (p itself for none).
func (p PolicySpec) WithPreemption(pre scheduler.PreemptionPolicy) PolicySpec {
	if pre == "" || pre == scheduler.PreemptNone {
		return p
	}
	p.Preemption = pre
	p.Name += "+" + string(pre)
	return p
}

// Policies are the simulator's policies, in the order of the thesis'
// comparison. Any other placement policy name (placement.Names) also works
// and runs under Algorithm 3.
var Policies = []PolicySpec{
	{Name: "fifo-spread", Ordering: scheduler.OrderFIFO, Placement: "spread", About: "Spark's default: FIFO queue, executors spread round-robin"},
	{Name: "fifo-consolidate", Ordering: scheduler.OrderFIFO, Placement: "consolidate", About: "FIFO queue, Spark's spreadOut=false"},
	{Name: "morpheus", Ordering: scheduler.OrderAlgorithm3, Placement: "morpheus", About: "EDF/RD queues, Morpheus-style low-cost packing"},
	{Name: "bfd", Ordering: scheduler.OrderAlgorithm3, Placement: "bfd", About: "EDF/RD queues, Best-Fit-Decreasing (thesis Algorithm 5)"},
	{Name: "ilp", Ordering: scheduler.OrderAlgorithm3, Placement: "ilp", About: "EDF/RD queues, cost-minimising MILP (CBC), bfd fallback"},
	{Name: "exact", Ordering: scheduler.OrderAlgorithm3, Placement: "exact", About: "EDF/RD queues, exact min-cost DP"},
	{Name: "gio", Ordering: scheduler.OrderAlgorithm3, Placement: "gio", About: "EDF/RD queues, GIO hybrid-cloud ordering (thesis Algorithm 7)"},
	{Name: "dap", Ordering: scheduler.OrderFeasibleLPT, Placement: "dap", About: "sparkpack's default: EDF with hopeless jobs last (longest first), deadline-aware packing"},
}

// LookupPolicy resolves a simulator policy name: one of Policies, a
// placement policy name (under Algorithm 3), or "<placement>@<ordering>"
// (e.g. dap@algorithm3, exact@feasible-edf: one half of the default
// without the other, for ablations).
func LookupPolicy(name string) (PolicySpec, error) {
	for _, p := range Policies {
		if p.Name == name {
			return p, nil
		}
	}
	if slices.Contains(placement.Names(), name) {
		return PolicySpec{Name: name, Ordering: scheduler.OrderAlgorithm3, Placement: name}, nil
	}
	if pl, ord, ok := strings.Cut(name, "@"); ok && slices.Contains(placement.Names(), pl) {
		switch o := scheduler.Ordering(ord); o {
		case scheduler.OrderAlgorithm3, scheduler.OrderFIFO, scheduler.OrderFeasibleEDF, scheduler.OrderFeasibleLPT:
			return PolicySpec{Name: name, Ordering: o, Placement: pl}, nil
		}
		return PolicySpec{}, fmt.Errorf("unknown queue discipline %q in policy %q (algorithm3, fifo, feasible-edf or feasible-lpt)", ord, name)
	}
	var names []string
	for _, p := range Policies {
		names = append(names, p.Name)
	}
	return PolicySpec{}, fmt.Errorf("unknown policy %q (one of %v, or a placement policy %v)", name, names, placement.Names())
}

// Options configure one simulation run.
type Options struct {
	// Jobs are the trace jobs to replay (already cut to the window), sized
	// with the model's Profile; ignored when Workload is set.
	Jobs []workload.TraceJob
	// Workload, if set, are the jobs to run (e.g. workload.Model.Thesis).
	Workload []workload.Job
	// From is the start of the window; the virtual clock starts there.
	From    time.Duration
	Cluster clusterspec.Cluster
	Policy  PolicySpec
	// DeadlineFraction of the jobs (chosen with Seed) get a deadline of
	// submission + reference duration x Slack.
	DeadlineFraction float64
	Slack            float64
	Seed             uint64
	// Model is the job and performance model; zero means workload.DefaultModel.
	Model *workload.Model
	// PromoteAfter is the core's anti-starvation age (0: its default).
	PromoteAfter time.Duration
	// PolicyOptions are passed to the placement policy.
	PolicyOptions placement.Options
	// Progress, if set, is called now and then with the virtual time and
	// the number of jobs done.
	Progress func(now time.Duration, done, total int)
	// JobLog, if set, is called at the end of the run with a record of
	// every job (`simulate --job-log`, joblog.go).
	JobLog func([]JobRecord)
	// PowerOffAfter, when > 0, runs power management (package power, as
	// `serve --power-off-after`): agents idle this long are powered off,
	// and plans power them on again, their jobs waiting BootTime (default
	// 60 s). The bill is kept either way.
	PowerOffAfter time.Duration
	BootTime      time.Duration
	// NoBootAware (with PowerOffAfter) turns boot-aware placement off
	// (serve --power-boot-time 0): a job that needs an agent that is off
	// starts at once on a plan that powers it on, instead of waiting in
	// the queue for its boot, sharing one, or waiting for warm capacity.
	NoBootAware bool
	// NotBeforeLead, when > 0, models Lim's SLA triple (earliest start,
	// run time, deadline): every deadline job is submitted this much
	// before its arrival in the trace, with its notBefore at the arrival
	// and the same deadline, so the scheduler knows it ahead (with the
	// boot time known, what it needs is powered on to be up at its start
	// time). Its wait is counted from its notBefore.
	NotBeforeLead time.Duration
	// WarmPool (with PowerOffAfter): a forecast of the arrivals, fitted
	// online from those replayed so far, sizes a warm pool (package
	// warmpool, simulate/warmpool.go) that power management keeps on or
	// powers on ahead; MissCostUSD is the price of a missed deadline
	// (0: warmpool.DefaultMissCostUSD).
	WarmPool    bool
	MissCostUSD float64
	// WarmHistory (with WarmPool): jobs submitted before the window, the
	// history the forecast starts from (as serve's starts from the store);
	// built as Workload is, never replayed. Empty: the forecast starts
	// from the window's first arrivals.
	WarmHistory []workload.Job
	// Preemption settings of the core (zero: its defaults); the policy
	// is Policy.Preemption.
	PreemptProtect  time.Duration
	PreemptMaxShare float64
	MaxPreemptions  int
	// Estimates is what the scheduler is told of run times: EstimatesOracle
	// (also ""), EstimatesUser or EstimatesLearned; EstimateError is the
	// sigma of the user's log-normal error. HideAppType gives jobs opaque
	// main classes, so that placement cannot infer their application type.
	Estimates     string
	EstimateError float64
	HideAppType   bool
	// LearnedDecisions, with learned estimates, is what the core's model
	// answers: LearnedDecisionsModel (also "": run times as live, p50
	// and p90 on each plan) or LearnedDecisionsTold (no run time, the
	// estimate told at submission decides).
	LearnedDecisions string
	// LearnHistory (with learned estimates or ExecutorsAuto): jobs of the
	// window before, LearnHistoryFrom its start, simulated first with the
	// same options (power, warm pool and policy; no job log, no
	// history of their own) so that the model and the estimate corrections
	// start from their runs, as a live scheduler's start from its stored
	// run history. Empty: they start empty at the window.
	LearnHistory     []workload.Job
	LearnHistoryFrom time.Duration
	// Executors is ExecutorsUser (also "") or ExecutorsAuto: jobs
	// right-sized by the learned model (--executors).
	Executors string
	// RunNoise, when > 0, multiplies every job's simulated run time by
	// exp(N(0, RunNoise)), drawn per job with Seed (the same for every
	// policy and run of the job): runs of one job no longer take exactly
	// what the performance model says.
	RunNoise float64
	// Teams, if set, is the teams configuration the core runs with, and
	// TeamMix gives every job a team (simulate/teams.go).
	Teams   *teams.Config
	TeamMix []TeamShare
}

// Result is the outcome of one run. The first ten JSON keys are the
// contract of `sparkpack simulate --format json`.
type Result struct {
	Policy               string  `json:"policy"`
	Jobs                 int     `json:"jobs"`
	TotalCostUSD         float64 `json:"total_cost_usd"`
	JCTMeanS             float64 `json:"jct_mean_s"`
	JCTP95S              float64 `json:"jct_p95_s"`
	DeadlineJobs         int     `json:"deadline_jobs"`
	DeadlineViolationPct float64 `json:"deadline_violation_pct"`
	SchedDelayMeanMS     float64 `json:"sched_delay_mean_ms"`
	SchedDelayP99MS      float64 `json:"sched_delay_p99_ms"`
	AgentActiveS         float64 `json:"agent_active_s"`

	// BillUSD is what a cloud would bill for the run: every agent from
	// power-on to power-off, idle or not (with power management off,
	// always on). AlwaysOnUSD is the same cluster never powered off.
	BillUSD     float64 `json:"bill_usd"`
	AlwaysOnUSD float64 `json:"always_on_usd"`

	// DeadlineMissed counts deadline jobs that did not end by their
	// deadline, rejected and unfinished ones included.
	DeadlineMissed int `json:"deadline_missed"`
	// DeadlineMetPct is the share of ALL deadline jobs that ended by their
	// deadline: a rejected (or unfinished) job counts as not met, so a
	// policy cannot look better by turning jobs away.
	DeadlineMetPct float64 `json:"deadline_met_pct"`
	// DeadlineRejected counts deadline jobs rejected (at submission or
	// later); AdmittedViolationPct is the share of the admitted deadline
	// jobs that missed.
	DeadlineRejected     int     `json:"deadline_rejected"`
	AdmittedViolationPct float64 `json:"admitted_violation_pct"`
	Completed            int     `json:"completed"`
	Rejected             int     `json:"rejected"`
	Unfinished           int     `json:"unfinished"`
	WaitMeanS            float64 `json:"wait_mean_s"`
	WaitP95S             float64 `json:"wait_p95_s"`
	MakespanS            float64 `json:"makespan_s"`
	Placements           int     `json:"placements"`
	// UtilisationPct is the cpu-seconds used by executors over the
	// cpu-seconds of active agents: how well the paid-for agents are used.
	UtilisationPct float64 `json:"utilisation_pct"`
	// Stretch is how much longer jobs ran than their profiled (reference)
	// duration, weighted by their cpus: sum(cpus x run) / sum(cpus x
	// reference); 1 when every job ran as fast as packed alone on one agent.
	Stretch float64 `json:"stretch"`
	// Preemptions counts evictions; LostWorkS is the run time the evicted
	// runs had done (job-seconds) and LostCPUS the cpu-seconds of it.
	Preemptions int     `json:"preemptions"`
	LostWorkS   float64 `json:"lost_work_s"`
	LostCPUS    float64 `json:"lost_cpu_s"`
	// EstimateErrorPct is the mean absolute error of the estimates the
	// scheduler was told against the profiled run times (user and learned
	// estimates). ModelMAPEPct is the learned model's mean absolute
	// percentage error on the ModelMAPERuns runs of signatures that had 10
	// runs before them (learned estimates).
	EstimateErrorPct float64 `json:"estimate_error_pct,omitempty"`
	ModelMAPEPct     float64 `json:"model_mape_pct,omitempty"`
	ModelMAPERuns    int     `json:"model_mape_runs,omitempty"`
	// AutoSizedJobs counts the jobs whose executor count the learned model
	// chose (--executors auto); AutoChangedJobs those where it differs
	// from the user's. MeanExecutors is the mean count of the jobs run.
	AutoSizedJobs   int     `json:"auto_sized_jobs,omitempty"`
	AutoChangedJobs int     `json:"auto_changed_jobs,omitempty"`
	MeanExecutors   float64 `json:"mean_executors,omitempty"`
	// Boots counts agents powered on; MeanOnCPUs is the time-weighted
	// mean of the cpus powered on (billed) over the run.
	Boots      int     `json:"boots"`
	MeanOnCPUs float64 `json:"mean_on_cpus"`
	// Default marks the policy `sparkpack serve` uses by default.
	Default bool `json:"default,omitempty"`
	// Teams is the outcome by team (with a team mix).
	Teams []TeamResult `json:"teams,omitempty"`
	// Series is the cumulative cost over time (seconds from the window's
	// start), for the chart.
	Series []SeriesPoint `json:"-"`
}

// SeriesPoint is one point of the cumulative cost curve.
type SeriesPoint struct {
	S   float64 `json:"s"`
	USD float64 `json:"usd"`
}
