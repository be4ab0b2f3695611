package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/retry"
	"github.com/sparkpack/sparkpack/placement"
)

// AdmissionMode says what happens to a deadline job that cannot finish by
// its deadline even if it started now.
type AdmissionMode string

const (
	// AdmitReject rejects such a job at submission, with the reason (default).
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
	// It is the default.
	OrderFeasibleEDF Ordering = "feasible-edf"
)

// Defaults of Config.
const (
	// DefaultPolicy is the placement policy of a core whose Config names
	// none, and serve's --policy default: dap (docs/placement.md).
	DefaultPolicy = "dap"
	// DefaultOrdering is the queue discipline of a core whose Config names
	// none (serve's --queue default).
	DefaultOrdering     = OrderFeasibleEDF
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
	// Log receives structured logs; default logrus.StandardLogger().
	Log logrus.FieldLogger
	// OnChange, if set, is called after every job state change the core
	// makes (with the job as stored), from the goroutine that made it. It
	// must be quick and must not call the Core.
	OnChange func(Job)
	// OnPlacement, if set, is called after every run of the placement
	// policy, with the same restrictions as OnChange.
	OnPlacement func(PlacementStat)
	// OnPass, if set, is called after every scheduling pass, with the same
	// restrictions as OnChange.
	OnPass func(PassStat)

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
	// OnPreempt, if set, is called when the core decides an eviction;
	// OnPreempted when an evicted job is back in the queue, with the run
	// time it lost. Same restrictions as OnChange.
	OnPreempt   func(PreemptStat)
	OnPreempted func(j Job, lost time.Duration)
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
	// Set when it becomes active, then unchanged: its estimate in wall
	// time, deadline, executor size and past evictions.
	estimate    time.Duration
	deadline    *time.Time
	demand      placement.Demand
	preemptions int
}

// newActiveJob follows a job that holds resources (plan nil when unknown).
func (c *Core) newActiveJob(j Job, plan *placement.Plan) *activeJob {
	a := &activeJob{job: j, plan: plan, state: j.State, preempting: j.PreemptRequested != "",
		deadline: j.DeadlineAt, demand: DemandOf(&j), preemptions: j.Preemptions,
		estimate: time.Duration(j.EstimatedDurationSeconds * float64(time.Second) * c.cfg.DurationScale)}
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

	// Inboxes, filled from any goroutine and drained by the pass.
	buffer   JobBuffer
	inboxMu  sync.Mutex
	cancels  []cancelNote
	requeues []Job // jobs that Report sent back to QUEUED
	kick     chan struct{}
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
	// hint is what the last pass left for Decide's waiting reason.
	hint atomic.Pointer[submitHint]
	// The pass's decisions (decide.go) and the policy that times them.
	dec   decider
	timed *timedPolicy
	// Recent evictions, for PreemptMaxShare (owned by the pass).
	evictLog []evictRecord

	actMu  sync.Mutex
	active map[string]*activeJob

	// capacity: the largest agent sizes (cpus, MiB), for admission from
	// the API (see sizeFrontier).
	capMu    sync.RWMutex
	capacity [][2]float64
	capSizes [][2]float64 // the agent sizes capacity was computed from (agentSizes)

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
	case OrderAlgorithm3, OrderFIFO, OrderFeasibleEDF:
	default:
		return nil, fmt.Errorf("scheduler: unknown ordering %q (algorithm3, feasible-edf or fifo)", cfg.Ordering)
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
	c.timed = &timedPolicy{Policy: pol, on: cfg.OnPlacement != nil}
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

func (c *Core) wake() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

// JobSubmitted hands a new job to the core (the api.Notifier hook): one
// stored SUBMITTED, which the loop admits and queues, or one stored QUEUED
// after Decide, which it queues. It does not block.
func (c *Core) JobSubmitted(j Job) {
	if j.State != Submitted && j.State != Queued && j.State != "" {
		return
	}
	c.buffer.Push(j)
	c.wake()
}

// JobCancelled tells the core that the store cancelled j (it was waiting),
// or that a kill was requested for it (it holds resources) (api.Notifier).
func (c *Core) JobCancelled(j Job, killRequested bool) {
	c.inboxMu.Lock()
	c.cancels = append(c.cancels, cancelNote{job: j, kill: killRequested})
	c.inboxMu.Unlock()
	c.wake()
}

// ClusterChanged tells the core that the cluster changed without its doing
// (resources freed, agents added or lost): waiting jobs are tried again.
// It never blocks, so it may be called while holding locks that the
// Cluster's own methods take.
func (c *Core) ClusterChanged() {
	c.freeEpoch.Add(1)
	c.wake()
}

// minPassGap is the least real time between the starts of two passes that
// a kick (a submission, a cluster change) asks for; timers are not held
// back. It bounds the passes to a few hundred a second under load, and
// adds at most that much to when a job can start.
const minPassGap = 5 * time.Millisecond

// Run recovers the queues from the store, then schedules on every event
// (submission, cancellation, job end, cluster change) and on timers (at
// risk, promotion, retry) until ctx is done, and returns ctx.Err(). A
// recovery that fails is tried again until it succeeds. Its one helper
// goroutine, which stores waiting reasons in batches, ends before Run
// returns.
func (c *Core) Run(ctx context.Context) error {
	// A core that gave up at a database hiccup would leave its leader
	// scheduling nothing; a failed Recover may run again (what it did, it
	// does again in place).
	if err := retry.UntilDone(ctx, c.log, "recovery", func() error { return c.Recover(ctx) }); err != nil {
		return err
	}
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	c.async.Store(true)
	go func() { defer wg.Done(); c.writeWaiting(wctx) }()
	defer func() { stop(); wg.Wait(); c.async.Store(false) }()
	for {
		passAt := time.Now()
		if _, err := c.Schedule(ctx); err != nil && ctx.Err() == nil {
			c.log.WithError(err).Warn("scheduling pass failed; retrying")
		}
		var timer, publish <-chan time.Time
		if at, ok := c.NextWake(); ok {
			d := at.Sub(c.clock.Now())
			if d < time.Millisecond {
				d = time.Millisecond
			}
			timer = c.clock.After(d)
		}
		if gap, ok := c.publishPending(); ok {
			publish = time.After(gap)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.kick:
			// Under a stream of submissions every one kicks: passes at
			// least minPassGap apart take what arrived meanwhile together,
			// instead of a pass (with its snapshot and views) per job.
			if d := minPassGap - time.Since(passAt); d > 0 {
				t := time.NewTimer(d)
				select {
				case <-ctx.Done():
					t.Stop()
					return ctx.Err()
				case <-t.C:
				}
			}
		case <-timer:
		case <-publish:
			c.passMu.Lock()
			c.publish(c.clock.Now())
			c.passMu.Unlock()
		}
	}
}

// publishPending reports whether a pass left the readers' view out of
// date, and how long to wait before publishing it.
func (c *Core) publishPending() (time.Duration, bool) {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	return c.publishGap(), c.viewDirty
}

// Recover rebuilds the core's state from Store.Unfinished: SUBMITTED jobs
// are admitted, QUEUED jobs queued, PLACING jobs (whose plan may not have
// been applied) go back to the queue, and jobs holding resources are
// followed until Report says they ended. Call it once, before scheduling.
func (c *Core) Recover(ctx context.Context) error {
	jobs, err := c.store.Unfinished(ctx)
	if err != nil {
		return fmt.Errorf("scheduler: recover: %w", err)
	}
	c.passMu.Lock()
	defer c.passMu.Unlock()
	now := c.clock.Now()
	var back []Change
	for _, j := range jobs {
		switch j.State {
		case Submitted:
			c.buffer.Push(j)
		case Queued, Placing:
			if j.KillRequested {
				// A kill asked for while the job held resources, which it
				// gave back before the kill was carried out: never run it again.
				back = append(back, Change{ID: j.ID, From: j.State, To: Cancelled, Reason: reasonKillWhileWaiting})
			} else if j.State == Queued {
				c.enqueue(NewEntry(&j), now)
			} else {
				back = append(back, Change{ID: j.ID, From: Placing, To: Queued, Reason: "restart: placement was not applied",
					Mutate: func(x *Job) { x.WaitingReason = ReasonQueued }})
			}
		default:
			if j.State.Active() {
				var plan *placement.Plan
				if pr, ok := c.store.(PlanReader); ok && j.State != Placing {
					if p, err := pr.Plan(ctx, j.ID); err == nil && len(p.Assignments) > 0 {
						plan = &p
					}
				}
				a := c.newActiveJob(j, plan)
				c.actMu.Lock()
				c.active[j.ID] = a
				c.actMu.Unlock()
			}
		}
	}
	if len(back) > 0 {
		res, err := c.transitionMany(ctx, back)
		if err != nil {
			return fmt.Errorf("scheduler: recover: %w", err)
		}
		for i, r := range res {
			if errors.Is(r.Err, ErrStale) || errors.Is(r.Err, ErrNotFound) {
				// Changed since it was read (say, cancelled meanwhile): its
				// new state is the store's to tell (a waiting job reaches
				// the core by its announcement or the lost-job rescan).
				c.log.WithError(r.Err).WithField("job", back[i].ID).Info("recover: the job changed while it was being recovered; leaving it as it is now")
				continue
			}
			if r.Err != nil {
				return fmt.Errorf("scheduler: recover job %s: %w", back[i].ID, r.Err)
			}
			if back[i].To == Queued {
				c.enqueue(NewEntry(&r.Job), now)
			}
		}
	}
	c.fullDue = true
	c.freeEpoch.Add(1)
	c.publish(now)
	c.wake()
	return nil
}

func (c *Core) transition(ctx context.Context, id string, from, to State, reason string, mutate func(*Job)) (Job, error) {
	j, err := c.store.Transition(ctx, id, from, to, reason, mutate)
	if err != nil {
		return j, err
	}
	c.changed(j, from, reason)
	return j, nil
}

// changed logs a stored state change of j and tells Config.OnChange.
func (c *Core) changed(j Job, from State, reason string) {
	c.log.WithFields(logrus.Fields{"job": j.ID, "from": from, "to": j.State}).Debug(reason)
	if c.cfg.OnChange != nil {
		c.cfg.OnChange(j)
	}
}

// transitionMany writes a batch of changes: in one round trip when the
// store can, else one by one.
func (c *Core) transitionMany(ctx context.Context, changes []Change) ([]ChangeResult, error) {
	var res []ChangeResult
	if bs, ok := c.store.(BatchStore); ok && len(changes) > 1 {
		r, err := bs.TransitionMany(ctx, changes)
		if err != nil {
			return nil, err
		}
		res = r
	} else {
		res = make([]ChangeResult, len(changes))
		for i, ch := range changes {
			j, err := c.store.Transition(ctx, ch.ID, ch.From, ch.To, ch.Reason, ch.Mutate)
			if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrIllegalTransition) {
				if i == 0 {
					return nil, err
				}
				// The rest was not tried: report them as failed alike.
				for k := i; k < len(changes); k++ {
					res[k] = ChangeResult{Err: err}
				}
				break
			}
			res[i] = ChangeResult{Job: j, Err: err}
		}
	}
	for i, r := range res {
		if r.Err == nil {
			c.changed(r.Job, changes[i].From, changes[i].Reason)
		}
	}
	return res, nil
}

// enqueue puts an entry into its queue (owned by the pass).
func (c *Core) enqueue(e *Entry, now time.Time) *Entry {
	if old := c.byID[e.ID]; old != nil {
		c.dequeueEntry(old)
	}
	if e.EnqueuedAt.IsZero() {
		e.EnqueuedAt = now
	}
	e.RD = placement.ResourceDemand(e.Demand, c.totalCPU, c.totalMem, c.alpha, c.beta)
	e.view = nil
	e.queued, e.fresh = true, true
	if (e.IsDeadlineJob() || e.Promoted) && c.cfg.Ordering != OrderFIFO {
		e.inDQ = true
		c.dq.Push(e)
	} else {
		e.inDQ = false
		c.jq.Push(e)
	}
	c.byID[e.ID] = e
	c.fresh = append(c.fresh, e)
	c.viewDirty = true
	return e
}

// dequeueEntry takes an entry out of its queue.
func (c *Core) dequeueEntry(e *Entry) {
	if !e.queued {
		return
	}
	if e.inDQ {
		c.dq.RemoveEntry(e)
	} else {
		c.jq.RemoveEntry(e)
	}
	e.queued = false
	delete(c.byID, e.ID)
	c.waiting.drop(e.ID)
	c.viewDirty = true
}

// admission decides about a new job: reject reason ("" to accept) and, in
// accept-and-flag mode, the at-risk reason.
func (c *Core) admission(j *Job, now time.Time) (reject, risk string) {
	fits := c.executorFitsSomewhere(j)
	scaled := *j
	scaled.EstimatedDurationSeconds *= c.cfg.DurationScale
	r := Admit(&scaled, now, fits)
	if r == "" || !fits {
		return r, ""
	}
	if c.cfg.Admission == AdmitFlag {
		return "", r
	}
	return r, ""
}

// Decision is the core's decision about a new job at submission.
type Decision struct {
	// Reject, when not empty, is why the job can never run (or, in
	// AdmitReject mode, cannot make its deadline): store it REJECTED.
	Reject string
	// Queue: store the job QUEUED at once; the core takes it into its
	// queue when told (JobSubmitted).
	Queue bool
	// AtRisk, with Queue in AdmitFlag mode, is why it risks its deadline.
	AtRisk string
	// Reason, with Queue, is the waiting reason the core expects to give
	// the job at its first pass ("" when it cannot say): stored with the
	// job, it spares that pass a write.
	Reason string
}

// Apply sets the state, waiting reason and at-risk flag of a job the core
// queues at submission.
func (d Decision) Apply(j *Job) {
	if !d.Queue {
		return
	}
	j.State, j.WaitingReason, j.AtRisk = Queued, ReasonQueued, false
	if d.Reason != "" {
		j.WaitingReason = d.Reason
	}
	if d.AtRisk != "" {
		j.AtRisk, j.WaitingReason = true, "at risk: "+d.AtRisk
	}
}

// Decide is the admission of a submission, made by the API before the job
// is stored (its Config.Decide): rejected, or queued at once. A job the
// core queues this way costs one database write; the core's own intake
// (of SUBMITTED jobs) remains for jobs stored without a decision.
func (c *Core) Decide(j *Job, now time.Time) Decision {
	reject, risk := c.admission(j, now)
	if reject != "" {
		return Decision{Reject: reject}
	}
	d := Decision{Queue: true, AtRisk: risk}
	if risk == "" {
		d.Reason = c.predictReason(j)
	}
	return d
}

// Admit is the submission-time admission check for the API (its Config.
// Admit): the reason to reject the job, or "". It rejects a job whose
// executor is larger than every agent, and, in AdmitReject mode, a deadline
// job that cannot finish by its deadline even if started now.
func (c *Core) Admit(j *Job, now time.Time) string {
	r, _ := c.admission(j, now)
	return r
}

func (c *Core) executorFitsSomewhere(j *Job) bool {
	c.capMu.RLock()
	defer c.capMu.RUnlock()
	if len(c.capacity) == 0 {
		return true // no snapshot seen yet: let placement decide
	}
	d := DemandOf(j)
	for _, a := range c.capacity {
		if a[0] >= d.CPUs-1e-9 && a[1] >= d.MemMB-1e-9 {
			return true
		}
	}
	return false
}

// sizeFrontier is the agent sizes (cpus, MiB) that no other agent beats on
// both: an executor fits some agent exactly when it fits one of them. A
// cluster has a handful of such sizes however many agents it has, so
// admission checks a few sizes instead of every agent.
func sizeFrontier(agents ...[]placement.Agent) [][2]float64 {
	seen := map[[2]float64]bool{}
	var sizes [][2]float64
	for _, as := range agents {
		for i := range as {
			k := [2]float64{as[i].CPUs, as[i].MemMB}
			if !seen[k] {
				seen[k] = true
				sizes = append(sizes, k)
			}
		}
	}
	// Largest cpus first (then memory): a size is on the frontier when it
	// has more memory than every size with more cpus.
	slices.SortFunc(sizes, func(a, b [2]float64) int {
		if c := cmp.Compare(b[0], a[0]); c != 0 {
			return c
		}
		return cmp.Compare(b[1], a[1])
	})
	var front [][2]float64
	for _, a := range sizes {
		if len(front) == 0 || a[1] > front[len(front)-1][1] {
			front = append(front, a)
		}
	}
	return front
}

// agentSizes appends the agents' sizes (cpus, MiB), in order, to dst: what
// the frontier was computed from. Comparing it exactly (sameSizes), not a
// summary such as sums, is what tells when the frontier must be computed
// again: cpus moved between two agents of equal memory keep every sum.
func agentSizes(dst [][2]float64, agents ...[]placement.Agent) [][2]float64 {
	dst = dst[:0]
	for _, as := range agents {
		for i := range as {
			dst = append(dst, [2]float64{as[i].CPUs, as[i].MemMB})
		}
	}
	return dst
}

// sameSizes reports whether the agents have exactly the sizes in prev, in
// order.
func sameSizes(prev [][2]float64, agents ...[]placement.Agent) bool {
	k := 0
	for _, as := range agents {
		for i := range as {
			if k >= len(prev) || prev[k] != [2]float64{as[i].CPUs, as[i].MemMB} {
				return false
			}
			k++
		}
	}
	return k == len(prev)
}

// Submit admits a job that is stored in state SUBMITTED and queues it (or
// rejects it), synchronously; it returns the job as stored. Live, the API
// uses JobSubmitted instead; the simulator calls Submit.
func (c *Core) Submit(ctx context.Context, j Job) (Job, error) {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	if j.State == "" {
		j.State = Submitted
	}
	if j.State != Submitted {
		return j, fmt.Errorf("scheduler: submit job %s: state is %s, want %s", j.ID, j.State, Submitted)
	}
	now := c.clock.Now()
	out, err := c.intake(ctx, []Job{j}, now)
	c.publish(now)
	if err != nil {
		return j, err
	}
	if len(out) == 0 {
		return j, fmt.Errorf("scheduler: submit job %s: %w", j.ID, ErrStale)
	}
	return out[0], nil
}

// intake admits buffered jobs: each is queued or rejected, all in one
// store batch. It returns the jobs as stored; a job whose write failed for
// a reason that may pass is put back into the buffer.
func (c *Core) intake(ctx context.Context, jobs []Job, now time.Time) ([]Job, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	// Jobs queued at submission (Decide) need no store write.
	var out []Job
	seen := map[string]bool{}
	var entries []*Entry
	submitted := jobs[:0:0]
	for i := range jobs {
		j := &jobs[i]
		if j.State != Queued {
			submitted = append(submitted, *j)
			continue
		}
		_, gone := c.cancelled[j.ID]
		if _, left := c.placed[j.ID]; left {
			gone = true
		}
		if gone || c.byID[j.ID] != nil || seen[j.ID] {
			continue
		}
		seen[j.ID] = true
		out = append(out, *j)
		entries = append(entries, NewEntry(j))
	}
	c.enqueueMany(entries, now)
	if len(submitted) == 0 {
		return out, nil
	}
	jobs = submitted
	entries = nil
	changes := make([]Change, len(jobs))
	queue := make([]bool, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		reject, risk := c.admission(j, now)
		if reject != "" {
			changes[i] = Change{ID: j.ID, From: Submitted, To: Rejected, Reason: reject, Mutate: func(x *Job) {
				x.WaitingReason = reject
				t := now
				x.FinishedAt = &t
			}}
			continue
		}
		queue[i] = true
		changes[i] = Change{ID: j.ID, From: Submitted, To: Queued, Reason: "queued", Mutate: func(x *Job) {
			x.WaitingReason = ReasonQueued
			if risk != "" {
				x.AtRisk = true
				x.WaitingReason = "at risk: " + risk
			}
		}}
	}
	res, err := c.transitionMany(ctx, changes)
	if err != nil {
		for _, j := range jobs {
			c.buffer.Push(j)
		}
		return out, fmt.Errorf("scheduler: admit %d jobs: %w", len(jobs), err)
	}
	var firstErr error
	for i, r := range res {
		switch {
		case r.Err == nil:
			out = append(out, r.Job)
			if queue[i] {
				e := NewEntry(&r.Job)
				entries = append(entries, e)
			}
		case errors.Is(r.Err, ErrStale) || errors.Is(r.Err, ErrNotFound):
			// Cancelled (or gone) before it was admitted.
		default:
			c.log.WithError(r.Err).WithField("job", jobs[i].ID).Warn("admission failed; will retry")
			c.buffer.Push(jobs[i])
			if firstErr == nil {
				firstErr = r.Err
			}
		}
	}
	c.enqueueMany(entries, now)
	return out, firstErr
}

// enqueueMany queues new entries, merging them into the queues at once.
func (c *Core) enqueueMany(es []*Entry, now time.Time) {
	if len(es) < 8 {
		for _, e := range es {
			c.enqueue(e, now)
		}
		return
	}
	// The same job twice in one batch (announced by the API and by the
	// database's notification): the last one counts.
	last := make(map[string]int, len(es))
	for i, e := range es {
		last[e.ID] = i
	}
	var d, r []*Entry
	for i, e := range es {
		if last[e.ID] != i {
			continue
		}
		if old := c.byID[e.ID]; old != nil {
			c.dequeueEntry(old)
		}
		if e.EnqueuedAt.IsZero() {
			e.EnqueuedAt = now
		}
		e.RD = placement.ResourceDemand(e.Demand, c.totalCPU, c.totalMem, c.alpha, c.beta)
		e.queued, e.fresh, e.view = true, true, nil
		e.inDQ = (e.IsDeadlineJob() || e.Promoted) && c.cfg.Ordering != OrderFIFO
		if e.inDQ {
			d = append(d, e)
		} else {
			r = append(r, e)
		}
		c.byID[e.ID] = e
		c.fresh = append(c.fresh, e)
	}
	c.dq.PushMany(d)
	c.jq.PushMany(r)
	c.viewDirty = true
}

// Cancel withdraws a waiting job (QUEUED -> CANCELLED), or asks the cluster
// to kill one that holds resources.
func (c *Core) Cancel(ctx context.Context, id, reason string) error {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	now := c.clock.Now()
	defer c.publish(now)
	if e := c.byID[id]; e != nil {
		c.dequeueEntry(e)
		_, err := c.transition(ctx, id, Queued, Cancelled, reason, func(x *Job) { x.FinishedAt = &now })
		if err != nil && !errors.Is(err, ErrStale) {
			c.enqueue(e, e.EnqueuedAt)
		}
		return err
	}
	if c.buffer.Remove(id) {
		_, err := c.transition(ctx, id, Submitted, Cancelled, reason, func(x *Job) { x.FinishedAt = &now })
		return err
	}
	if a := c.activeJob(id); a != nil {
		return c.cluster.Kill(ctx, id)
	}
	return fmt.Errorf("scheduler: cancel job %s: %w", id, ErrNotFound)
}

func (c *Core) activeJob(id string) *activeJob {
	c.actMu.Lock()
	defer c.actMu.Unlock()
	return c.active[id]
}

// Report tells the core about a job that holds resources: it moves to
// LAUNCHING or RUNNING, it ended (FINISHED, FAILED, KILLED: its resources
// are released), or it goes back to QUEUED for a retry (released and
// queued again at the next pass). The transition is stored; waiting jobs
// are then tried. Report takes no core-wide lock.
func (c *Core) Report(ctx context.Context, id string, to State, reason string) error {
	a := c.activeJob(id)
	if a == nil {
		return fmt.Errorf("scheduler: report on job %s: not active: %w", id, ErrNotFound)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gone {
		return fmt.Errorf("scheduler: report on job %s: not active: %w", id, ErrNotFound)
	}
	from := a.job.State
	now := c.clock.Now()
	if reason == "" {
		reason = string(to)
	}
	switch to {
	case Launching, Running:
		j, err := c.transition(ctx, id, from, to, reason, func(x *Job) {
			if to == Running {
				x.Attempt++ // one more run of the application started
				t := now
				x.LastStartedAt = &t
				if x.StartedAt == nil {
					x.StartedAt = &t
				}
			}
		})
		if err != nil {
			return err
		}
		a.job = j
		c.actMu.Lock()
		a.state = j.State
		if to == Running {
			a.startedAt = j.LastStartedAt
		}
		c.actMu.Unlock()
		return nil
	case Finished, Failed, Killed, Queued:
	default:
		return fmt.Errorf("scheduler: report on job %s: %w: %s -> %s", id, ErrIllegalTransition, from, to)
	}
	var lost time.Duration
	evicted := false
	j, err := c.transition(ctx, id, from, to, reason, func(x *Job) {
		pre := x.PreemptRequested
		x.PreemptRequested = ""
		if to == Queued && pre != "" {
			// An eviction: the run so far is lost (Spark cannot resume it).
			evicted = true
			x.Preemptions++
			if x.LastStartedAt != nil && from == Running {
				lost = max(now.Sub(*x.LastStartedAt), 0)
				x.LostWorkSeconds += lost.Seconds()
			}
			x.WaitingReason = "preempted: " + pre
			return
		}
		if to == Queued {
			x.WaitingReason = "retry: " + reason
			return
		}
		t := now
		x.FinishedAt = &t
	})
	if err != nil {
		return err
	}
	if evicted && c.cfg.OnPreempted != nil {
		c.cfg.OnPreempted(j, lost)
	}
	a.gone = true
	c.actMu.Lock()
	delete(c.active, id)
	c.actMu.Unlock()
	relErr := c.cluster.Release(ctx, id)
	if relErr != nil {
		c.log.WithError(relErr).WithField("job", id).Warn("release failed")
	}
	if to == Queued {
		c.inboxMu.Lock()
		c.requeues = append(c.requeues, j)
		c.inboxMu.Unlock()
	}
	c.freeEpoch.Add(1)
	// The bill stops when the job lets go of its agents, not at the next pass.
	if snap, err := c.cluster.Snapshot(ctx); err == nil {
		c.observeCost(ctx, now, snap)
	}
	c.wake()
	return relErr
}

// JobFinished is Report(ctx, id, Finished, "finished").
func (c *Core) JobFinished(ctx context.Context, id string) error {
	return c.Report(ctx, id, Finished, "finished")
}

// JobFailed is Report(ctx, id, Failed, reason).
func (c *Core) JobFailed(ctx context.Context, id, reason string) error {
	return c.Report(ctx, id, Failed, reason)
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
