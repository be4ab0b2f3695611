package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

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
	if c.cfg.OnPass != nil {
		st.Elapsed, st.Started, st.Waiting = time.Since(t0), n, c.dq.Len()+c.jq.Len()
		c.cfg.OnPass(st)
	}
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
	c.annotateRemaining(&snap, now)
	full := c.fullDue || epoch != c.lastFullEpoch || c.timerDue(now)
	st.Full = full
	if full {
		c.lastFullEpoch, c.fullDue = epoch, false
		c.retryAt, c.wakeAt = time.Time{}, time.Time{}
		c.promote(now)
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
	ix := placement.NewFitIndex(snap)
	c.standby, c.room, c.preemptScanned = nil, nil, 0
	started := 0

	for _, e := range c.deadlineOrder(c.candidates(true, full), now) {
		if !e.queued || !e.inDQ {
			continue
		}
		ok, err := c.try(ctx, now, &snap, &ix, e)
		note(err)
		if ok {
			started++
			continue
		}
		c.noteWake(e, now)
	}
	if c.dq.Len() == 0 {
		for _, e := range c.candidates(false, full || c.blocked) {
			if !e.queued || e.inDQ {
				continue
			}
			ok, err := c.try(ctx, now, &snap, &ix, e)
			note(err)
			if ok {
				started++
				continue
			}
			c.noteWake(e, now)
		}
	} else {
		for _, e := range c.candidates(false, full || !c.blocked) {
			if !e.queued || e.inDQ {
				continue
			}
			if e.SkippedSince.IsZero() {
				e.SkippedSince = now
			}
			c.setWait(e, waitState{kind: waitDeadlineFirst})
			c.noteWake(e, now)
		}
	}
	c.blocked = c.dq.Len() > 0
	c.leaveHint(ix)
	if firstErr != nil {
		// Jobs put back by a failed step were not looked at again: the
		// next pass looks at everything.
		c.retryAt, c.fullDue = now.Add(c.cfg.RetryBackoff), true
	}
	note(c.finishPass(ctx, now))
	return started, firstErr
}

// candidates are the entries of one queue a pass looks at, in queue order:
// all of them, or only those that entered it since the last pass.
func (c *Core) candidates(deadline, all bool) []*Entry {
	if all {
		if deadline {
			return slices.Clone(c.dq.Entries())
		}
		return slices.Clone(c.jq.Entries())
	}
	var out []*Entry
	for _, e := range c.fresh {
		if e.queued && e.inDQ == deadline {
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

// noteWake takes a waiting entry's next timer into account: when a deadline
// job becomes at risk, when a skipped regular job is due for promotion.
func (c *Core) noteWake(e *Entry, now time.Time) {
	consider := func(x time.Time) {
		if x.After(now) && (c.wakeAt.IsZero() || x.Before(c.wakeAt)) {
			c.wakeAt = x
		}
	}
	if e.DeadlineAt != nil && !e.wait.atRisk {
		if est := c.estimate(e); est > 0 {
			consider(e.DeadlineAt.Add(-est + time.Nanosecond))
		} else {
			consider(*e.DeadlineAt)
		}
	}
	if !e.inDQ && c.cfg.PromoteAfter > 0 && c.cfg.Ordering != OrderFIFO && !e.SkippedSince.IsZero() {
		consider(e.SkippedSince.Add(c.cfg.PromoteAfter))
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
		entries = append(entries, NewEntry(j))
	}
	c.enqueueMany(entries, now)
	for _, n := range cancels {
		if n.kill {
			if c.activeJob(n.job.ID) != nil {
				if k, ok := c.cluster.(Killer); ok {
					if err := k.Kill(ctx, n.job.ID); err != nil {
						c.log.WithError(err).WithField("job", n.job.ID).Warn("kill failed")
					}
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
		c.capMu.Unlock()
	}
	c.observeCost(ctx, now, snap)
}

func (c *Core) observeCost(ctx context.Context, now time.Time, snap placement.Snapshot) {
	c.cost.Observe(now, snap)
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
		c.dequeueEntry(e)
		e.Promoted = true
		e.PromotedAt = e.SkippedSince.Add(c.cfg.PromoteAfter)
		c.enqueue(e, e.EnqueuedAt)
		c.restamp(e)
		c.log.WithField("job", e.ID).Info("regular job promoted after waiting too long")
	}
}

// atRisk: a waiting deadline job is at risk when, started now, it would
// end after its deadline (with its estimated duration), or when its
// deadline has passed.
func (c *Core) atRisk(e *Entry, now time.Time) bool {
	dl := e.DeadlineAt
	if dl == nil {
		return false
	}
	if est := c.estimate(e); est > 0 {
		return now.Add(est).After(*dl)
	}
	return !now.Before(*dl)
}

// estimate is the job's estimated run time in wall time (see DurationScale).
func (c *Core) estimate(e *Entry) time.Duration {
	return time.Duration(e.EstimatedDurationSeconds * float64(time.Second) * c.cfg.DurationScale)
}

// setWait records why an entry waits: in memory at once, in the store (by
// the writer) only when its coarse form or the at-risk flag changed.
func (c *Core) setWait(e *Entry, w waitState) {
	if w == e.wait {
		return
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

// try places one waiting job on snap and starts it. It reports whether the
// job started; snap and ix are refreshed after a start.
func (c *Core) try(ctx context.Context, now time.Time, snap *placement.Snapshot, ix **placement.FitIndex, e *Entry) (bool, error) {
	if *ix == nil {
		return false, nil // no fresh snapshot after the last start: wait for the next pass
	}
	if nf := (*ix).Check(e.Demand); nf != nil {
		if plan, ok := c.placeOnStandby(now, *snap, e); ok {
			return c.start(ctx, now, snap, ix, e, plan)
		}
		return false, c.waitOrEvict(ctx, now, *snap, *ix, e, nf)
	}
	plan, err := c.place(now, *snap, e)
	if err != nil {
		var nf *placement.NoFit
		if errors.As(err, &nf) {
			if plan, ok := c.placeOnStandby(now, *snap, e); ok {
				return c.start(ctx, now, snap, ix, e, plan)
			}
			return false, c.waitOrEvict(ctx, now, *snap, *ix, e, nf)
		}
		// An invalid demand: it can never run.
		return false, c.reject(ctx, now, e, err.Error())
	}
	return c.start(ctx, now, snap, ix, e, plan)
}

// place runs the placement policy, with its statistics.
func (c *Core) place(now time.Time, snap placement.Snapshot, e *Entry) (placement.Plan, error) {
	t0 := time.Now()
	plan, err := c.policy.Place(snap, c.demandAt(e, now))
	elapsed := time.Since(t0)
	if c.cfg.OnPlacement != nil {
		c.cfg.OnPlacement(PlacementStat{JobID: e.ID, Policy: c.policy.Name(), Elapsed: elapsed, Placed: err == nil, Outcome: plan.Outcome})
	}
	return plan, err
}

// standbyView is the snapshot with the powered-off agents added, built at
// most once per snapshot.
type standbyView struct {
	snap  placement.Snapshot
	ix    *placement.FitIndex
	extra int // powered-off agents added
}

func (c *Core) standbyOf(snap placement.Snapshot) *standbyView {
	if c.standby != nil {
		return c.standby
	}
	v := &standbyView{snap: snap}
	if c.cfg.Standby != nil {
		if extra := c.cfg.Standby.StandbyAgents(); len(extra) > 0 {
			live := make(map[string]bool, len(snap.Agents))
			for _, a := range snap.Agents {
				live[a.ID] = true
			}
			ag := make([]placement.Agent, 0, len(snap.Agents)+len(extra))
			ag = append(ag, snap.Agents...)
			for _, a := range extra {
				if !live[a.ID] { // registered again already: it is in the snapshot
					ag = append(ag, a)
					v.extra++
				}
			}
			v.snap = placement.Snapshot{Agents: ag}
		}
	}
	v.ix = placement.NewFitIndex(v.snap)
	c.standby = v
	return v
}

// placeOnStandby places a job that fits no powered-on agent on the
// cluster with the powered-off agents added (the plan activates them).
func (c *Core) placeOnStandby(now time.Time, snap placement.Snapshot, e *Entry) (placement.Plan, bool) {
	v := c.standbyOf(snap)
	if v.extra == 0 || v.ix.Check(e.Demand) != nil {
		return placement.Plan{}, false
	}
	plan, err := c.place(now, v.snap, e)
	return plan, err == nil
}

// waitOrEvict handles a job that does not fit now (noFit), then, for a
// deadline job, looks at whether it will miss its deadline waiting and
// evicts running jobs for it (considerPreemption).
func (c *Core) waitOrEvict(ctx context.Context, now time.Time, snap placement.Snapshot, ix *placement.FitIndex, e *Entry, nf *placement.NoFit) error {
	err := c.noFit(ctx, now, snap, ix, e, nf)
	if err != nil || !e.queued || e.DeadlineAt == nil {
		return err
	}
	return c.considerPreemption(ctx, now, snap, e)
}

// noFit handles a job that does not fit now: it waits with the reason, or
// is rejected when it could never run on this cluster (powered-off agents
// included).
func (c *Core) noFit(ctx context.Context, now time.Time, snap placement.Snapshot, ix *placement.FitIndex, e *Entry, nf *placement.NoFit) error {
	v := c.standbyOf(snap)
	if len(v.snap.Agents) > 0 {
		whole := nf
		if v.extra > 0 {
			whole = v.ix.Check(e.Demand)
		}
		if whole != nil && whole.Never {
			return c.reject(ctx, now, e, whole.Error())
		}
		if !v.ix.FitsEmpty(e.Demand) {
			return c.reject(ctx, now, e, fmt.Sprintf("does not fit even on the empty cluster: it needs %d executors of %g cpus and %g MiB",
				e.Demand.Executors, e.Demand.CPUs, e.Demand.MemMB))
		}
	}
	// No agent known yet (a restart, a partition): wait, never reject.
	w := *nf
	w.Never = false
	if !e.IsDeadlineJob() && !e.Promoted && e.SkippedSince.IsZero() {
		e.SkippedSince = now
	}
	// A deadline job keeps its preemption view; considerPreemption updates it.
	c.setWait(e, waitState{kind: waitNoFit, nf: w, atRisk: c.atRisk(e, now), pre: e.wait.pre})
	return nil
}

// reject takes a job that can never run here out of its queue: REJECTED.
func (c *Core) reject(ctx context.Context, now time.Time, e *Entry, reason string) error {
	c.dequeueEntry(e)
	_, err := c.transition(ctx, e.ID, Queued, Rejected, reason, func(x *Job) {
		x.WaitingReason = reason
		x.FinishedAt = &now
	})
	if err != nil && !errors.Is(err, ErrStale) && !errors.Is(err, ErrNotFound) {
		c.enqueue(e, e.EnqueuedAt)
		return err
	}
	return nil
}

func (c *Core) start(ctx context.Context, now time.Time, snap *placement.Snapshot, ix **placement.FitIndex, e *Entry, plan placement.Plan) (bool, error) {
	id := e.ID
	c.dequeueEntry(e)
	c.placed[id] = now
	atRisk := c.atRisk(e, now)
	j, err := c.transition(ctx, id, Queued, Placing, "placing with "+plan.Policy, func(x *Job) {
		x.WaitingReason = ""
		x.AtRisk = atRisk
	})
	if errors.Is(err, ErrStale) || errors.Is(err, ErrNotFound) {
		return false, nil // cancelled meanwhile
	}
	if err != nil {
		c.enqueue(e, e.EnqueuedAt)
		return false, err
	}
	requeue := func(from State, why string, cause error) (bool, error) {
		nj, terr := c.transition(ctx, id, from, Queued, why, func(x *Job) { x.WaitingReason = why })
		if terr != nil {
			if errors.Is(terr, ErrStale) || errors.Is(terr, ErrNotFound) {
				c.log.WithError(terr).WithField("job", id).Warn("cannot put job back in the queue: it changed meanwhile")
				return false, errors.Join(cause, terr)
			}
			// Its row says PLACING or RESERVING and nothing follows it:
			// every pass tries again (retryStranded).
			c.stranded[id] = strandedJob{from: from, why: why}
			c.log.WithError(terr).WithField("job", id).Error("cannot put job back in the queue; trying again at every pass")
			return false, errors.Join(cause, terr)
		}
		ne := NewEntry(&nj)
		ne.EnqueuedAt, ne.SkippedSince, ne.Promoted, ne.PromotedAt = e.EnqueuedAt, e.SkippedSince, e.Promoted, e.PromotedAt
		c.enqueue(ne, now)
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
	p := plan
	a := c.newActiveJob(j, &p)
	c.actMu.Lock()
	c.active[id] = a
	c.actMu.Unlock()
	if err := c.cluster.Apply(ctx, j, plan); err != nil {
		c.actMu.Lock()
		delete(c.active, id)
		c.actMu.Unlock()
		if rerr := c.cluster.Release(ctx, id); rerr != nil {
			c.log.WithError(rerr).WithField("job", id).Warn("release after failed apply")
		}
		c.freeEpoch.Add(1)
		return requeue(Reserving, "applying the plan failed: "+err.Error(), err)
	}
	s, err := c.cluster.Snapshot(ctx)
	if err != nil {
		*ix = nil
		return true, fmt.Errorf("scheduler: snapshot after start: %w", err)
	}
	c.annotateRemaining(&s, now)
	*snap = s
	*ix = placement.NewFitIndex(s)
	c.standby, c.room = nil, nil
	c.observeCost(ctx, now, s)
	return true, nil
}

func describePlan(p placement.Plan) string {
	return fmt.Sprintf("plan (%s, %s): %d executors on %d agents, %d activated (+$%.4f/h)",
		p.Policy, p.Outcome, p.Executors(), len(p.Assignments), len(p.Activated), float64(p.CostMicroUSDPerHour)/1e6)
}
