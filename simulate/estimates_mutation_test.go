package simulate

// Tests of estimates.go (--estimates) that kill mutants gremlins left
// alive (issue 33). Expected values are derived by hand in the comments.

import (
	"math"
	"testing"

	"github.com/sparkpack/sparkpack/workload"
)

// TestEstimateErrorBounds: --estimate-error is a sigma in [0, 5], both
// ends included.
func TestEstimateErrorBounds(t *testing.T) {
	m := workload.DefaultModel
	wl := []workload.Job{wcN("j", 1, 1)}
	for _, tc := range []struct {
		sigma float64
		ok    bool
	}{
		{0, true}, {5, true}, {2.5, true}, {5.000001, false}, {-0.000001, false}, {math.Inf(1), false},
	} {
		jobs, profiles := BuildWorkload(wl, m, 0, 1, 1)
		_, err := newEstimator(jobs, profiles, m, EstimatesUser, tc.sigma, false, 1)
		if (err == nil) != tc.ok {
			t.Errorf("sigma %v: error %v, want accepted %v", tc.sigma, err, tc.ok)
		}
	}
}

// TestLearnedEstimateOfAnEmptyJob: in learned mode a job of no size (no
// input) is told its user's estimate as it is, even when the signature's
// runs took twice their users' estimates (which corrects the estimates of
// the jobs with a size).
//
// Three runs of 1 GB (user's estimate 35 s: 10 s + 1000 MB / 40 MB/s)
// took 70 s each (the first is told 35 s, the others are corrected
// already). An empty job of the same signature (10 s of startup,
// user's estimate 10 s with an estimate error of 0) is told 10 s; a
// fourth job of 1 GB is told more than its 35 s (corrected towards 70 s).
func TestLearnedEstimateOfAnEmptyJob(t *testing.T) {
	m := workload.DefaultModel
	wl := []workload.Job{wcN("r0", 1, 1), wcN("r1", 1, 1), wcN("r2", 1, 1), wcN("empty", 0, 1), wcN("sized", 1, 1)}
	jobs, profiles := BuildWorkload(wl, m, 0, 1, 1)
	e, err := newEstimator(jobs, profiles, m, EstimatesLearned, 0, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		j := &jobs[i]
		e.submit(j)
		if i == 0 {
			near(t, "first estimate", j.EstimatedDurationSeconds, 35)
		}
		e.start(j.ID, []workload.AgentShare{{Executors: 1, CPUs: 16, UsedCPUs: 8}})
		e.finish(j.ID, 70)
	}
	empty, sized := &jobs[3], &jobs[4]
	e.submit(empty)
	near(t, "empty job's estimate", empty.EstimatedDurationSeconds, 10)
	e.submit(sized)
	if sized.EstimatedDurationSeconds <= 35*1.1 {
		t.Errorf("sized job told %.1f s, want its 35 s corrected towards 70 s", sized.EstimatedDurationSeconds)
	}
}

// TestEstimateErrorSkipsNoReference: the mean estimate error is relative
// to the profiled run time; a job whose profiled run time is 0 (no
// startup in the model, no input) is left out of it. With users off by
// exp(sigma N) and one such job only, nothing is counted: 0%.
func TestEstimateErrorSkipsNoReference(t *testing.T) {
	m := workload.DefaultModel
	m.Startup = 0
	jobs, profiles := BuildWorkload([]workload.Job{wcN("empty", 0, 1)}, m, 0, 1, 1)
	e, err := newEstimator(jobs, profiles, m, EstimatesUser, 0.5, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	e.submit(&jobs[0])
	var r Result
	e.report(&r)
	if e.errN != 0 || r.EstimateErrorPct != 0 {
		t.Errorf("%d estimates counted, error %v%%; want none", e.errN, r.EstimateErrorPct)
	}
}

// TestEstimatorStartByHand: the shape of a run's placement the learned
// model is given. Executors 3 on an agent of 8 cpus with 6 in use, 1 on
// one of 4 with 2 in use, none on one of 2 with 2 in use (not the job's):
// cross share 1 - (3/4)^2 - (1/4)^2 = 6/16; busiest load among the job's
// agents max(6/8, 2/4) = 0.75 (the full agent holds none of it).
func TestEstimatorStartByHand(t *testing.T) {
	m := workload.DefaultModel
	jobs, profiles := BuildWorkload([]workload.Job{wcN("j", 1, 4)}, m, 0, 1, 1)
	e, err := newEstimator(jobs, profiles, m, EstimatesLearned, 0, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	e.start("j", []workload.AgentShare{{Executors: 3, CPUs: 8, UsedCPUs: 6}, {Executors: 1, CPUs: 4, UsedCPUs: 2}, {Executors: 0, CPUs: 2, UsedCPUs: 2}})
	pl := e.jobs["j"].pl
	near(t, "cross share", pl.CrossShare, 6.0/16)
	near(t, "busiest load", pl.BusiestLoad, 0.75)
	// An agent of no cpus (none known) adds no load.
	e.start("j", []workload.AgentShare{{Executors: 2, CPUs: 0, UsedCPUs: 2}, {Executors: 2, CPUs: 4, UsedCPUs: 1}})
	pl = e.jobs["j"].pl
	near(t, "cross share, two agents", pl.CrossShare, 0.5)
	near(t, "busiest load, an agent of no cpus", pl.BusiestLoad, 0.25)
}

// TestLearnedEstimateWaitsForWarmup: the model's prediction is blended
// into a learned estimate once it has LearnWarmup (5) runs, not before.
// Runs of 4 GB at 1, 2, 4, 1 executors took 10 + 400/n s (the users
// thought 10 + 100/n s, the profiled time): the fifth job's estimate
// (4 runs) is the users' estimate corrected by their history alone; the
// sixth's (5 runs) is pulled further towards what the model predicts for
// one executor, about 410 s.
func TestLearnedEstimateWaitsForWarmup(t *testing.T) {
	m := workload.DefaultModel
	counts := []int{1, 2, 4, 1, 2, 1}
	var wl []workload.Job
	for i, n := range counts {
		wl = append(wl, wcN("r"+string(rune('0'+i)), 4, n))
	}
	jobs, profiles := BuildWorkload(wl, m, 0, 1, 1)
	e, err := newEstimator(jobs, profiles, m, EstimatesLearned, 0, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	sig := e.jobs["r0"].sig
	var corrected [6]float64
	for i, n := range counts {
		j := &jobs[i]
		c, err := e.corr.Correct(sig, e.jobs[j.ID].user)
		if err != nil {
			t.Fatal(err)
		}
		corrected[i] = c.Seconds
		e.submit(j)
		if i < 5 {
			near(t, "estimate before the warmup", j.EstimatedDurationSeconds, corrected[i])
		} else if j.EstimatedDurationSeconds < 1.05*corrected[i] || j.EstimatedDurationSeconds > 410 {
			t.Errorf("sixth job told %.1f s, want between %.1f s (the correction alone) and 410 s", j.EstimatedDurationSeconds, corrected[i])
		}
		e.start(j.ID, []workload.AgentShare{{Executors: n, CPUs: 16, UsedCPUs: 8}})
		e.finish(j.ID, 10+400/float64(n))
	}
}

// TestEstimateErrorMeanByHand: the mean absolute relative error of the
// estimates told against the profiled run times. Two WordCounts of 1 GB
// (profiled 10 s + 1000 MB / 40 MB/s = 35 s) are told 70 s (100% off) and
// 35 s (0%): 50%. Oracle estimates report none.
func TestEstimateErrorMeanByHand(t *testing.T) {
	m := workload.DefaultModel
	for _, mode := range []string{EstimatesUser, EstimatesOracle} {
		jobs, profiles := BuildWorkload([]workload.Job{wcN("a", 1, 1), wcN("b", 1, 1)}, m, 0, 1, 1)
		e, err := newEstimator(jobs, profiles, m, mode, 0, false, 1)
		if err != nil {
			t.Fatal(err)
		}
		jobs[0].EstimatedDurationSeconds, jobs[1].EstimatedDurationSeconds = 70, 35
		e.submit(&jobs[0])
		e.submit(&jobs[1])
		var r Result
		e.report(&r)
		want := 50.0
		if mode == EstimatesOracle {
			want = 0
		}
		near(t, mode+" estimate error %", r.EstimateErrorPct, want)
	}
}

// TestModelMAPEByHand: the learned model's error counts the runs of a
// signature that had learnMAPEAfter (10) runs before them, and learns
// from each run (Version counts them). Ten runs of 4 GB at 1, 2 and 4
// executors took exactly 10 + 400/n s (the model fits them); the 11th
// and 12th, at 2 executors, took 1.5 x 210 = 315 s: the model expected
// about 210 s, an error of about 1/3 on each: MAPE about 33% over 2
// runs. A run of 0 s (nothing to learn from) changes nothing.
func TestModelMAPEByHand(t *testing.T) {
	m := workload.DefaultModel
	counts := []int{1, 2, 4, 1, 2, 4, 1, 2, 4, 1, 2, 2, 2}
	var wl []workload.Job
	for i, n := range counts {
		wl = append(wl, wcN(string(rune('a'+i)), 4, n))
	}
	jobs, profiles := BuildWorkload(wl, m, 0, 1, 1)
	e, err := newEstimator(jobs, profiles, m, EstimatesLearned, 0, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	traits := &traitsModel{e: e}
	for i, n := range counts[:12] {
		j := &jobs[i]
		e.submit(j)
		e.start(j.ID, []workload.AgentShare{{Executors: n, CPUs: 16, UsedCPUs: 8}})
		secs := 10 + 400/float64(n)
		if i >= 10 {
			secs *= 1.5
		}
		e.finish(j.ID, secs)
		if traits.Version() != uint64(i+1) {
			t.Fatalf("after %d runs the model's version is %d", i+1, traits.Version())
		}
	}
	last := &jobs[12]
	e.submit(last)
	e.start(last.ID, []workload.AgentShare{{Executors: 2, CPUs: 16, UsedCPUs: 8}})
	e.finish(last.ID, 0)
	var r Result
	e.report(&r)
	if r.ModelMAPERuns != 2 || r.ModelMAPEPct < 25 || r.ModelMAPEPct > 40 || traits.Version() != 12 {
		t.Errorf("model MAPE %.1f%% over %d runs, version %d; want about 33%% over 2, 12", r.ModelMAPEPct, r.ModelMAPERuns, traits.Version())
	}
}
