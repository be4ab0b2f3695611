package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// activeJob is a job that holds resources.
type activeJob struct {
	mu   sync.Mutex // serialises the reports on this job
	job  Job
	plan *placement.Plan // nil when recovered after a restart
	gone bool            // it ended or went back to the queue
	// Guarded by Core.actMu, for annotateRemaining and preemption: when
	// its current run started, its state, whether it is being evicted.
	startedAt  *time.Time
	state      State
	preempting bool
	// Set when it becomes active, then unchanged: its team and its
	// driver's size, for the team policy (teams.go).
	team                    string
	driverCPUs, driverMemMB float64
	// Set when it becomes active, then unchanged: its estimate in wall
	// time, deadline, executor size and past evictions.
	estimate    time.Duration
	deadline    *time.Time
	demand      placement.Demand
	preemptions int
	// The plan's shape (shapeKnown when it was measured at the start) and
	// the model's run time on it (zero without one): for the run history
	// and the overrun check (overrun.go).
	shape      RunShape
	shapeKnown bool
	pred       perfmodel.Prediction
	overrun    bool // flagged at risk for running past its p90
}

// newActiveJob follows a job that holds resources (plan nil when unknown).
func (c *Core) newActiveJob(j Job, plan *placement.Plan) *activeJob {
	a := &activeJob{job: j, plan: plan, state: j.State, preempting: j.PreemptRequested != "",
		deadline: j.DeadlineAt, demand: DemandOf(&j), preemptions: j.Preemptions,
		estimate: time.Duration(j.EstimatedDurationSeconds * float64(time.Second) * c.cfg.DurationScale)}
	a.team, a.driverCPUs, a.driverMemMB = teamOfActive(&j)
	if j.State == Running {
		a.startedAt = j.LastStartedAt
		if a.startedAt == nil {
			a.startedAt = j.StartedAt
		}
	}
	return a
}

type cancelNote struct {
	job  Job
	kill bool
}

// Core is the scheduler core: the queues and the loop of thesis Algorithm 3
// over a Cluster, a Store and a Clock. Live, Run drives it from events;
// the simulator calls Submit, Schedule and Report itself on a virtual clock.
// All methods are safe for concurrent use.
//
// Concurrency: the queues belong to the scheduling pass. passMu only
// serialises passes (Schedule, Submit, Cancel, Recover); no reader and no
// event source ever waits for it. Events reach the pass through inboxes
// (JobSubmitted, JobCancelled, the retries of Report) and ClusterChanged's
// counter; readers (Queues, QueuePage, Lengths, NextWake, Cost) read what
// the last pass published. Report writes a job's progress to the store
// without any core-wide lock. No lock that a reader or an event source
// takes is ever held across a store or cluster call.
type Core struct {
	cfg     Config
	policy  placement.Policy
	alpha   float64
	beta    float64
	cluster Cluster
	store   Store
	clock   Clock
	log     logrus.FieldLogger
	// bootTime is the boot time the last pass was told (BootInfo): jobs
	// held for a start time further ahead do not keep agents warm.
	bootTime time.Duration

	// Inboxes, filled from any goroutine and drained by the pass.
	buffer   JobBuffer
	inboxMu  sync.Mutex
	cancels  []cancelNote
	requeues []Job // jobs that Report sent back to QUEUED
	kick     chan struct{}
	// releaseObsMu: one Report at a time holds a snapshot for the cost
	// meter (observeReleased).
	releaseObsMu sync.Mutex
	// freeEpoch counts the events that may have freed resources (job ends,
	// retries, cluster changes).
	freeEpoch atomic.Uint64

	// Owned by the pass (guarded by passMu).
	passMu    sync.Mutex
	dq        DeadlineQueue
	jq        JobQueue
	byID      map[string]*Entry
	fresh     []*Entry // entered a queue since the last pass
	cancelled map[string]time.Time
	// placed remembers jobs that left the queue to be placed (like
	// cancelled): an announcement of the job as QUEUED that arrives late
	// (the database's notification after the API's) is stale, not a job
	// to queue again. A job that comes back (a retry, an eviction) does so
	// through Report, not through intake.
	placed        map[string]time.Time
	stranded      map[string]strandedJob // could not be put back in the queue
	totalCPU      float64
	totalMem      float64
	retryAt       time.Time
	lastFullEpoch uint64
	fullDue       bool // the next pass must look at every waiting job
	blocked       bool // regular jobs waited behind deadline jobs at the last pass
	viewDirty     bool
	publishedAt   time.Time     // wall time of the last publish
	publishTook   time.Duration // how long it took
	wakeAt        time.Time     // next timer-driven change (at risk, promotion)

	// byChoiceDQ counts the deadline queue's entries that wait by choice
	// (waitState.byChoice).
	byChoiceDQ int

	// hint is what the last pass left for Decide's waiting reason.
	hint atomic.Pointer[submitHint]
	// The pass's decisions (decide.go) and the policy that times them.
	dec   decider
	timed *timedPolicy
	// decBuf is the decisions buffer passes reuse (emptied after each; at
	// most maxKeptDecisions long).
	decBuf []decision
	// Recent evictions, for PreemptMaxShare (owned by the pass).
	evictLog []evictRecord
	// teams is what the team policy remembers between passes (teams.go).
	teams teamMemory
	// modelSeen is the run-time model's Version the last pass saw
	// (modelLearned, predict.go).
	modelSeen uint64

	actMu  sync.Mutex
	active map[string]*activeJob

	// capacity: the largest agent sizes (cpus, MiB), for admission from
	// the API (see sizeFrontier).
	capMu    sync.RWMutex
	capacity [][2]float64
	capSizes [][2]float64 // the agent sizes capacity was computed from (agentSizes)
	// capCounts: every agent size with how many agents have it, for
	// admission of jobs the whole cluster could never hold (neverFits).
	capCounts []sizeCount

	view    atomic.Pointer[queueSnapshot]
	wakeMu  sync.Mutex
	nextAt  time.Time
	nextOK  bool
	waiting *waitingWriter
	async   atomic.Bool // Run's writer stores waiting reasons
	cost    *CostMeter
}

// New builds a core. Nothing runs until Run (live) or Schedule (simulation).
func New(cfg Config, cluster Cluster, store Store, clock Clock) (*Core, error) {
	if cluster == nil || store == nil {
		return nil, errors.New("scheduler: New needs a cluster and a store")
	}
	if clock == nil {
		clock = SystemClock{}
	}
	if cfg.Policy == "" {
		cfg.Policy = DefaultPolicy
	}
	pol := cfg.Placer
	if pol == nil {
		p, err := placement.New(cfg.Policy, cfg.PolicyOptions)
		if err != nil {
			return nil, fmt.Errorf("scheduler: %w", err)
		}
		pol = p
	}
	switch cfg.Ordering {
	case "":
		cfg.Ordering = DefaultOrdering
	case OrderAlgorithm3, OrderFIFO, OrderFeasibleEDF, OrderFeasibleLPT:
	default:
		return nil, fmt.Errorf("scheduler: unknown ordering %q (algorithm3, feasible-edf, feasible-lpt or fifo)", cfg.Ordering)
	}
	switch cfg.Admission {
	case "":
		cfg.Admission = AdmitReject
	case AdmitReject, AdmitFlag:
	default:
		return nil, fmt.Errorf("scheduler: unknown admission mode %q (reject or accept-and-flag)", cfg.Admission)
	}
	if cfg.PromoteAfter == 0 {
		cfg.PromoteAfter = DefaultPromoteAfter
	}
	if cfg.RetryBackoff <= 0 {
		cfg.RetryBackoff = DefaultRetryBackoff
	}
	if cfg.Provisioner == nil {
		cfg.Provisioner = NopProvisioner{}
	}
	if cfg.DurationScale <= 0 {
		cfg.DurationScale = 1
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	if cfg.Observer == nil {
		cfg.Observer = NopObserver{}
	}
	pre, err := ParsePreemption(string(cfg.Preemption))
	if err != nil {
		return nil, fmt.Errorf("scheduler: %w", err)
	}
	cfg.Preemption = pre
	if cfg.PreemptProtect == 0 {
		cfg.PreemptProtect = DefaultPreemptProtect
	}
	if cfg.PreemptMaxShare == 0 {
		cfg.PreemptMaxShare = DefaultPreemptMaxShare
	}
	if cfg.PreemptMaxShare < 0 || cfg.PreemptMaxShare > 1 || math.IsNaN(cfg.PreemptMaxShare) {
		return nil, fmt.Errorf("scheduler: preemption share %g not in (0, 1]", cfg.PreemptMaxShare)
	}
	if cfg.MaxPreemptions == 0 {
		cfg.MaxPreemptions = DefaultMaxPreemptions
	}
	if cfg.MaxPreemptions < 0 {
		return nil, fmt.Errorf("scheduler: max preemptions %d must be >= 1", cfg.MaxPreemptions)
	}
	alpha, beta := cfg.PolicyOptions.Alpha, cfg.PolicyOptions.Beta
	switch {
	case alpha == 0 && beta == 0:
		alpha, beta = placement.DefaultAlpha, placement.DefaultBeta
	case beta == 0:
		beta = 1 - alpha
	case alpha == 0:
		alpha = 1 - beta
	}
	c := &Core{
		cfg: cfg, policy: pol, alpha: alpha, beta: beta,
		cluster: cluster, store: store, clock: clock, log: cfg.Log,
		kick:      make(chan struct{}, 1),
		byID:      map[string]*Entry{},
		cancelled: map[string]time.Time{}, placed: map[string]time.Time{}, stranded: map[string]strandedJob{},
		active:  map[string]*activeJob{},
		waiting: newWaitingWriter(),
		cost:    NewCostMeter(clock.Now()),
		fullDue: true,
	}
	c.timed = &timedPolicy{Policy: pol}
	c.dec = decider{cfg: cfg, policy: c.timed}
	c.jq.FIFO = cfg.Ordering == OrderFIFO
	c.publish(clock.Now())
	return c, nil
}

// PolicyName is the placement policy in use.
func (c *Core) PolicyName() string { return c.policy.Name() }

// CostMeter is the core's cost accounting.
func (c *Core) CostMeter() *CostMeter { return c.cost }

// Cost is the cluster cost so far (for GET /api/v1/cost).
func (c *Core) Cost() CostReport { return c.cost.Report(c.clock.Now()) }

// CostTotals is Cost without the per-agent costs and the series.
func (c *Core) CostTotals() CostReport { return c.cost.Totals(c.clock.Now()) }

// CostCheckpoint is the meter's total now with what it attributed, to
// save together (CostMeter.Checkpoint).
func (c *Core) CostCheckpoint() (time.Time, float64, []LedgerEntry) {
	now := c.clock.Now()
	total, entries := c.cost.Checkpoint(now)
	return now, total, entries
}

// Attributed is what the meter attributed to the given jobs so far in this
// term and its idle remainder (CostMeter.Attributed).
func (c *Core) Attributed(ids ...string) (map[string]Usage, float64) {
	return c.cost.Attributed(c.clock.Now(), ids...)
}

func (c *Core) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *Core) transition(ctx context.Context, id string, from, to State, reason string, mutate func(*Job)) (Job, error) {
	j, err := c.store.Transition(ctx, id, from, to, reason, mutate)
	if err != nil {
		return j, err
	}
	c.changed(j, from, reason)
	return j, nil
}

// changed logs a stored state change of j and tells the observer.
func (c *Core) changed(j Job, from State, reason string) {
	c.log.WithFields(logrus.Fields{"job": j.ID, "from": from, "to": j.State}).Debug(reason)
	c.cfg.Observer.JobChanged(j)
}

// transitionMany writes a batch of changes in one round trip (one change
// as a Transition).
func (c *Core) transitionMany(ctx context.Context, changes []Change) ([]ChangeResult, error) {
	var res []ChangeResult
	if len(changes) == 1 {
		ch := changes[0]
		j, err := c.store.Transition(ctx, ch.ID, ch.From, ch.To, ch.Reason, ch.Mutate)
		if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrIllegalTransition) {
			return nil, err
		}
		res = []ChangeResult{{Job: j, Err: err}}
	} else if len(changes) > 1 {
		r, err := c.store.TransitionMany(ctx, changes)
		if err != nil {
			return nil, err
		}
		res = r
	}
	for i, r := range res {
		if r.Err == nil {
			c.changed(r.Job, changes[i].From, changes[i].Reason)
		}
	}
	return res, nil
}

func (c *Core) activeJob(id string) *activeJob {
	c.actMu.Lock()
	defer c.actMu.Unlock()
	return c.active[id]
}

// NextWake is the next time something changes without an event: a waiting
// deadline job becomes at risk, a skipped regular job is due for promotion,
// or an error backoff ends. ok is false when nothing is due.
func (c *Core) NextWake() (t time.Time, ok bool) {
	c.wakeMu.Lock()
	defer c.wakeMu.Unlock()
	return c.nextAt, c.nextOK
}

// Waiting is the number of jobs in the queues, the intake buffer and on
// their way back to a queue.
func (c *Core) Waiting() int {
	l := c.Lengths()
	return l.Deadline + l.Regular + l.Intake
}

// Unknown returns those of ids the core has not heard of: jobs it neither
// buffers, queues, follows, nor has placed, cancelled or sent back to a
// queue lately. A job the store holds as waiting that stays unknown was
// never announced to this core (its notification was lost). It waits for
// a pass under way to end.
func (c *Core) Unknown(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	c.passMu.Lock()
	defer c.passMu.Unlock()
	var unknown []string
	for _, id := range ids {
		_, placed := c.placed[id]
		_, cancelled := c.cancelled[id]
		if c.byID[id] == nil && !placed && !cancelled {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	known := map[string]bool{}
	for _, id := range c.buffer.IDs() {
		known[id] = true
	}
	c.inboxMu.Lock()
	for _, j := range c.requeues {
		known[j.ID] = true
	}
	c.inboxMu.Unlock()
	c.actMu.Lock()
	for id := range c.active {
		known[id] = true
	}
	c.actMu.Unlock()
	out := unknown[:0]
	for _, id := range unknown {
		if !known[id] {
			out = append(out, id)
		}
	}
	return out
}

// ActiveJobs is the number of jobs holding resources.
func (c *Core) ActiveJobs() int {
	c.actMu.Lock()
	defer c.actMu.Unlock()
	return len(c.active)
}

// DiscardLogger is a logger that drops everything (for the simulator and tests).
func DiscardLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
