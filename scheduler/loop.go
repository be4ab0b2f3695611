package scheduler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sirupsen/logrus"

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
	// Log receives structured logs; default logrus.StandardLogger().
	Log logrus.FieldLogger
	// OnChange, if set, is called after every job state change the core
	// makes (with the job as stored). It runs with the core's lock held: it
	// must be quick and must not call the Core.
	OnChange func(Job)
	// OnPlacement, if set, is called after every placement decision, with
	// the same restrictions as OnChange.
	OnPlacement func(PlacementStat)
}

type activeJob struct {
	job  Job
	plan *placement.Plan // nil when recovered after a restart
}

type cancelNote struct {
	job  Job
	kill bool
}

// Core is the scheduler core: the queues and the loop of thesis Algorithm 3
// over a Cluster, a Store and a Clock. Live, Run drives it from events;
// the simulator calls Submit, Schedule and Report itself on a virtual clock.
// All methods are safe for concurrent use.
type Core struct {
	cfg     Config
	policy  placement.Policy
	alpha   float64
	beta    float64
	cluster Cluster
	store   Store
	clock   Clock
	log     logrus.FieldLogger

	buffer JobBuffer
	kick   chan struct{}
	// freeEpoch counts the events that may have freed resources (job ends,
	// retries, cluster changes); it is atomic so that ClusterChanged never
	// waits for the core's lock.
	freeEpoch atomic.Uint64
	// passEpoch is freeEpoch as read just before the snapshot in use was
	// taken (guarded by mu): a NoFit on that snapshot is valid until
	// freeEpoch moves past it.
	passEpoch uint64
	inboxMu   sync.Mutex
	cancels   []cancelNote

	// capacity of the agents, for admission without the lock.
	capMu    sync.RWMutex
	capacity []placement.Agent

	mu       sync.Mutex
	dq       DeadlineQueue
	jq       JobQueue
	active   map[string]*activeJob
	totalCPU float64
	totalMem float64
	retryAt  time.Time
	cost     *CostMeter
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
		kick:   make(chan struct{}, 1),
		active: map[string]*activeJob{},
		cost:   NewCostMeter(clock.Now()),
	}
	c.jq.FIFO = cfg.Ordering == OrderFIFO
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

// JobSubmitted hands a job stored in state SUBMITTED to the core (the
// api.Notifier hook). It does not block; the loop admits and queues it.
func (c *Core) JobSubmitted(j Job) {
	if j.State != Submitted && j.State != "" {
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

// Run recovers the queues from the store, then schedules on every event
// (submission, cancellation, job end, cluster change) and on timers (at
// risk, promotion, retry) until ctx is done. It returns ctx.Err(), or the
// recovery error. It starts no goroutine of its own.
func (c *Core) Run(ctx context.Context) error {
	if err := c.Recover(ctx); err != nil {
		return err
	}
	for {
		if _, err := c.Schedule(ctx); err != nil && ctx.Err() == nil {
			c.log.WithError(err).Warn("scheduling pass failed; retrying")
		}
		var timer <-chan time.Time
		if at, ok := c.NextWake(); ok {
			d := at.Sub(c.clock.Now())
			if d < time.Millisecond {
				d = time.Millisecond
			}
			timer = c.clock.After(d)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.kick:
		case <-timer:
		}
	}
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
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	for _, j := range jobs {
		switch j.State {
		case Submitted:
			c.buffer.Push(j)
		case Queued:
			c.enqueue(j, now)
		case Placing:
			nj, err := c.transition(ctx, j.ID, Placing, Queued, "restart: placement was not applied", func(x *Job) { x.WaitingReason = ReasonQueued })
			if err != nil {
				return fmt.Errorf("scheduler: recover job %s: %w", j.ID, err)
			}
			c.enqueue(nj, now)
		default:
			if j.State.Active() {
				c.active[j.ID] = &activeJob{job: j}
			}
		}
	}
	c.freeEpoch.Add(1)
	c.wake()
	return nil
}

func (c *Core) transition(ctx context.Context, id string, from, to State, reason string, mutate func(*Job)) (Job, error) {
	j, err := c.store.Transition(ctx, id, from, to, reason, mutate)
	if err != nil {
		return j, err
	}
	c.log.WithFields(logrus.Fields{"job": id, "from": from, "to": to}).Debug(reason)
	if c.cfg.OnChange != nil {
		c.cfg.OnChange(j)
	}
	return j, nil
}

func (c *Core) enqueue(j Job, now time.Time) *Entry {
	e := &Entry{Job: j, Demand: DemandOf(&j), EnqueuedAt: now}
	e.RD = placement.ResourceDemand(e.Demand, c.totalCPU, c.totalMem, c.alpha, c.beta)
	if j.IsDeadlineJob() && c.cfg.Ordering != OrderFIFO {
		c.dq.Push(e)
	} else {
		c.jq.Push(e)
	}
	return e
}

func (c *Core) dequeue(id string) *Entry {
	if e := c.dq.Remove(id); e != nil {
		return e
	}
	return c.jq.Remove(id)
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
		if a.CPUs >= d.CPUs-1e-9 && a.MemMB >= d.MemMB-1e-9 {
			return true
		}
	}
	return false
}

// Submit admits a job that is stored in state SUBMITTED and queues it (or
// rejects it), synchronously; it returns the job as stored. Live, the API
// uses JobSubmitted instead; the simulator calls Submit.
func (c *Core) Submit(ctx context.Context, j Job) (Job, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.intake(ctx, j, c.clock.Now())
}

func (c *Core) intake(ctx context.Context, j Job, now time.Time) (Job, error) {
	if j.State == "" {
		j.State = Submitted
	}
	if j.State != Submitted {
		return j, fmt.Errorf("scheduler: submit job %s: state is %s, want %s", j.ID, j.State, Submitted)
	}
	reject, risk := c.admission(&j, now)
	if reject != "" {
		return c.transition(ctx, j.ID, Submitted, Rejected, reject, func(x *Job) {
			x.WaitingReason = reject
			t := now
			x.FinishedAt = &t
		})
	}
	nj, err := c.transition(ctx, j.ID, Submitted, Queued, "queued", func(x *Job) {
		x.WaitingReason = ReasonQueued
		if risk != "" {
			x.AtRisk = true
			x.WaitingReason = "at risk: " + risk
		}
	})
	if err != nil {
		return nj, err
	}
	c.enqueue(nj, now)
	return nj, nil
}

// Cancel withdraws a waiting job (QUEUED -> CANCELLED), or asks the cluster
// to kill one that holds resources (when it implements Killer).
func (c *Core) Cancel(ctx context.Context, id, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.dequeue(id); e != nil {
		now := c.clock.Now()
		_, err := c.transition(ctx, id, Queued, Cancelled, reason, func(x *Job) { x.FinishedAt = &now })
		if err != nil {
			c.enqueue(e.Job, e.EnqueuedAt)
		}
		return err
	}
	if c.buffer.Remove(id) {
		now := c.clock.Now()
		_, err := c.transition(ctx, id, Submitted, Cancelled, reason, func(x *Job) { x.FinishedAt = &now })
		return err
	}
	if _, ok := c.active[id]; ok {
		k, ok := c.cluster.(Killer)
		if !ok {
			return fmt.Errorf("scheduler: job %s holds resources and the cluster cannot kill jobs", id)
		}
		return k.Kill(ctx, id)
	}
	return fmt.Errorf("scheduler: cancel job %s: %w", id, ErrNotFound)
}

// Report tells the core about a job that holds resources: it moves to
// LAUNCHING or RUNNING, it ended (FINISHED, FAILED, KILLED: its resources
// are released), or it goes back to QUEUED for a retry (released and
// queued again). The transition is stored; waiting jobs are then tried.
func (c *Core) Report(ctx context.Context, id string, to State, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := c.active[id]
	if a == nil {
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
			if to == Running && x.StartedAt == nil {
				t := now
				x.StartedAt = &t
			}
		})
		if err != nil {
			return err
		}
		a.job = j
		return nil
	case Finished, Failed, Killed, Queued:
	default:
		return fmt.Errorf("scheduler: report on job %s: %w: %s -> %s", id, ErrIllegalTransition, from, to)
	}
	j, err := c.transition(ctx, id, from, to, reason, func(x *Job) {
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
	delete(c.active, id)
	relErr := c.cluster.Release(ctx, id)
	if relErr != nil {
		c.log.WithError(relErr).WithField("job", id).Warn("release failed")
	}
	c.freeEpoch.Add(1)
	if to == Queued {
		c.enqueue(j, now)
	}
	if snap, err := c.cluster.Snapshot(ctx); err == nil {
		c.observe(ctx, now, snap)
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

func (c *Core) processCancels(ctx context.Context) {
	c.inboxMu.Lock()
	notes := c.cancels
	c.cancels = nil
	c.inboxMu.Unlock()
	for _, n := range notes {
		if n.kill {
			if _, ok := c.active[n.job.ID]; ok {
				if k, ok := c.cluster.(Killer); ok {
					if err := k.Kill(ctx, n.job.ID); err != nil {
						c.log.WithError(err).WithField("job", n.job.ID).Warn("kill failed")
					}
				}
			}
			continue
		}
		c.dequeue(n.job.ID)
		c.buffer.Remove(n.job.ID)
	}
}

// observe updates capacity, totals and cost from a snapshot and powers off
// agents that went idle.
func (c *Core) observe(ctx context.Context, now time.Time, snap placement.Snapshot) {
	tc, tm := snap.Totals()
	if tc != c.totalCPU || tm != c.totalMem {
		c.totalCPU, c.totalMem = tc, tm
		c.jq.Resort(tc, tm, c.alpha, c.beta)
	}
	c.capMu.Lock()
	c.capacity = slices.Clone(snap.Agents)
	c.capMu.Unlock()
	idle, _ := c.cost.Observe(now, snap)
	for _, id := range idle {
		if err := c.cfg.Provisioner.PowerOff(ctx, id); err != nil {
			c.log.WithError(err).WithField("agent", id).Warn("power off failed")
		}
	}
}

// Schedule runs one pass of thesis Algorithm 3 and returns how many jobs it
// started: buffered jobs are admitted and queued; regular jobs skipped for
// longer than PromoteAfter are promoted; deadline jobs are tried in EDF
// order; only if no deadline job is left waiting are regular jobs tried, by
// descending RD, a job that does not fit being skipped and the next tried.
// Every waiting job's reason and at-risk flag are brought up to date.
func (c *Core) Schedule(ctx context.Context) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	c.processCancels(ctx)
	var firstErr error
	note := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, j := range c.buffer.Drain() {
		if _, err := c.intake(ctx, j, now); err != nil && !errors.Is(err, ErrStale) {
			c.log.WithError(err).WithField("job", j.ID).Warn("admission failed; will retry")
			c.buffer.Push(j)
			note(err)
		}
	}
	c.passEpoch = c.freeEpoch.Load()
	snap, err := c.cluster.Snapshot(ctx)
	if err != nil {
		c.retryAt = now.Add(c.cfg.RetryBackoff)
		return 0, fmt.Errorf("scheduler: snapshot: %w", err)
	}
	c.observe(ctx, now, snap)
	c.annotateRemaining(&snap, now)
	c.promote(now)

	started := 0
	for _, e := range c.deadlineOrder(now) {
		ok, err := c.try(ctx, now, &snap, e)
		note(err)
		if ok {
			started++
		}
	}
	if c.dq.Len() == 0 {
		for _, e := range slices.Clone(c.jq.Entries()) {
			ok, err := c.try(ctx, now, &snap, e)
			note(err)
			if ok {
				started++
			}
		}
	} else {
		for _, e := range slices.Clone(c.jq.Entries()) {
			if e.SkippedSince.IsZero() {
				e.SkippedSince = now
			}
			note(c.setWaiting(ctx, e, ReasonDeadlineFirst, c.atRisk(e, now)))
		}
	}
	for _, e := range slices.Clone(c.dq.Entries()) {
		note(c.setWaiting(ctx, e, e.Job.WaitingReason, c.atRisk(e, now)))
	}
	if firstErr != nil {
		c.retryAt = now.Add(c.cfg.RetryBackoff)
	}
	return started, firstErr
}

// promote moves regular jobs skipped for longer than PromoteAfter into the
// deadline queue.
func (c *Core) promote(now time.Time) {
	if c.cfg.PromoteAfter < 0 || c.cfg.Ordering == OrderFIFO {
		return
	}
	for _, e := range slices.Clone(c.jq.Entries()) {
		if e.SkippedSince.IsZero() || now.Sub(e.SkippedSince) < c.cfg.PromoteAfter {
			continue
		}
		c.jq.Remove(e.Job.ID)
		e.Promoted = true
		e.PromotedAt = e.SkippedSince.Add(c.cfg.PromoteAfter)
		e.noFitValid = false
		c.dq.Push(e)
		c.log.WithField("job", e.Job.ID).Info("regular job promoted after waiting too long")
	}
}

// atRisk: a waiting deadline job is at risk when, started now, it would
// end after its deadline (with its estimated duration), or when its
// deadline has passed.
func (c *Core) atRisk(e *Entry, now time.Time) bool {
	dl := e.Job.DeadlineAt
	if dl == nil {
		return false
	}
	if est := c.estimate(&e.Job); est > 0 {
		return now.Add(est).After(*dl)
	}
	return !now.Before(*dl)
}

func (c *Core) setWaiting(ctx context.Context, e *Entry, reason string, atRisk bool) error {
	if e.Promoted && reason != "" && !hasPrefix(reason, "promoted") {
		reason = fmt.Sprintf("promoted (skipped for over %s): %s", c.cfg.PromoteAfter, reason)
	}
	if e.Job.WaitingReason == reason && e.Job.AtRisk == atRisk {
		return nil
	}
	if err := c.store.SetWaiting(ctx, e.Job.ID, reason, atRisk); err != nil {
		if errors.Is(err, ErrNotFound) || errors.Is(err, ErrStale) {
			c.dequeue(e.Job.ID)
			return nil
		}
		return err
	}
	e.Job.WaitingReason, e.Job.AtRisk = reason, atRisk
	return nil
}

// estimate is the job's estimated run time in wall time (see DurationScale).
func (c *Core) estimate(j *Job) time.Duration {
	return time.Duration(float64(j.EstimatedDuration()) * c.cfg.DurationScale)
}

func hasPrefix(s, p string) bool { return len(s) >= len(p) && s[:len(p)] == p }

// try places one waiting job on snap and starts it. It reports whether the
// job started; snap is refreshed after a start.
func (c *Core) try(ctx context.Context, now time.Time, snap *placement.Snapshot, e *Entry) (bool, error) {
	if e.noFitValid && e.noFitEpoch == c.freeEpoch.Load() && e.noFitEpoch == c.passEpoch {
		// Nothing was freed since it last did not fit: starting other jobs
		// only takes resources, so it still does not fit.
		if !e.Job.IsDeadlineJob() && !e.Promoted && e.SkippedSince.IsZero() {
			e.SkippedSince = now
		}
		return false, nil
	}
	t0 := time.Now()
	plan, err := c.policy.Place(*snap, c.demandAt(e, now))
	elapsed := time.Since(t0)
	if c.cfg.OnPlacement != nil {
		c.cfg.OnPlacement(PlacementStat{JobID: e.Job.ID, Policy: c.policy.Name(), Elapsed: elapsed, Placed: err == nil, Outcome: plan.Outcome})
	}
	if err != nil {
		var nf *placement.NoFit
		isNoFit := errors.As(err, &nf)
		if isNoFit && len(snap.Agents) == 0 {
			// No agent known yet (a restart, a partition): wait, never reject.
			nf.Never = false
		}
		if isNoFit && !nf.Never && len(snap.Agents) > 0 && !fitsEmpty(*snap, e.Demand) {
			err = fmt.Errorf("does not fit even on the empty cluster: it needs %d executors of %g cpus and %g MiB", e.Demand.Executors, e.Demand.CPUs, e.Demand.MemMB)
		} else if nf != nil && !nf.Never {
			e.noFitEpoch, e.noFitValid = c.passEpoch, true
			if e.SkippedSince.IsZero() {
				e.SkippedSince = now
			}
			return false, c.setWaiting(ctx, e, nf.Error(), c.atRisk(e, now))
		}
		// It can never run here (an executor larger than every agent, or
		// an invalid demand).
		c.dequeue(e.Job.ID)
		_, terr := c.transition(ctx, e.Job.ID, Queued, Rejected, err.Error(), func(x *Job) {
			x.WaitingReason = err.Error()
			x.FinishedAt = &now
		})
		if terr != nil && !errors.Is(terr, ErrStale) {
			c.enqueue(e.Job, e.EnqueuedAt)
			return false, terr
		}
		return false, nil
	}
	return c.start(ctx, now, snap, e, plan)
}

func (c *Core) start(ctx context.Context, now time.Time, snap *placement.Snapshot, e *Entry, plan placement.Plan) (bool, error) {
	id := e.Job.ID
	j, err := c.transition(ctx, id, Queued, Placing, "placing with "+plan.Policy, func(x *Job) {
		x.WaitingReason = ""
		x.AtRisk = c.atRisk(e, now)
	})
	if errors.Is(err, ErrStale) || errors.Is(err, ErrNotFound) {
		c.dequeue(id) // cancelled meanwhile
		return false, nil
	}
	if err != nil {
		return false, err
	}
	c.dequeue(id)
	requeue := func(from State, why string, cause error) (bool, error) {
		nj, terr := c.transition(ctx, id, from, Queued, why, func(x *Job) { x.WaitingReason = why })
		if terr != nil {
			c.log.WithError(terr).WithField("job", id).Error("cannot put job back in the queue")
			return false, errors.Join(cause, terr)
		}
		ne := c.enqueue(nj, e.EnqueuedAt)
		ne.SkippedSince, ne.Promoted, ne.PromotedAt = e.SkippedSince, e.Promoted, e.PromotedAt
		if e.Promoted {
			c.jq.Remove(id)
			c.dq.Remove(id)
			c.dq.Push(ne)
		}
		return false, cause
	}
	if err := c.store.SavePlacement(ctx, id, plan); err != nil {
		return requeue(Placing, "could not save the placement", err)
	}
	for _, ag := range plan.Activated {
		if err := c.cfg.Provisioner.PowerOn(ctx, ag); err != nil {
			return requeue(Placing, "could not power on agent "+ag, err)
		}
	}
	j, err = c.transition(ctx, id, Placing, Reserving, describePlan(plan), nil)
	if err != nil {
		return requeue(Placing, "could not record the plan", err)
	}
	if err := c.cluster.Apply(ctx, j, plan); err != nil {
		if rerr := c.cluster.Release(ctx, id); rerr != nil {
			c.log.WithError(rerr).WithField("job", id).Warn("release after failed apply")
		}
		c.freeEpoch.Add(1)
		return requeue(Reserving, "applying the plan failed: "+err.Error(), err)
	}
	p := plan
	c.active[id] = &activeJob{job: j, plan: &p}
	c.passEpoch = c.freeEpoch.Load()
	s, err := c.cluster.Snapshot(ctx)
	if err != nil {
		return true, fmt.Errorf("scheduler: snapshot after start: %w", err)
	}
	*snap = s
	c.observe(ctx, now, s)
	c.annotateRemaining(snap, now)
	return true, nil
}

// fitsEmpty reports whether d fits the snapshot's agents when all of them
// are entirely free.
func fitsEmpty(s placement.Snapshot, d placement.Demand) bool {
	n := 0
	for _, a := range s.Agents {
		a.FreeCPUs, a.FreeMemMB = a.CPUs, a.MemMB
		n += placement.FitsOn(a, d)
		if n >= d.Executors {
			return true
		}
	}
	return false
}

func describePlan(p placement.Plan) string {
	return fmt.Sprintf("plan (%s, %s): %d executors on %d agents, %d activated (+$%.4f/h)",
		p.Policy, p.Outcome, p.Executors(), len(p.Assignments), len(p.Activated), float64(p.CostMicroUSDPerHour)/1e6)
}

// NextWake is the next time something changes without an event: a waiting
// deadline job becomes at risk, a skipped regular job is due for promotion,
// or an error backoff ends. ok is false when nothing is due.
func (c *Core) NextWake() (t time.Time, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock.Now()
	consider := func(x time.Time) {
		if !x.After(now) {
			return // handled by the last pass (or by the retry backoff)
		}
		if !ok || x.Before(t) {
			t, ok = x, true
		}
	}
	if !c.retryAt.IsZero() {
		consider(c.retryAt)
	}
	for _, e := range c.dq.Entries() {
		if dl := e.Job.DeadlineAt; dl != nil && !e.Job.AtRisk {
			if est := c.estimate(&e.Job); est > 0 {
				consider(dl.Add(-est + time.Nanosecond))
			} else {
				consider(*dl)
			}
		}
	}
	if c.cfg.PromoteAfter > 0 && c.cfg.Ordering != OrderFIFO {
		for _, e := range c.jq.Entries() {
			if !e.SkippedSince.IsZero() {
				consider(e.SkippedSince.Add(c.cfg.PromoteAfter))
			}
		}
	}
	return t, ok
}

// QueuedJob is a waiting job as the API shows it.
type QueuedJob struct {
	Job
	// Promoted marks a regular job moved to the deadline queue because it
	// waited too long.
	Promoted bool `json:"promoted,omitempty"`
	// ResourceDemand is the job's RD (the regular queue's key).
	ResourceDemand float64 `json:"resourceDemand"`
}

// QueuesView is the waiting jobs in the order they will be tried
// (GET /api/v1/queues). Jobs still in the intake buffer (not yet admitted)
// are not shown.
type QueuesView struct {
	Deadline []QueuedJob `json:"deadline"`
	Regular  []QueuedJob `json:"regular"`
}

// Queues returns a copy of both queues in order, with waiting reasons.
func (c *Core) Queues() QueuesView {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := QueuesView{Deadline: []QueuedJob{}, Regular: []QueuedJob{}}
	for _, e := range c.dq.Entries() {
		v.Deadline = append(v.Deadline, QueuedJob{Job: e.Job, Promoted: e.Promoted, ResourceDemand: e.RD})
	}
	for _, e := range c.jq.Entries() {
		v.Regular = append(v.Regular, QueuedJob{Job: e.Job, ResourceDemand: e.RD})
	}
	return v
}

// Waiting is the number of jobs in the queues and the intake buffer.
func (c *Core) Waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dq.Len() + c.jq.Len() + c.buffer.Len()
}

// ActiveJobs is the number of jobs holding resources.
func (c *Core) ActiveJobs() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.active)
}

// DiscardLogger is a logger that drops everything (for the simulator and tests).
func DiscardLogger() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
