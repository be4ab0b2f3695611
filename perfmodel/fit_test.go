package perfmodel

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// truth is a known model: T = (ua I^va + wa) E^b + ug I^vg + wg, times
// the placement factors.
type truth struct {
	ua, va, wa, b, ug, vg, wg float64
	ks, kc                    float64
}

func (t truth) params() Params {
	return Params{Curve: Curve{Alpha: Power{U: t.ua, V: t.va, W: t.wa}, Beta: Power{W: t.b}, Gamma: Power{U: t.ug, V: t.vg, W: t.wg}}, ShuffleCost: t.ks, Contention: t.kc}
}

func randomTruth(rng *rand.Rand) truth {
	return truth{
		ua: 20 + 80*rng.Float64(), va: 0.6 + 0.8*rng.Float64(), wa: 10 * rng.Float64(),
		b:  -1.1 + 0.6*rng.Float64(),
		ug: 2 * rng.Float64(), vg: 0.5 + rng.Float64(), wg: 5 + 20*rng.Float64(),
		ks: rng.Float64(), kc: 0.3 * rng.Float64(),
	}
}

// synth draws n runs of t: E in 1..16, I in [1, 20], random placements,
// each time multiplied by exp(N(0, noise)).
func synth(rng *rand.Rand, t truth, n int, noise float64) []Run {
	p := t.params()
	runs := make([]Run, n)
	for i := range runs {
		r := Run{Executors: 1 + rng.IntN(16), Size: 1 + 19*rng.Float64()}
		if rng.Float64() < 0.6 {
			r.CrossShare = 0.8 * rng.Float64()
		}
		r.BusiestLoad = rng.Float64()
		r.Seconds = p.Seconds(float64(r.Executors), r.Size, r.Placement) * math.Exp(noise*rng.NormFloat64())
		runs[i] = r
	}
	return runs
}

// mapeOn is the MAPE (%) of fit against the noise-free truth on fresh
// points.
func mapeOn(rng *rand.Rand, f Fit, t truth, n int) float64 {
	var s float64
	for _, r := range synth(rng, t, n, 0) {
		pred := f.Params.Seconds(float64(r.Executors), r.Size, r.Placement)
		s += math.Abs(pred-r.Seconds) / r.Seconds
	}
	return 100 * s / float64(n)
}

// TestFitRecoversKnownParameters is a property test: for random known
// models, noise-free runs give the model back (predictions within 1%, the
// exponent of E within 0.03, the placement sensitivities within 0.03), and
// runs with 5% multiplicative noise give predictions within 10% MAPE.
func TestFitRecoversKnownParameters(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 12; trial++ {
		tr := randomTruth(rng)
		f, err := FitRuns(synth(rng, tr, 80, 0), nil)
		if err != nil {
			t.Fatal(err)
		}
		if m := mapeOn(rng, f, tr, 200); m > 1 {
			t.Errorf("trial %d: noise-free MAPE %.2f%% > 1%% (truth %+v, fit %s %+v)", trial, m, tr, f.Form, f.Params)
		}
		if math.Abs(f.ShuffleCost-tr.ks) > 0.03 || math.Abs(f.Contention-tr.kc) > 0.03 {
			t.Errorf("trial %d: placement (%.3f, %.3f), want (%.3f, %.3f)", trial, f.ShuffleCost, f.Contention, tr.ks, tr.kc)
		}
		if f.Form == FormSizeFree {
			t.Errorf("trial %d: 80 runs of many sizes fitted size-free", trial)
		}
		noisy, err := FitRuns(synth(rng, tr, 80, 0.05), nil)
		if err != nil {
			t.Fatal(err)
		}
		if m := mapeOn(rng, noisy, tr, 200); m > 10 {
			t.Errorf("trial %d: 5%% noise: MAPE %.2f%% > 10%%", trial, m)
		}
	}
}

// TestFitScaledTruthExactly: the simulator's shape, T = u I / E + w
// (alpha linear in the size, beta -1), is recovered parameter by parameter.
func TestFitScaledTruthExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tr := truth{ua: 25, va: 1, b: -1, wg: 10}
	f, err := FitRuns(synth(rng, tr, 40, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	if m := mapeOn(rng, f, tr, 200); m > 0.5 {
		t.Fatalf("MAPE %.3f%%: %s %+v", m, f.Form, f.Params)
	}
	if math.Abs(f.Beta.At(5)+1) > 0.01 {
		t.Errorf("beta %.4f, want -1", f.Beta.At(5))
	}
	if g := f.Gamma.At(5); math.Abs(g-10) > 0.5 {
		t.Errorf("gamma %.3f, want 10", g)
	}
}

// TestFitSizeFreeFallback: runs of one size fit T(E) = a E^b + c.
func TestFitSizeFreeFallback(t *testing.T) {
	var runs []Run
	for e := 1; e <= 12; e++ {
		runs = append(runs, Run{Executors: e, Size: 4, Seconds: 120*math.Pow(float64(e), -0.8) + 15})
	}
	f, err := FitRuns(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Form != FormSizeFree || f.Sizes != 1 {
		t.Fatalf("form %s with %d sizes", f.Form, f.Sizes)
	}
	if math.Abs(f.Beta.W+0.8) > 0.01 || math.Abs(f.Alpha.W-120) > 1 || math.Abs(f.Gamma.W-15) > 0.5 {
		t.Errorf("fit %+v, want a 120, b -0.8, c 15", f.Curve)
	}
	if f.MAPE > 0.1 {
		t.Errorf("MAPE %.3f%%", f.MAPE)
	}
}

// TestIncrementalRefitMatches: refitting run by run (warm starts) ends as
// close to the truth as a fit from scratch.
func TestIncrementalRefitMatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	tr := randomTruth(rng)
	runs := synth(rng, tr, 60, 0.03)
	var prev *Fit
	for n := 1; n <= len(runs); n++ {
		f, err := FitRuns(runs[:n], prev)
		if err != nil {
			t.Fatal(err)
		}
		prev = &f
	}
	scratch, _ := FitRuns(runs, nil)
	a, b := mapeOn(rand.New(rand.NewPCG(9, 9)), *prev, tr, 300), mapeOn(rand.New(rand.NewPCG(9, 9)), scratch, tr, 300)
	if a > b+1 || a > 5 {
		t.Errorf("incremental MAPE %.2f%%, from scratch %.2f%%", a, b)
	}
}

// TestFitDeterministic: the same runs give the same fit.
func TestFitDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	runs := synth(rng, randomTruth(rng), 30, 0.05)
	a, _ := FitRuns(runs, nil)
	b, _ := FitRuns(runs, nil)
	if a != b {
		t.Fatalf("%+v\n%+v", a, b)
	}
}

// TestQuantiles: residual quantiles of many log-normal residuals (sigma
// 0.2) are near the log-normal's (p50 1, p90 exp(1.2816 x 0.2)); few
// residuals are shrunk towards the prior spread.
func TestQuantiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var runs []Run
	for i := 0; i < 100; i++ {
		runs = append(runs, Run{Executors: 4, Size: 3, Seconds: 100 * math.Exp(0.2*rng.NormFloat64())})
	}
	f, err := FitRuns(runs, nil)
	if err != nil {
		t.Fatal(err)
	}
	want90 := math.Exp(1.2816 * 0.2)
	p50 := f.Params.Seconds(4, 3, Placement{}) * f.P50
	if math.Abs(p50-100) > 5 || math.Abs(f.P90/f.P50-want90) > 0.08 {
		t.Errorf("p50 %.1f s, p90/p50 %.3f, want about 100 s and %.3f", p50, f.P90/f.P50, want90)
	}
	if math.Abs(f.Sigma-0.2) > 0.04 {
		t.Errorf("sigma %.3f, want about 0.2", f.Sigma)
	}
	// Three identical runs: no residual at all, yet p90 stays wide (the prior).
	few, _ := FitRuns([]Run{{Executors: 2, Size: 1, Seconds: 50}, {Executors: 2, Size: 1, Seconds: 50}, {Executors: 2, Size: 1, Seconds: 50}}, nil)
	if few.P90 < 1.1 {
		t.Errorf("3 runs: p90 %.3f, want the prior's spread to keep it wide", few.P90)
	}
	for _, c := range []struct {
		xs   []float64
		q, w float64
	}{{[]float64{1, 2, 3, 4}, 0.5, 2.5}, {[]float64{1, 2, 3, 4}, 0.9, 3.7}, {[]float64{5}, 0.9, 5}, {[]float64{1, 3}, 0, 1}} {
		if got := quantile(c.xs, c.q); math.Abs(got-c.w) > 1e-12 {
			t.Errorf("quantile(%v, %g) = %g, want %g", c.xs, c.q, got, c.w)
		}
	}
}

// TestBadRuns: NaN, negative, infinite and huge inputs are errors naming
// the field, never panics.
func TestBadRuns(t *testing.T) {
	ok := Run{Executors: 2, Size: 1, Seconds: 10}
	for _, c := range []struct {
		field string
		mod   func(*Run)
	}{
		{"executors", func(r *Run) { r.Executors = 0 }},
		{"executors", func(r *Run) { r.Executors = -3 }},
		{"executors", func(r *Run) { r.Executors = MaxExecutors + 1 }},
		{"size", func(r *Run) { r.Size = math.NaN() }},
		{"size", func(r *Run) { r.Size = -1 }},
		{"size", func(r *Run) { r.Size = math.Inf(1) }},
		{"size", func(r *Run) { r.Size = 1e300 }},
		{"seconds", func(r *Run) { r.Seconds = math.NaN() }},
		{"seconds", func(r *Run) { r.Seconds = 0 }},
		{"seconds", func(r *Run) { r.Seconds = 1e300 }},
		{"crossShare", func(r *Run) { r.CrossShare = math.NaN() }},
		{"crossShare", func(r *Run) { r.CrossShare = 1.5 }},
		{"busiestLoad", func(r *Run) { r.BusiestLoad = -0.1 }},
	} {
		r := ok
		c.mod(&r)
		var ie *InputError
		if _, err := FitRuns([]Run{ok, r}, nil); !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%+v: FitRuns error %v, want field %s", r, err, c.field)
		}
		b := NewBook()
		if err := b.Observe("s", "", r); !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%+v: Observe error %v, want field %s", r, err, c.field)
		}
	}
	if _, err := FitRuns(nil, nil); !errors.Is(err, ErrNoModel) {
		t.Errorf("no runs: %v", err)
	}
}

// FuzzFit: whatever the runs, FitRuns neither panics nor returns a fit
// with non-finite predictions.
func FuzzFit(f *testing.F) {
	f.Add(uint8(3), 2.0, 1.0, 0.5, 0.5, 10.0, int64(1))
	f.Add(uint8(20), 1e-9, 1e9, 1.0, 1.0, 1e8, int64(7))
	f.Add(uint8(1), math.NaN(), -1.0, 2.0, -1.0, math.Inf(1), int64(0))
	f.Fuzz(func(t *testing.T, n uint8, size, scale, cross, load, secs float64, seed int64) {
		rng := rand.New(rand.NewPCG(uint64(seed), 1))
		runs := make([]Run, int(n)%40+1)
		for i := range runs {
			runs[i] = Run{Executors: 1 + rng.IntN(32), Size: size * (1 + rng.Float64()*scale), Seconds: secs * (1 + rng.Float64()),
				Placement: Placement{CrossShare: cross * rng.Float64(), BusiestLoad: load * rng.Float64()}}
		}
		fit, err := FitRuns(runs, nil)
		if err != nil {
			return
		}
		for _, r := range runs {
			if p := fit.Params.Seconds(float64(r.Executors), r.Size, r.Placement); !finite(p) || p < 0 {
				t.Fatalf("prediction %v for %+v (fit %+v)", p, r, fit)
			}
		}
	})
}

// TestFitBetaOfSize: a job whose scaling with executors changes with its
// size (beta(I) = -1.2 + 0.4 I^0.5: big inputs scale worse) is fitted
// with dSpark's whole form and predicted within 2%.
func TestFitBetaOfSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	p := Params{Curve: Curve{Alpha: Power{U: 30, V: 1}, Beta: Power{U: 0.4, V: 0.5, W: -1.2}, Gamma: Power{W: 12}}}
	gen := func(n int) []Run {
		runs := make([]Run, n)
		for i := range runs {
			r := Run{Executors: 1 + rng.IntN(16), Size: 0.5 + 3.5*rng.Float64()}
			r.Seconds = p.Seconds(float64(r.Executors), r.Size, r.Placement)
			runs[i] = r
		}
		return runs
	}
	f, err := FitRuns(gen(60), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Form != FormFullBeta {
		t.Errorf("form %s, want %s", f.Form, FormFullBeta)
	}
	var ape float64
	test := gen(200)
	for _, r := range test {
		ape += math.Abs(f.Params.Seconds(float64(r.Executors), r.Size, r.Placement)-r.Seconds) / r.Seconds
	}
	if m := 100 * ape / float64(len(test)); m > 2 {
		t.Errorf("MAPE %.2f%%: %+v", m, f.Curve)
	}
}

// TestRefitLinear: on the runs its search saw, RefitLinear gives the fit
// back exactly (the search's linear coefficients are that solve); on runs
// of a job that became 30% slower it follows without a search (the same
// form and exponents, every prediction 1.3 times as long); and it refuses
// to stand in for a search when another candidate became eligible (the
// first run across agents) or without a fit.
func TestRefitLinear(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	tr := randomTruth(rng)
	runs := synth(rng, tr, 60, 0.05)
	f, err := FitRunsWith(runs, nil, Sensitivity{ShuffleCost: 0.45, Contention: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	same, ok := RefitLinear(runs, &f)
	if !ok || same != f {
		t.Fatalf("same runs: ok %v\n%+v\nwant\n%+v", ok, same, f)
	}
	slow := make([]Run, len(runs))
	for i, r := range runs {
		r.Seconds *= 1.3
		slow[i] = r
	}
	g, ok := RefitLinear(slow, &f)
	if !ok || g.Form != f.Form || g.exps != f.exps || g.Beta != f.Beta || g.ShuffleCost != f.ShuffleCost || g.Contention != f.Contention {
		t.Fatalf("slower runs: ok %v, %+v from %+v", ok, g, f)
	}
	for _, r := range synth(rng, tr, 50, 0) {
		a, b := f.Params.Seconds(float64(r.Executors), r.Size, r.Placement), g.Params.Seconds(float64(r.Executors), r.Size, r.Placement)
		if math.Abs(b/a-1.3) > 1e-6 {
			t.Fatalf("%+v: %.4f before, %.4f after: ratio %.6f, want 1.3", r, a, b, b/a)
		}
	}
	if math.Abs(g.MAPE-f.MAPE) > 1e-6 || math.Abs(g.P90/g.P50-f.P90/f.P50) > 1e-9 {
		t.Errorf("residuals moved: MAPE %.4f -> %.4f, p90/p50 %.4f -> %.4f", f.MAPE, g.MAPE, f.P90/f.P50, g.P90/g.P50)
	}
	// On one uncontended agent, then a first spread run: a new candidate.
	local := make([]Run, 30)
	for i := range local {
		r := runs[i]
		r.Placement = Placement{}
		local[i] = r
	}
	h, err := FitRuns(local, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := RefitLinear(append(slices.Clone(local), local[0]), &h); !ok {
		t.Error("one more run on one agent: refused")
	}
	spread := local[1]
	spread.CrossShare = 0.5
	if _, ok := RefitLinear(append(slices.Clone(local), spread), &h); ok {
		t.Error("the first run across agents: stood in for a search")
	}
	if _, ok := RefitLinear(runs, nil); ok {
		t.Error("no fit: ok")
	}
}

// TestFitPositiveEverywhere: a fit of noisy runs predicts a positive,
// finite run time at every executor count and size, far outside the runs'
// too: its linear terms are kept nonnegative. (Least squares alone left
// some negative, and a curve positive at every run went below zero at a
// count or size between or beyond them: 259 of 14,400 such queries here.)
func TestFitPositiveEverywhere(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 300; trial++ {
		a, b, g := 50+rng.Float64()*500, -0.3-rng.Float64()*0.7, 5+rng.Float64()*30
		runs := make([]Run, 10+rng.IntN(30))
		for k := range runs {
			e, i := 1+rng.IntN(16), 1+rng.Float64()*19
			runs[k] = Run{Executors: e, Size: i, Seconds: (a*i/10*math.Pow(float64(e), b) + g) * math.Exp(0.15*rng.NormFloat64())}
		}
		f, err := FitRuns(runs, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range []float64{0.01, 0.1, 0.5, 1, 20, 50, 200, 1000} {
			for _, e := range []float64{1, 2, 8, 32, 64, 200} {
				if s := f.Params.Seconds(e, i, Placement{}); !(s > 0) || math.IsInf(s, 0) {
					t.Fatalf("trial %d (%s fit of %d runs): size %v, %v executors -> %v s (curve %+v)", trial, f.Form, len(runs), i, e, s, f.Curve)
				}
			}
		}
	}
}

// TestNonNegativeIsTheLeastSquaresOptimum: on random normal equations
// (X'X, X'y of random positive features and targets, k = 2 and 4, as the
// forms have) nonNegative returns the constrained optimum: x >= 0, and the
// gradient X'X x - X'y is zero where x > 0 and nonnegative where x = 0
// (KKT: sufficient, the objective being convex). Unconstrained solutions
// that are already nonnegative come back unchanged.
func TestNonNegativeIsTheLeastSquaresOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	clipped := 0
	for trial := 0; trial < 2000; trial++ {
		k := []int{2, 4}[trial%2]
		var a [4][4]float64
		var b [4]float64
		for n := 0; n < 12; n++ {
			var x [4]float64
			for i := 0; i < k; i++ {
				x[i] = math.Exp(rng.NormFloat64())
			}
			y := 4 * rng.NormFloat64()
			for i := 0; i < k; i++ {
				b[i] += x[i] * y
				for j := 0; j < k; j++ {
					a[i][j] += x[i] * x[j]
				}
			}
		}
		x, ok := nonNegative(a, b, k)
		if !ok {
			t.Fatalf("trial %d: no solution", trial)
		}
		free, _ := gauss(a, b, k)
		neg := slices.ContainsFunc(free[:k], func(v float64) bool { return v < 0 })
		if !neg && x != free {
			t.Fatalf("trial %d: unconstrained %v is nonnegative, got %v", trial, free, x)
		}
		if neg {
			clipped++
		}
		scale := 0.0
		for i := 0; i < k; i++ {
			scale = max(scale, math.Abs(b[i]), a[i][i])
		}
		for i := 0; i < k; i++ {
			g := -b[i]
			for j := 0; j < k; j++ {
				g += a[i][j] * x[j]
			}
			tol := 1e-7 * scale
			switch {
			case x[i] < 0:
				t.Fatalf("trial %d: x = %v has a negative coefficient", trial, x)
			case x[i] > 0 && math.Abs(g) > tol:
				t.Fatalf("trial %d: x = %v, gradient %v at coefficient %d (> 0): not optimal", trial, x, g, i)
			case x[i] == 0 && g < -tol:
				t.Fatalf("trial %d: x = %v, gradient %v at coefficient %d (= 0): raising it would fit better", trial, x, g, i)
			}
		}
	}
	if clipped < 200 {
		t.Fatalf("only %d of 2000 problems needed the constraint; the test does not exercise it", clipped)
	}
}
