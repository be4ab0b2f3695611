package main

import (
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestJobPredictionScalesTheEstimate: under --sim-speed (the demo) a
// job's estimate is simulated time and the core scales it to wall time
// before asking the model, which learned the estimates scaled; the job's
// page (REST predictedSeconds, sparkpack job, the dashboard) must ask the
// same, not blend in the unscaled estimate (a demo job that ran 1.5 s
// showed "predicted 14s").
func TestJobPredictionScalesTheEstimate(t *testing.T) {
	const scale = 1.0 / 60
	j := scheduler.Job{Spec: scheduler.Spec{
		App:       scheduler.App{AppResource: "local:///a.jar", MainClass: "a.WordCount"},
		Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 1024, EstimatedDurationSeconds: 60,
	}}
	m := learned.New()
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	for i := range 30 {
		e := 1 + i%4
		secs := 2.0/float64(e) + 0.5 + 0.01*float64(i%3)
		m.Observe(scheduler.RunRecord{JobID: "r", Attempt: 1, Signature: scheduler.Signature(&j), AppType: scheduler.AppType(&j),
			Executors: e, ExecutorCores: 1, ExecutorMemoryMB: 1024, StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))),
			Seconds: secs, Outcome: scheduler.RunFinished, EstimateSeconds: 60 * scale})
	}
	k := scheduler.RunKeyOf(&j)
	k.EstimateSeconds *= scale
	core, ok := m.Predict(k, 2, perfmodel.Placement{})
	if !ok {
		t.Fatal("the model predicts nothing for the job")
	}
	got := modelsView{m: m, scale: scale}.jobPrediction(j)
	if got == nil || math.Abs(got.P50Seconds-core.P50) > 1e-9 || math.Abs(got.P90Seconds-core.P90) > 1e-9 {
		t.Fatalf("the job's page predicts %+v; the core predicts p50 %g, p90 %g", got, core.P50, core.P90)
	}
	// Without a scale (serve on a real cluster) the estimate is wall time.
	if got := (modelsView{m: m}).jobPrediction(j); got == nil {
		t.Fatal("no prediction without a scale")
	} else if unscaled, _ := m.Predict(scheduler.RunKeyOf(&j), 2, perfmodel.Placement{}); got.P50Seconds != unscaled.P50 {
		t.Fatalf("scale 0: %+v, want %g", got, unscaled.P50)
	}
}
