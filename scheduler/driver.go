package scheduler

import "time"

// DriverRecord is the durable record of a job's Spark driver task: which
// attempt, which Mesos task, on which agent, its last known Mesos task
// state and whether it ended, when it was launched, whether it ran and
// since when. The framework
// writes it before it acts on Mesos and before it acknowledges a status
// update, so that a restart resumes where it stopped (store.PutDriver:
// Ran and RunningAt are kept per launch, migration 0020; LaunchedAt,
// migration 0021).
type DriverRecord struct {
	JobID string `json:"jobId"`
	// Attempt is the launch number: 1 for the job's first driver task, one
	// more for every launch after it (relaunches and retries alike), so
	// that each launch has its own task id.
	Attempt int    `json:"attempt"`
	TaskID  string `json:"taskId"`
	AgentID string `json:"agentId,omitempty"`
	// State is the last Mesos task state seen (e.g. TASK_RUNNING), or
	// LAUNCH_SENT once the ACCEPT with the LAUNCH is about to go out
	// (written before it is sent), or "" before: a launch recorded with ""
	// provably never reached Mesos.
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// Ended is true once a terminal task state was recorded.
	Ended bool `json:"ended"`
	// Started is true once the driver reached TASK_STARTING or TASK_RUNNING.
	Started bool `json:"started,omitempty"`
	// RunningAt is when its TASK_STARTING/TASK_RUNNING was first taken
	// (zero: not yet, or stored by an older binary). Never moved by a
	// later update: a reconciliation after a restart re-sends TASK_RUNNING,
	// and the run is timed from the first (offers/lifecycle: State.runStart).
	RunningAt time.Time `json:"runningAt,omitzero"`
	// LaunchedAt is when the launch was sent: its LAUNCH_SENT record was
	// stored, just before the ACCEPT went out (zero: not yet, or stored by
	// an older binary). Kept with the launch (driver_launches, migration
	// 0021) and never moved by a later record: a reconciliation's
	// TASK_STAGING after a restart replaces the LAUNCH_SENT state, not the
	// launch's time (offers/lifecycle: State.runStart).
	LaunchedAt time.Time `json:"launchedAt,omitzero"`
	// Ran is true once an update proves the driver ran without its
	// TASK_STARTING/TASK_RUNNING seen: a TASK_FAILED or TASK_KILLED its
	// executor sent without a reason (its command exited or was killed).
	// Stored, so that a restart between the update's acknowledgement and
	// the job's end still counts the run (offers/lifecycle.DriverRan;
	// transcripts in offers/lifecycle/testdata/unseen.txt).
	Ran bool `json:"ran,omitempty"`
	// LostLaunches counts the launches of the current application attempt
	// that Mesos lost before the driver started (relaunched, not retried).
	LostLaunches int `json:"lostLaunches,omitempty"`
	// UpdatedAt is when the record was last stored (its last state
	// taken), set by the store: a re-sent TASK_RUNNING moves it.
	UpdatedAt time.Time `json:"updatedAt"`
}
