package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestPreemptionRoundTrip: an eviction request is refused for a waiting
// job, stored once for a running one (with an event), read back by a
// restarted process (Unfinished), and the move back to QUEUED keeps the
// counts the core sets; a new run gets its own start time.
func TestPreemptionRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RequestPreemption(ctx, j.ID, "for d1"); !errors.Is(err, scheduler.ErrStale) {
		t.Fatalf("preempt a waiting job: %v, want ErrStale", err)
	}
	steps := [][2]scheduler.State{{scheduler.Submitted, scheduler.Queued}, {scheduler.Queued, scheduler.Placing},
		{scheduler.Placing, scheduler.Reserving}, {scheduler.Reserving, scheduler.Launching}, {scheduler.Launching, scheduler.Running}}
	run := func() scheduler.Job {
		t.Helper()
		var got scheduler.Job
		for _, st := range steps {
			cur, _ := s.GetJob(ctx, j.ID)
			if cur.State != st[0] {
				continue
			}
			if got, err = s.Transition(ctx, j.ID, st[0], st[1], "", nil); err != nil {
				t.Fatal(err)
			}
		}
		return got
	}
	first := run()
	if first.LastStartedAt == nil || first.StartedAt == nil || !first.LastStartedAt.Equal(*first.StartedAt) {
		t.Fatalf("first run: started %v, last started %v", first.StartedAt, first.LastStartedAt)
	}
	got, err := s.RequestPreemption(ctx, j.ID, "evicted (mdf) for d1")
	if err != nil || got.PreemptRequested != "evicted (mdf) for d1" {
		t.Fatalf("request: %+v %v", got, err)
	}
	if _, err := s.RequestPreemption(ctx, j.ID, "again"); err != nil {
		t.Fatalf("second request: %v", err)
	}
	unfinished, err := s.Unfinished(ctx)
	if err != nil || len(unfinished) != 1 || unfinished[0].PreemptRequested != "evicted (mdf) for d1" {
		t.Fatalf("a restarted process reads %+v (%v)", unfinished, err)
	}
	evs, _ := s.Events(ctx, j.ID)
	n := 0
	for _, e := range evs {
		if strings.HasPrefix(e.Reason, "preemption requested: ") {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d preemption-requested events, want 1: %+v", n, evs)
	}
	back, err := s.Transition(ctx, j.ID, scheduler.Running, scheduler.Queued, "preempted: evicted (mdf) for d1", func(x *scheduler.Job) {
		x.PreemptRequested = ""
		x.Preemptions++
		x.LostWorkSeconds += 42.5
		x.WaitingReason = "preempted"
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = s.GetJob(ctx, j.ID)
	if got.PreemptRequested != "" || got.Preemptions != 1 || got.LostWorkSeconds != 42.5 || got.WaitingReason != "preempted" || got.State != scheduler.Queued {
		t.Fatalf("after eviction: stored %+v (returned %+v)", got, back)
	}
	time.Sleep(2 * time.Millisecond)
	second := run()
	if !second.StartedAt.Equal(*first.StartedAt) || !second.LastStartedAt.After(*first.LastStartedAt) {
		t.Fatalf("second run: started %v (first %v), last started %v", second.StartedAt, first.StartedAt, second.LastStartedAt)
	}
	got, _ = s.GetJob(ctx, j.ID)
	if !got.LastStartedAt.Equal(*second.LastStartedAt) || got.Preemptions != 1 {
		t.Fatalf("stored second run: %+v", got)
	}
}

// TestPreemptionColumnsInBatches: TransitionMany writes the columns too.
func TestPreemptionColumnsInBatches(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	res, err := s.TransitionMany(ctx, []scheduler.Change{{ID: j.ID, From: scheduler.Submitted, To: scheduler.Queued, Reason: "queued",
		Mutate: func(x *scheduler.Job) { x.Preemptions, x.LostWorkSeconds = 2, 7 }}})
	if err != nil || res[0].Err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	got, _ := s.GetJob(ctx, j.ID)
	if got.Preemptions != 2 || got.LostWorkSeconds != 7 {
		t.Fatalf("batch lost the columns: %+v", got)
	}
}
