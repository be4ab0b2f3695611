package scheduler

import (
	"strings"
	"testing"
)

// TestEndOf: what follows a driver's end, one kind each.
func TestEndOf(t *testing.T) {
	for _, c := range []struct {
		name   string
		end    RunEnd
		to     State
		failed bool
		why    string
	}{
		{"finished", RunEnd{TaskState: "TASK_FINISHED", Started: true}, Finished, false, "driver TASK_FINISHED"},
		{"finished although executors' agents were lost (#34)", RunEnd{TaskState: "TASK_FINISHED", Started: true}, Finished, false, ""},
		{"a kill wins over a finish", RunEnd{TaskState: "TASK_FINISHED", Started: true, Killed: true}, Killed, false, "killed on request"},
		{"evicted", RunEnd{TaskState: "TASK_KILLED", Started: true, Preempt: "deadline"}, Queued, false, "preempted: deadline"},
		{"driver's agent lost before it started", RunEnd{TaskState: "TASK_GONE", LostAgent: "host-a", LostLaunch: true, LostLaunches: 1}, Queued, false, "placing again"},
		{"too many lost launches", RunEnd{TaskState: "TASK_UNKNOWN", LostLaunch: true, LostLaunches: 5}, Failed, false, "Mesos lost 5 launches"},
		{"driver's agent lost while running", RunEnd{TaskState: "TASK_LOST", Started: true, LostAgent: "host-a"}, "", true, "agent host-a was lost (driver TASK_LOST)"},
		{"driver failed", RunEnd{TaskState: "TASK_FAILED", Message: "exit 1", Started: true}, "", true, "driver TASK_FAILED: exit 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := EndOf(c.end)
			if d.To != c.to || d.FailedRun != c.failed || !strings.Contains(d.Why, c.why) {
				t.Fatalf("EndOf = %+v, want to %q failed run %v with %q", d, c.to, c.failed, c.why)
			}
		})
	}
}

// TestRetryOrFail: a job runs at most retries+1 times.
func TestRetryOrFail(t *testing.T) {
	for _, c := range []struct {
		runs, retries int
		to            State
		why           string
	}{
		{1, 0, Failed, "x"},
		{1, 2, Queued, "x; retry 1 of 2"},
		{2, 2, Queued, "x; retry 2 of 2"},
		{3, 2, Failed, "x (run 3 of 3: no retry left)"},
	} {
		to, why := RetryOrFail("x", c.runs, c.retries)
		if to != c.to || why != c.why {
			t.Errorf("RetryOrFail(x, %d, %d) = %s %q, want %s %q", c.runs, c.retries, to, why, c.to, c.why)
		}
	}
}
