package lifecycle

import (
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// ActionKind names what the executor must do.
type ActionKind int

const (
	ActNone ActionKind = iota
	// ActTimer: send EvTick at At (zero: no tick; wait for events). The
	// latest timer replaces the one before.
	ActTimer
	// ActCheckAgents: which agent of the plan is not registered? (EvAgentsChecked)
	ActCheckAgents
	// ActExpect: announce the driver's launch to the framework (offers
	// are kept for it).
	ActExpect
	// ActReserve: quota limit and reservations of the plan (EvReserved).
	ActReserve
	// ActNote: add Text to the job's events.
	ActNote
	// ActKick: refresh the agents soon (reservations changed).
	ActKick
	// ActNameDriver: durably name a new driver task, the launch number
	// after both the stored one and Attempt, carrying Lost lost launches;
	// Relaunch when Mesos lost the last launch (EvDriverNamed).
	ActNameDriver
	// ActReport: report To with Why to the core (EvReported); a report of
	// RUNNING carries in Run when the driver was first seen running (the
	// run's start).
	ActReport
	// ActQueueLaunch: build the driver's command and queue its launch
	// with the framework (EvLaunchQueued, which must be stepped before the
	// framework is handed the launch).
	ActQueueLaunch
	// ActCancelLaunch: drop the job's queued or announced launch.
	ActCancelLaunch
	// ActKillDriver: kill Task on Agent (EvKillSent).
	ActKillDriver
	// ActReadJob: read the job's stored kill and eviction requests (EvJobRead).
	ActReadJob
	// ActCountRun: count a failed run of Task, once per task (EvRunCounted).
	ActCountRun
	// ActGiveBack: drop the queued launch, kill Task on Agent if set, then
	// unreserve what Mesos shows for the job and clear its quota (EvGivenBack).
	ActGiveBack
	// ActReportOutcome: report To with Why, the job's end or its way back
	// to the queue, with Run when the driver ran but the job was never
	// reported RUNNING (EvOutcomeReported).
	ActReportOutcome
	// ActFinish: the job is done; forget it.
	ActFinish
)

var actionNames = [...]string{"none", "timer", "check-agents", "expect", "reserve", "note", "kick", "name-driver",
	"report", "queue-launch", "cancel-launch", "kill-driver", "read-job", "count-run", "give-back", "report-outcome", "finish"}

func (k ActionKind) String() string {
	if k >= 0 && int(k) < len(actionNames) {
		return actionNames[k]
	}
	return "action?"
}

// awaits: the action's result comes back as an event; nothing else is
// decided until it does.
func (k ActionKind) awaits() bool {
	switch k {
	case ActCheckAgents, ActReserve, ActNameDriver, ActReport, ActQueueLaunch, ActKillDriver,
		ActReadJob, ActCountRun, ActGiveBack, ActReportOutcome:
		return true
	}
	return false
}

// Action is one thing for the executor to do.
type Action struct {
	Kind        ActionKind
	At          time.Time // ActTimer
	Text        string    // ActNote
	To          scheduler.State
	Why         string
	Task, Agent string
	Attempt     int  // ActNameDriver: the current launch number
	Lost        int  // ActNameDriver: lost launches carried
	Relaunch    bool // ActNameDriver
	// Run: ActReportOutcome of a driver that ran from LAUNCHING; the start
	// of the run an ActReport of RUNNING reports.
	Run scheduler.RunStart
}

// Format renders the action for transcripts, times relative to t0.
func (a Action) Format(t0 time.Time) string {
	switch a.Kind {
	case ActTimer:
		if a.At.IsZero() {
			return "timer none"
		}
		return "timer " + a.At.Sub(t0).String()
	case ActNote:
		return "note " + a.Text
	case ActNameDriver:
		s := fmt.Sprintf("name-driver after=%d lost=%d", a.Attempt, a.Lost)
		if a.Relaunch {
			s += " relaunch"
		}
		return s
	case ActReport, ActReportOutcome:
		s := a.Kind.String() + " " + string(a.To) + ": " + a.Why
		switch r := a.Run; {
		case !r.Ran:
		case a.Kind == ActReport && !r.At.IsZero():
			s += " [running since " + r.At.Sub(t0).String() + "]"
		case r.At.IsZero():
			s += " [ran; start unknown]"
		case r.Measured:
			s += " [ran from " + r.At.Sub(t0).String() + "]"
		default:
			s += " [ran; launched " + r.At.Sub(t0).String() + ", run time unknown]"
		}
		return s
	case ActKillDriver, ActCountRun:
		return a.Kind.String() + " " + a.Task
	case ActGiveBack:
		if a.Task != "" {
			return "give-back kill=" + a.Task
		}
		return "give-back"
	}
	return a.Kind.String()
}
