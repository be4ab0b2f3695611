package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Every launch keeps the agent that ran it (migration 0016), so that the
// log of an older launch can be read: the drivers row moves on to the
// latest launch, a late status of an older launch still fills its own
// row, and pruning the job takes them all.
func TestDriverLaunchesKeepEachAgent(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, func(sp *scheduler.Spec) { sp.Retries = 2 }), "")
	if err != nil {
		t.Fatal(err)
	}
	put := func(d scheduler.DriverRecord) {
		t.Helper()
		d.JobID = j.ID
		if err := s.PutDriver(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	put(scheduler.DriverRecord{Attempt: 1, TaskID: "t1", State: "LAUNCH_SENT"})
	put(scheduler.DriverRecord{Attempt: 1, TaskID: "t1", AgentID: "agent-a", State: "TASK_RUNNING", Started: true})
	put(scheduler.DriverRecord{Attempt: 2, TaskID: "t2", AgentID: "agent-b", State: "TASK_RUNNING", Started: true})
	// A late status of launch 1 without its agent: the row keeps the agent.
	put(scheduler.DriverRecord{Attempt: 1, TaskID: "t1", State: "TASK_FAILED", Ended: true})

	latest, err := s.Driver(ctx, j.ID)
	if err != nil || latest.Attempt != 2 || latest.AgentID != "agent-b" {
		t.Fatalf("latest driver %+v, %v: want attempt 2 on agent-b", latest, err)
	}
	for _, c := range []struct {
		attempt int
		task    string
		agent   string
		ended   bool
	}{{1, "t1", "agent-a", true}, {2, "t2", "agent-b", false}} {
		d, err := s.DriverLaunch(ctx, j.ID, c.attempt)
		if err != nil {
			t.Fatalf("launch %d: %v", c.attempt, err)
		}
		if d.TaskID != c.task || d.AgentID != c.agent || d.Ended != c.ended {
			t.Errorf("launch %d = %+v, want task %s on %s ended=%v", c.attempt, d, c.task, c.agent, c.ended)
		}
	}
	if _, err := s.DriverLaunch(ctx, j.ID, 3); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("launch 3: %v, want ErrNotFound", err)
	}

	ended := time.Now().Add(-time.Hour)
	from := scheduler.Submitted
	for _, st := range []scheduler.State{scheduler.Queued, scheduler.Cancelled} {
		if _, err := s.Transition(ctx, j.ID, from, st, "test", func(x *scheduler.Job) {
			if st.Terminal() {
				x.FinishedAt = &ended
			}
		}); err != nil {
			t.Fatalf("%s -> %s: %v", from, st, err)
		}
		from = st
	}
	n, err := s.PruneEnded(ctx, time.Now(), 100)
	if err != nil || n != 1 {
		t.Fatalf("prune: %d, %v: want the job pruned", n, err)
	}
	if _, err := s.DriverLaunch(ctx, j.ID, 1); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("launch 1 after pruning: %v, want ErrNotFound", err)
	}
}
