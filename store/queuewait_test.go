package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestQueueWaits: "waited" is the time in the queue (SUBMITTED, QUEUED),
// summed over the job's waits: not the time its lost launch and its failed
// run took before it waited again, nor its runs. A job that waits now has
// its wait's start; a job only queued at once waited 0s.
func TestQueueWaits(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	at := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, err := Open(context.Background(), pgtest.URL(t), WithLogger(quietLog()), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	create := func() string {
		nj := newJob(t, nil)
		nj.SubmittedAt = clock()
		j, _, err := s.CreateJob(ctx, nj, "")
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	path := func(id string, states ...scheduler.State) {
		t.Helper()
		j, err := s.GetJob(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		from := j.State
		for _, to := range states {
			if _, err := s.Transition(ctx, id, from, to, "test", nil); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
		}
	}
	// retried: 2s submitted, 3s queued; 1s placing to launching; launch
	// lost, back to the queue for 4s; runs 50s and fails; 5s in the queue;
	// runs 10s and finishes. Waited 2+3+4+5 = 14s; the old figure (its
	// last start minus its submission) was 75s.
	retried := create()
	at(2 * time.Second)
	path(retried, scheduler.Queued)
	at(3 * time.Second)
	path(retried, scheduler.Placing, scheduler.Reserving, scheduler.Launching)
	at(time.Second)
	path(retried, scheduler.Queued)
	at(4 * time.Second)
	path(retried, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running)
	at(50 * time.Second)
	path(retried, scheduler.Queued)
	at(5 * time.Second)
	path(retried, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running)
	at(10 * time.Second)
	path(retried, scheduler.Finished)

	waiting := create()
	at(time.Second)
	path(waiting, scheduler.Queued)
	waitingSince := clock()
	at(7 * time.Second)

	got, err := s.QueueWaits(ctx, []string{retried, waiting, "not-a-uuid"})
	if err != nil {
		t.Fatal(err)
	}
	if w, ok := got[retried]; !ok || w.Seconds != 14 || w.Since != nil {
		t.Errorf("retried job: %+v (%v); want 14s waited, not waiting now", w, ok)
	}
	// It waits now: 1s SUBMITTED, then QUEUED since waitingSince.
	if w, ok := got[waiting]; !ok || w.Seconds != 1 || w.Since == nil || !w.Since.Equal(waitingSince) {
		t.Errorf("waiting job: %+v (%v); want 1s waited and waiting since %s", w, ok, waitingSince)
	}
	if len(got) != 2 {
		t.Errorf("waits of %d jobs: %v", len(got), got)
	}
}
