package simulate

import (
	"fmt"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// What the core's model answers in learned mode (--learned-decisions).
const (
	// LearnedDecisionsModel: as live (learned.Model), every decision that
	// needs a run time asks the model for the job on the plan in question
	// (p50 where a run time prices something, p90 where it decides a
	// deadline); the job carries its user's estimate, which the model
	// corrects and blends in (estimator.predict). The default, since
	// the feasible orderings demote a job on its p50 rather than its p90
	// (scheduler decider.hopeless; docs/simulation.md, "Learned decisions
	// as live").
	LearnedDecisionsModel = "model"
	// LearnedDecisionsTold: the model answers no run time (Predict
	// ok=false); the core decides with the estimate told at submission
	// (estimator.learned), fixed for the job's life. The default until
	// the hopeless test moved to the p50 (docs/simulation.md).
	LearnedDecisionsTold = "told"
)

// checkLearnedDecisions validates --learned-decisions.
func checkLearnedDecisions(mode string) error {
	switch mode {
	case "", LearnedDecisionsModel, LearnedDecisionsTold:
		return nil
	}
	return fmt.Errorf("learned-decisions %q: want model or told", mode)
}

// traitsModel gives the scheduler, in learned mode, what the live learned
// model gives it: each job's traits from its signature's fitted placement
// sensitivities (perfmodel.Book.Traits; DAPTraits stay the prior until its
// runs tell them apart), and, unless told is set, run times as live
// answers them (estimator.predict: p50 and p90 on each plan, from the
// book the estimator learns into). With told, run times stay the
// estimates the estimator tells at submission (Predict answers ok=false).
// Until its estimator is set (before any job is submitted) it knows
// nothing.
type traitsModel struct {
	e    *estimator
	told bool
}

var _ scheduler.RunModel = (*traitsModel)(nil)

// Predict is the job's run time on a plan shaped like pl (the zero
// placement: on the plans its signature usually gets), as learned.Model
// answers live; ok=false with told, or while the model knows nothing of
// the job.
func (m *traitsModel) Predict(k scheduler.RunKey, executors int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	if m.told || m.e == nil || m.e.book == nil {
		return perfmodel.Prediction{}, false
	}
	return m.e.predict(k, executors, pl)
}

func (m *traitsModel) Traits(k scheduler.RunKey) (perfmodel.Traits, bool) {
	if m.e == nil || m.e.book == nil {
		return perfmodel.Traits{}, false
	}
	t, lv := m.e.book.Traits(k.Signature, k.App)
	return t, lv == perfmodel.LevelSignature
}

// Predictor is the book's p50/p90 by executor count on plans shaped like
// pl (the zero placement: on the plans the signature usually gets, as
// Predict), without the user's estimate, as learned.Model's.
func (m *traitsModel) Predictor(k scheduler.RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	if m.e == nil || m.e.book == nil {
		return perfmodel.NewBook().Predictor(k.Signature, k.App, k.Size, pl, 0)
	}
	b := m.e.book
	return func(e int) (perfmodel.Prediction, error) {
		q := pl
		if q == (perfmodel.Placement{}) {
			q = b.UsualPlacement(k.Signature, k.App)
		}
		return b.Predict(k.Signature, k.App, perfmodel.Query{Executors: e, Size: k.Size, Placement: q})
	}
}

func (*traitsModel) Observe(scheduler.RunRecord) {}

// Version changes with every run the estimator learns from.
func (m *traitsModel) Version() uint64 {
	if m.e == nil {
		return 0
	}
	return m.e.learnt
}
