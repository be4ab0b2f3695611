package perfmodel

import (
	"fmt"
	"math"
	"slices"
)

// Level is how far back along the fallback chain a prediction came from.
type Level string

const (
	LevelSignature Level = "signature"
	LevelAppType   Level = "app-type"
	LevelPrior     Level = "prior"
)

// Spread of the quantiles per level: the prior p90 factor a level's
// residuals are shrunk towards, and the widening of a fallback.
const (
	// SignatureP90 is the p90 factor assumed for a signature's own model
	// before its residuals say otherwise.
	SignatureP90 = 1.3
	// AppTypeWiden widens an application type's quantiles when a signature
	// falls back to it (its runs pool different jobs).
	AppTypeWiden = 1.25
	// PriorP90WithEstimate and PriorP90 are the prior's p90 factors with a
	// user's estimate and without one.
	PriorP90WithEstimate = 2.0
	PriorP90             = 3.0
	// MinRuns a level needs before it predicts.
	MinRuns = 3
	// DefaultWindow is how many of the latest runs a key keeps.
	DefaultWindow = 100
)

// Traits are what the prior assumes about an application type (as
// placement.DAPTraits): the share of its run time spent shuffling and how
// CPU-bound the rest is.
type Traits struct {
	ShuffleShare float64
	CPUBound     float64
}

// Prior is the global prior: constants, not learned.
type Prior struct {
	// Traits per application type; "" is the unknown type.
	Traits map[string]Traits
	// RemoteShufflePenalty and Contention shape the placement factor as
	// dap does: (1 - s)(1 + Contention x cpu x load) + s (1 + penalty x r).
	RemoteShufflePenalty float64
	Contention           float64
	// Without an estimate: StartupSeconds + SecondsPerSize x I / E.
	StartupSeconds float64
	SecondsPerSize float64
}

// DefaultPrior copies placement's DAPTraits and dap's constants (this
// package must not import placement's callers; the values are the same),
// and a throughput of 30 s per GB per executor for jobs without estimates.
var DefaultPrior = Prior{
	Traits: map[string]Traits{
		"wordcount": {ShuffleShare: 0.01, CPUBound: 1.0},
		"sort":      {ShuffleShare: 0.20, CPUBound: 0.3},
		"pagerank":  {ShuffleShare: 0.07, CPUBound: 0.7},
		"":          {ShuffleShare: 0.15, CPUBound: 0.7},
	},
	RemoteShufflePenalty: 3.0,
	Contention:           0.15,
	StartupSeconds:       10,
	SecondsPerSize:       30,
}

func (p Prior) traits(app string) Traits {
	if t, ok := p.Traits[app]; ok {
		return t
	}
	return p.Traits[""]
}

// Sensitivity is the prior's placement sensitivities for the application
// type, in the model's multiplicative form: a fully crossing shuffle costs
// RemoteShufflePenalty x the shuffle share, a full agent Contention x the
// CPU-boundness.
func (p Prior) Sensitivity(app string) Sensitivity {
	t := p.traits(app)
	return Sensitivity{ShuffleCost: p.RemoteShufflePenalty * t.ShuffleShare, Contention: p.Contention * t.CPUBound}
}

// Factor is the prior's placement factor for the application type.
func (p Prior) Factor(app string, pl Placement) float64 {
	t := p.traits(app)
	return (1-t.ShuffleShare)*(1+p.Contention*t.CPUBound*pl.Contention()) + t.ShuffleShare*(1+p.RemoteShufflePenalty*pl.CrossShare)
}

// Query asks for a job's run time on a plan.
type Query struct {
	Executors int
	Size      float64
	Placement
	// EstimateSeconds is the (corrected) estimate of the run on one
	// uncontended agent, used by the prior; 0 when none.
	EstimateSeconds float64
}

func (q Query) validate() error {
	if err := checkExecutors(q.Executors); err != nil {
		return err
	}
	if err := checkSize(q.Size); err != nil {
		return err
	}
	if err := q.Placement.validate(); err != nil {
		return err
	}
	return checkSeconds("estimateSeconds", q.EstimateSeconds, true)
}

// Prediction is a predicted run time.
type Prediction struct {
	P50, P90 float64
	// Sigma is the spread of the log run time (for blending).
	Sigma float64
	Level Level
	// Runs behind the level's model.
	Runs int
}

// entry is a key's runs and fit.
type entry struct {
	app   string // the application type whose prior sensitivities it uses
	runs  []Run
	fit   *Fit
	dirty bool
	// added counts the runs added since the fit's last search.
	added int
	// online absolute percentage errors and log residuals: each run
	// predicted before it was observed (from the key's own model).
	ape, online []float64
}

// onlineRecent is how many of the latest online residuals onlineSigma
// takes: the model's recent errors, not those of its first few runs.
const onlineRecent = 10

// onlineSigma is the root mean square of the latest online log residuals,
// 0 with fewer than MinRuns of them.
func (e *entry) onlineSigma() float64 {
	if len(e.online) < MinRuns {
		return 0
	}
	l := e.online[max(0, len(e.online)-onlineRecent):]
	var ss float64
	for _, x := range l {
		ss += x * x
	}
	return math.Sqrt(ss / float64(len(l)))
}

// Book holds the runs and models per signature and application type.
// Not safe for concurrent use.
type Book struct {
	Prior Prior
	// Window is how many of the latest runs a key keeps (DefaultWindow
	// when 0): it bounds each refit.
	Window int
	sigs   map[string]*entry
	types  map[string]*entry
}

// NewBook is an empty book with the default prior.
func NewBook() *Book {
	return &Book{Prior: DefaultPrior, sigs: map[string]*entry{}, types: map[string]*entry{}}
}

func (b *Book) window() int {
	if b.Window > 0 {
		return b.Window
	}
	return DefaultWindow
}

// Observe records a finished run of signature sig (of application type
// app, "" when unknown) and refits the signature's model incrementally
// (bounded by the window, see refit); the type's model is refitted when
// next needed.
func (b *Book) Observe(sig, app string, r Run) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if sig == "" {
		return &InputError{Field: "signature", Msg: "empty"}
	}
	e := b.sigs[sig]
	if e == nil {
		e = &entry{app: app}
		b.sigs[sig] = e
	}
	if e.fit != nil && len(e.runs) >= MinRuns {
		pred := e.fit.Params.Seconds(float64(r.Executors), r.Size, r.Placement) * e.fit.P50
		e.ape = append(e.ape, math.Abs(pred-r.Seconds)/r.Seconds)
		e.online = append(e.online, math.Log(r.Seconds/pred))
		if len(e.ape) > b.window() {
			e.ape, e.online = e.ape[1:], e.online[1:]
		}
	}
	b.add(e, r)
	if err := b.refit(e); err != nil {
		return fmt.Errorf("signature %q: %w", sig, err)
	}
	t := b.types[app]
	if t == nil {
		t = &entry{app: app}
		b.types[app] = t
	}
	b.add(t, r)
	t.dirty = true
	return nil
}

func (b *Book) add(e *entry, r Run) {
	e.added++
	e.runs = append(e.runs, r)
	if w := b.window(); len(e.runs) > w {
		e.runs = slices.Delete(e.runs, 0, len(e.runs)-w)
	}
}

// SearchEvery bounds how stale a key's search is: a refit searches the
// model's form, exponents and placement sensitivities again (FitRunsWith)
// once the runs added since the last search reach 1 / SearchEvery of the
// runs the key keeps (rounded down; at every run while it keeps fewer than
// 2 x SearchEvery, when its form can change most; every 25 runs of a full
// DefaultWindow). In between, a refit solves the curve's linear
// coefficients again at the searched form and exponents (RefitLinear, one
// pass over the runs), and searches when that cannot stand in. The
// schedule counts runs only, so the same runs observed give the same
// fits, live or reloaded.
const SearchEvery = 4

// refit brings e's fit up to its runs, by the schedule of SearchEvery.
func (b *Book) refit(e *entry) error {
	if e.fit != nil && e.added < max(1, len(e.runs)/SearchEvery) {
		if f, ok := RefitLinear(e.runs, e.fit); ok {
			e.fit, e.dirty = &f, false
			return nil
		}
	}
	f, err := FitRunsWith(e.runs, e.fit, b.Prior.Sensitivity(e.app))
	if err != nil {
		return err
	}
	e.fit, e.dirty, e.added = &f, false, 0
	return nil
}

// Predict is the run time of a job of signature sig (type app) as q asks,
// from the first level of the chain that has a model: the signature's,
// the type's (widened), or the prior.
func (b *Book) Predict(sig, app string, q Query) (Prediction, error) {
	if err := q.validate(); err != nil {
		return Prediction{}, err
	}
	if e := b.sigs[sig]; e != nil && e.fit != nil && len(e.runs) >= MinRuns {
		p := fromFit(e.fit, q, LevelSignature, 1)
		// In-sample residuals flatter a model; its errors on runs it had
		// not seen are the honest spread when they are wider. Their p90
		// takes them for log-normal, which overshoots a skewed or
		// bimodal spread (runs of 1 s and 20 s put it at 50 s): it is
		// not taken above the slowest run the model has seen.
		if s := e.onlineSigma(); s > p.Sigma {
			p.Sigma = s
			p.P90 = max(p.P90, p.P50*math.Exp(min(1.2816*s, e.fit.worst)))
		}
		return p, nil
	}
	if t := b.types[app]; t != nil && len(t.runs) >= MinRuns {
		if t.dirty || t.fit == nil {
			if err := b.refit(t); err != nil {
				return Prediction{}, fmt.Errorf("application type %q: %w", app, err)
			}
		}
		return fromFit(t.fit, q, LevelAppType, AppTypeWiden), nil
	}
	return b.prior(app, q)
}

func fromFit(f *Fit, q Query, lv Level, widen float64) Prediction {
	s := f.Params.Seconds(float64(q.Executors), q.Size, q.Placement)
	p50 := s * f.P50
	return Prediction{P50: p50, P90: p50 * (f.P90 / f.P50) * widen, Sigma: f.Sigma + math.Log(widen)/1.2816, Level: lv, Runs: f.Runs}
}

func (b *Book) prior(app string, q Query) (Prediction, error) {
	fac := b.Prior.Factor(app, q.Placement)
	if q.EstimateSeconds > 0 {
		p50 := q.EstimateSeconds * fac
		return Prediction{P50: p50, P90: p50 * PriorP90WithEstimate, Sigma: math.Log(PriorP90WithEstimate) / 1.2816, Level: LevelPrior}, nil
	}
	if b.Prior.SecondsPerSize <= 0 {
		return Prediction{}, ErrNoModel
	}
	p50 := (b.Prior.StartupSeconds + b.Prior.SecondsPerSize*q.Size/float64(q.Executors)) * fac
	return Prediction{P50: p50, P90: p50 * PriorP90, Sigma: math.Log(PriorP90) / 1.2816, Level: LevelPrior}, nil
}

// Reference is the run's time without its placement's slowdown (as on one
// uncontended agent), by the best model the book has of it: what a user's
// estimate is compared with.
func (b *Book) Reference(sig, app string, r Run) float64 {
	if e := b.sigs[sig]; e != nil && e.fit != nil && len(e.runs) >= MinRuns {
		return r.Seconds / e.fit.Factor(r.Placement)
	}
	return r.Seconds / b.Prior.Factor(app, r.Placement)
}

// Summary is what the book knows of a signature.
type Summary struct {
	Signature string
	Runs      int
	Fit       *Fit
	// OnlineMAPE is the mean absolute percentage error (%) of each run
	// predicted from the runs before it (once MinRuns were known), over
	// OnlineRuns runs (the latest window's): an honest error, not an
	// in-sample one. Each run is predicted by the model in force when it
	// came: linear coefficients fitted to every run before it, form and
	// exponents from the last search (at most a SearchEvery-th of those
	// runs before it, see refit), as the live model predicted it.
	OnlineMAPE float64
	OnlineRuns int
}

// Signatures summarises every signature, sorted by name.
func (b *Book) Signatures() []Summary {
	var out []Summary
	for sig, e := range b.sigs {
		s := Summary{Signature: sig, Runs: len(e.runs), Fit: e.fit, OnlineRuns: len(e.ape)}
		for _, a := range e.ape {
			s.OnlineMAPE += a
		}
		if len(e.ape) > 0 {
			s.OnlineMAPE *= 100 / float64(len(e.ape))
		}
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b Summary) int {
		switch {
		case a.Signature < b.Signature:
			return -1
		case a.Signature > b.Signature:
			return 1
		}
		return 0
	})
	return out
}

// Predictor is the book's p50/p90 for a job of signature sig (type app)
// and size on plans shaped like pl, as a function of the executor count:
// what RightSize takes.
func (b *Book) Predictor(sig, app string, size float64, pl Placement, estimateSeconds float64) Predictor {
	return func(e int) (Prediction, error) {
		return b.Predict(sig, app, Query{Executors: e, Size: size, Placement: pl, EstimateSeconds: estimateSeconds})
	}
}

// Traits are the application traits dap should assume for a job of
// signature sig (type app), in the prior's terms (the inverse of
// Prior.Sensitivity): the signature's fitted placement sensitivities when
// its runs told them apart (level signature), else the prior's traits of
// the type (level prior).
func (b *Book) Traits(sig, app string) (Traits, Level) {
	if e := b.sigs[sig]; e != nil && e.fit != nil && e.fit.placeFree && len(e.runs) >= MinRuns &&
		b.Prior.RemoteShufflePenalty > 0 && b.Prior.Contention > 0 {
		return Traits{
			ShuffleShare: min(1, max(0, e.fit.ShuffleCost/b.Prior.RemoteShufflePenalty)),
			CPUBound:     min(1, max(0, e.fit.Contention/b.Prior.Contention)),
		}, LevelSignature
	}
	return b.Prior.traits(app), LevelPrior
}

// usualRuns is how many of a key's latest runs UsualPlacement looks at.
const usualRuns = 20

// UsualPlacement is the shape of the plans a job of signature sig (type
// app) usually gets: the median cross share and busiest load of the
// signature's latest usualRuns runs (its type's while it has fewer than
// MinRuns; the zero placement, one uncontended agent, without any). Asking
// the model there is an interpolation among the runs it has seen; asking
// it on one uncontended agent is an extrapolation when no run had such a
// plan (busy hours), only as good as the placement sensitivities it
// assumed.
func (b *Book) UsualPlacement(sig, app string) Placement {
	e := b.sigs[sig]
	if e == nil || len(e.runs) < MinRuns {
		e = b.types[app]
	}
	if e == nil || len(e.runs) < MinRuns {
		return Placement{}
	}
	runs := e.runs[max(0, len(e.runs)-usualRuns):]
	r := make([]float64, len(runs))
	l := make([]float64, len(runs))
	for i, x := range runs {
		r[i], l[i] = x.CrossShare, x.BusiestLoad
	}
	slices.Sort(r)
	slices.Sort(l)
	return Placement{CrossShare: quantile(r, 0.5), BusiestLoad: quantile(l, 0.5)}
}

// ExecutorRange is the fewest and most executors among the signature's
// runs the book keeps (ok false with fewer than MinRuns): the counts its
// model interpolates between. Outside, its curve extrapolates, and when
// its runs' counts followed their sizes (a user's rule) the curve cannot
// tell the count's effect from the size's: a right-sizer should stay
// within.
func (b *Book) ExecutorRange(sig string) (lo, hi int, ok bool) {
	e := b.sigs[sig]
	if e == nil || len(e.runs) < MinRuns {
		return 0, 0, false
	}
	lo, hi = e.runs[0].Executors, e.runs[0].Executors
	for _, r := range e.runs[1:] {
		lo, hi = min(lo, r.Executors), max(hi, r.Executors)
	}
	return lo, hi, true
}
