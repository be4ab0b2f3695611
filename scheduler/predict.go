package scheduler

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// Learned run times (docs/learning.md). The pass asks Config.Model, when
// set, for a job's run time on a plan: p50 where a run time prices
// something (how long a start keeps its agents active, a running job's
// remaining time, the cost of a plan in the placement policy), p90 where
// it decides a deadline (admission, at risk, the latest start of
// preemption, whether a plan ends in time), except that a waiting job is
// demoted as hopeless only when its p50 cannot make its deadline
// (decider.hopeless). A model that knows nothing of a job
// beyond the prior answers ok=false and the job's estimate is used as
// before: without history the pass decides exactly as it did without a
// model.

// RunKey is what the run-time model needs to know of a job.
type RunKey struct {
	Signature string
	App       string
	// Size is the model's size (ModelSize of the job's hints).
	Size float64
	// EstimateSeconds is the user's estimate as submitted (0 when none).
	EstimateSeconds float64
	// EstimateKey is whose estimates it is beyond the signature
	// (EstimateKeyOf: the team's).
	EstimateKey string
}

// RunKeyOf is j's key.
func RunKeyOf(j *Job) RunKey {
	in, it := SizeHints(j)
	return RunKey{Signature: Signature(j), App: AppType(j), Size: ModelSize(in, it), EstimateSeconds: j.EstimatedDurationSeconds,
		EstimateKey: EstimateKeyOf(j)}
}

// RunModel is the learned run-time model (package learned). Its methods
// are safe for concurrent use and never block on I/O.
type RunModel interface {
	// Predict is the run time in wall seconds of a job with executors on
	// a plan shaped like pl; ok is false when the model knows nothing of
	// the job beyond the prior (the caller keeps the user's estimate). The
	// zero placement means no plan yet: the model answers on the plans
	// the job's signature usually gets (perfmodel.Book.UsualPlacement;
	// one idle agent only while it has no runs to tell).
	Predict(k RunKey, executors int, pl perfmodel.Placement) (p perfmodel.Prediction, ok bool)
	// Traits are the traits dap should assume for the job; ok is false
	// when they are the prior's (DAPTraits).
	Traits(k RunKey) (t perfmodel.Traits, ok bool)
	// Predictor is the model's p50/p90 as a function of the executor
	// count on plans shaped like pl (for right-sizing; the zero placement
	// as in Predict).
	Predictor(k RunKey, pl perfmodel.Placement) perfmodel.Predictor
	// Observe learns from a finished attempt (the model keeps only
	// attempts that ended FINISHED).
	Observe(r RunRecord)
	// Version changes whenever the model learned something.
	Version() uint64
}

// entryLearn is an entry's key for the run-time model and its cached
// prediction before a plan is known (the zero placement: on the plans its
// signature usually gets), valid for one model version.
type entryLearn struct {
	key      RunKey
	version  uint64
	p50, p90 time.Duration
	ok, set  bool
}

// newEntry is NewEntry with the job's key for the run-time model, when
// the core has one.
func (c *Core) newEntry(j *Job) *Entry {
	e := NewEntry(j)
	if c.cfg.Model != nil {
		e.learn = &entryLearn{key: c.runKey(j)}
	}
	return e
}

// runKey is j's key with its estimate in wall time (Config.DurationScale):
// the model compares estimates with the run times it sees.
func (c *Core) runKey(j *Job) RunKey {
	k := RunKeyOf(j)
	k.EstimateSeconds *= c.cfg.DurationScale
	return k
}

// learned is e's predicted run time (p50, p90) on pl, or ok=false.
func (d *decider) learned(e *Entry, executors int, pl perfmodel.Placement) (p50, p90 time.Duration, pred perfmodel.Prediction, ok bool) {
	m := d.cfg.Model
	if m == nil || e.learn == nil {
		return 0, 0, pred, false
	}
	pred, ok = m.Predict(e.learn.key, executors, pl)
	if !ok || !(pred.P50 > 0) || !(pred.P90 > 0) {
		return 0, 0, pred, false
	}
	return secondsDuration(pred.P50), secondsDuration(pred.P90), pred, true
}

// learnedEstimate is e's p90 run time before a plan is known (asked on
// the zero placement, which the model answers on the plans the job's
// signature usually gets), cached per model version; a pass after the
// model learned looks at every waiting job again (modelLearned).
func (d *decider) learnedEstimate(e *Entry) (time.Duration, bool) {
	m := d.cfg.Model
	if m == nil || e.learn == nil {
		return 0, false
	}
	v := m.Version()
	if c := e.learn; !c.set || c.version != v {
		p50, p90, _, ok := d.learned(e, e.Demand.Executors, perfmodel.Placement{})
		c.version, c.p50, c.p90, c.ok, c.set = v, p50, p90, ok, true
	}
	return e.learn.p90, e.learn.ok
}

// planEstimates sets the demand's run times before a plan is known:
// EstimatedDuration, which prices a plan, to e's median (the model's p50,
// else the told estimate), and DeadlineDuration, which tests a plan's
// deadline, to its estimate (the model's p90, else the told estimate).
func (d *decider) planEstimates(dm *placement.Demand, e *Entry) {
	dm.DeadlineDuration = d.estimate(e)
	dm.EstimatedDuration = d.medianEstimate(e)
}

// learnedTraits sets the demand's traits from the job's model when it has
// its own; DAPTraits stay the prior otherwise.
func (d *decider) learnedTraits(dm *placement.Demand, e *Entry) {
	if d.cfg.Model == nil || e.learn == nil {
		return
	}
	if t, ok := d.cfg.Model.Traits(e.learn.key); ok {
		dm.Traits = &placement.AppTraits{ShuffleShare: t.ShuffleShare, CPUBound: t.CPUBound}
	}
}

// onPlan is what a start decides about e's run time on plan (snap: the
// pass's snapshot before the start): the plan's shape, the prediction
// (zero without one), and whether the job is at risk started now.
func (p *passRun) onPlan(e *Entry, plan placement.Plan) (RunShape, perfmodel.Prediction, bool) {
	shape := shapeOf(plan, p.snap, e.Demand.CPUs)
	_, p90, pred, ok := p.d.learned(e, max(1, plan.Executors()), shape.Placement())
	if !ok {
		pred = perfmodel.Prediction{}
	}
	if !ok || e.DeadlineAt == nil {
		return shape, pred, p.d.atRisk(e, p.now)
	}
	return shape, pred, p.now.Add(p90).After(*e.DeadlineAt)
}

// startedEstimate is the expected run time of e, just decided to start
// (the pass's last decision): the model's p50 on its plan when it made
// one, what its agents are expected to stay active for; else its
// estimate.
func (p *passRun) startedEstimate(e *Entry) time.Duration {
	if n := len(p.out); n > 0 {
		if d := &p.out[n-1]; d.entry == e && d.decisionExtra != nil && d.pred.P50 > 0 {
			return secondsDuration(d.pred.P50)
		}
	}
	return p.d.estimate(e)
}

// secondsDuration converts seconds to a duration, capped to stay finite.
func secondsDuration(s float64) time.Duration {
	if !(s > 0) {
		return 0
	}
	return time.Duration(min(s, perfmodel.MaxSeconds) * float64(time.Second))
}

// Right-sizing (issue 27, dSpark eq. 3.1-3.8).
const (
	// DefaultAutoMaxExecutors bounds "executors": "auto" without
	// maxExecutors.
	DefaultAutoMaxExecutors = 32
)

// RightSize chooses the executor count of a job submitted with
// "executors": "auto" and records the choice (j.Executors, j.Sizing): with
// a deadline the cheapest count in [min, max] whose p90 run time meets it,
// without one the knee of the run-time curve (perfmodel.RightSize). Its
// run times come from m, asked before a plan is known (the zero
// placement: on the plans the signature usually gets, as the pass's
// estimate and the simulator's --executors auto); nil: the prior alone,
// which assumes StartupSeconds + SecondsPerSize x size / executors on one
// idle agent.
// A job that is not auto is left alone.
func RightSize(m RunModel, j *Job, now time.Time) error {
	if !j.AutoExecutors() {
		return nil
	}
	lo, hi := max(1, j.MinExecutors), j.MaxExecutors
	if hi == 0 {
		hi = max(lo, DefaultAutoMaxExecutors)
	}
	req := perfmodel.SizeRequest{Min: lo, Max: hi}
	if j.DeadlineAt != nil {
		from := now // it runs from its start time at the earliest
		if nb := j.NotBeforeAt(); nb != nil && nb.After(now) {
			from = *nb
		}
		req.TimeToDeadline = max(1, j.DeadlineAt.Sub(from).Seconds())
		req.TimeToDeadline = min(req.TimeToDeadline, perfmodel.MaxSeconds)
	}
	k := RunKeyOf(j)
	var pred perfmodel.Predictor
	if m != nil {
		pred = m.Predictor(k, perfmodel.Placement{})
	} else {
		pred = perfmodel.NewBook().Predictor(k.Signature, k.App, k.Size, perfmodel.Placement{}, 0)
	}
	c, err := perfmodel.RightSize(pred, req)
	if m != nil && errors.Is(err, perfmodel.ErrNoModel) {
		// The model's curve does not answer every count (a noisy fit can
		// dip below zero): the job is sized as without a model rather
		// than refused.
		pred = perfmodel.NewBook().Predictor(k.Signature, k.App, k.Size, perfmodel.Placement{}, 0)
		c, err = perfmodel.RightSize(pred, req)
	}
	if err != nil {
		return fmt.Errorf("right-size job %s: %w", j.ID, err)
	}
	lv := ""
	if p, err := pred(c.Executors); err == nil {
		lv = string(p.Level)
	}
	j.Executors = c.Executors
	j.Sizing = &Sizing{Auto: true, Executors: c.Executors, P50Seconds: round1(c.P50), P90Seconds: round1(c.P90), Level: lv,
		Reason: fmt.Sprintf("%s (model: %s): %s", plural.N(c.Executors, "executor"), lv, c.Reason)}
	return nil
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// learnedAdmission replaces the (scaled) estimate of a job being admitted
// by the model's p90 before a plan is known (on the plans its signature
// usually gets), when the model knows the job: admission decides a
// deadline. It returns the model's p50 there (0 when the estimate was
// kept).
func (c *Core) learnedAdmission(j *Job) (p50 float64) {
	if c.cfg.Model == nil {
		return 0
	}
	if p, ok := c.cfg.Model.Predict(RunKeyOf(j), max(1, j.Executors), perfmodel.Placement{}); ok && p.P90 > 0 {
		j.EstimatedDurationSeconds = min(p.P90, perfmodel.MaxSeconds)
		return max(0, p.P50)
	}
	return 0
}

// modelLearned reports whether the run-time model learned something since
// the last pass asked (its Version changed): the waiting jobs' predictions
// (their p90, at-risk flags, feasible-EDF order, wake-up timers) are then
// stale, and the pass must look at every waiting job, not only the new
// ones. A job's end, which teaches the leader's model, also frees its
// agents (a full pass anyway); this makes the waiting jobs follow the
// model whatever taught it.
func (c *Core) modelLearned() bool {
	if c.cfg.Model == nil {
		return false
	}
	v := c.cfg.Model.Version()
	if v == c.modelSeen {
		return false
	}
	c.modelSeen = v
	return true
}
