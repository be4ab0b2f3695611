package api

import (
	"testing"

	"github.com/sparkpack/sparkpack/perfmodel"
)

// dippingModels predicts 100/E - 10 seconds: below zero past 10
// executors, as a noisy fit's curve can be.
type dippingModels struct{}

func (dippingModels) Summaries() []perfmodel.Summary { return nil }
func (dippingModels) Predict(_, _ string, q perfmodel.Query) (perfmodel.Prediction, error) {
	p50 := 100/float64(q.Executors) - 10
	return perfmodel.Prediction{P50: p50, P90: 1.5 * p50, Level: perfmodel.LevelSignature}, nil
}

// TestModelCurveSkipsNonPositive: the models view leaves out the points
// where the curve is not a run time (zero or below), as it leaves out
// those that are not finite: it showed negative seconds.
func TestModelCurveSkipsNonPositive(t *testing.T) {
	v := modelView(dippingModels{}, perfmodel.Summary{Signature: "s", Runs: 10}, modelsQuery{executors: []int{1, 5, 10, 20}, size: 1})
	if len(v.Curve) != 2 {
		t.Fatalf("curve %+v, want the points at 1 and 5 executors only", v.Curve)
	}
	for _, p := range v.Curve {
		if !(p.P50Seconds > 0) || !(p.P90Seconds > 0) {
			t.Errorf("point %+v is not a run time", p)
		}
	}
}
