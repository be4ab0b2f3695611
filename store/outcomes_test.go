package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestDeadlineOutcomes counts met and missed deadline jobs from the stored
// jobs, by hand-made cases: finished before and after the deadline, failed
// after it, cancelled (neither), and a job without a deadline (neither).
func TestDeadlineOutcomes(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now()
	future, past := now.Add(time.Hour), now.Add(-time.Hour)
	life := []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running}
	run := func(deadline *time.Time, end scheduler.State) {
		t.Helper()
		j := newJob(t, nil)
		j.DeadlineAt = deadline
		c, _, err := s.CreateJob(ctx, j, "")
		if err != nil {
			t.Fatal(err)
		}
		from := scheduler.Submitted
		path := life
		if end == scheduler.Cancelled {
			path = life[:1]
		}
		for _, to := range slices.Concat(path, []scheduler.State{end}) {
			if _, err := s.Transition(ctx, c.ID, from, to, "test", func(x *scheduler.Job) {
				if to.Terminal() {
					x.FinishedAt = &now
				}
			}); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
		}
	}
	run(&future, scheduler.Finished) // met
	run(&future, scheduler.Finished) // met
	run(&past, scheduler.Finished)   // missed
	run(&past, scheduler.Failed)     // missed: it failed after the deadline
	run(&future, scheduler.Failed)   // neither: failed before the deadline
	run(&past, scheduler.Cancelled)  // neither: it never ran
	run(nil, scheduler.Finished)     // neither: no deadline
	met, missed, err := s.DeadlineOutcomes(ctx)
	if err != nil || met != 2 || missed != 2 {
		t.Fatalf("DeadlineOutcomes = %d met, %d missed, %v; want 2 and 2", met, missed, err)
	}
	// Every job ended at now: a window around it counts them all, one
	// before or after it none.
	for _, w := range []struct {
		from, to  time.Time
		met, miss int
	}{
		{now.Add(-time.Minute), now.Add(time.Minute), 2, 2},
		{now.Add(-time.Hour), now.Add(-time.Minute), 0, 0},
		{now.Add(time.Second), time.Time{}, 0, 0},
	} {
		met, missed, err := s.DeadlineOutcomesBetween(ctx, w.from, w.to)
		if err != nil || met != w.met || missed != w.miss {
			t.Errorf("DeadlineOutcomesBetween(%v, %v) = %d, %d, %v; want %d, %d", w.from, w.to, met, missed, err, w.met, w.miss)
		}
	}
}
