package perfmodel

import (
	"fmt"
	"math"
	"slices"
)

// Form is the shape of a fitted curve.
type Form string

const (
	// FormSizeFree is T(E) = a * E^b + c: too few distinct sizes to say how
	// the job scales with its size.
	FormSizeFree Form = "size-free"
	// FormScaled is T(E, I) = u * I^v * E^b + w: alpha a power of the size,
	// beta and gamma constant.
	FormScaled Form = "scaled"
	// FormFull is T(E, I) = (ua * I^va + wa) * E^b + ug * I^vg + wg: alpha
	// and gamma power functions of the size, beta constant.
	FormFull Form = "full"
	// FormFullBeta is FormFull with beta a power function of the size too,
	// beta(I) = b + ub * I^vb: dSpark's whole form. Refined from the best
	// FormFull fit, with enough runs of enough sizes.
	FormFullBeta Form = "full-beta"
)

// FormFullBeta needs this many runs and distinct sizes.
const (
	minRunsFullBeta  = 20
	minSizesFullBeta = 5
)

// Fitting constants.
const (
	// MinSizesForScaling: fewer distinct sizes than this fall back to
	// FormSizeFree.
	MinSizesForScaling = 3
	// regrid: an incremental refit searches the whole exponent grid again,
	// and compares the candidates again, every this many refits (otherwise
	// it refines the previous exponents of the previous candidate). A
	// Book refits with a search once a quarter of its runs are new
	// (SearchEvery): every 4, a full window's worth of runs.
	regrid = 4
	// warmFrom: sets of fewer runs are searched in full at every refit.
	warmFrom = 32
	// expPenalty pulls exponents towards their priors (beta -1, v 1) where
	// the runs cannot tell (e.g. every run had the same executor count).
	expPenalty = 1e-4
	// placePenalty pulls the placement sensitivities towards the prior's
	// with the weight of this many runs whose shuffle all crosses agents
	// on a full agent: just enough to decide where the runs cannot tell
	// (every run on the same kind of plan).
	placePenalty = 1e-3
)

// Sensitivity is a prior on the placement sensitivities.
type Sensitivity struct {
	ShuffleCost, Contention float64
}

// Fit is a fitted model of a set of runs.
type Fit struct {
	Params
	Form Form `json:"form"`
	// Runs fitted and the distinct sizes among them.
	Runs  int `json:"runs"`
	Sizes int `json:"sizes"`
	// MAPE is the mean absolute percentage error on the fitted runs (%).
	MAPE float64 `json:"mape"`
	// P50 and P90 are multiplicative residual quantiles (actual /
	// predicted), shrunk towards the prior spread for few runs; Sigma is the
	// spread of the log residuals, shrunk alike.
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	Sigma float64 `json:"sigma"`
	// exps are the free nonlinear parameters (b, v, vg, ShuffleCost,
	// Contention, ub, vb), for a warm start.
	exps [7]float64
	// sinceGrid counts the incremental refits since the last full search.
	sinceGrid int
	// cands are the candidates the search compared (runSet.mask).
	cands uint16
	// placeFree: the sensitivities were fitted, not kept at the prior.
	placeFree bool
	// worst is the log of the largest actual / p50-predicted ratio among
	// the fitted runs, inflated as the p90 is: the slowest run the model
	// has seen, on its own terms.
	worst float64
}

type point struct {
	lnE, lnI, t float64
	r, l        float64
	// x is solve's scratch: the point's weighted features.
	x [4]float64
}

// Nonlinear parameters: b, v (alpha's), vg (gamma's) exponents, then the
// placement sensitivities ShuffleCost and Contention. The exponents are
// searched on a grid then refined; the sensitivities start from their
// least-squares fit to the grid's best curve and are refined with them.
// FormFullBeta's ub and vb (beta's) come last; they have no grid.
var (
	expLo    = [7]float64{-2, 0.25, 0.25, 0, 0, -0.5, 0.25}
	expHi    = [7]float64{1, 2, 2, 5, 1, 0.5, 1.5}
	expStep  = [7]float64{0.25, 0.25, 0.25, 0, 0, 0, 0}
	expPrior = [7]float64{-1, 1, 1, 0, 0, 0, 1}
)

const (
	ixShuffle    = 3
	ixContention = 4
	ixBetaU      = 5
	ixBetaV      = 6
)

// expIdx are the indices of the form's exponents.
func expIdx(f Form) []int {
	switch f {
	case FormSizeFree:
		return []int{0}
	case FormScaled:
		return []int{0, 1}
	case FormFullBeta:
		return []int{0, 1, 2, ixBetaU, ixBetaV}
	}
	return []int{0, 1, 2}
}

func nExps(f Form) int { return len(expIdx(f)) }

func nLinear(f Form) int {
	if f == FormFull || f == FormFullBeta {
		return 4
	}
	return 2
}

// gridBest is a form's best point of the exponent grid and its objective.
type gridBest struct {
	ex [7]float64
	j  float64
}

// searchExps finds the form's nonlinear parameters: a grid search over the
// exponents without placement effects (or from warm), the sensitivities'
// least-squares fit to that curve, then golden-section refinement of one
// parameter at a time (in a narrow bracket when narrow: an incremental
// refit). grids keeps each form's grid result for the next candidate of
// the form (the grid does not depend on whether the sensitivities are
// fitted).
func searchExps(f Form, pts []point, warm *[7]float64, narrow, anyR, anyL bool, pri *[7]float64, grids map[Form]gridBest) [7]float64 {
	idx := expIdx(f)
	k := 0 // the grid's exponents come first
	for k < len(idx) && expStep[idx[k]] > 0 {
		k++
	}
	best := *pri
	bestJ := math.Inf(1)
	if warm != nil {
		best = *warm
		bestJ, _, _ = objective(f, best, pts, pri)
	} else if g, ok := grids[f]; ok {
		best, bestJ = g.ex, g.j
	} else {
		ex := *pri
		var walk func(j int)
		walk = func(j int) {
			if j == k {
				if v, _, _ := objective(f, ex, pts, pri); v < bestJ {
					bestJ, best = v, ex
				}
				return
			}
			for x := expLo[idx[j]]; x <= expHi[idx[j]]+1e-9; x += expStep[idx[j]] {
				ex[idx[j]] = x
				walk(j + 1)
			}
		}
		walk(0)
		grids[f] = gridBest{best, bestJ}
	}
	if warm == nil {
		if anyR || anyL {
			if _, th, sse := objective(f, best, pts, pri); !math.IsInf(sse, 1) {
				c := curveOf(f, best, th)
				base := make([]float64, len(pts))
				for i, p := range pts {
					base[i] = c.At(math.Exp(p.lnE), math.Exp(p.lnI))
				}
				best[ixShuffle], best[ixContention] = fitPlacement(pts, base)
				bestJ, _, _ = objective(f, best, pts, pri)
			}
		}
	}
	coords := slices.Clone(idx)
	if anyR {
		coords = append(coords, ixShuffle)
	}
	if anyL {
		coords = append(coords, ixContention)
	}
	// Golden-section refinement, one parameter at a time: exponents within
	// a grid step, sensitivities over their whole range at first, then
	// within a shrinking bracket.
	const g = 0.6180339887498949
	width, sweeps := 1.0, 4
	if narrow {
		width, sweeps = 1.0/16, 2 // a small step from the previous fit
	}
	for sweep := 0; sweep < sweeps; sweep++ {
		for _, j := range coords {
			w := expStep[j]
			if w == 0 {
				w = (expHi[j] - expLo[j]) * width
			}
			lo, hi := max(expLo[j], best[j]-w), min(expHi[j], best[j]+w)
			at := func(x float64) float64 {
				ex := best
				ex[j] = x
				v, _, _ := objective(f, ex, pts, pri)
				return v
			}
			a, b := hi-g*(hi-lo), lo+g*(hi-lo)
			fa, fb := at(a), at(b)
			for it := 0; it < 12; it++ {
				if fa <= fb {
					hi, b, fb = b, a, fa
					a = hi - g*(hi-lo)
					fa = at(a)
				} else {
					lo, a, fa = a, b, fb
					b = lo + g*(hi-lo)
					fb = at(b)
				}
			}
			x, fx := a, fa
			if fb < fa {
				x, fx = b, fb
			}
			if fx < bestJ {
				bestJ = fx
				best[j] = x
			}
		}
		width /= 4
	}
	return best
}

func curveOf(f Form, ex [7]float64, th [4]float64) Curve {
	switch f {
	case FormSizeFree:
		return Curve{Alpha: Power{W: th[0]}, Beta: Power{W: ex[0]}, Gamma: Power{W: th[1]}}
	case FormScaled:
		return Curve{Alpha: Power{U: th[0], V: ex[1]}, Beta: Power{W: ex[0]}, Gamma: Power{W: th[1]}}
	}
	c := Curve{Alpha: Power{U: th[0], V: ex[1], W: th[1]}, Beta: Power{W: ex[0]}, Gamma: Power{U: th[2], V: ex[2], W: th[3]}}
	if f == FormFullBeta {
		c.Beta = Power{U: ex[ixBetaU], V: ex[ixBetaV], W: ex[0]}
	}
	return c
}

// fitPlacement fits ShuffleCost and Contention to the runs given each
// run's curve value base: a grid over Contention with the least-squares
// ShuffleCost (the relative residual is linear in it) for each.
func fitPlacement(pts []point, base []float64) (ks, kc float64) {
	anyR, anyL := false, false
	for _, p := range pts {
		anyR = anyR || p.r > 1e-9
		anyL = anyL || p.l > 1e-9
	}
	best := math.Inf(1)
	steps := 0
	if anyL {
		steps = 50
	}
	for s := 0; s <= steps; s++ {
		c := float64(s) * 0.02
		k := 0.0
		if anyR {
			var num, den float64
			for i, p := range pts {
				a := base[i] * (1 + c*p.l) / p.t
				b := a * p.r
				num += b * (1 - a)
				den += b * b
			}
			if den > 0 {
				k = min(10, max(0, num/den))
			}
		}
		sse := 0.0
		for i, p := range pts {
			d := base[i]*(1+c*p.l)*(1+k*p.r)/p.t - 1
			sse += d * d
		}
		if sse < best {
			best, ks, kc = sse, k, c
		}
	}
	return ks, kc
}

// FitRuns fits the model to runs (all valid, see Run.Validate). prev, if
// it is the fit of the same runs before the latest ones (an incremental
// refit: a Book's scheduled search, Book.refit), may warm-start the
// search; nil searches from scratch.
// Deterministic: the same runs (and prev) give the same fit.
func FitRuns(runs []Run, prev *Fit) (Fit, error) {
	return FitRunsWith(runs, prev, Sensitivity{})
}

// FitRunsWith is FitRuns with a prior on the placement sensitivities (the
// application type's, see Prior.Sensitivity): where the runs cannot tell,
// the fit keeps it.
func FitRunsWith(runs []Run, prev *Fit, prior Sensitivity) (Fit, error) {
	if !finite(prior.ShuffleCost) || !finite(prior.Contention) || prior.ShuffleCost < 0 || prior.Contention < 0 {
		return Fit{}, &InputError{Field: "prior", Msg: fmt.Sprintf("%+v: want finite sensitivities >= 0", prior)}
	}
	pri := expPrior
	pri[ixShuffle] = min(expHi[ixShuffle], prior.ShuffleCost)
	pri[ixContention] = min(expHi[ixContention], prior.Contention)
	set, err := prepare(runs)
	if err != nil {
		return Fit{}, err
	}
	pts, anyR, anyL := set.pts, set.anyR, set.anyL
	// Small sets are searched in full every time (it is cheap); larger ones
	// refine the previous fit, with a full search every regrid refits or
	// when another candidate becomes eligible.
	warm := prev != nil && prev.Runs >= warmFrom && prev.sinceGrid+1 < regrid && prev.sameCandidates(set)
	fit := Fit{Runs: len(runs), Sizes: set.distinct, cands: set.mask()}
	if warm {
		fit.sinceGrid = prev.sinceGrid + 1
	}
	// The corrected AIC decides among the candidates, so that a few runs on
	// similar plans keep the prior rather than fit noise.
	cands := set.cands
	if warm {
		// An incremental refit refines the previous candidate only; they
		// are compared again at the next full search.
		cands = []cand{{prev.Form, prev.placeFree}}
	}
	bestScore := math.Inf(1)
	var ks, kc float64
	// FormFullBeta starts from FormFull's fit of the same candidate.
	fullAt := map[bool]*[7]float64{}
	grids := map[Form]gridBest{}
	for _, c := range cands {
		f := c.f
		var w *[7]float64
		if warm {
			w = &prev.exps
		} else if f == FormFullBeta {
			if w = fullAt[c.free]; w == nil {
				continue
			}
		}
		ex := searchExps(f, pts, w, warm, c.free && anyR, c.free && anyL, &pri, grids)
		if f == FormFull {
			e := ex
			fullAt[c.free] = &e
		}
		_, th, sse := objective(f, ex, pts, &pri)
		if math.IsInf(sse, 1) {
			continue
		}
		n, k := float64(len(pts)), float64(set.params(c))
		score := n*math.Log(sse/n+1e-300) + 2*k
		if n-k-1 > 0 {
			score += 2 * k * (k + 1) / (n - k - 1)
		}
		if score < bestScore {
			bestScore = score
			fit.Form, fit.exps, fit.placeFree = f, ex, c.free
			fit.Curve = curveOf(f, ex, th)
			ks, kc = ex[ixShuffle], ex[ixContention]
		}
	}
	if math.IsInf(bestScore, 1) {
		return Fit{}, fmt.Errorf("perfmodel: no curve fits %d runs: %w", len(runs), ErrNoModel)
	}
	fit.ShuffleCost, fit.Contention = ks, kc
	th, _, _ := solve(fit.Form, fit.exps, pts) // the best's, as it was: leaves its features in pts
	fit.residuals(pts, th)
	return fit, nil
}

// runSet is a set of runs as the fit sees them.
type runSet struct {
	pts      []point
	distinct int // distinct sizes
	// anyR, anyL: some run crossed agents, some ran on a loaded agent
	// (the placement sensitivities can be fitted).
	anyR, anyL bool
	// cands are the candidates a search compares.
	cands []cand
}

// cand is a candidate model: a form, with the placement sensitivities
// fitted (free) or kept at the prior.
type cand struct {
	f    Form
	free bool
}

// params is the number of parameters c fits to set.
func (set *runSet) params(c cand) int {
	k := nExps(c.f) + nLinear(c.f)
	if c.free {
		k += btoi(set.anyR) + btoi(set.anyL)
	}
	return k
}

// mask is set's candidates and fittable sensitivities as bits: equal
// masks, the same search.
func (set *runSet) mask() uint16 {
	m := uint16(btoi(set.anyR) | btoi(set.anyL)<<1)
	for _, c := range set.cands {
		i := slices.Index([]Form{FormSizeFree, FormScaled, FormFull, FormFullBeta}, c.f)
		m |= 1 << (2 + 2*i + btoi(c.free))
	}
	return m
}

// prepare validates runs and makes them a runSet.
func prepare(runs []Run) (runSet, error) {
	if len(runs) == 0 {
		return runSet{}, ErrNoModel
	}
	set := runSet{pts: make([]point, len(runs))}
	sizes := make([]float64, 0, len(runs))
	for i, r := range runs {
		if err := r.Validate(); err != nil {
			return runSet{}, fmt.Errorf("run %d: %w", i, err)
		}
		p := point{lnE: math.Log(float64(r.Executors)), lnI: math.Log(r.Size), t: r.Seconds, r: r.CrossShare, l: r.Placement.Contention()}
		set.pts[i] = p
		sizes = append(sizes, r.Size)
		set.anyR = set.anyR || p.r > 1e-9
		set.anyL = set.anyL || p.l > 1e-9
	}
	slices.Sort(sizes)
	set.distinct = len(slices.CompactFunc(sizes, func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(a, b) }))
	forms := []Form{FormSizeFree}
	if set.distinct >= MinSizesForScaling {
		if len(runs) >= 6 {
			forms = append(forms, FormScaled)
		}
		if len(runs) >= 10 {
			forms = append(forms, FormFull)
		}
		if len(runs) >= minRunsFullBeta && set.distinct >= minSizesFullBeta {
			forms = append(forms, FormFullBeta)
		}
	}
	// Candidates: each form with the placement sensitivities fitted (when
	// some runs crossed agents or ran on loaded agents) or kept at the
	// prior, each but the plain size-free curve only with more runs than
	// its parameters plus one.
	for _, f := range forms {
		for _, free := range []bool{false, true} {
			c := cand{f, free}
			if free && !set.anyR && !set.anyL {
				continue
			}
			if len(runs)-set.params(c)-1 <= 0 && (f != FormSizeFree || free) {
				continue // too few runs for this candidate
			}
			set.cands = append(set.cands, c)
		}
	}
	return set, nil
}

// sameCandidates reports whether set has the candidates the search of f
// compared, the placement sensitivities fittable alike.
func (f *Fit) sameCandidates(set runSet) bool { return f.cands == set.mask() }

// residuals sets the fit's in-sample MAPE and residual quantiles from
// each run's prediction over its time: the coefficients th times the
// weighted features solve left in pts (pts solved last at the fit's form
// and exponents).
func (f *Fit) residuals(pts []point, th [4]float64) {
	k := nLinear(f.Form)
	logs := make([]float64, len(pts))
	var ape float64
	for i := range pts {
		z := 0.0
		for a := 0; a < k; a++ {
			z += th[a] * pts[i].x[a]
		}
		ape += math.Abs(z - 1)
		logs[i] = -math.Log(z)
	}
	f.MAPE = 100 * ape / float64(len(pts))
	f.P50, f.P90, f.Sigma, f.worst = spread(logs, SignatureP90, nExps(f.Form)+nLinear(f.Form))
}

// RefitLinear is prev refitted to runs without a search: the curve's
// linear coefficients (alpha's and gamma's u and w, FormSizeFree's a and
// c) solved again by weighted least squares at prev's nonlinear
// parameters (its form, exponents and placement sensitivities), and the
// residual quantiles taken again, in one pass over the runs. The same runs
// and prev give the same fit. ok is false when it cannot stand in for a
// search (FitRunsWith): prev is nil, the runs are invalid, another
// candidate became eligible since prev's search (another form, or the
// first runs across agents or on loaded agents), or the curve does not
// solve positive at every run.
func RefitLinear(runs []Run, prev *Fit) (Fit, bool) {
	if prev == nil {
		return Fit{}, false
	}
	set, err := prepare(runs)
	if err != nil || !prev.sameCandidates(set) {
		return Fit{}, false
	}
	th, _, ok := solve(prev.Form, prev.exps, set.pts)
	if !ok {
		return Fit{}, false
	}
	fit := *prev
	fit.Runs, fit.Sizes = len(runs), set.distinct
	fit.Curve = curveOf(fit.Form, fit.exps, th)
	fit.residuals(set.pts, th)
	return fit, true
}

// priorRuns is the weight, in runs, of the prior spread in the shrunk
// quantiles.
const priorRuns = 5

// spread is the shrunk median and 90th percentile factors and the log
// spread of log residuals, and the log of the largest residual over the
// p50 factor (inflated alike); prior90 is the prior's p90 factor (its log
// spread is taken as ln(prior90) / 1.2816, a log-normal's).
func spread(logs []float64, prior90 float64, params int) (p50, p90, sigma, worst float64) {
	s := slices.Clone(logs)
	slices.Sort(s)
	n := float64(len(s))
	// In-sample residuals understate the error of a model with many
	// parameters fitted to few runs: inflate by sqrt(n / (n - params)).
	infl := 1.0
	if n > float64(params) {
		infl = math.Sqrt(n / (n - float64(params)))
	} else {
		infl = 2
	}
	med := quantile(s, 0.5)
	q90 := max(0, quantile(s, 0.9)-med) * infl
	var ss float64
	for _, x := range s {
		ss += (x - med) * (x - med)
	}
	sd := math.Sqrt(ss/n) * infl
	w := n / (n + priorRuns)
	lp := math.Log(prior90)
	p50 = math.Exp(w * med)
	p90 = p50 * math.Exp(w*q90+(1-w)*lp)
	sigma = w*sd + (1-w)*lp/1.2816
	if len(s) > 0 {
		worst = max(0, s[len(s)-1]-med)*infl + (1-w)*med
	}
	return p50, p90, sigma, worst
}

// quantile of sorted xs with linear interpolation.
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return 0
	}
	x := q * float64(len(s)-1)
	i := int(math.Floor(x))
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
