package scheduler

import "time"

// DriverRecord is the durable record of a job's Spark driver task: which
// attempt, which Mesos task, on which agent, its last known Mesos task
// state and whether it ended. The framework writes it before it acts on
// Mesos and before it acknowledges a status update, so that a restart
// resumes where it stopped.
type DriverRecord struct {
	JobID   string `json:"jobId"`
	Attempt int    `json:"attempt"`
	TaskID  string `json:"taskId"`
	AgentID string `json:"agentId,omitempty"`
	// State is the last Mesos task state seen (e.g. TASK_RUNNING), or
	// LAUNCH_SENT after the ACCEPT with the LAUNCH went out, or "" before.
	State   string `json:"state"`
	Message string `json:"message,omitempty"`
	// Ended is true once a terminal task state was recorded.
	Ended     bool      `json:"ended"`
	UpdatedAt time.Time `json:"updatedAt"`
}
