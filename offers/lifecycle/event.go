package lifecycle

import (
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// EventKind names what happened.
type EventKind int

const (
	// EvStart: the follower starts (or is told to look again).
	EvStart EventKind = iota
	// EvTick: the time asked for with ActTimer has come.
	EvTick
	// EvKill: a user asked to stop the job.
	EvKill
	// EvPreempt: the core evicts the job (Reason).
	EvPreempt
	// EvRelease: the core let go of the job (give back, report nothing).
	EvRelease
	// EvAgentLost: an agent of the plan or of the driver left GET_AGENTS
	// (Agent, Name).
	EvAgentLost
	// EvDriverRecorded: a task status was stored (Driver, from
	// AfterStatus; Name is its agent's name).
	EvDriverRecorded
	// EvLaunchSending: the framework is about to send the ACCEPT on Agent
	// (MaySend said yes); the caller stores SendingRecord next.
	EvLaunchSending
	// EvLaunchRecorded: the LAUNCH_SENT record (Driver) was stored.
	EvLaunchRecorded
	// EvLaunchRecordFailed: it could not be stored; the ACCEPT was not sent.
	EvLaunchRecordFailed
	// EvLaunchSent: the ACCEPT call returned (Err; Task, Agent, Name).
	EvLaunchSent

	// Results of actions.

	// EvAgentsChecked answers ActCheckAgents: Agent is the agent of the
	// plan not registered that will not come (Failed: its power-on was
	// given up, or ReplacedBy, the new agent id its machine came back
	// under), else the first not registered ("" none); Name its name.
	EvAgentsChecked
	// EvReserved answers ActReserve (Err; Conflict when refused for lack
	// of room: rolled back).
	EvReserved
	// EvDriverNamed answers ActNameDriver (Driver, stored; Err).
	EvDriverNamed
	// EvReported answers ActReport (Err).
	EvReported
	// EvLaunchQueued answers ActQueueLaunch (Err; Refused when the
	// driver's command cannot be built under today's rules).
	EvLaunchQueued
	// EvKillSent answers ActKillDriver (Err).
	EvKillSent
	// EvJobRead answers ActReadJob with the stored kill and eviction
	// requests (Kill, Reason; Err).
	EvJobRead
	// EvRunCounted answers ActCountRun with the job's failed runs so far
	// (N; Err).
	EvRunCounted
	// EvGivenBack answers ActGiveBack (Err).
	EvGivenBack
	// EvOutcomeReported answers ActReportOutcome (Err).
	EvOutcomeReported
)

var eventNames = [...]string{"start", "tick", "kill", "preempt", "release", "agent-lost", "driver-recorded",
	"launch-sending", "launch-recorded", "launch-record-failed", "launch-sent", "agents-checked", "reserved",
	"driver-named", "reported", "launch-queued", "kill-sent", "job-read", "run-counted", "given-back", "outcome-reported"}

func (k EventKind) String() string {
	if k >= 0 && int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "event?"
}

// Event is something that happened to the job, at At.
type Event struct {
	Kind        EventKind
	At          time.Time
	Agent, Name string
	Task        string
	Reason      string
	Driver      scheduler.DriverRecord
	Err         error
	Conflict    bool
	Refused     string
	Failed      bool
	ReplacedBy  string
	Kill        bool
	N           int
}
