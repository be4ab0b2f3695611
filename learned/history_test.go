package learned_test

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// TestHistorySurvivesRestart: runs recorded with their jobs' ends (as the
// core records them: Job.EndedRun in the transition to FINISHED) are what
// a restarted instance, or a new leader on its own connection, loads: its
// model predicts exactly what the model that saw the runs live predicts.
func TestHistorySurvivesRestart(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(ctx, url, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	live := learned.New()
	const sig = "local:///jobs/etl.jar com.example.Etl"
	t0 := time.Now().UTC().Truncate(time.Second)
	for i := range 10 {
		spec := scheduler.Spec{ID: uuid.NewString(), App: scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"},
			Executors: 1 + i%6, ExecutorCores: 1, ExecutorMemoryMB: 1024, EstimatedDurationSeconds: 100}
		j, _, err := st.CreateJob(ctx, scheduler.Job{Spec: spec, SubmittedAt: t0}, "")
		if err != nil {
			t.Fatal(err)
		}
		from := scheduler.Submitted
		for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
			if _, err := st.Transition(ctx, j.ID, from, to, "test", nil); err != nil {
				t.Fatal(err)
			}
			from = to
		}
		secs := 500/float64(spec.Executors) + 40
		rec := scheduler.RunRecord{JobID: j.ID, Attempt: 1, Signature: sig, EstimateKey: sig, Executors: spec.Executors,
			RunShape:  scheduler.RunShape{Agents: 1, MaxPerAgent: spec.Executors, BusiestLoad: 0.25 * float64(i%4)},
			StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs,
			Outcome: scheduler.RunFinished, EstimateSeconds: 100}
		if _, err := st.Transition(ctx, j.ID, scheduler.Running, scheduler.Finished, "done", func(x *scheduler.Job) { r := rec; x.EndedRun = &r }); err != nil {
			t.Fatal(err)
		}
		live.Observe(rec)
	}
	st.Close()

	for _, name := range []string{"restart", "failover"} {
		st2, err := store.Open(ctx, url, store.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		m := learned.New()
		n, err := m.Reload(ctx, st2)
		st2.Close()
		if err != nil || n != 10 {
			t.Fatalf("%s: reload %d runs, %v", name, n, err)
		}
		k := scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 100}
		for e := 1; e <= 12; e++ {
			pl := perfmodel.Placement{BusiestLoad: 0.8}
			a, okA := live.Predict(k, e, pl)
			b, okB := m.Predict(k, e, pl)
			if !okA || !okB || a != b || a.Level != perfmodel.LevelSignature {
				t.Fatalf("%s: E=%d live %+v (%v), reloaded %+v (%v)", name, e, a, okA, b, okB)
			}
		}
	}
}
