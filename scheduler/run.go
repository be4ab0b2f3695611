package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
	"github.com/sparkpack/sparkpack/internal/retry"
	"github.com/sparkpack/sparkpack/placement"
)

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
	// A pass that fails (the master or the database away) is retried
	// every RetryBackoff: logged the first time, then every 30 s with the
	// count, and when a pass works again.
	var fails failurelog.State
	for {
		passAt := time.Now()
		_, err := c.Schedule(ctx)
		if ctx.Err() == nil {
			var v failurelog.Verdict
			fails, v = fails.Step(c.clock.Now(), err != nil)
			switch v.Kind {
			case failurelog.First:
				c.log.WithError(err).Warn("scheduling pass failed; retrying")
			case failurelog.Still:
				c.log.WithError(err).WithFields(logrus.Fields{"failures": v.Failures, "failing_for": c.clock.Now().Sub(v.Since).Round(time.Second).String()}).
					Warn("scheduling passes still fail; retrying")
			case failurelog.Recovered:
				c.log.WithFields(logrus.Fields{"failures": v.Failures, "failed_for": c.clock.Now().Sub(v.Since).Round(time.Millisecond).String()}).
					Info("a scheduling pass worked again")
			}
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
				c.enqueue(c.newEntry(&j), now)
			} else {
				back = append(back, Change{ID: j.ID, From: Placing, To: Queued, Reason: "restart: placement was not applied",
					Mutate: func(x *Job) { x.WaitingReason = ReasonQueued }})
			}
		default:
			if j.State.Active() {
				var plan *placement.Plan
				if j.State != Placing {
					if p, err := c.store.Plan(ctx, j.ID); err == nil && len(p.Assignments) > 0 {
						plan = &p
					}
				}
				a := c.newActiveJob(j, plan)
				c.learnRecovered(a)
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
				c.enqueue(c.newEntry(&r.Job), now)
			}
		}
	}
	c.fullDue = true
	c.freeEpoch.Add(1)
	c.publish(now)
	c.wake()
	return nil
}
