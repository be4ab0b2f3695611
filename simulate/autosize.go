package simulate

import (
	"fmt"
	"math"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// Executor counts of --executors.
const (
	// ExecutorsUser: every job runs with the count its user chose (the
	// mix's: one up to 256 MiB of input, one more per doubling, at most
	// 16; with --user-executors habit one count per signature,
	// workload.Habit); the behaviour before.
	ExecutorsUser = "user"
	// ExecutorsAuto: every job asks for "executors": "auto" (issue 27):
	// once its signature's model has LearnWarmup runs of its own, the
	// count is perfmodel.RightSize's on the learned model (with a deadline
	// the cheapest count whose p90 on the plans the signature usually gets
	// meets it, else the knee), among the counts its runs had
	// (perfmodel.Book.ExecutorRange; at most
	// scheduler.DefaultAutoMaxExecutors); before, the user's count. The deadline stays the user's (1.5 x the
	// profiled run time with the user's count).
	ExecutorsAuto = "auto"
)

// autoSizer right-sizes jobs at submission from the estimator's book.
type autoSizer struct {
	model    workload.Model
	profiles map[string]workload.Profile
	// sized counts the jobs the model sized; changed those whose count
	// differs from the user's.
	sized, changed int
	runNoise       float64 // the simulation's (the oracle sizer's p90)
}

// enableAuto makes e right-size the jobs it submits (--executors auto); it
// learns from the runs whatever the estimates mode.
func (e *estimator) enableAuto(m workload.Model, profiles map[string]workload.Profile, runNoise float64) {
	if e.book == nil {
		e.book, e.corr = perfmodel.NewBook(), perfmodel.NewEstimates()
	}
	e.auto = &autoSizer{model: m, profiles: profiles, runNoise: runNoise}
}

// rightSize sets j's executor count from the model, when it knows j's
// signature, before j's estimate is told, and j's profile's (the truth
// runs that many executors).
//
// With oracle estimates the sizer knows the truth instead (a bound, not a
// policy): the profiled run time with each count on one uncontended agent
// as p50, times the run noise's 90th percentile as p90, over
// [1, scheduler.DefaultAutoMaxExecutors], from the first job on.
func (e *estimator) rightSize(j *scheduler.Job) {
	ej := e.jobs[j.ID]
	if e.auto == nil || ej == nil || !(ej.size > 0) {
		return
	}
	req := perfmodel.SizeRequest{Min: 1, Max: scheduler.DefaultAutoMaxExecutors}
	if j.DeadlineAt != nil {
		req.TimeToDeadline = min(perfmodel.MaxSeconds, max(1, j.DeadlineAt.Sub(j.SubmittedAt).Seconds()))
	}
	var pred perfmodel.Predictor
	if e.mode == EstimatesLearned || e.mode == EstimatesUser {
		lo, hi, ok := e.book.ExecutorRange(ej.sig)
		if !ok || e.count[ej.sig] < LearnWarmup {
			return
		}
		req.Min, req.Max = max(1, lo), min(req.Max, max(lo, hi))
		pred = e.book.Predictor(ej.sig, ej.app, ej.size, e.book.UsualPlacement(ej.sig, ej.app), 0)
	} else {
		prof := e.auto.profiles[j.ID]
		p90 := math.Exp(1.2816 * e.auto.runNoise)
		pred = func(n int) (perfmodel.Prediction, error) {
			q := prof
			q.Executors = n
			t := e.auto.model.Reference(q).Seconds()
			return perfmodel.Prediction{P50: t, P90: t * p90, Level: perfmodel.LevelSignature}, nil
		}
	}
	c, err := perfmodel.RightSize(pred, req)
	if err != nil {
		return
	}
	if p, err := pred(c.Executors); err != nil || p.Level != perfmodel.LevelSignature {
		return
	}
	e.auto.sized++
	if c.Executors == ej.executors {
		return
	}
	e.auto.changed++
	p := e.auto.profiles[j.ID]
	p.Executors = c.Executors
	e.auto.profiles[j.ID] = p
	// The oracle knows the run time with the new count; a user's estimate
	// was made for the count the user chose, and is scaled by what the
	// model expects the new count to change.
	ref := e.auto.model.Reference(p).Seconds()
	switch e.mode {
	case EstimatesUser, EstimatesLearned:
		if before, err := pred(ej.executors); err == nil && before.P50 > 0 {
			ej.user *= c.P50 / before.P50
		}
	default:
		ej.user = ref
	}
	j.Executors, ej.executors, ej.ref = c.Executors, c.Executors, ref
	j.EstimatedDurationSeconds = ej.user
	j.Fingerprint = j.Spec.Fingerprint()
}

// setupLearning gives est the --executors mode and traits (the core's
// model in learned mode, nil otherwise) its estimator.
func setupLearning(est *estimator, traits *traitsModel, o Options, m workload.Model, profiles map[string]workload.Profile) error {
	if err := checkExecutors(o.Executors); err != nil {
		return err
	}
	if o.Executors == ExecutorsAuto {
		est.enableAuto(m, profiles, o.RunNoise)
	}
	if err := checkLearnedDecisions(o.LearnedDecisions); err != nil {
		return err
	}
	if traits != nil {
		traits.e = est
		traits.told = o.LearnedDecisions == LearnedDecisionsTold
		est.decides = !traits.told
	}
	return nil
}

// checkExecutors validates --executors.
func checkExecutors(mode string) error {
	switch mode {
	case "", ExecutorsUser, ExecutorsAuto:
		return nil
	}
	return fmt.Errorf("executors %q: want user or auto", mode)
}
