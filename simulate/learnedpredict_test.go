package simulate

import (
	"fmt"
	"math"
	"testing"

	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// learnRun has e learn, as the simulator does when a job ends
// (estimator.finish), a run of sig with executors on pl, estimated by its
// user at user seconds, that took secs; and live the same run.
func learnRun(t *testing.T, e *estimator, live *learned.Model, sig string, i, executors int, size, user, secs float64, pl perfmodel.Placement) {
	t.Helper()
	id := fmt.Sprintf("r%d", i)
	e.jobs[id] = &estJob{sig: sig, size: size, executors: executors, user: user, pl: pl}
	before := e.learnt
	e.finish(id, secs)
	if e.learnt != before+1 {
		t.Fatalf("run %d not learned", i)
	}
	live.Observe(scheduler.RunRecord{Signature: sig, InputSizeGB: size, Executors: executors, Seconds: secs, Outcome: scheduler.RunFinished,
		RunShape: scheduler.RunShape{CrossShare: pl.CrossShare, BusiestLoad: pl.BusiestLoad}})
}

// TestLearnedModeDecidesAsLive: with --learned-decisions model the core's
// model answers run times as live's learned.Model does: nothing before
// any run; the user's corrected estimate as a point (p50 = p90) while the
// signature has a correction history but no model; then the model's p50
// and p90 on the plan asked (on the signature's usual plans for the zero
// placement) — exactly live's without a user's estimate, and with one the
// corrected estimate blended into the p50 and the p90 scaled alike. The
// cached answers are the uncached ones, and a run learned changes them.
// With told it answers nothing, as before.
func TestLearnedModeDecidesAsLive(t *testing.T) {
	e := &estimator{mode: EstimatesLearned, book: perfmodel.NewBook(), corr: perfmodel.NewEstimates(), jobs: map[string]*estJob{}, count: map[string]int{}}
	live := learned.New()
	m := &traitsModel{e: e}
	const sig = "local:///opt/spark/jobs/scan.jar com.example.jobs.Job1"
	k := scheduler.RunKey{Signature: sig, Size: 4, EstimateSeconds: 100}
	bare := k
	bare.EstimateSeconds = 0
	spread := perfmodel.Placement{CrossShare: 0.5, BusiestLoad: 0.75}
	truth := func(n int, size float64, pl perfmodel.Placement) float64 {
		return (10 + 40*size/float64(n)) * (1 + 0.3*pl.CrossShare + 0.2*pl.BusiestLoad)
	}

	if p, ok := m.Predict(k, 4, perfmodel.Placement{}); ok {
		t.Fatalf("before any run: %+v", p)
	}
	// Two runs (fewer than perfmodel.MinRuns): no model, a correction
	// history: the corrected estimate (users 2x too low here).
	for i := range 2 {
		pl := perfmodel.Placement{CrossShare: 0.5, BusiestLoad: 0.5}
		s := truth(2, 4, pl)
		learnRun(t, e, live, sig, i, 2, 4, s/2, s, pl)
	}
	c, _ := e.corr.Correct(sig, 100)
	p, ok := m.Predict(k, 4, spread)
	if !ok || p.Level != learned.LevelEstimate || p.P50 != c.Seconds || p.P90 != p.P50 || !(c.Seconds > 100) {
		t.Fatalf("with 2 runs: %+v %v, want the corrected estimate %.1f s as a point", p, ok, c.Seconds)
	}
	if _, ok := m.Predict(bare, 4, spread); ok {
		t.Fatal("with 2 runs and no user's estimate: a prediction")
	}

	for i := 2; i < 30; i++ {
		n := 1 + i%6
		size := float64(1 + i%7)
		pl := perfmodel.Placement{CrossShare: float64(i%5) / 5, BusiestLoad: float64(i%4) / 3}
		s := truth(n, size, pl)
		learnRun(t, e, live, sig, i, n, size, s*0.6, s, pl)
	}
	usual := e.book.UsualPlacement(sig, "")
	if usual == (perfmodel.Placement{}) {
		t.Fatal("no usual placement after 30 runs")
	}
	for _, pl := range []perfmodel.Placement{{}, spread} {
		// Without a user's estimate: live's answer exactly.
		got, ok := m.Predict(bare, 4, pl)
		want, wok := live.Predict(bare, 4, pl)
		if !ok || !wok || got != want || got.Level != perfmodel.LevelSignature {
			t.Errorf("on %+v without an estimate: %+v %v, live %+v %v", pl, got, ok, want, wok)
		}
		if !(got.P90 > got.P50) {
			t.Errorf("on %+v: p90 %.1f not above p50 %.1f", pl, got.P90, got.P50)
		}
		// With one: the model's p50 on the plan blended with the
		// corrected estimate put on the plan's terms (from the usual
		// plans'), the p90 scaled as the p50.
		q := pl
		if q == (perfmodel.Placement{}) {
			q = usual
		}
		mp, err := e.book.Predict(sig, "", perfmodel.Query{Executors: 4, Size: 4, Placement: q})
		mu, err2 := e.book.Predict(sig, "", perfmodel.Query{Executors: 4, Size: 4, Placement: usual})
		if err != nil || err2 != nil {
			t.Fatal(err, err2)
		}
		c, _ := e.corr.Correct(sig, 100)
		b, _ := perfmodel.Blend(c.Seconds*mp.P50/mu.P50, c.Sigma, mp.P50, mp.Sigma)
		got, ok = m.Predict(k, 4, pl)
		if !ok || math.Abs(got.P50-b) > 1e-9*b || math.Abs(got.P90/got.P50-mp.P90/mp.P50) > 1e-9 || got.Level != perfmodel.LevelSignature {
			t.Errorf("on %+v with an estimate: %+v, want p50 %.3f (blend of %.3f and the model's %.3f) and p90/p50 %.4f",
				pl, got, b, c.Seconds*mp.P50/mu.P50, mp.P50, mp.P90/mp.P50)
		}
	}
	if got, _ := m.Predict(k, 4, perfmodel.Placement{}); got != must(m.Predict(k, 4, usual)) {
		t.Errorf("the zero placement answers %+v, the usual plans %+v", got, must(m.Predict(k, 4, usual)))
	}

	// The cache: the same answers as uncached, until a run is learned.
	before, _ := m.Predict(k, 3, spread)
	if u, ok := e.predictUncached(k, 3, spread); !ok || u != before || len(e.cache.answers) == 0 {
		t.Fatalf("cached %+v, uncached %+v (%d cached)", before, u, len(e.cache.answers))
	}
	learnRun(t, e, live, sig, 30, 3, 4, 50, 3*truth(3, 4, spread), spread)
	after, _ := m.Predict(k, 3, spread)
	if u, _ := e.predictUncached(k, 3, spread); after != u || after == before {
		t.Fatalf("after a run learned: %+v, uncached %+v, before %+v", after, u, before)
	}
	if got, want := must(m.Predict(bare, 4, spread)), must(live.Predict(bare, 4, spread)); got != want {
		t.Errorf("after a run learned: %+v, live %+v", got, want)
	}

	m.told = true
	if p, ok := m.Predict(k, 4, spread); ok {
		t.Errorf("told: predicts %+v", p)
	}
}

func must(p perfmodel.Prediction, _ bool) perfmodel.Prediction { return p }
