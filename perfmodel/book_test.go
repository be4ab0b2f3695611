package perfmodel

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestFallbackChain: a book predicts from the prior, then from the
// application type (another signature's runs), then from the signature's
// own runs, and its p90 / p50 spread widens as it falls back.
func TestFallbackChain(t *testing.T) {
	b := NewBook()
	q := Query{Executors: 4, Size: 5, EstimateSeconds: 200}
	p, err := b.Predict("jar:Mine", "sort", q)
	if err != nil || p.Level != LevelPrior {
		t.Fatalf("empty book: %+v %v", p, err)
	}
	// The prior: the estimate times dap's placement factor (none here).
	if p.P50 != 200 || p.P90 != 400 {
		t.Errorf("prior: %+v, want p50 200 (the estimate) and p90 400", p)
	}
	// Spread across agents, the prior charges the sort type's shuffle share.
	pl := Placement{CrossShare: 0.5}
	if p, _ := b.Predict("jar:Mine", "sort", Query{Executors: 4, Size: 5, EstimateSeconds: 200, Placement: pl}); math.Abs(p.P50-200*(0.8+0.2*2.5)) > 1e-9 {
		t.Errorf("prior spread: p50 %v", p.P50)
	}
	// Without an estimate: the throughput prior, wider still.
	if p, _ := b.Predict("jar:Mine", "sort", Query{Executors: 5, Size: 10}); p.P50 != 10+30*10/5.0 || p.P90 != 3*p.P50 {
		t.Errorf("prior without estimate: %+v", p)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	other := truth{ua: 30, va: 1, b: -1, wg: 10}
	for _, r := range synth(rng, other, 12, 0.05) {
		if err := b.Observe("jar:Other", "sort", r); err != nil {
			t.Fatal(err)
		}
	}
	pt, err := b.Predict("jar:Mine", "sort", q)
	if err != nil || pt.Level != LevelAppType || pt.Runs != 12 {
		t.Fatalf("after another sort's runs: %+v %v", pt, err)
	}
	if pu, _ := b.Predict("jar:Mine", "wordcount", q); pu.Level != LevelPrior {
		t.Errorf("another type still falls back to the prior: %+v", pu)
	}
	mine := truth{ua: 60, va: 1, b: -1, wg: 10}
	for _, r := range synth(rng, mine, 12, 0.05) {
		if err := b.Observe("jar:Mine", "sort", r); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := b.Predict("jar:Mine", "sort", q)
	if err != nil || ps.Level != LevelSignature {
		t.Fatalf("after its own runs: %+v %v", ps, err)
	}
	if want := mine.params().Seconds(4, 5, Placement{}); math.Abs(ps.P50-want)/want > 0.08 {
		t.Errorf("signature p50 %.1f, truth %.1f", ps.P50, want)
	}
	// The type's model pools both signatures; as a fallback it is widened.
	b2 := NewBook()
	for _, r := range synth(rand.New(rand.NewPCG(1, 1)), other, 30, 0.05) {
		_ = b2.Observe("jar:Other", "sort", r)
	}
	own, _ := b2.Predict("jar:Other", "sort", q)
	fell, _ := b2.Predict("jar:New", "sort", q)
	if math.Abs(fell.P90/fell.P50-AppTypeWiden*own.P90/own.P50) > 0.03 || fell.Sigma <= own.Sigma {
		t.Errorf("fallback not widened: own %+v, type %+v", own, fell)
	}
	if !(own.P90/own.P50 < fell.P90/fell.P50 && fell.P90/fell.P50 < PriorP90WithEstimate) {
		t.Errorf("spreads: signature %.3f, type %.3f, prior %.3f: want increasing", own.P90/own.P50, fell.P90/fell.P50, PriorP90WithEstimate)
	}
}

// TestOnlineMAPEAfterTenRuns: a signature's runs predicted before each is
// seen (5% noise) are within 15% once it has ten runs.
func TestOnlineMAPEAfterTenRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for trial := 0; trial < 5; trial++ {
		tr := randomTruth(rng)
		b := NewBook()
		runs := synth(rng, tr, 40, 0.05)
		var ape float64
		for i, r := range runs {
			if i >= 10 {
				p, err := b.Predict("s", "", Query{Executors: r.Executors, Size: r.Size, Placement: r.Placement})
				if err != nil || p.Level != LevelSignature {
					t.Fatalf("%+v %v", p, err)
				}
				ape += math.Abs(p.P50-r.Seconds) / r.Seconds
			}
			if err := b.Observe("s", "", r); err != nil {
				t.Fatal(err)
			}
		}
		if m := 100 * ape / 30; m > 15 {
			t.Errorf("trial %d: MAPE after 10 runs %.1f%%", trial, m)
		}
		s := b.Signatures()
		if len(s) != 1 || s[0].Runs != 40 || s[0].OnlineRuns != 40-MinRuns || s[0].OnlineMAPE <= 0 {
			t.Errorf("summary %+v", s)
		}
	}
}

// TestWindowBoundsRuns: a key keeps at most Window runs.
func TestWindowBoundsRuns(t *testing.T) {
	b := NewBook()
	b.Window = 20
	rng := rand.New(rand.NewPCG(4, 4))
	for _, r := range synth(rng, randomTruth(rng), 50, 0.02) {
		if err := b.Observe("s", "t", r); err != nil {
			t.Fatal(err)
		}
	}
	if s := b.Signatures(); s[0].Runs != 20 || s[0].Fit.Runs != 20 {
		t.Errorf("%+v", s[0])
	}
}

// TestEstimateCorrection: a team that underestimates by 40% (actual =
// estimate / 0.6) is corrected towards 1 / 0.6; one sample is shrunk
// towards no correction.
func TestEstimateCorrection(t *testing.T) {
	s := NewEstimates()
	c, err := s.Correct("team", 100)
	if err != nil || c.Seconds != 100 || c.Samples != 0 || c.Sigma != EstimatePriorSigma {
		t.Fatalf("no history: %+v %v", c, err)
	}
	_ = s.Observe("team", 60, 100)
	c, _ = s.Correct("team", 60)
	// One sample: exp(ln(1/0.6) x 1/4).
	if want := 60 * math.Exp(math.Log(1/0.6)/4); math.Abs(c.Seconds-want) > 1e-9 {
		t.Errorf("one sample: %.3f, want %.3f", c.Seconds, want)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 60; i++ {
		actual := 50 + 500*rng.Float64()
		_ = s.Observe("team", 0.6*actual*math.Exp(0.1*rng.NormFloat64()), actual)
	}
	c, _ = s.Correct("team", 60)
	if c.Ratio < 1.55 || c.Ratio > 1.75 || c.Sigma > 0.2 {
		t.Errorf("after 61 samples: %+v, want ratio about 1.67 and sigma about 0.1", c)
	}
	if c, _ := s.Correct("other", 60); c.Ratio != 1 {
		t.Errorf("another key is not corrected: %+v", c)
	}
	var ie *InputError
	for _, bad := range []float64{math.NaN(), -1, 0, math.Inf(1)} {
		if _, err := s.Correct("team", bad); !errors.As(err, &ie) {
			t.Errorf("Correct(%v): %v", bad, err)
		}
		if err := s.Observe("team", bad, 10); !errors.As(err, &ie) || ie.Field != "estimateSeconds" {
			t.Errorf("Observe(estimate %v): %v", bad, err)
		}
		if err := s.Observe("team", 10, bad); !errors.As(err, &ie) || ie.Field != "seconds" {
			t.Errorf("Observe(actual %v): %v", bad, err)
		}
	}
}

func TestBlend(t *testing.T) {
	for _, c := range []struct{ a, sa, b, sb, want, wantS float64 }{
		{100, 0.5, 100, 0.1, 100, 1 / math.Sqrt(4+100)},
		{100, 0.3, 400, 0.3, 200, 0.3 / math.Sqrt2},
		{math.NaN(), 0.3, 50, 0.2, 50, 0.2},
		{80, 0.3, -1, 0.2, 80, 0.3},
		{80, 0, 50, 0.2, 80, 0},
	} {
		got, s := Blend(c.a, c.sa, c.b, c.sb)
		if math.Abs(got-c.want) > 1e-9 || math.Abs(s-c.wantS) > 1e-9 {
			t.Errorf("Blend(%v, %v, %v, %v) = %v, %v; want %v, %v", c.a, c.sa, c.b, c.sb, got, s, c.want, c.wantS)
		}
	}
}

// TestBadQueries: bad queries are errors naming the field.
func TestBadQueries(t *testing.T) {
	b := NewBook()
	for _, c := range []struct {
		field string
		q     Query
	}{
		{"executors", Query{Executors: 0, Size: 1}},
		{"size", Query{Executors: 1, Size: math.NaN()}},
		{"size", Query{Executors: 1, Size: 0}},
		{"crossShare", Query{Executors: 1, Size: 1, Placement: Placement{CrossShare: math.Inf(-1)}}},
		{"estimateSeconds", Query{Executors: 1, Size: 1, EstimateSeconds: -5}},
		{"estimateSeconds", Query{Executors: 1, Size: 1, EstimateSeconds: math.NaN()}},
	} {
		var ie *InputError
		if _, err := b.Predict("s", "", c.q); !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%+v: %v, want field %s", c.q, err, c.field)
		}
	}
	if err := b.Observe("", "", Run{Executors: 1, Size: 1, Seconds: 1}); err == nil {
		t.Error("empty signature accepted")
	}
}

func benchBook(b *testing.B, n int) (*Book, []Run) {
	rng := rand.New(rand.NewPCG(6, 6))
	tr := randomTruth(rng)
	runs := synth(rng, tr, n, 0.05)
	book := NewBook()
	for _, r := range runs {
		if err := book.Observe("s", "t", r); err != nil {
			b.Fatal(err)
		}
	}
	return book, runs
}

// BenchmarkPredict: one prediction from a signature's fitted model (the
// scheduler's pass asks this per job and plan; target well under 1 ms).
func BenchmarkPredict(b *testing.B) {
	book, _ := benchBook(b, 100)
	q := Query{Executors: 6, Size: 7, Placement: Placement{CrossShare: 0.3, BusiestLoad: 0.8}}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := book.Predict("s", "t", q); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkObserve: recording one run of a signature with a full window
// (100 runs) and refitting it incrementally.
func BenchmarkObserve(b *testing.B) {
	book, runs := benchBook(b, 100)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := book.Observe("s", "t", runs[i%len(runs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestLearnedTraits: a signature whose runs on varied plans show a
// shuffle cost of 0.9 and a contention of 0.075 reads, in dap's terms, as
// shuffle share 0.3 and CPU-boundness 0.5; before that, the type's prior.
func TestLearnedTraits(t *testing.T) {
	b := NewBook()
	if tr, lv := b.Traits("s", "sort"); lv != LevelPrior || tr != DefaultPrior.Traits["sort"] {
		t.Fatalf("empty book: %+v %s", tr, lv)
	}
	rng := rand.New(rand.NewPCG(8, 8))
	for _, r := range synth(rng, truth{ua: 40, va: 1, b: -1, wg: 10, ks: 0.9, kc: 0.075}, 60, 0.02) {
		if err := b.Observe("s", "sort", r); err != nil {
			t.Fatal(err)
		}
	}
	tr, lv := b.Traits("s", "sort")
	if lv != LevelSignature || math.Abs(tr.ShuffleShare-0.3) > 0.05 || math.Abs(tr.CPUBound-0.5) > 0.2 {
		t.Errorf("learned traits %+v (%s), want about 0.3 and 0.5", tr, lv)
	}
}

// TestUsualPlacement: the usual plan is the median shape of the
// signature's latest runs (its type's while it has too few, one
// uncontended agent without any), and the model asked there predicts the
// runs' time even when the placement prior is wrong (a job that does not
// slow down when spread, whose every run was spread on busy agents).
func TestUsualPlacement(t *testing.T) {
	b := NewBook()
	if pl := b.UsualPlacement("jar:A", ""); pl != (Placement{}) {
		t.Fatalf("empty book: %+v, want the zero placement", pl)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	level := func(e, i float64) float64 { return 40*i/e + 12 } // no placement effect at all
	observe := func(sig string, n int) {
		for k := 0; k < n; k++ {
			e := 1 + rng.IntN(8)
			i := 1 + 9*rng.Float64()
			pl := Placement{CrossShare: 0.4, BusiestLoad: 1} // every run on the same kind of plan
			if err := b.Observe(sig, "", Run{Executors: e, Size: i, Placement: pl, Seconds: level(float64(e), i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	observe("jar:B", 5)
	if pl := b.UsualPlacement("jar:A", ""); pl != (Placement{CrossShare: 0.4, BusiestLoad: 1}) {
		t.Errorf("no runs of its own: %+v, want its type's usual plan", pl)
	}
	observe("jar:A", 30)
	pl := b.UsualPlacement("jar:A", "")
	if pl != (Placement{CrossShare: 0.4, BusiestLoad: 1}) {
		t.Errorf("usual plan %+v, want the runs' (0.4, 1)", pl)
	}
	for _, q := range []Query{{Executors: 2, Size: 3}, {Executors: 6, Size: 8}} {
		want := level(float64(q.Executors), q.Size)
		q.Placement = pl
		p, err := b.Predict("jar:A", "", q)
		if err != nil || p.Level != LevelSignature {
			t.Fatalf("predict %+v: %+v %v", q, p, err)
		}
		if math.Abs(p.P50/want-1) > 0.05 {
			t.Errorf("on the usual plan %+v: p50 %.1f, want %.1f within 5%%", q, p.P50, want)
		}
	}
}

// TestExecutorRange: the fewest and most executors of a signature's runs,
// none before MinRuns.
func TestExecutorRange(t *testing.T) {
	b := NewBook()
	for i, e := range []int{6, 3, 9, 4} {
		if _, _, ok := b.ExecutorRange("jar:A"); ok != (i >= MinRuns) {
			t.Fatalf("after %d runs: ok %v", i, ok)
		}
		if err := b.Observe("jar:A", "", Run{Executors: e, Size: float64(e), Seconds: 10 + 30/float64(e)}); err != nil {
			t.Fatal(err)
		}
	}
	if lo, hi, ok := b.ExecutorRange("jar:A"); lo != 3 || hi != 9 || !ok {
		t.Errorf("range %d-%d %v, want 3-9", lo, hi, ok)
	}
	if _, _, ok := b.ExecutorRange("jar:B"); ok {
		t.Error("an unknown signature has a range")
	}
}

// TestEstimateCorrectionFromTheTeam: a team that underestimates by 40%
// across its signatures has a new signature's estimate corrected by the
// team's ratio (about 1 / 0.6) before the signature has any history of
// its own, and a signature with many runs that the team estimates well by
// its own (about 1): per signature shrunk towards the team, not towards 1.
func TestEstimateCorrectionFromTheTeam(t *testing.T) {
	teams, sigs := NewEstimates(), NewEstimates()
	rng := rand.New(rand.NewPCG(8, 8))
	for i := 0; i < 40; i++ {
		actual := 50 + 500*rng.Float64()
		est := 0.6 * actual * math.Exp(0.1*rng.NormFloat64())
		_ = teams.Observe("team:a", est, actual)
		_ = sigs.Observe(fmt.Sprintf("sig-%d", i%8), est, actual)
	}
	team, err := teams.Correct("team:a", 1)
	if err != nil || team.Ratio < 1.55 || team.Ratio > 1.75 || team.Samples != 40 {
		t.Fatalf("team: %+v %v", team, err)
	}
	// A new signature: the team's correction whole.
	c, err := sigs.CorrectFrom("new", 60, team)
	if err != nil || math.Abs(c.Ratio-team.Ratio) > 1e-12 || math.Abs(c.Seconds-60*team.Ratio) > 1e-9 || c.Samples != 40 || c.Sigma != team.Sigma {
		t.Fatalf("new signature: %+v %v; want the team's %+v", c, err, team)
	}
	// Without the team it would not be corrected at all.
	if c, _ := sigs.Correct("new", 60); c.Ratio != 1 || c.Samples != 0 {
		t.Fatalf("new signature without the team: %+v", c)
	}
	// One run of its own that the user estimated right: between the two.
	_ = sigs.Observe("one", 100, 100)
	c, _ = sigs.CorrectFrom("one", 60, team)
	if want := math.Exp(0.75 * math.Log(team.Ratio)); math.Abs(c.Ratio-want) > 1e-9 || c.Samples != 41 {
		t.Fatalf("one run: ratio %.4f, want %.4f (3/4 of the team's log ratio)", c.Ratio, want)
	}
	// Many runs estimated right: its own (about 1), the team barely counts.
	for range 60 {
		_ = sigs.Observe("many", 100, 100*math.Exp(0.05*rng.NormFloat64()))
	}
	if c, _ := sigs.CorrectFrom("many", 60, team); c.Ratio < 0.97 || c.Ratio > 1.06 {
		t.Fatalf("many runs: %+v, want about 1", c)
	}
	// A zero or broken prior is no correction: CorrectFrom is Correct.
	for _, prior := range []Corrected{{}, {Ratio: math.NaN(), Sigma: 1}, {Ratio: 2, Sigma: math.Inf(1)}} {
		a, _ := sigs.CorrectFrom("sig-3", 60, prior)
		b, _ := sigs.Correct("sig-3", 60)
		if a != b {
			t.Fatalf("prior %+v: %+v, want Correct's %+v", prior, a, b)
		}
	}
}

// TestSearchSchedule: a signature's model is searched at every run while
// it has fewer than 2 x SearchEvery runs, and after that never more than
// a SearchEvery-th of its runs stale (its form and exponents, from a
// search of all but at most len(runs) / SearchEvery of its runs); between
// searches only the curve's linear coefficients move, fitted to every
// run. That is far fewer searches than runs (250 runs of a full window:
// about 30, not 250).
func TestSearchSchedule(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	b := NewBook()
	runs := synth(rng, randomTruth(rng), 250, 0.05)
	searches, last := 0, Fit{}
	for i, r := range runs {
		if err := b.Observe("s", "t", r); err != nil {
			t.Fatal(err)
		}
		e := b.sigs["s"]
		n := len(e.runs)
		if e.added == 0 {
			searches++
		} else {
			if n < 2*SearchEvery {
				t.Fatalf("run %d: no search with %d runs", i+1, n)
			}
			if e.added > n/SearchEvery {
				t.Fatalf("run %d: %d runs since the search, of %d", i+1, e.added, n)
			}
			if e.fit.Form != last.Form || e.fit.exps != last.exps || e.fit.placeFree != last.placeFree {
				t.Fatalf("run %d: the form or exponents moved without a search: %+v, was %+v", i+1, e.fit, last)
			}
			if e.fit.Alpha == last.Alpha && e.fit.Gamma == last.Gamma {
				t.Fatalf("run %d: the linear coefficients did not move", i+1)
			}
		}
		if e.fit.Runs != n {
			t.Fatalf("run %d: the fit has %d runs of %d", i+1, e.fit.Runs, n)
		}
		last = *e.fit
	}
	if searches > 40 {
		t.Errorf("%d searches for %d runs", searches, len(runs))
	}
}

// TestScheduleCostsLittleAccuracy: the book's online error (each run
// predicted before it is learned) is within half a point of a book that
// searched at every run, on random jobs with 5% and 10% noise.
func TestScheduleCostsLittleAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("searches at every run")
	}
	rng := rand.New(rand.NewPCG(19, 20))
	prior := DefaultPrior.Sensitivity("")
	for trial := range 4 {
		noise := []float64{0.05, 0.1}[trial%2]
		runs := synth(rng, randomTruth(rng), 150, noise)
		b := NewBook()
		var every *Fit
		var ape float64 // over the latest DefaultWindow runs, as the book's
		for i, r := range runs {
			if i >= len(runs)-DefaultWindow {
				pred := every.Params.Seconds(float64(r.Executors), r.Size, r.Placement) * every.P50
				ape += math.Abs(pred-r.Seconds) / r.Seconds
			}
			if err := b.Observe("s", "", r); err != nil {
				t.Fatal(err)
			}
			f, err := FitRunsWith(runs[max(0, i+1-DefaultWindow):i+1], every, prior)
			if err != nil {
				t.Fatal(err)
			}
			every = &f
		}
		want := 100 * ape / DefaultWindow
		s := b.Signatures()[0]
		if s.OnlineRuns != DefaultWindow {
			t.Fatalf("online runs %d", s.OnlineRuns)
		}
		if s.OnlineMAPE > want+0.5 {
			t.Errorf("trial %d (noise %.2f): online MAPE %.2f%%, searching at every run %.2f%%", trial, noise, s.OnlineMAPE, want)
		}
		t.Logf("trial %d (noise %.2f): online MAPE %.2f%%, searching at every run %.2f%%", trial, noise, s.OnlineMAPE, want)
	}
}
