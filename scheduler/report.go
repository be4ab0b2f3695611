package scheduler

import (
	"context"
	"fmt"
	"time"
)

// Report tells the core about a job that holds resources: it moves to
// LAUNCHING or RUNNING, it ended (FINISHED, FAILED, KILLED: its resources
// are released), or it goes back to QUEUED for a retry (released and
// queued again at the next pass). The transition is stored; waiting jobs
// are then tried. Report takes no core-wide lock.
func (c *Core) Report(ctx context.Context, id string, to State, reason string) error {
	return c.ReportRan(ctx, id, to, reason, RunStart{})
}

// RunStart is what the adapter knows of a run's start: of a run that was
// never reported RUNNING (the job's driver ended while the job was
// LAUNCHING, yet it ran: a TASK_FINISHED, or its TASK_RUNNING taken but not
// reported before its end), or of the run a RUNNING report reports (when
// its driver was first seen running, which a restart or a refused report
// tried again puts before the report). The zero value: no such run, or no
// start known.
type RunStart struct {
	// Ran: the driver ran; its end counts as a run (an attempt, a start
	// time, a row of the run history).
	Ran bool
	// At is the best start known: when its TASK_STARTING/TASK_RUNNING was
	// taken, else when its launch was sent; zero when neither is known
	// (the end is then the start).
	At time.Time
	// Measured: At is when the driver was seen running, as a reported
	// RUNNING would have timed it; otherwise the run time is unknown: the
	// run is recorded without one and teaches the model nothing.
	Measured bool
}

// ReportRan is Report of a job's end (FINISHED, FAILED, KILLED or QUEUED
// again) from LAUNCHING whose driver ran (run.Ran): in the end's one
// transaction the run is counted as a RUNNING report would have counted it
// (one more attempt, its start time, the job's first start) and recorded
// in the run history (docs/learning.md, "Runs never seen running").
// RUNNING from LAUNCHING with run.Ran and a measured run.At starts the run
// at run.At (when the driver was first seen running, stored with its
// launch), not at the report, unless run.At is after now (another
// instance's clock): the time between is run time (docs/learning.md, "How
// a run's times survive a restart"). From any other state, or without
// run.Ran, it is Report.
func (c *Core) ReportRan(ctx context.Context, id string, to State, reason string, run RunStart) error {
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
				if run.Ran && run.Measured && !run.At.IsZero() && run.At.Before(now) && from == Launching {
					t = run.At
				}
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
	var rec *RunRecord
	ranUnseen := from == Launching && run.Ran
	j, err := c.transition(ctx, id, from, to, reason, func(x *Job) {
		if ranUnseen {
			startRunAt(x, run, now)
		}
		if from == Running || ranUnseen {
			rec = runRecord(a, x, now, runOutcome(to, x.PreemptRequested != ""), c.cfg.DurationScale)
			if rec != nil && ranUnseen && !(run.Measured && !run.At.IsZero() && !run.At.After(now)) {
				rec.Seconds, rec.RunTimeUnknown = 0, true
			}
			x.EndedRun = rec
		}
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
	if evicted {
		c.cfg.Observer.Evicted(j, lost)
	}
	if rec != nil && c.cfg.Model != nil {
		c.cfg.Model.Observe(*rec)
	}
	a.gone = true
	c.actMu.Lock()
	delete(c.active, id)
	c.actMu.Unlock()
	relErr := c.cluster.Release(ctx, id)
	if relErr != nil {
		c.log.WithError(relErr).WithField("job", id).Warn("release failed; what the job holds is a stray now: the leak sweep (--leak-sweep, and at start) gives it back, the job being over or back in the queue, or its next plan does when it reserves")
	}
	if to == Queued {
		c.inboxMu.Lock()
		c.requeues = append(c.requeues, j)
		c.inboxMu.Unlock()
	}
	c.freeEpoch.Add(1)
	// The bill stops when the job lets go of its agents, not at the next pass.
	c.observeReleased(ctx, now)
	c.wake()
	return relErr
}

// startRunAt counts a run that was never reported RUNNING as a RUNNING
// report does (one more attempt, its start, the job's first start), at the
// run's best known start (never after now; now when none is known).
func startRunAt(x *Job, run RunStart, now time.Time) {
	x.Attempt++
	t := now
	if !run.At.IsZero() && run.At.Before(now) {
		t = run.At
	}
	x.LastStartedAt = &t
	if x.StartedAt == nil {
		x.StartedAt = &t
	}
}

// observeReleased tells the cost meter of the cluster after a job let go
// of its agents. Reports hold their snapshot one at a time: when many jobs
// end at once (51 at 30,000 agents), each report cloned the cluster's
// snapshot (3.2 MB) and then waited for the meter with it, about 64 MB held
// at the end of a run.
func (c *Core) observeReleased(ctx context.Context, now time.Time) {
	c.releaseObsMu.Lock()
	defer c.releaseObsMu.Unlock()
	if snap, err := c.cluster.Snapshot(ctx); err == nil {
		c.observeCost(ctx, now, snap)
	}
}
