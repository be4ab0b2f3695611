package learned

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

const sig = "local:///jobs/etl.jar com.example.Etl"

// truth is the synthetic signature's run time: 400/E + 20 seconds.
func truth(e int) float64 { return 400/float64(e) + 20 }

// runs are n finished runs of sig with executors cycling 2..9 and a log-
// normal noise of 3%; the user's estimate is 60% of the truth (a team that
// underestimates by 40%).
func runs(n int, seed uint64) []scheduler.RunRecord {
	rng := rand.New(rand.NewPCG(seed, 1))
	out := make([]scheduler.RunRecord, n)
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	for i := range out {
		e := 2 + i%8
		s := truth(e) * math.Exp(0.03*rng.NormFloat64())
		out[i] = scheduler.RunRecord{JobID: "j", Signature: sig, AppType: "", EstimateKey: sig, Executors: e,
			StartedAt: t0, EndedAt: t0.Add(time.Duration(s * float64(time.Second))), Seconds: s,
			Outcome: scheduler.RunFinished, EstimateSeconds: 0.6 * truth(e)}
	}
	return out
}

// TestPredictFallsBackToNothing: without history the model says nothing
// (the scheduler keeps the user's estimate: today's behaviour).
func TestPredictFallsBackToNothing(t *testing.T) {
	m := New()
	if p, ok := m.Predict(scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 100}, 4, perfmodel.Placement{}); ok {
		t.Fatalf("empty model predicted %+v", p)
	}
	if _, ok := m.Traits(scheduler.RunKey{Signature: sig}); ok {
		t.Fatal("empty model has traits")
	}
	// Runs that did not finish teach nothing.
	for _, o := range []string{scheduler.RunFailed, scheduler.RunKilled, scheduler.RunRetried, scheduler.RunPreempted} {
		r := runs(1, 1)[0]
		r.Outcome = o
		for range 5 {
			m.Observe(r)
		}
	}
	if _, ok := m.Predict(scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 100}, 4, perfmodel.Placement{}); ok || m.Runs() != 0 {
		t.Fatalf("learned from runs that did not finish (%d runs)", m.Runs())
	}
	// Nor do finished runs whose run time is not known (their driver was
	// never seen running), whatever seconds they carry.
	for _, r := range runs(5, 2) {
		r.RunTimeUnknown = true
		m.Observe(r)
	}
	if _, ok := m.Predict(scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 100}, 4, perfmodel.Placement{}); ok || m.Runs() != 0 {
		t.Fatalf("learned from runs of unknown run time (%d runs)", m.Runs())
	}
}

// TestPredictLearnsTheCurve: after ten runs the signature's model predicts
// run times at counts it saw and did not see within 10%, with p90 >= p50.
func TestPredictLearnsTheCurve(t *testing.T) {
	m := New()
	v0 := m.Version()
	for _, r := range runs(10, 7) {
		m.Observe(r)
	}
	if m.Version() == v0 || m.Runs() != 10 {
		t.Fatalf("version %d -> %d, runs %d", v0, m.Version(), m.Runs())
	}
	for _, e := range []int{2, 5, 9, 12} {
		p, ok := m.Predict(scheduler.RunKey{Signature: sig, Size: 1}, e, perfmodel.Placement{})
		if !ok || p.Level != perfmodel.LevelSignature {
			t.Fatalf("E=%d: %+v ok=%v; want a signature-level prediction", e, p, ok)
		}
		if err := math.Abs(p.P50-truth(e)) / truth(e); err > 0.10 || p.P90 < p.P50 {
			t.Errorf("E=%d: p50 %.1f p90 %.1f, truth %.1f (error %.0f%%)", e, p.P50, p.P90, truth(e), 100*err)
		}
	}
	s := m.Summaries()
	if len(s) != 1 || s[0].Signature != sig || s[0].Runs != 10 || s[0].Fit == nil {
		t.Fatalf("summaries %+v", s)
	}
}

// TestEstimateCorrection: with two runs (below the model's minimum) a new
// estimate of the underestimating signature is corrected upwards; another
// signature's estimate is left alone.
func TestEstimateCorrection(t *testing.T) {
	m := New()
	for _, r := range runs(2, 3) {
		m.Observe(r)
	}
	k := scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 60}
	p, ok := m.Predict(k, 4, perfmodel.Placement{})
	if !ok || p.Level != LevelEstimate || !(p.P50 > 60*1.2) || p.P50 > 60/0.6*1.01 {
		t.Fatalf("corrected estimate %+v ok=%v; want above 72 s and at most 100 s (the estimate / 0.6)", p, ok)
	}
	if _, ok := m.Predict(scheduler.RunKey{Signature: "other", Size: 1, EstimateSeconds: 60}, 4, perfmodel.Placement{}); ok {
		t.Fatal("another signature's estimate was corrected")
	}
	// The correction is cached per signature and dropped when it learns:
	// a third run that underestimated by far more moves it up.
	r := runs(1, 4)[0]
	r.EstimateSeconds = r.Seconds / 10
	m.Observe(r)
	c, err := m.CorrectEstimate(k)
	if err != nil || !(c.Seconds > p.P50) || c.Samples != 3 {
		t.Fatalf("after a third run: %+v (%v); want above %.1f s from 3 samples", c, err, p.P50)
	}
}

type history struct {
	runs []scheduler.RunRecord
	err  error
}

func (h history) RunHistory(_ context.Context, limit int) ([]scheduler.RunRecord, error) {
	if limit > 0 && len(h.runs) > limit {
		return h.runs[len(h.runs)-limit:], h.err
	}
	return h.runs, h.err
}

// TestReloadEqualsObserving: a model reloaded from the history predicts
// what the model that observed the runs one by one predicts (a restart or
// a failover loses nothing); a failed read keeps what the model knew.
func TestReloadEqualsObserving(t *testing.T) {
	rs := runs(12, 11)
	live := New()
	for _, r := range rs {
		live.Observe(r)
	}
	re := New()
	if n, err := re.Reload(context.Background(), history{runs: rs}); err != nil || n != 12 {
		t.Fatalf("reload: %d, %v", n, err)
	}
	k := scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 30}
	for e := 1; e <= 16; e++ {
		a, _ := live.Predict(k, e, perfmodel.Placement{CrossShare: 0.5})
		b, _ := re.Predict(k, e, perfmodel.Placement{CrossShare: 0.5})
		if a != b {
			t.Fatalf("E=%d: live %+v, reloaded %+v", e, a, b)
		}
	}
	if _, err := re.Reload(context.Background(), history{err: errors.New("down")}); err == nil || re.Runs() != 12 {
		t.Fatalf("failed reload: %v, runs %d", err, re.Runs())
	}
}

// TestReloadEqualsObservingALongHistory: on a long history of sized runs
// on varied plans (six signatures of 160 runs each: searches at every run
// at first, then on the schedule, warm and full, with the linear refits in
// between, perfmodel.SearchEvery), a reloaded model predicts exactly what
// the live model predicts and reports the same fits and online errors,
// although the live model was asked for predictions between the runs (as
// the scheduler asks) and the reloaded one was not.
func TestReloadEqualsObservingALongHistory(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	var rs []scheduler.RunRecord
	for i := range 6 * 160 {
		s, e, gb := i%6, 1+rng.IntN(12), 1+19*rng.Float64()
		pl := perfmodel.Placement{BusiestLoad: rng.Float64()}
		if rng.Float64() < 0.6 {
			pl.CrossShare = 0.8 * rng.Float64()
		}
		secs := (float64(20+10*s)*math.Pow(gb, 0.9)/float64(e) + 15) * (1 + 0.4*pl.CrossShare) * (1 + 0.2*pl.Contention()) * math.Exp(0.05*rng.NormFloat64())
		rs = append(rs, scheduler.RunRecord{ID: int64(i + 1), JobID: fmt.Sprintf("job-%d", i), Attempt: 1,
			Signature: fmt.Sprintf("local:///jobs/j%d.jar com.example.J%d", s, s), AppType: []string{"sort", "pagerank"}[s%2],
			EstimateKey: "team:a", Executors: e, InputSizeGB: gb, RunShape: scheduler.RunShape{CrossShare: pl.CrossShare, BusiestLoad: pl.BusiestLoad},
			StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs,
			Outcome: scheduler.RunFinished, EstimateSeconds: 0.6 * secs})
	}
	keys := func(r scheduler.RunRecord) scheduler.RunKey {
		return scheduler.RunKey{Signature: r.Signature, App: r.AppType, EstimateKey: r.EstimateKey, Size: r.Size(), EstimateSeconds: 100}
	}
	live := New()
	for _, r := range rs {
		if _, ok := live.Predict(keys(r), r.Executors, r.Placement()); !ok && live.Runs() > 20 {
			t.Fatalf("no prediction for %s after %d runs", r.Signature, live.Runs())
		}
		live.Observe(r)
	}
	re := New()
	if n, err := re.Reload(context.Background(), history{runs: rs}); err != nil || n != len(rs) {
		t.Fatalf("reload: %d, %v", n, err)
	}
	for _, r := range rs[len(rs)-6:] {
		for _, e := range []int{1, 3, 8, 16} {
			for _, pl := range []perfmodel.Placement{{}, {CrossShare: 0.5, BusiestLoad: 0.9}} {
				a, okA := live.Predict(keys(r), e, pl)
				b, okB := re.Predict(keys(r), e, pl)
				if !okA || a != b || a.Level != perfmodel.LevelSignature {
					t.Fatalf("%s E=%d %+v: live %+v (%v), reloaded %+v (%v)", r.Signature, e, pl, a, okA, b, okB)
				}
			}
		}
	}
	la, ra := live.Summaries(), re.Summaries()
	if len(la) != 6 || len(ra) != 6 {
		t.Fatalf("%d and %d signatures", len(la), len(ra))
	}
	for i := range la {
		if *la[i].Fit != *ra[i].Fit || la[i].OnlineMAPE != ra[i].OnlineMAPE || la[i].OnlineRuns != ra[i].OnlineRuns || la[i].Runs != ra[i].Runs {
			t.Fatalf("%s: live %+v %+v, reloaded %+v %+v", la[i].Signature, la[i], *la[i].Fit, ra[i], *ra[i].Fit)
		}
	}
}

// TestRightSizeFromHistory: after ten runs, an auto job with a deadline
// gets the cheapest count whose p90 meets it; without a deadline the knee.
func TestRightSizeFromHistory(t *testing.T) {
	m := New()
	for _, r := range runs(10, 5) {
		m.Observe(r)
	}
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	dl := now.Add(120 * time.Second)
	j := &scheduler.Job{Spec: scheduler.Spec{App: scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"},
		Sizing: &scheduler.Sizing{Auto: true}, MaxExecutors: 16}, DeadlineAt: &dl}
	if err := m.RightSize(j, now); err != nil {
		t.Fatal(err)
	}
	k := scheduler.RunKeyOf(j)
	p, _ := m.Predict(k, j.Executors, perfmodel.Placement{})
	prev, _ := m.Predict(k, j.Executors-1, perfmodel.Placement{})
	if p.P90 > 120 || prev.P90 <= 120 || j.Sizing.Executors != j.Executors || !strings.Contains(j.Sizing.Reason, "cheapest") || j.Sizing.Level != "signature" {
		t.Fatalf("chose %d (p90 %.0f; one fewer %.0f): %+v", j.Executors, p.P90, prev.P90, j.Sizing)
	}
	// 400/E + 20 with 400/(E(E+1)) < 10% of it from E = 8 (saving 400/72 = 5.6 of 70 = 7.9%).
	free := &scheduler.Job{Spec: scheduler.Spec{App: j.App, Sizing: &scheduler.Sizing{Auto: true}}}
	if err := m.RightSize(free, now); err != nil {
		t.Fatal(err)
	}
	if free.Executors < 6 || free.Executors > 9 || !strings.Contains(free.Sizing.Reason, "knee") {
		t.Fatalf("knee: %d executors, %+v; want about 7-8", free.Executors, free.Sizing)
	}
}

// TestRightSizeKeepsToTheRunsCounts: a signature whose runs had 2-4
// executors is not sized beyond them (its curve extrapolates there), even
// where the knee of that curve lies further out; user bounds that miss
// the range decide alone.
func TestRightSizeKeepsToTheRunsCounts(t *testing.T) {
	m := New()
	for i, r := range runs(12, 5) {
		r.Executors = 2 + i%3
		r.Seconds = truth(r.Executors)
		r.EndedAt = r.StartedAt.Add(time.Duration(r.Seconds * float64(time.Second)))
		m.Observe(r)
	}
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	app := scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"}
	free := &scheduler.Job{Spec: scheduler.Spec{App: app, Sizing: &scheduler.Sizing{Auto: true}}}
	if err := m.RightSize(free, now); err != nil {
		t.Fatal(err)
	}
	if free.Executors < 2 || free.Executors > 4 || free.Sizing.Executors != free.Executors || !strings.Contains(free.Sizing.Reason, "2-4 executors its runs had") {
		t.Fatalf("sized %d beyond the runs' 2-4: %+v", free.Executors, free.Sizing)
	}
	apart := &scheduler.Job{Spec: scheduler.Spec{App: app, Sizing: &scheduler.Sizing{Auto: true}, MinExecutors: 6, MaxExecutors: 10}}
	if err := m.RightSize(apart, now); err != nil {
		t.Fatal(err)
	}
	if apart.Executors < 6 || apart.Executors > 10 {
		t.Fatalf("user bounds 6-10: got %d (%+v)", apart.Executors, apart.Sizing)
	}
}

// TestConcurrentUse: observing, predicting, right-sizing and summarising
// from many goroutines at once (run with -race).
func TestConcurrentUse(t *testing.T) {
	m := New()
	rs := runs(200, 9)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(rs); i += 4 {
				m.Observe(rs[i])
				m.Predict(scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 50}, 1+i%10, perfmodel.Placement{})
				m.Traits(scheduler.RunKey{Signature: sig})
				_ = m.Summaries()
				if i%20 == 0 {
					j := &scheduler.Job{Spec: scheduler.Spec{App: scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"}, Sizing: &scheduler.Sizing{Auto: true}}}
					if err := m.RightSize(j, time.Now()); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if m.Runs() != 200 {
		t.Fatalf("runs %d", m.Runs())
	}
}

// BenchmarkPredict is the cost of one prediction the pass asks for (a
// signature with a fitted model, a user's estimate to correct and blend).
func BenchmarkPredict(b *testing.B) {
	m := New()
	for _, r := range runs(100, 3) {
		m.Observe(r)
	}
	k := scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 60}
	pl := perfmodel.Placement{CrossShare: 0.4, BusiestLoad: 0.7}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Predict(k, 1+i%16, pl)
	}
}

// BenchmarkPredictUnknown is the cost for a job the model knows nothing of
// (the common case on a fresh install).
func BenchmarkPredictUnknown(b *testing.B) {
	m := New()
	k := scheduler.RunKey{Signature: "unknown", Size: 1, EstimateSeconds: 60}
	b.ReportAllocs()
	for b.Loop() {
		m.Predict(k, 4, perfmodel.Placement{})
	}
}

// TestPredictBeforeAPlanOnTheUsualPlans: a job of a signature whose every
// run was spread on a full agent, and that does not slow down when spread
// (the placement prior says it does), is predicted before its plan is
// known at what its runs took, its user's estimate too (the user knows
// what the runs take): not at the lower level the prior leaves on one
// uncontended agent.
func TestPredictBeforeAPlanOnTheUsualPlans(t *testing.T) {
	m := New()
	rs := runs(40, 7)
	for i := range rs {
		rs[i].CrossShare, rs[i].BusiestLoad = 0.4, 1
		rs[i].EstimateSeconds = truth(rs[i].Executors)
	}
	if n := m.Load(rs); n != len(rs) {
		t.Fatalf("learned %d runs of %d", n, len(rs))
	}
	for _, e := range []int{3, 8} {
		for _, est := range []float64{0, truth(e)} {
			p, ok := m.Predict(scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: est}, e, perfmodel.Placement{})
			if !ok || math.Abs(p.P50/truth(e)-1) > 0.06 {
				t.Errorf("%d executors, estimate %.0f: p50 %.1f (ok %v), want %.1f within 6%%", e, est, p.P50, ok, truth(e))
			}
		}
	}
}

// TestRightSizeOnTheUsualPlans: right-sizing an auto job asks the model on
// the plans the signature usually gets (as the pass's estimate and the
// simulator do), not on one idle agent: a signature whose every run was
// spread on a full agent, at truth(E), gets the cheapest count whose p90
// there meets the deadline, not the fewer executors the idle-agent
// extrapolation (below the runs) would pick.
func TestRightSizeOnTheUsualPlans(t *testing.T) {
	m := New()
	rs := runs(40, 7)
	for i := range rs {
		rs[i].CrossShare, rs[i].BusiestLoad = 0.4, 1
	}
	m.Load(rs)
	usual := perfmodel.Placement{CrossShare: 0.4, BusiestLoad: 1}
	k := scheduler.RunKey{Signature: sig, Size: 1}
	for _, e := range []int{2, 5, 9} {
		got, err := m.Predictor(k, perfmodel.Placement{})(e)
		want, _ := m.PredictQuery(sig, "", perfmodel.Query{Executors: e, Size: 1, Placement: usual})
		idle, _ := m.PredictQuery(sig, "", perfmodel.Query{Executors: e, Size: 1})
		if err != nil || got != want || !(idle.P50 < 0.97*want.P50) {
			t.Fatalf("E=%d: predictor %+v (%v); want the usual plans' %+v (the idle agent's p50 %.1f lower)", e, got, err, want, idle.P50)
		}
	}
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	dl := now.Add(100 * time.Second)
	j := &scheduler.Job{Spec: scheduler.Spec{App: scheduler.App{AppResource: "local:///jobs/etl.jar", MainClass: "com.example.Etl"},
		Sizing: &scheduler.Sizing{Auto: true}, MaxExecutors: 32}, DeadlineAt: &dl}
	if err := m.RightSize(j, now); err != nil {
		t.Fatal(err)
	}
	p, _ := m.PredictQuery(sig, "", perfmodel.Query{Executors: j.Executors, Size: 1, Placement: usual})
	prev, _ := m.PredictQuery(sig, "", perfmodel.Query{Executors: j.Executors - 1, Size: 1, Placement: usual})
	if p.P90 > 100 || prev.P90 <= 100 || j.Sizing.P90Seconds != math.Round(p.P90*10)/10 {
		t.Fatalf("chose %d (p90 on the usual plans %.1f, one fewer %.1f): %+v", j.Executors, p.P90, prev.P90, j.Sizing)
	}
}

// TestTeamEstimateCorrection: a team that underestimates by 40% on its
// jobs has the estimate of a signature new to the model corrected
// upwards (issue 27, 3a); another team's, and a run history written
// before teams were learned (EstimateKey = the signature), correct
// nothing for a new signature.
func TestTeamEstimateCorrection(t *testing.T) {
	m := New()
	for i := range 4 {
		for _, r := range runs(2, uint64(20+i)) {
			r.Signature = fmt.Sprintf("local:///jobs/team-a-%d.jar Main", i)
			r.EstimateKey, r.AppType = "team:a", "sort" // no type model for the new job
			m.Observe(r)
		}
	}
	newSig := "local:///jobs/brand-new.jar Main"
	p, ok := m.Predict(scheduler.RunKey{Signature: newSig, Size: 1, EstimateSeconds: 60, EstimateKey: "team:a"}, 4, perfmodel.Placement{})
	// 8 team samples of ratio 1/0.6: exp(8/11 x ln(1/0.6)) = 1.45.
	if !ok || p.Level != LevelEstimate || p.P50 < 60*1.35 || p.P50 > 60/0.6 {
		t.Fatalf("team a's new signature: %+v ok=%v; want its estimate corrected to about 87 s", p, ok)
	}
	if p, ok := m.Predict(scheduler.RunKey{Signature: newSig, Size: 1, EstimateSeconds: 60, EstimateKey: "team:b"}, 4, perfmodel.Placement{}); ok {
		t.Fatalf("team b's new signature was corrected: %+v", p)
	}
	if c, err := m.CorrectEstimate(scheduler.RunKey{Signature: newSig, Size: 1, EstimateSeconds: 60, EstimateKey: "team:a"}); err != nil || math.Abs(c.Seconds-p.P50) > 1e-9 || c.Samples != 8 {
		t.Fatalf("CorrectEstimate: %+v %v; want %.1f from 8 samples", c, err, p.P50)
	}
	// Reloading gives the same (the team comes from the history).
	var all []scheduler.RunRecord
	for i := range 4 {
		for _, r := range runs(2, uint64(20+i)) {
			r.Signature = fmt.Sprintf("local:///jobs/team-a-%d.jar Main", i)
			r.EstimateKey, r.AppType = "team:a", "sort"
			all = append(all, r)
		}
	}
	re := New()
	re.Load(all)
	if q, _ := re.Predict(scheduler.RunKey{Signature: newSig, Size: 1, EstimateSeconds: 60, EstimateKey: "team:a"}, 4, perfmodel.Placement{}); q != p {
		t.Fatalf("reloaded %+v, live %+v", q, p)
	}
	// Old rows: the estimate key is the signature; no team learns.
	old := New()
	for _, r := range runs(8, 3) {
		r.AppType = "sort"
		old.Observe(r)
	}
	if p, ok := old.Predict(scheduler.RunKey{Signature: newSig, Size: 1, EstimateSeconds: 60, EstimateKey: sig}, 4, perfmodel.Placement{}); ok {
		t.Fatalf("a team learned from rows keyed by their signature: %+v", p)
	}
}
