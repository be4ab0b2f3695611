package learned

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// dippingModel is a model of a noisy signature whose fitted curve goes
// below zero at 31 executors: 16 runs of 1 to 32 executors, 40% noise
// (seeded; the tests check the dip).
func dippingModel() (*Model, time.Time) {
	rng := rand.New(rand.NewPCG(238, 7))
	m := New()
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	n := 6 + rng.IntN(20)
	base, per := 20+rng.Float64()*200, 200+rng.Float64()*3000
	for i := 0; i < n; i++ {
		e := 1 << rng.IntN(6)
		gb := []float64{1, 2, 5, 10}[rng.IntN(4)]
		s := (base + per*gb/float64(e)) * math.Exp(0.4*rng.NormFloat64())
		m.Observe(scheduler.RunRecord{JobID: "j", Signature: sig, EstimateKey: sig, Executors: e, InputSizeGB: gb,
			StartedAt: t0, EndedAt: t0.Add(time.Duration(s * float64(time.Second))), Seconds: s, Outcome: scheduler.RunFinished})
	}
	return m, t0
}

// TestRightSizeWhenTheCurveDips: a noisy signature's fitted curve can go
// below zero at some executor counts within the range its runs had (here
// at 31: 16 runs of 1 to 32 executors, 40% noise). Sizing an "auto" job
// then failed (the API answered 400, "cannot choose the executors"): a
// valid submission refused for the model's sake. It is sized as without a
// model instead.
func TestRightSizeWhenTheCurveDips(t *testing.T) {
	m, t0 := dippingModel()
	k := scheduler.RunKey{Signature: sig, Size: 1}
	if p, err := m.Predictor(k, m.book.UsualPlacement(sig, ""))(31); err != nil || p.P50 > 0 {
		t.Fatalf("the fixture's curve at 31 executors: %+v (%v); the test wants one below zero", p, err)
	}
	j := scheduler.Job{Spec: scheduler.Spec{App: scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"},
		ExecutorCores: 1, ExecutorMemoryMB: 1024, InputSizeGB: 1, Sizing: &scheduler.Sizing{Auto: true}}}
	if err := m.RightSize(&j, t0); err != nil {
		t.Fatalf("right-size: %v", err)
	}
	if j.Executors < 1 || j.Sizing == nil || j.Sizing.Executors != j.Executors {
		t.Fatalf("executors %d, sizing %+v", j.Executors, j.Sizing)
	}
}

// TestPredictNotARunTime: where the curve dips below zero the model has no
// prediction (ok false: the caller keeps the user's estimate) rather than
// a negative run time, which the job view showed.
func TestPredictNotARunTime(t *testing.T) {
	m, _ := dippingModel()
	k := scheduler.RunKey{Signature: sig, Size: 1}
	if p, ok := m.Predict(k, 31, perfmodel.Placement{}); ok {
		t.Fatalf("31 executors: %+v ok=%v, want no prediction", p, ok)
	}
	if p, ok := m.Predict(k, 4, perfmodel.Placement{}); !ok || !(p.P50 > 0) {
		t.Fatalf("4 executors: %+v ok=%v, want a run time", p, ok)
	}
}
