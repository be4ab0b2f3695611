package simulate

import (
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Run times in learned mode as live answers them (--learned-decisions
// model): learned.Model.Predict's levels and fallbacks, from the
// estimator's book and corrections.
//
// One difference of terms: live corrects a user's estimate against the
// model's placement-free reference (Book.Reference) and puts it on the
// queried plan's terms by the model's slowdown from one uncontended agent;
// the simulator corrects it against what the runs took on the plans they
// got (estimator.finish, docs/simulation.md "Target (ii), fixed"), so the
// corrected estimate is on the terms of the plans the signature usually
// gets, and the model's slowdown from those (Book.UsualPlacement) puts it
// on the queried plan's.

// predKey is what a prediction depends on besides the book's version.
type predKey struct {
	sig, app  string
	size      float64
	estimate  float64
	executors int
	pl        perfmodel.Placement
}

// predAnswer is a cached answer of predict.
type predAnswer struct {
	p  perfmodel.Prediction
	ok bool
}

// predCache holds, for one version of the book and corrections (the
// estimator's learnt count), the answers given and what they share per
// signature: the correction ratio and the usual placement. Without it a
// busy hour asks the book again for every waiting job after every run
// that ends.
type predCache struct {
	version uint64
	answers map[predKey]predAnswer
	corr    map[string]perfmodel.Corrected
	usual   map[[2]string]perfmodel.Placement
}

// fresh empties c when the estimator has learned since it was filled.
func (c *predCache) fresh(version uint64) {
	if c.answers != nil && c.version == version {
		return
	}
	c.version = version
	c.answers = map[predKey]predAnswer{}
	c.corr = map[string]perfmodel.Corrected{}
	c.usual = map[[2]string]perfmodel.Placement{}
}

// predict is the run time of a job (k: its signature, type, size and
// user's estimate) with executors on a plan shaped like pl, cached per
// version of what the estimator learned.
func (e *estimator) predict(k scheduler.RunKey, executors int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	e.cache.fresh(e.learnt)
	key := predKey{sig: k.Signature, app: k.App, size: k.Size, estimate: k.EstimateSeconds, executors: executors, pl: pl}
	if a, ok := e.cache.answers[key]; ok {
		return a.p, a.ok
	}
	p, ok := e.predictUncached(k, executors, pl)
	e.cache.answers[key] = predAnswer{p, ok}
	return p, ok
}

// predictUncached is learned.Model.Predict on the estimator's book: the
// signature's (or type's) model on pl (the zero placement: the usual
// plans), the user's corrected estimate, put on pl's terms, blended into
// its p50 (and its p90 scaled alike); without a model the corrected
// estimate as a point (learned.LevelEstimate) once the signature has a
// correction history; else ok=false.
func (e *estimator) predictUncached(k scheduler.RunKey, executors int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	var c perfmodel.Corrected
	if k.EstimateSeconds > 0 && k.EstimateSeconds <= perfmodel.MaxSeconds {
		c = e.correction(k.Signature)
		c.Seconds = k.EstimateSeconds * c.Ratio
		if !(c.Seconds > 0) || c.Seconds > perfmodel.MaxSeconds {
			c = perfmodel.Corrected{}
		}
	}
	usual := e.usualPlacement(k.Signature, k.App)
	if pl == (perfmodel.Placement{}) {
		pl = usual
	}
	p, err := e.book.Predict(k.Signature, k.App, perfmodel.Query{Executors: executors, Size: k.Size, Placement: pl, EstimateSeconds: c.Seconds})
	if err != nil {
		return perfmodel.Prediction{}, false
	}
	if p.Level != perfmodel.LevelPrior {
		// The simulator's corrected estimate is on the usual plans' terms.
		q := perfmodel.Query{Executors: executors, Size: k.Size, Placement: pl}
		return e.book.BlendEstimate(k.Signature, k.App, q, p, c.Seconds, c.Sigma, usual), true
	}
	if c.Samples > 0 && c.Seconds > 0 {
		return perfmodel.Prediction{P50: c.Seconds, P90: c.Seconds, Sigma: c.Sigma, Level: learned.LevelEstimate, Runs: c.Samples}, true
	}
	return perfmodel.Prediction{}, false
}

// correction is the signature's estimate correction for an estimate of
// 1 s (Seconds: the ratio), cached per version.
func (e *estimator) correction(sig string) perfmodel.Corrected {
	if c, ok := e.cache.corr[sig]; ok {
		return c
	}
	c, err := e.corr.Correct(sig, 1)
	if err != nil {
		c = perfmodel.Corrected{}
	}
	e.cache.corr[sig] = c
	return c
}

// usualPlacement is Book.UsualPlacement, cached per version.
func (e *estimator) usualPlacement(sig, app string) perfmodel.Placement {
	k := [2]string{sig, app}
	if pl, ok := e.cache.usual[k]; ok {
		return pl
	}
	pl := e.book.UsualPlacement(sig, app)
	e.cache.usual[k] = pl
	return pl
}
