package offers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// The executor of the lifecycle machine: every event, whoever hears it, is
// stepped under c.mu (lifecycle.Step is pure and quick); the actions it
// returns are performed by the job's follower goroutine, one at a time,
// and each result goes back to the machine as an event.

// stepLocked steps the job's machine; c.mu is held.
func (c *Cluster) stepLocked(lj *liveJob, ev lifecycle.Event) []lifecycle.Action {
	if ev.At.IsZero() {
		ev.At = time.Now()
	}
	var acts []lifecycle.Action
	lj.st, acts = lifecycle.Step(lj.st, ev)
	c.changedLocked()
	return acts
}

// postLocked steps the machine with an event heard outside the follower
// and hands the follower what it decided; c.mu is held.
func (c *Cluster) postLocked(lj *liveJob, ev lifecycle.Event) {
	if acts := c.stepLocked(lj, ev); len(acts) > 0 {
		lj.pending = append(lj.pending, acts...)
		lj.poke()
	}
}

// follow performs the job's actions until it is done: its resources back
// and its end reported.
func (c *Cluster) follow(ctx context.Context, lj *liveJob) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	var wake time.Time // when the timer fires (zero: stopped)
	c.mu.Lock()
	acts := c.stepLocked(lj, lifecycle.Event{Kind: lifecycle.EvStart})
	c.mu.Unlock()
	for ctx.Err() == nil {
		for len(acts) > 0 && ctx.Err() == nil {
			a := acts[0]
			acts = acts[1:]
			if a.Kind == lifecycle.ActFinish {
				c.finish(lj)
				return
			}
			acts = append(acts, c.perform(ctx, lj, a)...)
		}
		c.mu.Lock()
		acts, lj.pending = lj.pending, nil
		want := lj.st.Wake
		c.mu.Unlock()
		if len(acts) > 0 {
			continue
		}
		if !want.Equal(wake) {
			timer.Stop()
			select {
			case <-timer.C:
			default:
			}
			if wake = want; !want.IsZero() {
				timer.Reset(max(time.Until(want), 0))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-lj.signal:
		case <-timer.C:
			wake = time.Time{}
			c.mu.Lock()
			acts = c.stepLocked(lj, lifecycle.Event{Kind: lifecycle.EvTick})
			c.mu.Unlock()
		}
	}
}

// finish forgets a job that is done.
func (c *Cluster) finish(lj *liveJob) {
	c.mu.Lock()
	if c.jobs[lj.st.Job.ID] == lj {
		delete(c.jobs, lj.st.Job.ID) // the core has let go of it
		c.changedLocked()
	}
	c.mu.Unlock()
	if rep := c.reporter(); rep != nil {
		rep.ClusterChanged()
	}
}

// perform carries out one action and returns what the machine decides on
// its result.
func (c *Cluster) perform(ctx context.Context, lj *liveJob, a lifecycle.Action) []lifecycle.Action {
	c.mu.Lock()
	st := lj.st
	c.mu.Unlock()
	id := st.Job.ID
	log := c.log.WithField("job", id)
	var ev lifecycle.Event
	switch a.Kind {
	case lifecycle.ActTimer:
		return nil // the follower reads the state's Wake
	case lifecycle.ActNote:
		_ = c.cfg.Store.Note(ctx, id, a.Text)
		return nil
	case lifecycle.ActKick:
		c.kick()
		return nil
	case lifecycle.ActExpect:
		if c.cfg.Framework != nil {
			agents := make([]string, 0, len(st.Plan.Assignments))
			for _, as := range st.Plan.Assignments {
				agents = append(agents, as.AgentID)
			}
			c.cfg.Framework.Expect(ctx, id, agents) // offers kept for the driver
		}
		return nil
	case lifecycle.ActCancelLaunch:
		if c.cfg.Framework != nil {
			c.cfg.Framework.CancelLaunch(id)
		}
		return nil
	case lifecycle.ActCheckAgents:
		ev = lifecycle.Event{Kind: lifecycle.EvAgentsChecked}
		var waiting []string
		replaced, names := map[string]string{}, map[string]string{}
		c.mu.Lock()
		for _, as := range st.Plan.Assignments {
			if !c.registeredLocked(as.AgentID) && !slices.Contains(waiting, as.AgentID) {
				waiting = append(waiting, as.AgentID)
				rp := c.replacedLocked(as.AgentID)
				replaced[as.AgentID], names[as.AgentID] = rp.by, c.nameLocked(as.AgentID)
				if rp.host != "" {
					names[as.AgentID] = rp.host
				}
			}
		}
		c.mu.Unlock()
		// AgentFailed (power management) is asked without c.mu.
		ev.Agent, ev.ReplacedBy, ev.Failed = firstAgentOut(waiting, func(id string) string { return replaced[id] }, c.cfg.AgentFailed)
		ev.Name = names[ev.Agent]
	case lifecycle.ActReserve:
		err := c.cfg.Reserver.Reserve(ctx, st.Job, st.Plan)
		ev = lifecycle.Event{Kind: lifecycle.EvReserved, Conflict: errors.Is(err, ErrReserveConflict)}
		if err != nil {
			ev.Err = fmt.Errorf("reserve: %w", err)
		}
		if ev.Conflict {
			ev.Err = err
		}
	case lifecycle.ActNameDriver:
		rec, err := c.nameDriver(ctx, id, a.Attempt, a.Lost)
		if err == nil && a.Relaunch {
			log.WithFields(logrus.Fields{"lost_task": st.Driver.TaskID, "state": st.Driver.State, "task": rec.TaskID,
				"lost_launches": a.Lost}).Info("Mesos lost the driver launch before it started; launching it again (no retry used)")
		}
		ev = lifecycle.Event{Kind: lifecycle.EvDriverNamed, Driver: rec, Err: err}
	case lifecycle.ActReport:
		ev = lifecycle.Event{Kind: lifecycle.EvReported, Err: c.report(ctx, id, a.To, a.Why, a.Run)}
	case lifecycle.ActQueueLaunch:
		return c.queueLaunch(ctx, lj)
	case lifecycle.ActKillDriver:
		err := c.cfg.Framework.Kill(ctx, a.Task, a.Agent)
		if err == nil {
			log.WithField("task", a.Task).Info("driver kill requested")
		}
		ev = lifecycle.Event{Kind: lifecycle.EvKillSent, Err: err}
	case lifecycle.ActReadJob:
		j, err := c.cfg.Store.GetJob(ctx, id)
		if err != nil {
			err = fmt.Errorf("read job: %w", err)
		}
		ev = lifecycle.Event{Kind: lifecycle.EvJobRead, Kill: j.KillRequested, Reason: j.PreemptRequested, Err: err}
	case lifecycle.ActCountRun:
		n, err := c.cfg.Store.CountFailedRun(ctx, id, a.Task)
		ev = lifecycle.Event{Kind: lifecycle.EvRunCounted, N: n, Err: err}
	case lifecycle.ActGiveBack:
		ev = lifecycle.Event{Kind: lifecycle.EvGivenBack, Err: c.giveBack(ctx, id, a.Task, a.Agent)}
	case lifecycle.ActReportOutcome:
		ev = lifecycle.Event{Kind: lifecycle.EvOutcomeReported, Err: c.reportOutcome(ctx, id, a.To, a.Why, a.Run)}
	default:
		log.WithField("action", a.Kind.String()).Error("unknown lifecycle action")
		return nil
	}
	if !ev.Conflict && ctx.Err() == nil {
		noteStep(lj, log, a.Kind.String(), ev.Err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stepLocked(lj, ev)
}

// noteStep logs a job's step that failed the first time, then once every
// stepFailLogEvery while the job's steps go on failing, and the first
// success after several failures. Only the job's follower calls it.
func noteStep(lj *liveJob, log logrus.FieldLogger, action string, err error) {
	if lj.stepFails.Every == 0 {
		lj.stepFails.Every = stepFailLogEvery
	}
	var v failurelog.Verdict
	lj.stepFails, v = lj.stepFails.Step(time.Now(), err != nil)
	switch v.Kind {
	case failurelog.First:
		log.WithError(err).WithFields(logrus.Fields{"action": action, "logged_again_every": stepFailLogEvery.String()}).Warn("step failed; retrying")
	case failurelog.Still:
		log.WithError(err).WithFields(logrus.Fields{"action": action, "failures": v.Failures, "failing_for": time.Since(v.Since).Round(time.Second).String()}).
			Warn("step still fails; retrying")
	case failurelog.Recovered:
		if v.Failures > 1 {
			log.WithFields(logrus.Fields{"action": action, "failures": v.Failures, "failed_for": time.Since(v.Since).Round(time.Millisecond).String()}).
				Info("step succeeded after failing")
		}
	}
}

// nameDriver durably names a new driver task: the next launch number of
// the job (numbers only grow, so every launch has its own task id),
// carrying lost launches of this application attempt.
func (c *Cluster) nameDriver(ctx context.Context, jobID string, attempt, lost int) (scheduler.DriverRecord, error) {
	last, err := c.cfg.Store.Driver(ctx, jobID)
	if err != nil && !errors.Is(err, scheduler.ErrNotFound) {
		return scheduler.DriverRecord{}, err
	}
	n := max(last.Attempt, attempt) + 1
	rec := scheduler.DriverRecord{JobID: jobID, Attempt: n, TaskID: DriverTaskID(jobID, n), LostLaunches: lost}
	if err := c.cfg.Store.PutDriver(ctx, rec); err != nil {
		return scheduler.DriverRecord{}, err
	}
	return rec, nil
}

// queueLaunch queues the named driver task's launch with the framework.
// Just before the framework sends the ACCEPT it asks the machine
// (MaySend) and stores the LAUNCH_SENT record.
func (c *Cluster) queueLaunch(ctx context.Context, lj *liveJob) []lifecycle.Action {
	c.mu.Lock()
	st := lj.st
	c.mu.Unlock()
	so := c.cfg.Submit
	if c.cfg.SparkMaster != nil {
		so.Master = c.cfg.SparkMaster()
	}
	argv, err := sparksubmit.Command(st.Job, so)
	var fe *scheduler.FieldError
	ev := lifecycle.Event{Kind: lifecycle.EvLaunchQueued}
	switch {
	case errors.As(err, &fe):
		ev.Refused = err.Error()
	case err != nil:
		ev.Err = err
		c.log.WithError(err).WithField("job", st.Job.ID).Warn("step failed; retrying")
	}
	c.mu.Lock()
	acts := c.stepLocked(lj, ev)
	rec := lj.st.Driver
	queued := lj.st.Queued
	room := c.driverRoomLocked(st.Job.ID) // where the snapshot keeps the driver's room
	c.mu.Unlock()
	if ev.Refused != "" || ev.Err != nil || !queued {
		return acts
	}
	drv := st.Job.DriverOrDefault()
	labels := map[string]string{LabelKey: st.Job.ID}
	if d := st.Job.EstimatedDurationSeconds; d > 0 {
		labels[DurationLabel] = strconv.FormatFloat(d, 'f', -1, 64)
	}
	jobID, taskID := st.Job.ID, rec.TaskID
	prefer := make([]string, 0, len(st.Plan.Assignments))
	for _, as := range st.Plan.Assignments {
		prefer = append(prefer, as.AgentID) // just reserved on
	}
	c.cfg.Framework.Launch(ctx, &DriverLaunch{
		JobID: jobID, TaskID: taskID, CPUs: drv.Cores, MemMB: float64(drv.MemoryMB),
		Argv: argv, Env: st.Job.App.Environment, Labels: labels, Prefer: prefer,
		Room: room.agent, RoomKind: room.kind,
		Sending: func(agentID string) error {
			c.mu.Lock()
			if !lj.st.MaySend(taskID) {
				c.mu.Unlock()
				return ErrLaunchWithdrawn
			}
			d := lj.st.SendingRecord(agentID, time.Now())
			c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvLaunchSending, Agent: agentID})
			c.mu.Unlock()
			if err := c.cfg.Store.PutDriver(ctx, d); err != nil {
				c.mu.Lock()
				c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvLaunchRecordFailed})
				c.mu.Unlock()
				return err
			}
			c.mu.Lock()
			c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvLaunchRecorded, Driver: d})
			c.mu.Unlock()
			return nil
		},
		Sent: func(agentID string, err error) {
			c.mu.Lock()
			c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvLaunchSent, Task: taskID, Agent: agentID, Name: c.nameLocked(agentID), Err: err})
			c.mu.Unlock()
		},
	})
	return acts
}

// giveBack drops the job's queued launch, kills its driver when one still
// runs (taskID set), then unreserves exactly what Mesos shows reserved for
// the job and clears its quota (the reserver waits while Spark's executors
// still hold it).
func (c *Cluster) giveBack(ctx context.Context, jobID, taskID, agentID string) error {
	if c.cfg.Framework != nil {
		c.cfg.Framework.CancelLaunch(jobID)
	}
	if taskID != "" {
		if err := c.cfg.Framework.Kill(ctx, taskID, agentID); err != nil {
			return fmt.Errorf("kill driver %s: %w", taskID, err)
		}
	}
	if err := c.cfg.Reserver.Release(ctx, jobID); err != nil {
		return fmt.Errorf("release: %w", err)
	}
	return nil
}

// reportOutcome reports the job's end (or its way back to the queue).
// Right after a restart the core may not know the job yet: the report is
// tried again, unless the job has ended meanwhile.
func (c *Cluster) reportOutcome(ctx context.Context, jobID string, to scheduler.State, why string, run scheduler.RunStart) error {
	err := c.report(ctx, jobID, to, why, run)
	if err == nil {
		return nil
	}
	if j, gerr := c.cfg.Store.GetJob(ctx, jobID); gerr == nil && j.State.Terminal() {
		c.log.WithError(err).WithFields(logrus.Fields{"job": jobID, "state": j.State}).Warn("the job ended meanwhile; its end was not reported again")
		return nil
	}
	return fmt.Errorf("report %s: %w", to, err)
}

// DriverStatus implements StatusSink: it records the driver's task state
// before the update is acknowledged (lifecycle.AfterStatus decides the
// record), then hands it to the job's machine, which reports RUNNING or,
// on a terminal state, decides: relaunch (Mesos lost the launch before
// the driver started), retry, or end the job.
func (c *Cluster) DriverStatus(ctx context.Context, jobID string, st mesos.TaskStatus) error {
	c.mu.Lock()
	lj := c.jobs[jobID]
	if lj == nil || !lj.st.TakesStatus(st.TaskID.Value) {
		// An older launch, a job that is over, or a task whose ACCEPT was
		// never sent (Mesos cannot know it): just acknowledge. A driver
		// sparkpack gave up that runs (its agent came back after it was
		// unreachable) is killed: its executors would hold the job's
		// reservations, and a retry may run meanwhile.
		orphan := lifecycle.Runs(st.GetState().String()) && (lj == nil || lj.st.Driver.TaskID != st.TaskID.Value || lj.st.Driver.Ended)
		c.mu.Unlock()
		if orphan && c.cfg.Framework != nil {
			agent := ""
			if st.AgentID != nil {
				agent = st.AgentID.Value
			}
			c.log.WithFields(logrus.Fields{"job": jobID, "task": st.TaskID.Value, "state": st.GetState().String()}).Warn("a driver sparkpack gave up runs; killing it")
			if err := c.cfg.Framework.Kill(ctx, st.TaskID.Value, agent); err != nil {
				return fmt.Errorf("kill driver %s that runs after it was given up: %w", st.TaskID.Value, err)
			}
		}
		return nil
	}
	u := lifecycle.TaskUpdate{State: st.GetState().String(), Message: st.GetMessage(), At: time.Now(),
		InvalidOffers: st.GetReason() == mesos.REASON_INVALID_OFFERS, FromExecutor: st.GetSource() == mesos.SOURCE_EXECUTOR}
	if st.Reason != nil {
		u.Reason = st.Reason.String()
	}
	if st.AgentID != nil {
		u.AgentID = st.AgentID.Value
	}
	rec := lifecycle.AfterStatus(lj.st.Driver, u)
	c.mu.Unlock()
	if err := c.cfg.Store.PutDriver(ctx, rec); err != nil {
		return err
	}
	c.mu.Lock()
	c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvDriverRecorded, Driver: rec, Name: c.nameLocked(rec.AgentID)})
	c.mu.Unlock()
	return nil
}
