package store

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// preLaunchedAt is PutDriver as a binary older than migration 0021 runs it
// (it names ran and running_at, not launched_at), for a rolling upgrade.
const preLaunchedAt = `WITH latest AS (
		INSERT INTO drivers (job_id, attempt, task_id, agent_id, state, message, ended, lost_launches, started, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
		ON CONFLICT (job_id) DO UPDATE SET attempt = EXCLUDED.attempt, task_id = EXCLUDED.task_id, agent_id = EXCLUDED.agent_id,
			state = EXCLUDED.state, message = EXCLUDED.message, ended = EXCLUDED.ended, lost_launches = EXCLUDED.lost_launches,
			started = EXCLUDED.started, updated_at = EXCLUDED.updated_at
		WHERE drivers.attempt <= EXCLUDED.attempt
		RETURNING 1)
	INSERT INTO driver_launches (job_id, attempt, task_id, agent_id, ended, ran, running_at) VALUES ($1, $2, $3, $4, $7, $11, $12)
	ON CONFLICT (job_id, attempt) DO UPDATE SET
		agent_id = CASE WHEN EXCLUDED.agent_id <> '' THEN EXCLUDED.agent_id ELSE driver_launches.agent_id END,
		ended = driver_launches.ended OR EXCLUDED.ended,
		ran = driver_launches.ran OR EXCLUDED.ran,
		running_at = COALESCE(driver_launches.running_at, EXCLUDED.running_at)`

// TestDriverLaunchedAtStored: when a launch was sent (its LAUNCH_SENT
// record, lifecycle.State.SendingRecord) survives a restart and the
// reconciliation's TASK_STAGING stored after it (migration 0021;
// docs/learning.md, "How a run's times survive a restart"): the record
// read back after a second restart still has it, and the machine built
// from it (lifecycle.New, as offers.Cluster.resume builds it) times the
// launch from it, not from the TASK_STAGING record's time. A record that
// carries another time or none does not move it. It belongs to its
// launch: the next launch starts without it, and a launch an older binary
// writes (rolling upgrade) reads back without it; an older binary's write
// to a launch does not clear it.
func TestDriverLaunchedAtStored(t *testing.T) {
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
	launched := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
	named := scheduler.DriverRecord{JobID: j.ID, Attempt: 1, TaskID: "t1"}
	put(named)
	if d := read(); !d.LaunchedAt.IsZero() {
		t.Fatalf("a driver named, not sent: launched at %v; want none", d.LaunchedAt)
	}
	resumed := func(d scheduler.DriverRecord) lifecycle.State {
		return lifecycle.New(lifecycle.Config{}, scheduler.Job{Spec: scheduler.Spec{ID: j.ID}}, placement.Plan{}, lifecycle.Launching, d, time.Now())
	}
	put(resumed(named).SendingRecord("agent-a", launched))
	sent := read()
	if sent.State != lifecycle.LaunchSent || !sent.LaunchedAt.Equal(launched) {
		t.Fatalf("the LAUNCH_SENT record read back: %+v; want launched at %v", sent, launched)
	}

	// A restart; Mesos answers the reconciliation with TASK_STAGING, which
	// is stored (the record's state and time move on); a second restart.
	time.Sleep(2 * time.Millisecond) // so that updated_at visibly moves
	put(lifecycle.AfterStatus(resumed(read()).Driver, lifecycle.TaskUpdate{State: "TASK_STAGING", AgentID: "agent-a", At: time.Now()}))
	staged := read()
	if staged.State != "TASK_STAGING" || !staged.LaunchedAt.Equal(launched) || !staged.UpdatedAt.After(sent.UpdatedAt) {
		t.Fatalf("after the reconciliation's TASK_STAGING: %+v; want TASK_STAGING, launched at %v, updated after %v", staged, launched, sent.UpdatedAt)
	}
	if st := resumed(staged); !st.Driver.LaunchedAt.Equal(launched) {
		t.Fatalf("the machine resumed from the TASK_STAGING record has the launch at %v; want %v", st.Driver.LaunchedAt, launched)
	}
	for _, other := range []time.Time{{}, launched.Add(30 * time.Minute), launched.Add(-30 * time.Minute)} {
		put(scheduler.DriverRecord{Attempt: 1, TaskID: "t1", AgentID: "agent-a", State: "TASK_STAGING", LaunchedAt: other})
		if d := read(); !d.LaunchedAt.Equal(launched) {
			t.Fatalf("a record launched at %v moved the stored time to %v; want %v", other, d.LaunchedAt, launched)
		}
	}
	// An older binary (before 0021) takes a status of the launch: it does
	// not name launched_at, which stays.
	if _, err := s.db.ExecContext(ctx, preLaunchedAt, j.ID, 1, "t1", "agent-a", "TASK_STAGING", "", false, 0, false, time.Now(), false, nil); err != nil {
		t.Fatalf("an older binary's PutDriver against the new schema: %v", err)
	}
	if d := read(); !d.LaunchedAt.Equal(launched) {
		t.Fatalf("an older binary's record cleared the launch time: %+v", d)
	}

	// Launch 2: none of launch 1's time until it is sent; then its own.
	put(scheduler.DriverRecord{Attempt: 2, TaskID: "t2"})
	if d := read(); d.Attempt != 2 || !d.LaunchedAt.IsZero() {
		t.Fatalf("launch 2 named, read back: %+v; want no launch time", d)
	}
	launched2 := launched.Add(time.Minute)
	put(resumed(read()).SendingRecord("agent-b", launched2))
	for _, c := range []struct {
		attempt int
		at      time.Time
	}{{1, launched}, {2, launched2}} {
		d, err := s.DriverLaunch(ctx, j.ID, c.attempt)
		if err != nil || !d.LaunchedAt.Equal(c.at) {
			t.Fatalf("launch %d: %+v, %v; want launched at %v", c.attempt, d, err, c.at)
		}
	}

	// An older binary launches attempt 3 (a rolling upgrade): no launch
	// time, not launch 2's; the machine then times it from the record's
	// time, as before.
	if _, err := s.db.ExecContext(ctx, preLaunchedAt, j.ID, 3, "t3", "agent-c", lifecycle.LaunchSent, "", false, 0, false, time.Now(), false, nil); err != nil {
		t.Fatalf("an older binary's PutDriver against the new schema: %v", err)
	}
	d := read()
	if d.Attempt != 3 || !d.LaunchedAt.IsZero() {
		t.Fatalf("launch 3 written by an older binary, read back: %+v; want no launch time", d)
	}
	if st := resumed(d); !st.Driver.LaunchedAt.Equal(d.UpdatedAt) {
		t.Fatalf("the machine resumed from an older binary's LAUNCH_SENT has the launch at %v; want its record's time %v", st.Driver.LaunchedAt, d.UpdatedAt)
	}
}
