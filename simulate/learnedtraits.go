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
// Until its estimator is set (before any job is submitted) it knows
// nothing.
type traitsModel struct{ e *estimator }

var _ scheduler.RunModel = (*traitsModel)(nil)

func (*traitsModel) Predict(scheduler.RunKey, int, perfmodel.Placement) (perfmodel.Prediction, bool) {
	return perfmodel.Prediction{}, false
}

func (m *traitsModel) Traits(k scheduler.RunKey) (perfmodel.Traits, bool) {
	if m.e == nil || m.e.book == nil {
		return perfmodel.Traits{}, false
	}
	t, lv := m.e.book.Traits(k.Signature, k.App)
	return t, lv == perfmodel.LevelSignature
}

func (m *traitsModel) Predictor(k scheduler.RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	if m.e == nil || m.e.book == nil {
		return perfmodel.NewBook().Predictor(k.Signature, k.App, k.Size, pl, k.EstimateSeconds)
	}
	return m.e.book.Predictor(k.Signature, k.App, k.Size, pl, k.EstimateSeconds)
}

func (*traitsModel) Observe(scheduler.RunRecord) {}

// Version changes with every run the estimator learns from.
func (m *traitsModel) Version() uint64 {
	if m.e == nil {
		return 0
	}
	return m.e.learnt
}
