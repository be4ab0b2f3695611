package scheduler

import "fmt"

// RunEnd is how a job's driver task ended, with what the Mesos adapter
// knew about the job at that moment. The adapter gathers it; EndOf and
// RetryOrFail decide what follows, without I/O.
type RunEnd struct {
	// TaskState is the driver's last Mesos task state (TASK_FINISHED, ...)
	// and Message its message.
	TaskState string
	Message   string
	// Started: the driver reached TASK_STARTING or TASK_RUNNING.
	Started bool
	// LostLaunch: the driver ended before it started because Mesos lost,
	// dropped or does not know its launch; LostLaunches counts those of
	// this application attempt (the adapter relaunches while it may).
	LostLaunch   bool
	LostLaunches int
	// Killed: a user asked to stop the job (in this process or stored).
	Killed bool
	// Preempt, when not empty, is why the job was evicted.
	Preempt string
	// LostAgent names the lost agent that held the driver, or an agent of
	// the plan lost before the driver was launched ("" none). An agent
	// that only held executors is not a lost agent: Spark carries on
	// without them, and the driver's own end decides.
	LostAgent string
}

// EndDecision is what follows a driver's end.
type EndDecision struct {
	To  State
	Why string
	// FailedRun: the application ran and failed. The adapter counts the
	// run (once per driver task) and RetryOrFail decides with the count;
	// To is then empty.
	FailedRun bool
}

// TaskFinished is the Mesos task state of a driver that exited 0.
const TaskFinished = "TASK_FINISHED"

// EndOf decides what follows a driver's end: KILLED when a kill was
// asked for, FINISHED when the driver exited 0 (whatever happened to the
// agents of its executors), back to the queue without using a retry when
// the job was evicted or the driver's agent was lost before it started,
// FAILED when Mesos lost too many launches, and otherwise a failed run.
func EndOf(e RunEnd) EndDecision {
	why := "driver " + e.TaskState
	if e.Message != "" {
		why += ": " + e.Message
	}
	switch {
	case e.Killed:
		return EndDecision{To: Killed, Why: "killed on request (" + why + ")"}
	case e.TaskState == TaskFinished:
		return EndDecision{To: Finished, Why: why}
	case e.Preempt != "":
		// Not a failed run: the application restarts from scratch.
		return EndDecision{To: Queued, Why: "preempted: " + e.Preempt + " (" + why + ")"}
	case e.LostAgent != "" && !e.Started:
		return EndDecision{To: Queued, Why: "agent " + e.LostAgent + " was lost before the driver started (" + why + "); placing again"}
	case e.LostLaunch:
		return EndDecision{To: Failed, Why: fmt.Sprintf("Mesos lost %d launches of the driver before it started (last: %s)", e.LostLaunches, why)}
	case e.LostAgent != "":
		why = "agent " + e.LostAgent + " was lost (" + why + ")"
	}
	return EndDecision{Why: why, FailedRun: true}
}

// RetryOrFail decides a failed run: back to the queue while the job has
// retries left (it runs at most retries+1 times), FAILED after.
// failedRuns counts this run.
func RetryOrFail(why string, failedRuns, retries int) (State, string) {
	if failedRuns <= retries {
		return Queued, why + fmt.Sprintf("; retry %d of %d", failedRuns, retries)
	}
	if retries > 0 {
		why += fmt.Sprintf(" (run %d of %d: no retry left)", failedRuns, retries+1)
	}
	return Failed, why
}
