package scheduler

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
)

// levelModel answers every job with one prediction (its level and runs).
type levelModel struct {
	tableModel
	pred perfmodel.Prediction
}

func (m *levelModel) Predict(RunKey, int, perfmodel.Placement) (perfmodel.Prediction, bool) {
	return m.pred, true
}

// TestPreviewSaysWhereTheRunTimeCameFrom: a preview's finish says where
// its run time came from: the estimated duration given (no model, or a
// model that knows nothing of the job), else the learned model's p90 from
// the runs of this application, of its application type, or its default.
func TestPreviewSaysWhereTheRunTimeCameFrom(t *testing.T) {
	p90 := func(lv perfmodel.Level, runs int) RunModel {
		return &levelModel{tableModel: tableModel{base: map[string]float64{}}, pred: perfmodel.Prediction{P50: 600, P90: 900, Level: lv, Runs: runs}}
	}
	for _, c := range []struct {
		name     string
		model    RunModel
		estimate time.Duration
		want     string
	}{
		{"no model", nil, 10 * time.Minute, "from its estimated duration"},
		{"model without the job", &tableModel{base: map[string]float64{}}, 10 * time.Minute, "from its estimated duration"},
		{"signature", p90(perfmodel.LevelSignature, 1), 0, "the learned model's p90, from 1 earlier run of this application"},
		{"signature, runs", p90(perfmodel.LevelSignature, 7), 10 * time.Minute, "the learned model's p90, from 7 earlier runs of this application"},
		{"app type", p90(perfmodel.LevelAppType, 4), 0, "the learned model's p90, from 4 runs of wordcount applications (none yet of this one)"},
		{"prior with estimate", p90(perfmodel.LevelPrior, 0), 10 * time.Minute, "the learned model's default p90 around its estimated duration (no runs learned yet)"},
		{"prior without", p90(perfmodel.LevelPrior, 0), 0, "the learned model's default for its input size (no estimated duration given, no runs learned yet)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{Policy: "bfd", Model: c.model}, agent("a1", 16, 65536, 0.24))
			h.schedule()
			var opts []jobOpt
			if c.estimate > 0 {
				opts = append(opts, withEstimate(c.estimate))
			}
			j := mkJob("x", 1, 2, opts...)
			j.Labels = map[string]string{AppTypeLabel: "wordcount"}
			p, err := h.core.Preview(context.Background(), j, t0)
			if err != nil {
				t.Fatal(err)
			}
			if p.EstimatedFinish == nil || p.EstimateSource != c.want {
				t.Fatalf("finish %v from %q, want a finish from %q", p.EstimatedFinish, p.EstimateSource, c.want)
			}
		})
	}
}
