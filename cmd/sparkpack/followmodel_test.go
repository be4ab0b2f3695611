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

// TestFollowerReloadsLearnedModel: a follower's learned model (its
// "executors": "auto" sizing and job pages) learns the runs recorded after
// it started, while a leader's is left to its core.
func TestFollowerReloadsLearnedModel(t *testing.T) {
	ctx := context.Background()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(ctx, pgtest.URL(t), store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	h := &leadership{st: st, log: log, model: learned.New()}
	h.loadModel(ctx, log)
	if h.model.Runs() != 0 {
		t.Fatalf("fresh model knows %d runs", h.model.Runs())
	}
	now := time.Now().UTC()
	if err := st.RecordRun(ctx, scheduler.RunRecord{JobID: uuid.NewString(), Attempt: 1, Signature: "local:///a.jar com.example.A",
		InputSizeGB: 10, Iterations: 1, Executors: 4, ExecutorCores: 2, ExecutorMemoryMB: 2048,
		StartedAt: now.Add(-time.Minute), EndedAt: now, Seconds: 60, Outcome: scheduler.RunFinished}); err != nil {
		t.Fatal(err)
	}
	tick := make(chan time.Time)
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); h.followModel(runCtx, tick) }()
	tick <- now
	tick <- now // the first tick's reload is over once the second is taken
	cancel()
	<-done
	if got := h.model.Runs(); got != 1 {
		t.Fatalf("follower's model knows %d runs after a refresh; want the 1 recorded since it started", got)
	}
}
