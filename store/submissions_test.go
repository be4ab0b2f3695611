package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestSubmissionHistory: the jobs submitted since the cut, oldest first,
// with their sizes read from the spec (overhead and driver defaults
// filled in), the deadline, and a corrupt spec field as NaN (not an
// error); the limit keeps the newest.
func TestSubmissionHistory(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	mk := func(at time.Time, mod func(*scheduler.Spec)) string {
		t.Helper()
		j := newJob(t, mod)
		j.SubmittedAt = at
		j.DeadlineAt = j.Spec.ResolveDeadline(at)
		got, _, err := s.CreateJob(ctx, j, "")
		if err != nil {
			t.Fatal(err)
		}
		return got.ID
	}
	mk(now.Add(-40*24*time.Hour), nil) // before the cut
	mk(now.Add(-2*time.Hour), func(sp *scheduler.Spec) {
		sec := 600.0
		sp.Executors, sp.ExecutorCores, sp.ExecutorMemoryMB = 3, 2, 4096
		sp.Driver = &scheduler.Driver{Cores: 2, MemoryMB: 2048}
		sp.Deadline = &scheduler.Deadline{Seconds: &sec}
		sp.EstimatedDurationSeconds = 120
	})
	corrupt := mk(now.Add(-time.Hour), nil)
	mk(now.Add(-3*time.Hour), func(sp *scheduler.Spec) { sp.MemoryOverheadMB = 512 })
	if _, err := s.DB().ExecContext(ctx, `UPDATE jobs SET spec = jsonb_set(spec, '{executors}', '"many"') WHERE id = $1`, corrupt); err != nil {
		t.Fatal(err)
	}

	got, err := s.SubmissionHistory(ctx, now.Add(-35*24*time.Hour), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d rows, want 3 (the old job is before the cut): %+v", len(got), got)
	}
	for i := 1; i < len(got); i++ {
		if got[i].SubmittedAt.Before(got[i-1].SubmittedAt) {
			t.Fatalf("not oldest first: %v", got)
		}
	}
	// newJob: 2 executors of 1 cpu, 1024 MB.
	o := got[0]
	if o.Executors != 2 || o.ExecutorCores != 1 || o.ExecutorMemMB != 1024+512 || o.DeadlineAt != nil || o.DriverCores != 1 || o.DriverMemMB != 1024 {
		t.Errorf("explicit overhead row: %+v", o)
	}
	d := got[1]
	if d.Executors != 3 || d.ExecutorCores != 2 || d.ExecutorMemMB != 4096+409 || d.DriverCores != 2 || d.DriverMemMB != 2048 || d.EstimatedSeconds != 120 {
		t.Errorf("deadline row sizes: %+v", d)
	}
	if d.DeadlineAt == nil || !d.DeadlineAt.Equal(now.Add(-2*time.Hour+10*time.Minute)) {
		t.Errorf("deadline row: deadline %v", d.DeadlineAt)
	}
	if c := got[2]; !math.IsNaN(c.Executors) || c.ExecutorCores != 1 || c.State != string(scheduler.Submitted) {
		t.Errorf("corrupt row: %+v (want executors NaN)", c)
	}

	// The limit keeps the newest stored (the last two created).
	got, err = s.SubmissionHistory(ctx, now.Add(-35*24*time.Hour), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !math.IsNaN(got[1].Executors) || got[0].ExecutorMemMB != 1024+512 {
		t.Fatalf("limit 2: %+v", got)
	}
}
