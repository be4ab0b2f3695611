package main

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestFollowerModelFollowsTheHistory: a follower's model, loaded at its
// start, learns the runs the leader records afterwards (through
// PostgreSQL) at its next catch-up, so that an "executors": "auto" job
// submitted through it is right-sized as the leader would: with the
// count a model reloaded from the whole history chooses, not the prior's.
// While it leads it does not catch up (its core teaches it); after its
// term it reloads once, then catches up again.
func TestFollowerModelFollowsTheHistory(t *testing.T) {
	ctx := context.Background()
	dbURL := pgtest.URL(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(ctx, dbURL, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := &leadership{st: st, log: quiet, model: learned.New()}
	h.loadModel(ctx, quiet) // the follower starts on an empty history
	const sig = "local:///jobs/follow.jar com.example.Follow"
	t0 := time.Now().UTC().Truncate(time.Second)
	record := func(n int) {
		for i := range n {
			e := 1 + i%8
			secs := 300/float64(e) + 40
			if err := st.RecordRun(ctx, scheduler.RunRecord{JobID: uuid.NewString(), Attempt: 1, Signature: sig, EstimateKey: "team:", Executors: e,
				StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs, Outcome: scheduler.RunFinished}); err != nil {
				t.Fatal(err)
			}
		}
	}
	auto := func() *scheduler.Job {
		dl := t0.Add(time.Minute)
		return &scheduler.Job{Spec: scheduler.Spec{App: scheduler.App{AppResource: "local:///jobs/follow.jar", MainClass: "com.example.Follow"},
			Sizing: &scheduler.Sizing{Auto: true}, MaxExecutors: 16}, DeadlineAt: &dl}
	}
	// The leader records ten runs after the follower started.
	record(10)
	before := auto()
	if err := h.RightSize(before, t0); err != nil {
		t.Fatal(err)
	}
	if before.Sizing.Level != "prior" {
		t.Fatalf("before catching up: %+v; want the prior's choice", before.Sizing)
	}
	if n, err := h.followStep(ctx, time.Now()); err != nil || n != 10 {
		t.Fatalf("catch-up: %d, %v; want the 10 runs", n, err)
	}
	got := auto()
	if err := h.RightSize(got, t0); err != nil {
		t.Fatal(err)
	}
	ref := learned.New()
	if _, err := ref.Reload(ctx, st); err != nil {
		t.Fatal(err)
	}
	want := auto()
	if err := ref.RightSize(want, t0); err != nil {
		t.Fatal(err)
	}
	if got.Executors != want.Executors || *got.Sizing != *want.Sizing || got.Sizing.Level != "signature" {
		t.Fatalf("follower chose %+v; the history's model %+v", got.Sizing, want.Sizing)
	}
	if n, _ := h.followStep(ctx, time.Now()); n != 0 {
		t.Fatalf("a second catch-up learned %d runs again", n)
	}
	// Leading: the core teaches the model; no catch-up.
	h.modelMu.Lock()
	h.leading = true
	h.modelMu.Unlock()
	record(2)
	if n, _ := h.followStep(ctx, time.Now()); n != 0 || h.model.Runs() != 10 {
		t.Fatalf("caught up while leading: %d (runs %d)", n, h.model.Runs())
	}
	// The term ends: one reload (the 12 runs), then catch-ups.
	h.modelMu.Lock()
	h.leading, h.stale = false, true
	h.modelMu.Unlock()
	if n, err := h.followStep(ctx, time.Now()); err != nil || n != 12 || h.model.Runs() != 12 {
		t.Fatalf("after the term: %d (%v), runs %d; want a reload of 12", n, err, h.model.Runs())
	}
	record(1)
	if n, _ := h.followStep(ctx, time.Now()); n != 1 || h.model.Runs() != 13 {
		t.Fatalf("catch-up after the reload: %d, runs %d", n, h.model.Runs())
	}
}
