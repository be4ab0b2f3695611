package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestWaitingReasonsAreKept: when a waiting job's reason changes, the
// reason it had stays in its timeline with how long it held; a reason
// that held under MinKeptWait, or one set again unchanged, adds nothing
// (issue 28, item 4).
func TestWaitingReasonsAreKept(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	s, err := Open(context.Background(), pgtest.URL(t), WithLogger(quietLog()), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	nj := newJob(t, nil)
	nj.SubmittedAt = clock()
	j, _, err := s.CreateJob(ctx, nj, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, j.ID, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
		t.Fatal(err)
	}
	set := func(reason string) {
		t.Helper()
		if err := s.SetWaiting(ctx, j.ID, reason, false); err != nil {
			t.Fatal(err)
		}
	}
	set("does not fit now: short of cpus")
	advance(139 * time.Second)
	set("does not fit now: short of cpus") // unchanged: nothing kept
	set("deadline jobs first")             // changed after 2m19s: kept
	advance(500 * time.Millisecond)
	set("does not fit now: short of memory") // held 0.5 s: not kept
	got, err := s.GetJob(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	events, err := s.Events(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var waited []string
	for _, e := range events {
		if strings.HasPrefix(e.Reason, "waited ") {
			waited = append(waited, e.Reason)
		}
	}
	if got.WaitingReason != "does not fit now: short of memory" || len(waited) != 1 || waited[0] != "waited 2m19s: does not fit now: short of cpus" {
		t.Fatalf("reason %q, kept %q", got.WaitingReason, waited)
	}
}
