package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestPruneEnded: only ended jobs older than the cut go, oldest first, a
// batch at a time, with their events, placements, drivers and released
// reservations; waiting and running jobs, recent ones and one that still
// holds a reservation stay; job_events stays append-only outside pruning.
func TestPruneEnded(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now()
	old, recent := now.Add(-48*time.Hour), now.Add(-time.Hour)
	cut := now.Add(-24 * time.Hour)
	to := func(id string, path []scheduler.State, end *time.Time) {
		t.Helper()
		from := scheduler.Submitted
		for _, st := range path {
			if _, err := s.Transition(ctx, id, from, st, "test", func(x *scheduler.Job) {
				if st.Terminal() {
					x.FinishedAt = end
				}
			}); err != nil {
				t.Fatalf("%s -> %s: %v", from, st, err)
			}
			from = st
		}
	}
	mk := func() string {
		t.Helper()
		j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	ran := []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running, scheduler.Finished}
	oldA, oldB, oldLeak := mk(), mk(), mk()
	for _, id := range []string{oldA, oldB, oldLeak} {
		if err := s.PutReservation(ctx, scheduler.Reservation{JobID: id, AgentID: "S1", Role: scheduler.Role(id), CPUs: 1, MemMB: 1024, State: scheduler.ResReserved}); err != nil {
			t.Fatal(err)
		}
		to(id, ran, &old)
	}
	for _, id := range []string{oldA, oldB} {
		if err := s.PutReservation(ctx, scheduler.Reservation{JobID: id, AgentID: "S1", Role: scheduler.Role(id), CPUs: 1, MemMB: 1024, State: scheduler.ResReleased}); err != nil {
			t.Fatal(err)
		}
	}
	oldCancelled := mk()
	to(oldCancelled, []scheduler.State{scheduler.Queued, scheduler.Cancelled}, &old)
	recentDone := mk()
	to(recentDone, ran, &recent)
	waiting := mk()
	to(waiting, []scheduler.State{scheduler.Queued}, nil)

	// A batch of 2, then the rest: 3 old ended jobs without a live reservation.
	if n, err := s.Prunable(ctx, cut); err != nil || n != 3 {
		t.Fatalf("prunable: %d, %v; want 3", n, err)
	}
	n, err := s.PruneEnded(ctx, cut, 2)
	if err != nil || n != 2 {
		t.Fatalf("first batch: %d, %v; want 2", n, err)
	}
	n, err = s.PruneEnded(ctx, cut, 2)
	if err != nil || n != 1 {
		t.Fatalf("second batch: %d, %v; want 1", n, err)
	}
	if n, err := s.Prunable(ctx, cut); err != nil || n != 0 {
		t.Fatalf("prunable after pruning: %d, %v", n, err)
	}
	if n, err := s.PruneEnded(ctx, cut, 2); err != nil || n != 0 {
		t.Fatalf("third batch: %d, %v; want 0", n, err)
	}
	for id, want := range map[string]bool{oldA: false, oldB: false, oldCancelled: false, oldLeak: true, recentDone: true, waiting: true} {
		_, err := s.GetJob(ctx, id)
		if kept := err == nil; kept != want {
			t.Errorf("job %s kept=%v, want %v (%v)", id, kept, want, err)
		}
	}
	var events int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM job_events WHERE job_id = $1`, oldA).Scan(&events); err != nil || events != 0 {
		t.Fatalf("events of a pruned job: %d %v", events, err)
	}
	// Outside pruning, job_events is still append-only.
	_, err = s.db.ExecContext(ctx, `DELETE FROM job_events WHERE job_id = $1`, recentDone)
	if err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("a plain DELETE on job_events: %v; want the append-only error", err)
	}
}
