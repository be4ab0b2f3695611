package perfmodel

import (
	"math"
	"slices"
)

// Estimate correction (Lim; Lee): a user's estimate is data. The history
// of actual / estimate ratios of a key (a user, a signature) corrects a new
// estimate by their median, shrunk towards 1 while there are few.
const (
	// EstimateShrinkRuns is the weight, in runs, of the prior ratio 1.
	EstimateShrinkRuns = 3
	// EstimatePriorSigma is the spread of log(actual / estimate) assumed
	// before a key's history says otherwise.
	EstimatePriorSigma = 0.7
)

// Estimates keeps the log ratios actual / estimate per key. Not safe for
// concurrent use.
type Estimates struct {
	// Window is how many of the latest ratios a key keeps (DefaultWindow
	// when 0).
	Window int
	logs   map[string][]float64
}

// NewEstimates is an empty history.
func NewEstimates() *Estimates { return &Estimates{logs: map[string][]float64{}} }

// Observe records that a run estimated at estimate seconds took actual
// seconds (both > 0; actual as on the estimate's terms, see Book.Reference).
func (s *Estimates) Observe(key string, estimate, actual float64) error {
	if err := checkSeconds("estimateSeconds", estimate, false); err != nil {
		return err
	}
	if err := checkSeconds("seconds", actual, false); err != nil {
		return err
	}
	l := append(s.logs[key], math.Log(actual/estimate))
	w := s.Window
	if w <= 0 {
		w = DefaultWindow
	}
	if len(l) > w {
		l = slices.Delete(l, 0, len(l)-w)
	}
	s.logs[key] = l
	return nil
}

// Corrected is a corrected estimate.
type Corrected struct {
	Seconds float64
	// Ratio is the correction applied (Seconds / the estimate).
	Ratio float64
	// Sigma is the spread of log(actual / corrected), shrunk towards
	// EstimatePriorSigma for few samples.
	Sigma   float64
	Samples int
}

// NoCorrection is the prior of a key without history: ratio 1, spread
// EstimatePriorSigma, no samples.
var NoCorrection = Corrected{Ratio: 1, Sigma: EstimatePriorSigma}

// Correct corrects an estimate by key's history: estimate x exp(median
// log ratio x n / (n + EstimateShrinkRuns)).
func (s *Estimates) Correct(key string, estimate float64) (Corrected, error) {
	return s.CorrectFrom(key, estimate, NoCorrection)
}

// CorrectFrom corrects an estimate by key's history shrunk towards prior
// (the correction of a wider group of estimates, such as the team's
// across its signatures, for an estimate of 1 s) rather than towards no
// correction: with n samples of its own the log ratio is
// w x median + (1 - w) x log(prior.Ratio), w = n / (n +
// EstimateShrinkRuns), and the spread likewise shrinks towards the
// prior's. A key with few runs is corrected as its group is (a team that
// underestimates by 40% on its other jobs is corrected on a new one); one
// with many, by its own. Samples counts the key's samples and the
// prior's. A zero prior is NoCorrection.
func (s *Estimates) CorrectFrom(key string, estimate float64, prior Corrected) (Corrected, error) {
	if err := checkSeconds("estimateSeconds", estimate, false); err != nil {
		return Corrected{}, err
	}
	if !(prior.Ratio > 0) || !finite(prior.Ratio) || !(prior.Sigma > 0) || !finite(prior.Sigma) {
		prior = NoCorrection
	}
	l := slices.Clone(s.logs[key])
	n := float64(len(l))
	if n == 0 {
		return Corrected{Seconds: estimate * prior.Ratio, Ratio: prior.Ratio, Sigma: prior.Sigma, Samples: prior.Samples}, nil
	}
	slices.Sort(l)
	med := quantile(l, 0.5)
	var ss float64
	for _, x := range l {
		ss += (x - med) * (x - med)
	}
	w := n / (n + EstimateShrinkRuns)
	ratio := math.Exp(w*med + (1-w)*math.Log(prior.Ratio))
	sigma := math.Sqrt((ss + EstimateShrinkRuns*prior.Sigma*prior.Sigma) / (n + EstimateShrinkRuns))
	return Corrected{Seconds: estimate * ratio, Ratio: ratio, Sigma: sigma, Samples: len(l) + prior.Samples}, nil
}

// Blend combines two log-normal guesses of one run time (medians a and b
// with log spreads sa and sb) by inverse-variance weighting of their logs;
// a guess with a non-positive spread wins outright.
func Blend(a, sa, b, sb float64) (float64, float64) {
	switch {
	case !(a > 0) || !finite(a):
		return b, sb
	case !(b > 0) || !finite(b):
		return a, sa
	case sa <= 0:
		return a, 0
	case sb <= 0:
		return b, 0
	}
	wa, wb := 1/(sa*sa), 1/(sb*sb)
	l := (wa*math.Log(a) + wb*math.Log(b)) / (wa + wb)
	return math.Exp(l), math.Sqrt(1 / (wa + wb))
}

// BlendEstimate blends a corrected estimate (seconds, with log spread
// sigma) into p, the model's prediction for sig on q: the estimate is on
// the terms of the placement ref (live: one uncontended agent, the zero
// placement; the simulator: the signature's usual plans), so when q asks
// about another placement the model's slowdown from ref to q's placement
// first puts it on q's terms; the blend (Blend) replaces p's median and
// spread, and the p90 scales with the median. Without an estimate (0)
// p is returned as it is.
func (b *Book) BlendEstimate(sig, app string, q Query, p Prediction, seconds, sigma float64, ref Placement) Prediction {
	if !(seconds > 0) {
		return p
	}
	if q.Placement != ref {
		if p0, err := b.Predict(sig, app, Query{Executors: q.Executors, Size: q.Size, Placement: ref}); err == nil && p0.P50 > 0 {
			seconds *= p.P50 / p0.P50
		}
	}
	if m, s := Blend(seconds, sigma, p.P50, p.Sigma); m > 0 && p.P50 > 0 {
		p.P90 *= m / p.P50
		p.P50, p.Sigma = m, s
	}
	return p
}
