package scheduler

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// apply carries out a pass's decisions, in order, and returns how many
// jobs it started. A start is one store transaction (QUEUED -> PLACING ->
// RESERVING with the plan), then the power-on of the agents it activates,
// then the cluster; a step that fails puts the job back in its queue. A
// failed step does not stop the others: the first error is returned, and
// the next pass (which looks at everything after an error) corrects what
// the later decisions assumed of it. It holds no lock across a store or
// cluster call other than passMu, which only passes take.
func (c *Core) apply(ctx context.Context, now time.Time, out passOutput) (int, error) {
	var firstErr error
	note := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	started := 0
	for i := range out.decisions {
		d := &out.decisions[i]
		switch d.kind {
		case decStart:
			ok, err := c.applyStart(ctx, now, d.entry, d.plan, d.atRisk, d.shape, d.pred)
			note(err)
			if ok {
				started++
			}
		case decReject:
			note(c.applyReject(ctx, now, d.entry, d.reason))
		case decWait:
			c.applyWait(now, d)
		case decEvict:
			note(c.applyEvict(ctx, now, d))
		case decPowerOn:
			note(c.applyPowerOn(ctx, now, d))
		}
	}
	if started > 0 {
		// The bill starts when the plans' agents become active: one look
		// at the cluster after the pass's starts, not one per start.
		if s, err := c.cluster.Snapshot(ctx); err == nil {
			c.observeCost(ctx, now, s)
		} else {
			note(fmt.Errorf("scheduler: snapshot after starts: %w", err))
		}
	}
	return started, firstErr
}

// applyWait records a waiting job's new state.
func (c *Core) applyWait(now time.Time, d *decision) {
	e := d.entry
	if d.decisionExtra != nil && d.setEvicting {
		e.evicting = d.evicting
	}
	if d.skipped && e.SkippedSince.IsZero() {
		e.SkippedSince = now
	}
	w := d.wait
	if w.pre.equal(e.wait.pre) {
		w.pre = e.wait.pre
	}
	c.setWait(e, w)
}

// applyReject takes a job that can never run here out of its queue: REJECTED.
func (c *Core) applyReject(ctx context.Context, now time.Time, e *Entry, reason string) error {
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

// applyStart starts a job: the store records the start and the plan in
// one transaction, the agents the plan activates are powered on, and the
// cluster gets the plan. It reports whether the job started.
func (c *Core) applyStart(ctx context.Context, now time.Time, e *Entry, plan placement.Plan, atRisk bool, shape RunShape, pred perfmodel.Prediction) (bool, error) {
	id := e.ID
	c.dequeueEntry(e)
	c.placed[id] = now
	j, err := c.store.StartPlaced(ctx, Placed{ID: id, Plan: plan,
		PlacingReason: "placing with " + plan.Policy, ReservingReason: describePlan(plan),
		Mutate: func(x *Job) {
			x.WaitingReason = ""
			x.AtRisk = atRisk
		}})
	if errors.Is(err, ErrStale) || errors.Is(err, ErrNotFound) {
		return false, nil // cancelled meanwhile
	}
	if err != nil {
		c.enqueue(e, e.EnqueuedAt)
		return false, fmt.Errorf("scheduler: start job %s: %w", id, err)
	}
	c.changed(j, Queued, "started: "+describePlan(plan))
	for _, ag := range plan.Activated {
		if err := c.powerOnFor(ctx, ag, id, "starts on it"); err != nil {
			return c.requeue(ctx, now, e, "could not power on agent "+ag, err)
		}
	}
	p := plan
	a := c.newActiveJob(j, &p)
	a.learnedRun(shape, pred)
	c.actMu.Lock()
	c.active[id] = a
	c.actMu.Unlock()
	if err := c.cluster.Apply(ctx, j, plan); err != nil {
		c.actMu.Lock()
		delete(c.active, id)
		c.actMu.Unlock()
		if rerr := c.cluster.Release(ctx, id); rerr != nil {
			c.log.WithError(rerr).WithField("job", id).Warn("release after failed apply did not go through; the job goes back to the queue, and the leak sweep (--leak-sweep, and at start) or its next plan, when it reserves, gives back what was reserved")
		}
		c.freeEpoch.Add(1)
		return c.requeue(ctx, now, e, "applying the plan failed: "+err.Error(), err)
	}
	return true, nil
}

// requeue puts a job whose start failed after it was stored RESERVING
// back in the queue (cause is why); when the store fails too, every pass
// tries again (retryStranded).
func (c *Core) requeue(ctx context.Context, now time.Time, e *Entry, why string, cause error) (bool, error) {
	id := e.ID
	nj, terr := c.transition(ctx, id, Reserving, Queued, why, func(x *Job) { x.WaitingReason = why })
	if terr != nil {
		if errors.Is(terr, ErrStale) || errors.Is(terr, ErrNotFound) {
			c.log.WithError(terr).WithField("job", id).Warn("cannot put job back in the queue: it changed meanwhile")
			return false, errors.Join(cause, terr)
		}
		// Its row says RESERVING and nothing follows it: every pass tries
		// again (retryStranded).
		c.stranded[id] = strandedJob{from: Reserving, why: why}
		c.log.WithError(terr).WithField("job", id).Error("cannot put job back in the queue; trying again at every pass")
		return false, errors.Join(cause, terr)
	}
	ne := c.newEntry(&nj)
	ne.EnqueuedAt, ne.SkippedSince, ne.Promoted, ne.PromotedAt = e.EnqueuedAt, e.SkippedSince, e.Promoted, e.PromotedAt
	c.enqueue(ne, now)
	return false, cause
}

// applyEvict carries out an eviction decision: each victim's eviction is
// stored, then asked of the cluster, in order, until one fails; the
// waiting job's preemption view says which were started.
func (c *Core) applyEvict(ctx context.Context, now time.Time, d *decision) error {
	e := d.entry
	if d.setEvicting {
		e.evicting = d.evicting
	}
	pv := *d.wait.pre
	pv.Evicting = nil
	var firstErr error
	for _, v := range d.victims {
		if err := c.evict(ctx, now, v, e); err != nil {
			firstErr = err
			break
		}
		pv.Evicting = append(pv.Evicting, v.ID)
	}
	if len(pv.Evicting) == 0 {
		pv.WouldEvict = make([]string, len(d.victims))
		for i, v := range d.victims {
			pv.WouldEvict[i] = v.ID
		}
		pv.Blocked = "the eviction could not be started"
	}
	w := d.wait
	w.pre = &pv
	c.applyWait(now, &decision{entry: e, wait: w})
	return firstErr
}

// evict stores the decision to evict v for e, then asks the cluster to
// carry it out; the victim comes back through Report(..., Queued, ...).
func (c *Core) evict(ctx context.Context, now time.Time, v Victim, e *Entry) error {
	reason := fmt.Sprintf("evicted (%s) to make room for deadline job %s", c.cfg.Preemption, e.ID)
	if e.DeadlineAt == nil {
		reason = reclaimReason(c.cfg.Preemption, e)
	}
	if _, err := c.store.RequestPreemption(ctx, v.ID, reason); err != nil {
		if errors.Is(err, ErrStale) || errors.Is(err, ErrNotFound) {
			return nil // it ended meanwhile
		}
		return fmt.Errorf("scheduler: record eviction of job %s: %w", v.ID, err)
	}
	c.actMu.Lock()
	if a := c.active[v.ID]; a != nil {
		a.preempting = true
	}
	c.actMu.Unlock()
	c.noteEviction(now, v.CPUs())
	e.evicting = append(e.evicting, v.ID)
	c.log.WithFields(logrus.Fields{"job": v.ID, "for": e.ID, "policy": c.cfg.Preemption}).Info("evicting a running job for a deadline job")
	c.cfg.Observer.Evicting(PreemptStat{Victim: v.ID, For: e.ID, Policy: c.cfg.Preemption})
	// The decision is stored: a failure here is retried by the framework
	// (or by the next sparkpack, which reads it back).
	if err := c.cluster.Preempt(ctx, v.ID, reason); err != nil {
		c.log.WithError(err).WithField("job", v.ID).Warn("eviction request failed; the stored decision is carried out when the framework next looks at the job")
	}
	return nil
}

// noteEviction records an eviction for PreemptMaxShare, dropping those
// older than its window.
func (c *Core) noteEviction(now time.Time, cpus float64) {
	kept := c.evictLog[:0]
	for _, r := range c.evictLog {
		if now.Sub(r.at) < preemptWindow {
			kept = append(kept, r)
		}
	}
	c.evictLog = append(kept, evictRecord{at: now, cpus: cpus})
}

// timedPolicy is the placement policy with its statistics: it times each
// call (wall time: the scheduling delay of the thesis, whatever clock the
// core runs on) for Observer.Placed. The pass's decide step calls it;
// the core reports the statistics after the decisions.
type timedPolicy struct {
	placement.Policy
	stats []PlacementStat
}

func (t *timedPolicy) Place(s placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	t0 := time.Now()
	plan, err := t.Policy.Place(s, d)
	t.stats = append(t.stats, PlacementStat{JobID: d.JobID, Policy: t.Policy.Name(), Elapsed: time.Since(t0), Placed: err == nil, Outcome: plan.Outcome})
	return plan, err
}

// reportPlacements hands the pass's placement statistics to the observer.
func (c *Core) reportPlacements() {
	for _, s := range c.timed.stats {
		c.cfg.Observer.Placed(s)
	}
	c.timed.stats = c.timed.stats[:0]
}
