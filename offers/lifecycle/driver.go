package lifecycle

import (
	"fmt"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TaskUpdate is a Mesos task status of a driver, in Mesos' names.
type TaskUpdate struct {
	State   string // TASK_RUNNING, ...
	Message string
	AgentID string // "" when the update names none
	// InvalidOffers: the master refused the launch because its offer was
	// no longer valid (REASON_INVALID_OFFERS): it provably never ran.
	InvalidOffers bool
	// FromExecutor: the task's executor sent it (SOURCE_EXECUTOR), not
	// its agent or the master; Reason is the status' reason ("" none).
	FromExecutor bool
	Reason       string
	// At is when the update was taken (the driver's RunningAt on its
	// first TASK_STARTING/TASK_RUNNING).
	At time.Time
}

// terminal are the task states that end a driver for sparkpack.
// TASK_UNKNOWN is how a master answers a partition-aware framework's
// reconciliation of a task it does not know (older masters say TASK_LOST).
// TASK_UNREACHABLE (its agent missed its pings: 75 s on a default master)
// may come back if the agent does, but the driver is lost: the job fails
// or is retried, and a driver that comes back is killed (Cluster.DriverStatus).
var terminal = map[string]bool{
	"TASK_FINISHED": true, "TASK_FAILED": true, "TASK_KILLED": true, "TASK_LOST": true, "TASK_ERROR": true,
	"TASK_DROPPED": true, "TASK_GONE": true, "TASK_GONE_BY_OPERATOR": true, "TASK_UNKNOWN": true, "TASK_UNREACHABLE": true,
}

// lostStates are the ends that mean Mesos lost or does not know the task.
var lostStates = map[string]bool{
	"TASK_UNKNOWN": true, "TASK_LOST": true, "TASK_DROPPED": true, "TASK_GONE": true, "TASK_GONE_BY_OPERATOR": true,
	"TASK_UNREACHABLE": true,
}

// Runs reports whether a task state says the task runs (or is about to).
func Runs(state string) bool {
	switch state {
	case "TASK_STAGING", "TASK_STARTING", "TASK_RUNNING":
		return true
	}
	return false
}

// AfterStatus is the driver record once a status update is taken: the
// state, message and agent, Started on TASK_STARTING/TASK_RUNNING (and
// RunningAt on the first: a re-sent one does not move it), Ran when the
// update proves the driver ran (ranBy), Ended on a terminal state, and one
// more lost launch when the launch ended before the driver started (unless
// the master refused it for an invalid offer: it never ran).
func AfterStatus(d scheduler.DriverRecord, u TaskUpdate) scheduler.DriverRecord {
	d.State, d.Message = u.State, u.Message
	if u.AgentID != "" {
		d.AgentID = u.AgentID
	}
	if u.State == "TASK_STARTING" || u.State == "TASK_RUNNING" {
		if !d.Started {
			d.RunningAt = u.At
		}
		d.Started = true
	}
	if ranBy(u) {
		d.Ran = true
	}
	d.Ended = terminal[u.State]
	if LostBeforeStart(d) && !u.InvalidOffers {
		d.LostLaunches++
	}
	return d
}

// ranBy reports whether an ending update proves the driver ran even if
// its TASK_STARTING/TASK_RUNNING was never taken. TASK_FINISHED does (only
// an exit 0 of the driver's command says it). TASK_FAILED and TASK_KILLED
// do only when the executor sent them without a reason: the command
// executor's "Command exited with status N" and its kill of the command,
// which it starts as soon as it has the task. The same states from the
// agent or the master, or with a reason (REASON_CONTAINER_LAUNCH_FAILED,
// REASON_EXECUTOR_REGISTRATION_TIMEOUT, REASON_TASK_KILLED_DURING_LAUNCH,
// a fetcher or a container limitation ...), may come from a launch that
// never ran: conservatively, not a run.
func ranBy(u TaskUpdate) bool {
	switch u.State {
	case scheduler.TaskFinished:
		return true
	case "TASK_FAILED", "TASK_KILLED":
		return u.FromExecutor && u.Reason == ""
	}
	return false
}

// DriverRan reports whether the driver ran: it was seen starting or
// running, or an update proved it ran (ranBy: Ran is stored, so this holds
// after a restart too; a TASK_FINISHED stored by an older binary, which
// kept no Ran, proves it as well).
func DriverRan(d scheduler.DriverRecord) bool {
	return d.Started || d.Ran || d.State == scheduler.TaskFinished
}

// LostBeforeStart: the driver ended without ever starting because Mesos
// lost, dropped or does not know its launch.
func LostBeforeStart(d scheduler.DriverRecord) bool {
	return d.Ended && !d.Started && lostStates[d.State]
}

// endNote is the job note for a driver's end.
func endNote(d scheduler.DriverRecord, maxLost int) string {
	note := fmt.Sprintf("driver %s: %s %s", d.TaskID, d.State, d.Message)
	if LostBeforeStart(d) {
		note = fmt.Sprintf("driver %s: %s before it started (Mesos lost the launch; launched again, %d of %d lost launches counted) %s",
			d.TaskID, d.State, d.LostLaunches, maxLost, d.Message)
	}
	return strings.TrimSpace(note)
}
