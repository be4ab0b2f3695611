package learned

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// dippingModel is a model of a noisy signature whose fitted curve went
// below zero at 31 executors before fits kept their terms nonnegative
// (perfmodel.TestFitPositiveEverywhere): 16 runs of 1 to 32 executors, 40%
// noise (seeded).
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

// TestRightSizeWhenTheCurveDips: a noisy signature's fitted curve went
// below zero at some executor counts within the range its runs had (here
// at 31: 16 runs of 1 to 32 executors, 40% noise). Sizing an "auto" job
// then failed (the API answered 400, "cannot choose the executors"): a
// valid submission refused for the model's sake; then it was sized as
// without a model. Now the curve stays positive, and the job is sized
// from the signature's model.
func TestRightSizeWhenTheCurveDips(t *testing.T) {
	m, t0 := dippingModel()
	k := scheduler.RunKey{Signature: sig, Size: 1}
	for e := 1; e <= 64; e++ {
		if p, err := m.Predictor(k, m.book.UsualPlacement(sig, ""))(e); err != nil || !(p.P50 > 0) || p.Level != perfmodel.LevelSignature {
			t.Fatalf("the fixture's curve at %d executors: %+v (%v); want a positive run time from the signature", e, p, err)
		}
	}
	j := scheduler.Job{Spec: scheduler.Spec{App: scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"},
		ExecutorCores: 1, ExecutorMemoryMB: 1024, InputSizeGB: 1, Sizing: &scheduler.Sizing{Auto: true}}}
	if err := m.RightSize(&j, t0); err != nil {
		t.Fatalf("right-size: %v", err)
	}
	if j.Executors < 1 || j.Sizing == nil || j.Sizing.Executors != j.Executors || j.Sizing.Level != string(perfmodel.LevelSignature) {
		t.Fatalf("executors %d, sizing %+v; want sized from the signature's model", j.Executors, j.Sizing)
	}
}

// TestPredictNotARunTime: the model answers a positive run time at every
// executor count (where the curve dipped below zero the job view showed a
// negative run time; then the model answered no prediction).
func TestPredictNotARunTime(t *testing.T) {
	m, _ := dippingModel()
	k := scheduler.RunKey{Signature: sig, Size: 1}
	for _, e := range []int{1, 4, 31, 32, 200} {
		if p, ok := m.Predict(k, e, perfmodel.Placement{}); !ok || !(p.P50 > 0) || !(p.P90 >= p.P50) {
			t.Fatalf("%d executors: %+v ok=%v, want a run time", e, p, ok)
		}
	}
}
