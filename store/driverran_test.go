package store

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/scheduler"
)

// preDriverRan is PutDriver as a binary older than migration 0020 runs it
// (it names no ran or running_at), for a rolling upgrade.
const preDriverRan = `WITH latest AS (
		INSERT INTO drivers (job_id, attempt, task_id, agent_id, state, message, ended, lost_launches, started, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
		ON CONFLICT (job_id) DO UPDATE SET attempt = EXCLUDED.attempt, task_id = EXCLUDED.task_id, agent_id = EXCLUDED.agent_id,
			state = EXCLUDED.state, message = EXCLUDED.message, ended = EXCLUDED.ended, lost_launches = EXCLUDED.lost_launches,
			started = EXCLUDED.started, updated_at = EXCLUDED.updated_at
		WHERE drivers.attempt <= EXCLUDED.attempt
		RETURNING 1)
	INSERT INTO driver_launches (job_id, attempt, task_id, agent_id, ended) VALUES ($1, $2, $3, $4, $7)
	ON CONFLICT (job_id, attempt) DO UPDATE SET
		agent_id = CASE WHEN EXCLUDED.agent_id <> '' THEN EXCLUDED.agent_id ELSE driver_launches.agent_id END,
		ended = driver_launches.ended OR EXCLUDED.ended`

// TestDriverRanAndRunningAtStored: a driver record's Ran and RunningAt
// survive a restart (migration 0020; docs/learning.md, "Runs never seen
// running"). RunningAt is the first TASK_RUNNING's time: the
// reconciliation's TASK_RUNNING after a restart, taken as DriverStatus
// takes it (lifecycle.AfterStatus on the record read back), moves the
// record's UpdatedAt but not its RunningAt, nor does a record carrying
// another time or none. Ran, once stored, stays. Both belong to their
// launch: the next launch starts without them, the older one keeps its
// own, and a launch an older binary writes (rolling upgrade) reads back
// without them rather than with the previous launch's.
func TestDriverRanAndRunningAtStored(t *testing.T) {
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
	read := func() scheduler.DriverRecord {
		t.Helper()
		d, err := s.Driver(ctx, j.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	running := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)

	put(scheduler.DriverRecord{Attempt: 1, TaskID: "t1", AgentID: "agent-a", State: lifecycle.LaunchSent})
	if d := read(); d.Ran || !d.RunningAt.IsZero() {
		t.Fatalf("a launch just sent: ran %v, running at %v; want neither", d.Ran, d.RunningAt)
	}
	put(lifecycle.AfterStatus(read(), lifecycle.TaskUpdate{State: "TASK_RUNNING", AgentID: "agent-a", At: running}))
	first := read()
	if !first.Started || !first.RunningAt.Equal(running) || first.Ran {
		t.Fatalf("after TASK_RUNNING: %+v; want started, running at %v, not ran", first, running)
	}

	// A restart; Mesos answers the reconciliation with TASK_RUNNING.
	time.Sleep(2 * time.Millisecond) // so that updated_at visibly moves
	put(lifecycle.AfterStatus(read(), lifecycle.TaskUpdate{State: "TASK_RUNNING", AgentID: "agent-a", At: time.Now()}))
	again := read()
	if !again.RunningAt.Equal(running) || !again.UpdatedAt.After(first.UpdatedAt) {
		t.Fatalf("after the reconciliation's TASK_RUNNING: running at %v (want %v), updated %v (want after %v)",
			again.RunningAt, running, again.UpdatedAt, first.UpdatedAt)
	}
	for _, other := range []time.Time{{}, running.Add(30 * time.Minute), running.Add(-30 * time.Minute)} {
		put(scheduler.DriverRecord{Attempt: 1, TaskID: "t1", AgentID: "agent-a", State: "TASK_RUNNING", Started: true, RunningAt: other})
		if d := read(); !d.RunningAt.Equal(running) {
			t.Fatalf("a record running at %v moved the stored time to %v; want %v", other, d.RunningAt, running)
		}
	}

	// Launch 2 never seen running; its executor's TASK_FAILED proves it ran.
	put(scheduler.DriverRecord{Attempt: 2, TaskID: "t2", AgentID: "agent-b", State: lifecycle.LaunchSent})
	if d := read(); d.Attempt != 2 || d.Ran || !d.RunningAt.IsZero() || d.Started {
		t.Fatalf("launch 2 read back %+v; want none of launch 1's run", d)
	}
	put(lifecycle.AfterStatus(read(), lifecycle.TaskUpdate{State: "TASK_FAILED", AgentID: "agent-b", FromExecutor: true, At: time.Now()}))
	if d := read(); !d.Ran || !d.Ended || d.Started || !d.RunningAt.IsZero() || !lifecycle.DriverRan(d) {
		t.Fatalf("launch 2 after its executor's TASK_FAILED, read back: %+v; want ran (and so DriverRan), ended, never running", d)
	}
	put(scheduler.DriverRecord{Attempt: 2, TaskID: "t2", AgentID: "agent-b", State: "TASK_FAILED", Ended: true}) // a record without Ran
	if d := read(); !d.Ran {
		t.Fatalf("a record without Ran cleared it: %+v", d)
	}
	for _, c := range []struct {
		attempt int
		ran     bool
		at      time.Time
	}{{1, false, running}, {2, true, time.Time{}}} {
		d, err := s.DriverLaunch(ctx, j.ID, c.attempt)
		if err != nil || d.Ran != c.ran || !d.RunningAt.Equal(c.at) {
			t.Fatalf("launch %d: %+v, %v; want ran %v, running at %v", c.attempt, d, err, c.ran, c.at)
		}
	}

	// An older binary launches attempt 3 (a rolling upgrade).
	if _, err := s.db.ExecContext(ctx, preDriverRan, j.ID, 3, "t3", "agent-c", "TASK_RUNNING", "", false, 0, true, time.Now()); err != nil {
		t.Fatalf("an older binary's PutDriver against the new schema: %v", err)
	}
	if d := read(); d.Attempt != 3 || d.Ran || !d.RunningAt.IsZero() || !d.Started {
		t.Fatalf("launch 3 written by an older binary, read back: %+v; want started, without launch 2's ran or a running time", d)
	}
}
