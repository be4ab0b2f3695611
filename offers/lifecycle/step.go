package lifecycle

import (
	"fmt"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/scheduler"
)

// answers maps each result event to the action it answers.
var answers = map[EventKind]ActionKind{
	EvAgentsChecked: ActCheckAgents, EvReserved: ActReserve, EvDriverNamed: ActNameDriver, EvReported: ActReport,
	EvLaunchQueued: ActQueueLaunch, EvKillSent: ActKillDriver, EvJobRead: ActReadJob, EvRunCounted: ActCountRun,
	EvGivenBack: ActGiveBack, EvOutcomeReported: ActReportOutcome,
}

// Step takes one event: it records what the event says and, unless an
// action's result is awaited, decides what comes next. It is pure: the
// same state and event always give the same state and actions.
func Step(s State, ev Event) (State, []Action) {
	if s.Phase == Done {
		return s, nil
	}
	if want, ok := answers[ev.Kind]; ok {
		if s.Busy != want {
			return s, nil // not the answer awaited (a stale result): ignored
		}
		s.Busy = ActNone
	}
	s.LostExecutors = slices.Clone(s.LostExecutors) // State is a value
	var out []Action
	var decided bool
	s, out, decided = record(s, ev, out)
	if !decided && s.Busy == ActNone {
		s, out = decide(s, ev.At, out)
	}
	for _, a := range out {
		switch {
		case a.Kind == ActTimer:
			s.Wake = a.At
		case a.Kind.awaits():
			s.Wake = time.Time{} // ticks are not wanted while an answer is awaited
		}
	}
	return s, out
}

// record takes in what the event says. decided is set when the event's
// handling already chose what comes next (a wait).
func record(s State, ev Event, out []Action) (State, []Action, bool) {
	at := ev.At
	retry := func() (State, []Action, bool) {
		return s, append(out, Action{Kind: ActTimer, At: at.Add(s.Cfg.Retry)}), true
	}
	switch ev.Kind {
	case EvKill:
		s.Kill = true
	case EvPreempt:
		if s.Preempt == "" {
			s.Preempt = ev.Reason
		}
	case EvRelease:
		if s.Phase != Releasing {
			// The core let go of a job the adapter still follows.
			s.Phase, s.Outcome, s.Reason = Releasing, "", ""
		} // else: the core hearing the outcome
	case EvAgentLost:
		if (s.Phase != Launching && s.Phase != Running) || s.Lost != "" {
			break
		}
		d := s.Driver
		driverAgent := d.AgentID == ev.Agent && d.State != "" && !d.Ended
		if driverAgent || d.State == "" {
			// The driver is lost, or the plan lost an agent before the
			// driver was sent: the job stops (and is placed again).
			s.Lost, s.LostName = ev.Agent, nameOr(ev.Name, ev.Agent)
			break
		}
		// An agent that held only executors: Spark carries on without
		// them; the driver's own end decides the job's (#34).
		if !slices.Contains(s.LostExecutors, ev.Agent) {
			s.LostExecutors = append(s.LostExecutors, ev.Agent)
			out = append(out, Action{Kind: ActNote, Text: "agent " + nameOr(ev.Name, ev.Agent) +
				", which held executors of the job, was lost while the driver ran; Spark carries on without them"})
		}
	case EvDriverRecorded:
		if s.Driver.TaskID != ev.Driver.TaskID {
			break
		}
		s.Driver = ev.Driver
		if ev.Name != "" {
			s.DriverAgentName = ev.Name
		}
		if ev.Driver.Ended {
			out = append(out, Action{Kind: ActNote, Text: endNote(ev.Driver, s.Cfg.MaxLostLaunches)})
		}
	case EvLaunchSending:
		s.Sending = true
	case EvLaunchRecorded:
		if s.Driver.TaskID == ev.Driver.TaskID && !s.Driver.Ended {
			s.Driver = ev.Driver // with its LaunchedAt; the ACCEPT follows
		}
	case EvLaunchRecordFailed:
		s.Sending = false
	case EvLaunchSent:
		s.Sending = false
		if ev.Err == nil {
			s.DriverAgentName = nameOr(ev.Name, ev.Agent)
			out = append(out, Action{Kind: ActNote, Text: "driver task " + ev.Task + " launched on agent " + s.DriverAgentName})
		}

	case EvAgentsChecked:
		if ev.Agent == "" {
			s.WaitFrom = time.Time{}
			if !s.Cfg.FromOffers {
				out = append(out, Action{Kind: ActExpect}) // offers kept for the driver once reserved
			}
			s.Busy = ActReserve
			return s, append(out, Action{Kind: ActReserve}), true
		}
		if s.WaitFrom.IsZero() {
			s.WaitFrom = at
		}
		waited := at.Sub(s.WaitFrom)
		name := nameOr(ev.Name, ev.Agent)
		switch {
		case ev.ReplacedBy != "":
			s = toReleasing(s, scheduler.Queued, fmt.Sprintf("agent %s came back under a new Mesos agent id (%s, was %s; the old agent's reservations went with it); placing again",
				name, ev.ReplacedBy, ev.Agent))
		case ev.Failed:
			s = toReleasing(s, scheduler.Queued, fmt.Sprintf("agent %s was not powered on; placing again without it", name))
		case waited >= s.Cfg.AgentWait:
			s = toReleasing(s, scheduler.Queued, fmt.Sprintf("agent %s did not register with Mesos within %s; placing again", name, s.Cfg.AgentWait))
		default:
			return s, append(out, Action{Kind: ActTimer, At: at.Add(min(time.Second, s.Cfg.AgentWait-waited))}), true
		}
	case EvReserved:
		switch {
		case ev.Conflict:
			// Reserve rolled back what it made; the core plans again.
			s = toReleasing(s, scheduler.Queued, "reservation refused ("+errText(ev.Err)+"); placing again")
		case ev.Err != nil:
			return retry()
		default:
			s.Reserved = true
			// From offers, the reservations need the job's agents
			// offered in the job's role: offers kept in sparkpack's role
			// would hold those very resources, so the driver's offers
			// are announced only once reserved.
			if s.Cfg.FromOffers {
				out = append(out, Action{Kind: ActExpect})
			}
			out = append(out, Action{Kind: ActNote, Text: fmt.Sprintf("reserved %s on %s (quota limit set on role %s)",
				plural.N(s.Plan.Executors(), "executor"), plural.N(len(s.Plan.Assignments), "agent"), scheduler.Role(s.Job.ID))}, Action{Kind: ActKick})
		}
	case EvDriverNamed:
		if ev.Err != nil {
			return retry()
		}
		s.Driver, s.Queued, s.JobChecked = ev.Driver, false, false
		// (The new record has no LaunchedAt nor RunningAt: they are this
		// launch's, set when it is sent and first seen running.)
	case EvReported:
		if ev.Err != nil {
			s.Reporting = ""
			return retry()
		}
		switch {
		case s.Reporting == scheduler.Launching && s.Phase == Reserving:
			s.Phase = Launching
		case s.Reporting == scheduler.Running && s.Phase == Launching:
			s.Phase = Running
		}
		s.Reporting = ""
	case EvLaunchQueued:
		switch {
		case ev.Refused != "":
			// Stored under older rules and refused by today's: never run it.
			s = toReleasing(s, scheduler.Failed, "the driver command cannot be built: "+ev.Refused)
		case ev.Err != nil:
			return retry()
		default:
			s.Queued, s.QueuedAt = true, at
		}
	case EvKillSent:
		if ev.Err != nil {
			return retry()
		}
		// Its terminal update moves the job on; Mesos re-sends updates,
		// and the kill is sent again if nothing came.
		return s, append(out, Action{Kind: ActTimer, At: at.Add(KillWait)}), true
	case EvJobRead:
		if ev.Err != nil {
			return retry()
		}
		s.Kill = s.Kill || ev.Kill
		if s.Preempt == "" {
			s.Preempt = ev.Reason
		}
		s.JobChecked = true
	case EvRunCounted:
		if ev.Err != nil {
			return retry()
		}
		to, why := scheduler.RetryOrFail(s.end().Why, ev.N, s.Job.Retries)
		s = toReleasing(s, to, why)
	case EvGivenBack:
		if ev.Err != nil {
			return retry()
		}
		s.Released = true
		if s.Outcome != "" {
			out = append(out, Action{Kind: ActNote, Text: "reservations released and quota cleared"})
		}
		out = append(out, Action{Kind: ActKick})
	case EvOutcomeReported:
		if ev.Err != nil {
			return retry()
		}
		s.OutcomeReported = true
	}
	return s, out, false
}

// decide chooses what comes next from the state alone: the first case
// that applies wins (the order is the policy).
func decide(s State, at time.Time, out []Action) (State, []Action) {
	busy := func(a Action) (State, []Action) {
		s.Busy = a.Kind
		return s, append(out, a)
	}
	for {
		d := s.Driver
		stop := s.Kill || s.Preempt != "" // the driver must not run (on)
		beforeDriver := s.Phase == Reserving || (s.Phase == Launching && d.State == "")
		switch {
		case s.Phase == Done:
			return s, out
		case s.Sending:
			// The driver's ACCEPT is on its way: whatever comes next (a
			// kill, a release) must know whether it went out.
			return s, append(out, Action{Kind: ActTimer, At: at.Add(SendingWait)})
		case s.Phase == Releasing:
			switch {
			case !s.Released:
				a := Action{Kind: ActGiveBack}
				if d.TaskID != "" && d.State != "" && !d.Ended {
					// The driver still runs (the core let go of the job):
					// stop it, or its executors hold the reservations forever.
					a.Task, a.Agent = d.TaskID, d.AgentID
				}
				return busy(a)
			case s.Outcome != "" && !s.OutcomeReported:
				return busy(Action{Kind: ActReportOutcome, To: s.Outcome, Why: s.Reason, Run: s.Run})
			}
			s.Phase = Done
			return s, append(out, Action{Kind: ActFinish})
		case s.Phase == Launching && d.Started && !d.Ended && !stop && s.Lost == "":
			// (A driver to stop, or one that ended, goes straight to its
			// outcome: LAUNCHING may end KILLED, FINISHED, FAILED or QUEUED,
			// and a failing report must not hold up a kill.)
			// The run starts when the driver was first seen running: after
			// a restart, or a refused report, that is before now.
			s.Reporting = scheduler.Running
			return busy(Action{Kind: ActReport, To: scheduler.Running, Why: "driver running on agent " + nameOr(s.DriverAgentName, d.AgentID),
				Run: s.runningSince()})
		case s.Kill && beforeDriver:
			// Releasing first: a launch the framework is about to send
			// then withdraws itself (MaySend).
			s = toReleasing(s, scheduler.Killed, "killed on request before the driver ran")
			out = append(out, Action{Kind: ActCancelLaunch})
		case s.Preempt != "" && beforeDriver:
			s = toReleasing(s, scheduler.Queued, "preempted before the driver ran: "+s.Preempt)
			out = append(out, Action{Kind: ActCancelLaunch})
		case s.Lost != "" && s.Phase == Launching && d.State == "":
			s = toReleasing(s, scheduler.Queued, "agent "+s.LostName+" was lost before the driver was launched; placing again")
			out = append(out, Action{Kind: ActCancelLaunch})
		case (stop || s.Lost != "") && !d.Ended && d.TaskID != "" && d.State != "":
			return busy(Action{Kind: ActKillDriver, Task: d.TaskID, Agent: d.AgentID})
		case d.Ended && !stop && s.Lost == "" && LostBeforeStart(d) && d.LostLaunches < s.Cfg.MaxLostLaunches:
			// Mesos lost the launch before the driver started: a new task
			// id, no retry used.
			return busy(Action{Kind: ActNameDriver, Attempt: d.Attempt, Lost: d.LostLaunches, Relaunch: true})
		case d.Ended:
			if !s.Kill && !s.JobChecked {
				// A kill or eviction asked for in another process (or
				// before a restart) is in the store.
				return busy(Action{Kind: ActReadJob})
			}
			end := s.end()
			if end.FailedRun {
				return busy(Action{Kind: ActCountRun, Task: d.TaskID})
			}
			s = toReleasing(s, end.To, end.Why)
		case s.Phase == Reserving:
			switch {
			case !s.Reserved:
				// First every agent of the plan must be registered (an
				// agent being powered on), at most AgentWait.
				return busy(Action{Kind: ActCheckAgents})
			case d.TaskID == "":
				// The driver task is named before the job is LAUNCHING, so
				// the stored driver record of a LAUNCHING job is always
				// its own generation's (a restart resumes that launch).
				return busy(Action{Kind: ActNameDriver, Attempt: d.Attempt})
			}
			s.Reporting = scheduler.Launching
			return busy(Action{Kind: ActReport, To: scheduler.Launching, Why: "reservations confirmed; launching the driver"})
		case s.Phase == Launching && d.TaskID == "":
			// No driver named in this generation (a job left LAUNCHING by
			// an older sparkpack): name one now.
			return busy(Action{Kind: ActNameDriver, Attempt: d.Attempt})
		case s.Phase == Launching && d.State == "" && !s.Queued:
			// Named but never sent (or sent by a process that is gone
			// before its ACCEPT went out): queue it; this costs no attempt.
			return busy(Action{Kind: ActQueueLaunch})
		case s.Phase == Launching && d.State == "":
			// Queued with the framework, waiting for an offer with room.
			if at.Sub(s.QueuedAt) >= s.Cfg.LaunchTimeout {
				s = toReleasing(s, scheduler.Queued, fmt.Sprintf("no offer had room for the driver within %s; placing again", s.Cfg.LaunchTimeout))
				out = append(out, Action{Kind: ActCancelLaunch})
				continue
			}
			return s, append(out, Action{Kind: ActTimer, At: s.QueuedAt.Add(s.Cfg.LaunchTimeout)})
		default:
			// Launching (sent) or running: wait for status updates.
			return s, append(out, Action{Kind: ActTimer})
		}
	}
}

// end is the scheduler's decision on the ended driver.
func (s State) end() scheduler.EndDecision {
	d := s.Driver
	lost := ""
	if s.Lost != "" {
		lost = nameOr(s.LostName, s.Lost)
	}
	return scheduler.EndOf(scheduler.RunEnd{TaskState: d.State, Message: d.Message, Started: d.Started,
		LostLaunch: LostBeforeStart(d), LostLaunches: d.LostLaunches, Killed: s.Kill, Preempt: s.Preempt, LostAgent: lost})
}

func toReleasing(s State, to scheduler.State, why string) State {
	if s.Phase == Launching && s.Driver.Ended && DriverRan(s.Driver) {
		// The driver ran, but the job was never reported RUNNING (its
		// TASK_RUNNING not seen, or not reported before its end): its end
		// still counts as a run.
		s.Run = s.runStart()
	}
	if s.Phase != Releasing && s.Phase != Done {
		s.Phase, s.Outcome, s.Reason = Releasing, to, why
	}
	return s
}

func nameOr(name, id string) string {
	if name != "" {
		return name
	}
	return id
}

func errText(err error) string {
	if err == nil {
		return "conflict"
	}
	return err.Error()
}
