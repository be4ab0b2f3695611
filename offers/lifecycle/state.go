package lifecycle

import (
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Phase is where a job is in its Mesos life.
type Phase int

const (
	Reserving Phase = iota
	Launching
	Running
	Releasing // the driver ended or the job was stopped: give back
	Done      // everything given back; the outcome was reported
)

var phaseNames = [...]string{"reserving", "launching", "running", "releasing", "done"}

func (p Phase) String() string {
	if p >= 0 && int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "phase?"
}

// Config holds the adapter's settings the machine decides with.
type Config struct {
	// FromOffers: reservations are made from offers in the job's role, so
	// the driver's launch is announced only once they are made.
	FromOffers bool
	// Retry is the pause before a failed step is tried again.
	Retry time.Duration
	// LaunchTimeout: a queued driver that found no offer with room for
	// this long is withdrawn and the job placed again.
	LaunchTimeout time.Duration
	// AgentWait bounds how long a plan waits for an unregistered agent.
	AgentWait time.Duration
	// MaxLostLaunches bounds the relaunches of one application attempt.
	MaxLostLaunches int
}

// KillWait is how long a driver kill waits for the terminal update
// before it is sent again (Mesos re-sends updates; a kill may be lost).
const KillWait = 10 * time.Second

// SendingWait is how often a job whose driver ACCEPT is on its way looks
// again (the framework's Sent ends the wait sooner).
const SendingWait = time.Second

// LaunchSent is the driver state recorded just before the ACCEPT with the
// driver's LAUNCH goes out: from then on the launch may have reached Mesos.
const LaunchSent = "LAUNCH_SENT"

// State is one job as the adapter follows it. It is a value: Step returns
// a new one.
type State struct {
	Cfg   Config
	Job   scheduler.Job
	Plan  placement.Plan
	Phase Phase
	// Driver is this generation's driver task, zero until named.
	Driver scheduler.DriverRecord
	// DriverAgentName is the name of Driver.AgentID, for notes.
	DriverAgentName string
	// Kill: a user asked to stop the job (durable: Job.KillRequested).
	Kill bool
	// Preempt, when not empty, is why the core evicts the job (durable:
	// Job.PreemptRequested): stop it and send it back to the queue.
	Preempt string
	// Lost is the agent whose loss stops the job: the driver's agent, or
	// an agent of the plan lost before the driver was launched.
	Lost, LostName string
	// LostExecutors are agents that held only executors of the job and
	// were lost while the driver ran: recorded, not a failure.
	LostExecutors []string
	// Queued: the driver's launch is queued with the framework in this
	// process; Sending: its ACCEPT is on the way (decisions wait for it).
	Queued, Sending bool
	// QueuedAt: when the current launch was queued; WaitFrom: when the
	// plan started waiting for an unregistered agent. (When the launch was
	// sent and when the driver was first seen running are the driver
	// record's LaunchedAt and RunningAt, stored with the launch: they time
	// the run after a restart too, runStart.)
	QueuedAt, WaitFrom time.Time
	// Outcome and Reason are set when Releasing starts ("" outcome: the
	// core let go, nothing to report).
	Outcome scheduler.State
	Reason  string
	// Run is set when Releasing starts from Launching with a driver that
	// ran (DriverRan): the core counts and records the run with the
	// outcome (scheduler.Core.ReportRan).
	Run scheduler.RunStart

	// Progress inside a phase.
	Reserved        bool            // this generation's reservations are made
	JobChecked      bool            // the stored kill/eviction was read for the ended driver
	Reporting       scheduler.State // the report in flight (Busy == ActReport)
	Released        bool            // everything given back
	OutcomeReported bool
	// Wake is when the machine wants a tick (the last ActTimer; zero:
	// none), for an executor that keeps one timer.
	Wake time.Time
	// Busy is the action whose result is awaited: no other decision is
	// taken meanwhile (events are recorded and decided on with its result).
	Busy ActionKind
}

// New is a job the adapter starts to follow at now: from Apply
// (Reserving), after a restart (the stored phase and driver), or to give
// back what a job it does not follow holds (Releasing, nothing to report).
func New(cfg Config, job scheduler.Job, plan placement.Plan, ph Phase, drv scheduler.DriverRecord, now time.Time) State {
	if cfg.MaxLostLaunches <= 0 {
		cfg.MaxLostLaunches = 5
	}
	s := State{Cfg: cfg, Job: job, Plan: plan, Phase: ph, Driver: drv, Kill: job.KillRequested, Preempt: job.PreemptRequested,
		QueuedAt: now, Busy: ActNone}
	if ph == Launching && !drv.Ended && !drv.UpdatedAt.IsZero() {
		// Stored without the times of its launch (before migrations 0020
		// and 0021, or by an older binary): the stored record's time is
		// when its last state was taken, the best known, kept from now on
		// (the next record stored carries it, and neither a re-sent
		// TASK_RUNNING nor a reconciliation's TASK_STAGING moves it).
		switch {
		case drv.State == LaunchSent && drv.LaunchedAt.IsZero():
			s.Driver.LaunchedAt = drv.UpdatedAt
		case drv.Started && drv.RunningAt.IsZero():
			s.Driver.RunningAt = drv.UpdatedAt
		}
	}
	return s
}

// runStart is the best start known of the driver's run (State.Run): when
// it was first seen running (measured, as a RUNNING report times a run),
// else when it was launched, else unknown (zero: the core takes the end).
// Both times are stored with the launch, so they are known after a
// restart too.
func (s State) runStart() scheduler.RunStart {
	switch {
	case s.Driver.Started && !s.Driver.RunningAt.IsZero():
		return scheduler.RunStart{Ran: true, At: s.Driver.RunningAt, Measured: true}
	case !s.Driver.LaunchedAt.IsZero():
		return scheduler.RunStart{Ran: true, At: s.Driver.LaunchedAt}
	}
	return scheduler.RunStart{Ran: true}
}

// runningSince is the start of the run a RUNNING report reports: when the
// driver was first seen running (stored with the launch), not when the
// report is made, which a restart, or a refused report tried again, can
// put long after (zero At when not known: the core times it itself).
func (s State) runningSince() scheduler.RunStart {
	if s.Driver.RunningAt.IsZero() {
		return scheduler.RunStart{}
	}
	return scheduler.RunStart{Ran: true, At: s.Driver.RunningAt, Measured: true}
}

// Holds reports whether the job still counts on its plan's resources.
func (s State) Holds() bool { return s.Phase != Done }

// DriverUnsent: the driver is not named, or named and provably never sent.
func (s State) DriverUnsent() bool { return s.Driver.State == "" }

// MaySend reports whether the launch of task may go out now (checked by
// the framework just before the ACCEPT): the task is this generation's,
// has not ended or started, and nothing asked the job to stop.
func (s State) MaySend(taskID string) bool {
	d := s.Driver
	return d.TaskID == taskID && !d.Ended && (d.State == "" || d.State == LaunchSent) &&
		!s.Kill && s.Preempt == "" && s.Lost == "" && s.Phase == Launching
}

// SendingRecord is the driver record to store at now, before the ACCEPT
// goes out on agent: the launch's time is now, unless it was sent before
// (an ACCEPT that failed, sent again: the first stays, as in the store).
func (s State) SendingRecord(agentID string, now time.Time) scheduler.DriverRecord {
	d := s.Driver
	d.AgentID, d.State = agentID, LaunchSent
	if d.LaunchedAt.IsZero() {
		d.LaunchedAt = now
	}
	return d
}

// TakesStatus reports whether a task status of taskID changes the driver
// record: it is this generation's task, not ended, and its ACCEPT was sent
// (Mesos cannot know a task before: such answers are only acknowledged).
func (s State) TakesStatus(taskID string) bool {
	d := s.Driver
	return s.Phase != Done && d.TaskID == taskID && !d.Ended && d.State != ""
}
