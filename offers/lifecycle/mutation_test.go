package lifecycle

import (
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants that mutation testing found alive
// (scripts/mutation.sh offers/lifecycle; docs/testing.md). Expected values
// come from the Mesos task-status rules (MESOS_PROTOCOL.md) and the names
// the transcripts use, not from the code's output.

// TestNamesAtTheEnds: the first and last name of each enumeration, and a
// value outside it, which must not panic.
func TestNamesAtTheEnds(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{ActNone.String(), "none"},
		{ActFinish.String(), "finish"},
		{ActionKind(-1).String(), "action?"},
		{(ActFinish + 1).String(), "action?"},
		{Reserving.String(), "reserving"},
		{Done.String(), "done"},
		{Phase(-1).String(), "phase?"},
		{(Done + 1).String(), "phase?"},
		{EvStart.String(), "start"},
		{EvOutcomeReported.String(), "outcome-reported"},
		{EventKind(-1).String(), "event?"},
		{(EvOutcomeReported + 1).String(), "event?"},
	} {
		if c.got != c.want {
			t.Errorf("name %q, want %q", c.got, c.want)
		}
	}
}

// TestAfterStatusByHand: a task status update sets the driver's state and
// message; its agent_id is optional in Mesos' TaskStatus, so an update
// that names no agent keeps the one known, and one that names an agent
// records it. Started on TASK_STARTING or TASK_RUNNING only; ended on the
// terminal states; a launch lost before it started counts one lost launch
// unless the master refused it for invalid offers. RunningAt is the first
// TASK_STARTING/TASK_RUNNING's time.
func TestAfterStatusByHand(t *testing.T) {
	sent := scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: LaunchSent, Attempt: 1}
	running := scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_RUNNING", Started: true, Attempt: 1}
	t1, t2 := t0.Add(time.Second), t0.Add(2*time.Second)
	runningAt1 := running
	runningAt1.RunningAt = t1
	for _, c := range []struct {
		name string
		d    scheduler.DriverRecord
		u    TaskUpdate
		want scheduler.DriverRecord
	}{
		{"staging, no agent named", sent, TaskUpdate{State: "TASK_STAGING"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_STAGING", Attempt: 1}},
		{"staging on another agent", sent, TaskUpdate{State: "TASK_STAGING", AgentID: "B"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "B", State: "TASK_STAGING", Attempt: 1}},
		{"starting", sent, TaskUpdate{State: "TASK_STARTING", AgentID: "A"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_STARTING", Started: true, Attempt: 1}},
		{"running", sent, TaskUpdate{State: "TASK_RUNNING"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_RUNNING", Started: true, Attempt: 1}},
		{"lost before it started", sent, TaskUpdate{State: "TASK_LOST", Message: "gone"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_LOST", Message: "gone", Ended: true, Attempt: 1, LostLaunches: 1}},
		{"dropped for invalid offers", sent, TaskUpdate{State: "TASK_DROPPED", InvalidOffers: true},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_DROPPED", Ended: true, Attempt: 1}},
		{"lost after it started", running, TaskUpdate{State: "TASK_LOST"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_LOST", Started: true, Ended: true, Attempt: 1}},
		{"finished, no agent named", running, TaskUpdate{State: "TASK_FINISHED"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_FINISHED", Started: true, Ran: true, Ended: true, Attempt: 1}},
		// Ran: an end that proves the driver ran though it was never seen
		// starting (TASK_FINISHED; the executor's own FAILED or KILLED).
		{"finished, never seen running", sent, TaskUpdate{State: "TASK_FINISHED"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_FINISHED", Ran: true, Ended: true, Attempt: 1}},
		{"the command failed", sent, TaskUpdate{State: "TASK_FAILED", FromExecutor: true},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_FAILED", Ran: true, Ended: true, Attempt: 1}},
		{"the command was killed", sent, TaskUpdate{State: "TASK_KILLED", FromExecutor: true},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_KILLED", Ran: true, Ended: true, Attempt: 1}},
		{"failed by the agent", sent, TaskUpdate{State: "TASK_FAILED"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_FAILED", Ended: true, Attempt: 1}},
		{"failed with a reason", sent, TaskUpdate{State: "TASK_FAILED", FromExecutor: true, Reason: "REASON_COMMAND_EXECUTOR_FAILED"},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_FAILED", Ended: true, Attempt: 1}},
		{"the executor's lost is no proof", sent, TaskUpdate{State: "TASK_LOST", FromExecutor: true},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_LOST", Ended: true, Attempt: 1, LostLaunches: 1}},
		// RunningAt: the first TASK_STARTING/TASK_RUNNING's time, never
		// moved by a later one (a reconciliation's, a re-sent update).
		{"staging at 1s", sent, TaskUpdate{State: "TASK_STAGING", At: t1},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_STAGING", Attempt: 1}},
		{"running at 1s", sent, TaskUpdate{State: "TASK_RUNNING", At: t1},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_RUNNING", Started: true, RunningAt: t1, Attempt: 1}},
		{"running again at 2s", runningAt1, TaskUpdate{State: "TASK_RUNNING", At: t2},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_RUNNING", Started: true, RunningAt: t1, Attempt: 1}},
		{"running again at 2s, stored without a time", running, TaskUpdate{State: "TASK_RUNNING", At: t2},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_RUNNING", Started: true, Attempt: 1}},
		{"finished at 2s", runningAt1, TaskUpdate{State: "TASK_FINISHED", At: t2},
			scheduler.DriverRecord{TaskID: "t-1", AgentID: "A", State: "TASK_FINISHED", Started: true, RunningAt: t1, Ran: true, Ended: true, Attempt: 1}},
	} {
		if got := AfterStatus(c.d, c.u); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestDefaultMaxLostLaunches: a Config without MaxLostLaunches gets the
// adapter's bound of 5 lost launches an attempt (offers.maxLostLaunches):
// the 4th lost launch is launched again, the 5th fails the job.
func TestDefaultMaxLostLaunches(t *testing.T) {
	for _, c := range []struct {
		lostBefore int
		want       string
	}{
		{3, "name-driver after=1 lost=4 relaunch"},
		{4, "read-job"},
	} {
		job := scheduler.Job{Spec: scheduler.Spec{ID: testJob}}
		drv := scheduler.DriverRecord{JobID: testJob, TaskID: "t-1", State: LaunchSent, AgentID: "A", Attempt: 1, LostLaunches: c.lostBefore}
		cfg := testCfg()
		cfg.MaxLostLaunches = 0
		st := New(cfg, job, placement.Plan{}, Launching, drv, t0)
		st, _ = Step(st, Event{Kind: EvStart, At: t0})
		rec := AfterStatus(st.Driver, TaskUpdate{State: "TASK_LOST", AgentID: "A"})
		_, acts := Step(st, Event{Kind: EvDriverRecorded, At: t0, Driver: rec})
		if len(acts) != 2 || acts[1].Format(t0) != c.want {
			var got []string
			for _, a := range acts {
				got = append(got, a.Format(t0))
			}
			t.Errorf("%d lost launches before, the next lost: %q, want note then %q", c.lostBefore, got, c.want)
		}
	}
}

// TestHoldsAndDriverUnsent: a job holds its plan's resources in every
// phase but Done; its driver is unsent while no state is recorded for it
// (named only), and sent from LAUNCH_SENT on.
func TestHoldsAndDriverUnsent(t *testing.T) {
	for ph, want := range map[Phase]bool{Reserving: true, Launching: true, Running: true, Releasing: true, Done: false} {
		st := New(testCfg(), scheduler.Job{}, placement.Plan{}, ph, scheduler.DriverRecord{}, t0)
		if st.Holds() != want {
			t.Errorf("%s: Holds %v, want %v", ph, st.Holds(), want)
		}
	}
	for state, want := range map[string]bool{"": true, LaunchSent: false, "TASK_STAGING": false, "TASK_FAILED": false} {
		st := New(testCfg(), scheduler.Job{}, placement.Plan{}, Launching, scheduler.DriverRecord{TaskID: "t-1", State: state}, t0)
		if st.DriverUnsent() != want {
			t.Errorf("driver state %q: DriverUnsent %v, want %v", state, st.DriverUnsent(), want)
		}
	}
}

// TestWakeFollowsTheLastTimer: State.Wake is the time of the last timer
// asked for (the executor keeps one), zero while an answer is awaited and
// after "timer none".
func TestWakeFollowsTheLastTimer(t *testing.T) {
	st := New(testCfg(), scheduler.Job{Spec: scheduler.Spec{ID: testJob}}, placement.Plan{}, Launching,
		scheduler.DriverRecord{JobID: testJob, TaskID: "t-1", Attempt: 1}, t0)
	steps := []struct {
		ev   Event
		wake time.Duration // -1: zero
	}{
		{Event{Kind: EvStart, At: t0}, -1},                                        // queue-launch awaited
		{Event{Kind: EvLaunchQueued, At: t0.Add(time.Second)}, 121 * time.Second}, // launch timeout 2 min after queueing
		{Event{Kind: EvTick, At: t0.Add(2 * time.Second)}, 121 * time.Second},
	}
	for i, s := range steps {
		st, _ = Step(st, s.ev)
		want := time.Time{}
		if s.wake >= 0 {
			want = t0.Add(s.wake)
		}
		if !st.Wake.Equal(want) {
			t.Errorf("step %d (%s): Wake %v, want %v", i, s.ev.Kind, st.Wake, want)
		}
	}
}
