package simulate

import (
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// traitsModel gives the scheduler, in learned mode, what the live learned
// model gives dap: each job's traits from its signature's fitted placement
// sensitivities (perfmodel.Book.Traits; DAPTraits stay the prior until its
// runs tell them apart). Run times stay the estimates the estimator tells
// at submission (Predict answers ok=false), so that the learned mode's
// estimates are what it measures; the estimator learns from the runs.
type traitsModel struct{ e *estimator }

var _ scheduler.RunModel = traitsModel{}

func (traitsModel) Predict(scheduler.RunKey, int, perfmodel.Placement) (perfmodel.Prediction, bool) {
	return perfmodel.Prediction{}, false
}

func (m traitsModel) Traits(k scheduler.RunKey) (perfmodel.Traits, bool) {
	t, lv := m.e.book.Traits(k.Signature, k.App)
	return t, lv == perfmodel.LevelSignature
}

func (m traitsModel) Predictor(k scheduler.RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	return m.e.book.Predictor(k.Signature, k.App, k.Size, pl, k.EstimateSeconds)
}

func (traitsModel) Observe(scheduler.RunRecord) {}

// Version changes with every run the estimator learns from.
func (m traitsModel) Version() uint64 { return m.e.learnt }
