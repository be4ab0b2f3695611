package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/placement"
)

// cancelledMemory is how long the pass remembers a cancelled job, so that
// a retry of it that was on its way back to the queue is dropped.
const cancelledMemory = 10 * time.Minute

// Schedule runs one pass of thesis Algorithm 3 and returns how many jobs it
// started: buffered jobs are admitted and queued; regular jobs skipped for
// longer than PromoteAfter are promoted; deadline jobs are tried in EDF
// order; only if no deadline job is left waiting are regular jobs tried, by
// descending RD, a job that does not fit being skipped and the next tried.
//
// A pass decides, then applies (decide.go, apply.go): the decisions are
// made on one snapshot of the cluster, in memory, with no I/O; then each
// start is written to the store in one transaction and handed to the
// cluster, rejections are written, evictions carried out.
//
// A pass costs O(1) per waiting job that cannot fit: jobs are checked
// against a placement.FitIndex of the snapshot (one computation per
// executor size), and when nothing was freed since the last pass and no
// timer is due, only the jobs that entered a queue since are looked at
// (the others did not fit before and starting jobs only takes resources).
// Waiting reasons change in memory; the store gets their coarse form, in
// batches, when it changes (by Run's writer, or at the end of the pass
// when no Run is going, as in the simulator).
func (c *Core) Schedule(ctx context.Context) (int, error) {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	t0 := time.Now()
	st := PassStat{}
	n, err := c.pass(ctx, c.clock.Now(), &st)
	st.Elapsed, st.Started, st.Waiting = time.Since(t0), n, c.dq.Len()+c.jq.Len()
	c.cfg.Observer.PassDone(st)
	return n, err
}

func (c *Core) pass(ctx context.Context, now time.Time, st *PassStat) (int, error) {
	var firstErr error
	note := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	note(c.retryStranded(ctx))
	c.takeInbox(ctx, now)
	admitted, err := c.intake(ctx, c.buffer.Drain(), now)
	note(err)
	st.Admitted = len(admitted)
	epoch := c.freeEpoch.Load()
	snap, err := c.cluster.Snapshot(ctx)
	if err != nil {
		c.retryAt = now.Add(c.cfg.RetryBackoff)
		c.finishPass(ctx, now)
		return 0, fmt.Errorf("scheduler: snapshot: %w", err)
	}
	c.observe(ctx, now, snap)
	if c.teamsChanged() {
		c.fullDue, c.viewDirty = true, true // the regular queue's order between teams too
	}
	c.fullDue = c.modelLearned() || c.fullDue
	running := c.runningJobs()
	if c.rankedUseChanged(running) {
		c.viewDirty = true // the published regular queue is ranked on what the teams held
	}
	annotateRemaining(&snap, running, now)
	full := c.fullDue || epoch != c.lastFullEpoch || c.timerDue(now)
	if c.timerDue(now) {
		c.viewDirty = true // a job held for its start time may now want warm agents (CouldUse)
	}
	st.Full = full
	if full {
		c.lastFullEpoch, c.fullDue = epoch, false
		c.retryAt, c.wakeAt = time.Time{}, time.Time{}
		c.promote(c.dec.promotions(c.jq.Entries(), now))
		for id, at := range c.cancelled {
			if now.Sub(at) > cancelledMemory {
				delete(c.cancelled, id)
			}
		}
		for id, at := range c.placed {
			if now.Sub(at) > cancelledMemory {
				delete(c.placed, id)
			}
		}
	}
	in := passInput{now: now, snap: snap, deadline: c.candidates(true, full), deadlineQueued: c.dq.Len(),
		regular: c.jq.Entries(), full: full, blocked: c.blocked, running: running, evictLog: c.evictLog, buf: c.decBuf}
	if !full {
		// The entries it does not look at that waited by choice at their
		// last look still do (their timers make a full pass).
		in.deferredOut = c.byChoiceDQ
		for _, e := range in.deadline {
			if e.wait.byChoice {
				in.deferredOut--
			}
		}
	}
	c.budgetInput(&in)
	if !full {
		in.regularFresh = c.candidates(false, false)
	}
	c.teamInput(&in)
	if c.cfg.Standby != nil {
		in.standby = c.cfg.Standby.StandbyAgents()
		if b, ok := c.cfg.Standby.(BootInfo); ok {
			in.boot = b.BootState()
			c.bootTime = in.boot.BootTime
		}
	}
	out := c.dec.decide(in)
	c.noteTeamStarts(out.decisions, now)
	c.reportPlacements()
	started, err := c.apply(ctx, now, out)
	note(err)
	// The buffer is kept for the next pass unless a pass that changed
	// thousands of waiting reasons grew it: the collector would then scan
	// it at every cycle for nothing.
	c.decBuf = nil
	if cap(out.decisions) <= maxKeptDecisions {
		clear(out.decisions) // keep no entry alive through the buffer
		c.decBuf = out.decisions[:0]
	}
	if out.wakeAt.After(now) && (c.wakeAt.IsZero() || out.wakeAt.Before(c.wakeAt)) {
		c.wakeAt = out.wakeAt
	}
	if at := c.flagOverruns(ctx, now); !at.IsZero() && (c.wakeAt.IsZero() || at.Before(c.wakeAt)) {
		c.wakeAt = at
	}
	if c.blocked != out.blocked {
		c.viewDirty = true // previews read it from the published queues
	}
	c.blocked = out.blocked
	c.leaveHint(out.ix)
	if firstErr != nil {
		// Jobs put back by a failed step were not looked at again: the
		// next pass looks at everything.
		c.retryAt, c.fullDue = now.Add(c.cfg.RetryBackoff), true
	}
	note(c.finishPass(ctx, now))
	return started, firstErr
}

// candidates are the entries of one queue a pass looks at, in queue order:
// all of them (the queue's own slice: the pass only reads it), or only
// those that entered it since the last pass.
func (c *Core) candidates(deadline, all bool) []*Entry {
	if all {
		if deadline {
			return c.dq.Entries()
		}
		return c.jq.Entries()
	}
	var out []*Entry
	seen := make(map[*Entry]bool, len(c.fresh))
	for _, e := range c.fresh {
		if e.queued && e.inDQ == deadline && !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	if deadline {
		slices.SortFunc(out, edfLess)
	} else {
		slices.SortFunc(out, c.jq.less)
	}
	return out
}

// runningJobs copies what a pass needs of the jobs holding resources.
func (c *Core) runningJobs() []runningJob {
	c.actMu.Lock()
	defer c.actMu.Unlock()
	out := make([]runningJob, 0, len(c.active))
	for id, a := range c.active {
		out = append(out, runningJob{id: id, plan: a.plan, state: a.state, startedAt: a.startedAt, preempting: a.preempting,
			estimate: a.estimate, deadline: a.deadline, demand: a.demand, preemptions: a.preemptions,
			team: a.team, driverCPUs: a.driverCPUs, driverMemMB: a.driverMemMB})
	}
	// Map order would make the pass's choices among equals vary from run
	// to run.
	slices.SortFunc(out, func(a, b runningJob) int {
		switch {
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	return out
}

// finishPass stores waiting reasons (when no writer runs), forgets which
// entries were fresh, publishes the views and the next wake time.
func (c *Core) finishPass(ctx context.Context, now time.Time) error {
	var err error
	if !c.async.Load() {
		err = c.flushWaiting(ctx)
		if err != nil {
			c.retryAt = now.Add(c.cfg.RetryBackoff)
		}
	}
	for _, e := range c.fresh {
		e.fresh = false
	}
	c.fresh = c.fresh[:0]
	c.publish(now)
	at, ok := c.wakeAt, !c.wakeAt.IsZero()
	if !c.retryAt.IsZero() && c.retryAt.After(now) && (!ok || c.retryAt.Before(at)) {
		at, ok = c.retryAt, true
	}
	c.wakeMu.Lock()
	c.nextAt, c.nextOK = at, ok
	c.wakeMu.Unlock()
	return err
}

func (c *Core) timerDue(now time.Time) bool {
	return (!c.wakeAt.IsZero() && !now.Before(c.wakeAt)) || (!c.retryAt.IsZero() && !now.Before(c.retryAt))
}

// promote moves regular jobs skipped for longer than PromoteAfter (see
// decider.promotions) into the deadline queue.
func (c *Core) promote(es []*Entry) {
	for _, e := range es {
		c.dequeueEntry(e)
		e.Promoted = true
		e.PromotedAt = e.SkippedSince.Add(c.cfg.PromoteAfter)
		c.enqueue(e, e.EnqueuedAt)
		c.restamp(e)
		c.log.WithField("job", e.ID).Info("regular job promoted after waiting too long")
	}
}

// strandedJob is a job a pass took out of its queue to start and could not
// put back when a step failed (the store failed too): its row says PLACING
// or RESERVING, and nothing would ever follow it.
type strandedJob struct {
	from State
	why  string
}

// retryStranded puts stranded jobs back in the queue, through the requeue
// inbox (which also ends those whose kill was asked for meanwhile).
func (c *Core) retryStranded(ctx context.Context) error {
	var firstErr error
	for id, s := range c.stranded {
		j, err := c.transition(ctx, id, s.from, Queued, s.why, func(x *Job) { x.WaitingReason = s.why })
		switch {
		case errors.Is(err, ErrStale) || errors.Is(err, ErrNotFound):
			delete(c.stranded, id)
			c.log.WithError(err).WithField("job", id).Warn("a job that could not be put back in the queue changed meanwhile; leaving it as it is now")
		case err != nil:
			if firstErr == nil {
				firstErr = fmt.Errorf("put job %s back in the queue: %w", id, err)
			}
		default:
			delete(c.stranded, id)
			c.inboxMu.Lock()
			c.requeues = append(c.requeues, j)
			c.inboxMu.Unlock()
		}
	}
	return firstErr
}

// takeInbox queues the retries Report sent back and applies cancellations.
func (c *Core) takeInbox(ctx context.Context, now time.Time) {
	c.inboxMu.Lock()
	requeues, cancels := c.requeues, c.cancels
	c.requeues, c.cancels = nil, nil
	c.inboxMu.Unlock()
	var entries []*Entry
	for i := range requeues {
		j := &requeues[i]
		if _, gone := c.cancelled[j.ID]; gone {
			continue
		}
		if j.KillRequested {
			// The kill was asked for while the job gave its resources back
			// for a retry: it ends instead of running again.
			if !c.cancelKilled(ctx, j.ID, now) {
				c.inboxMu.Lock()
				c.requeues = append(c.requeues, *j) // tried again at the next pass
				c.inboxMu.Unlock()
			}
			continue
		}
		entries = append(entries, c.newEntry(j))
	}
	c.enqueueMany(entries, now)
	for _, n := range cancels {
		if n.kill {
			if c.activeJob(n.job.ID) != nil {
				if err := c.cluster.Kill(ctx, n.job.ID); err != nil {
					c.log.WithError(err).WithField("job", n.job.ID).Warn("kill failed; the request stays in the store: the job ends KILLED when its driver ends or it comes back to the queue, and a restart kills it")
				}
			} else if e := c.byID[n.job.ID]; e != nil {
				// It went back to the queue before the kill reached the core.
				c.dequeueEntry(e)
				if !c.cancelKilled(ctx, n.job.ID, now) {
					c.enqueue(e, e.EnqueuedAt)
				}
			}
			continue
		}
		if e := c.byID[n.job.ID]; e != nil {
			c.dequeueEntry(e)
		}
		c.buffer.Remove(n.job.ID)
		c.cancelled[n.job.ID] = now
	}
}

// cancelKilled ends a queued job whose kill was requested (QUEUED ->
// CANCELLED); false when it could not be written (the job stays queued and
// its kill request stays stored, so the next restart ends it).
func (c *Core) cancelKilled(ctx context.Context, id string, now time.Time) bool {
	_, err := c.transition(ctx, id, Queued, Cancelled, reasonKillWhileWaiting, nil)
	if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrNotFound) {
		c.log.WithError(err).WithField("job", id).Warn("could not cancel a queued job whose kill was requested")
		return false
	}
	c.cancelled[id] = now
	return true
}

// observe updates capacity, totals and cost from a snapshot.
func (c *Core) observe(ctx context.Context, now time.Time, snap placement.Snapshot) {
	tc, tm := snap.Totals()
	if tc != c.totalCPU || tm != c.totalMem {
		c.totalCPU, c.totalMem = tc, tm
		c.jq.Resort(tc, tm, c.alpha, c.beta)
		for _, e := range c.dq.Entries() {
			e.RD = placement.ResourceDemand(e.Demand, tc, tm, c.alpha, c.beta)
			e.view = nil
		}
		for _, e := range c.jq.Entries() {
			e.view = nil
		}
		c.viewDirty, c.fullDue = true, true
	}
	var standby []placement.Agent
	if c.cfg.Standby != nil {
		standby = c.cfg.Standby.StandbyAgents()
	}
	if c.capacity == nil || !sameSizes(c.capSizes, snap.Agents, standby) {
		capacity := sizeFrontier(snap.Agents, standby)
		c.capMu.Lock()
		c.capacity, c.capSizes = capacity, agentSizes(c.capSizes, snap.Agents, standby)
		c.capCounts = countSizes(c.capSizes)
		c.capMu.Unlock()
	}
	c.observeCost(ctx, now, snap)
}

func (c *Core) observeCost(ctx context.Context, now time.Time, snap placement.Snapshot) {
	c.cost.Observe(now, snap)
}

// atRisk is decider.atRisk (for the views and admission).
func (c *Core) atRisk(e *Entry, now time.Time) bool { return c.dec.atRisk(e, now) }

// setWait records why an entry waits: in memory at once, in the store (by
// the writer) only when its coarse form or the at-risk flag changed.
func (c *Core) setWait(e *Entry, w waitState) {
	if w == e.wait {
		return
	}
	if e.queued && e.inDQ && w.byChoice != e.wait.byChoice {
		c.byChoiceDQ += b2i(w.byChoice) - b2i(e.wait.byChoice)
	}
	e.wait = w
	c.restamp(e)
}

// restamp refreshes an entry's view and, when it changed, its stored reason.
func (c *Core) restamp(e *Entry) {
	e.view = nil
	c.viewDirty = true
	coarse := e.wait.coarse(e.Promoted, c.cfg.PromoteAfter)
	if coarse != e.stored.reason || e.wait.atRisk != e.stored.atRisk {
		e.stored = storedWait{reason: coarse, atRisk: e.wait.atRisk}
		c.waiting.put(WaitingNote{ID: e.ID, Reason: coarse, AtRisk: e.wait.atRisk})
	}
}

func describePlan(p placement.Plan) string {
	return fmt.Sprintf("plan (%s, %s): %s on %s, %d activated (+$%.4f/h)",
		p.Policy, p.Outcome, plural.N(p.Executors(), "executor"), plural.N(len(p.Assignments), "agent"), len(p.Activated), float64(p.CostMicroUSDPerHour)/1e6)
}
