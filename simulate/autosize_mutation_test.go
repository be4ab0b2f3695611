package simulate

// Tests of autosize.go (--executors auto) that kill mutants gremlins left
// alive (issue 33). Expected counts are derived by hand in the comments.

import (
	"context"
	"testing"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

func eightCPUs(t *testing.T) clusterspec.Cluster {
	t.Helper()
	c, err := clusterspec.ParseBytes([]byte(`{"name": "eight", "agents": [{"id": "a1", "hostname": "a1", "cpus": 8, "memMB": 16384, "pricePerHour": 1.0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestAutoSizeOracleByHand: with oracle estimates the sizer knows the
// truth from the first job on. A WordCount of one 2-core executor that
// runs 40 s (10 s of startup, 30 s of compute) runs r(n) = 10 + 30/n s
// with n executors on one uncontended agent: 40, 25, 20, 17.5, 16 s.
//
//   - Without a deadline it gets the knee, the first n from which one more
//     executor saves less than 10% of the run time: 1 -> 2 saves 37.5%,
//     2 -> 3 20%, 3 -> 4 12.5%, 4 -> 5 8.6%: n = 4 (changed), and it runs
//     17.5 s on 8 cpus.
//   - With a deadline 1.5 x 40 = 60 s away the cheapest count (n x r(n):
//     40, 50, 60, 70 executor-seconds) whose run time meets it: n = 1 (sized,
//     not changed); it runs 40 s.
//   - With run noise of sigma 0.5 the sizer takes p90 = p50 x
//     exp(1.2816 x 0.5) = 1.898 x p50: 75.9, 47.5, 38 s; the cheapest
//     count that meets the deadline is n = 2 (changed).
//   - An empty job (10 s of startup, no input: no size) is never sized.
//
// The mean executors of the two jobs run: (4 + 1) / 2, (1 + 1) / 2 and
// (2 + 1) / 2.
func TestAutoSizeOracleByHand(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	wl := []workload.Job{wc("j0", 0, 40), wc("empty", 100, 10)}
	for _, tc := range []struct {
		fraction, noise float64
		sized, changed  int
		meanExecutors   float64
		jctMean         float64
	}{
		{0, 0, 1, 1, 2.5, (17.5 + 10) / 2},
		{1, 0, 1, 0, 1, (40 + 10) / 2},
		{1, 0.5, 1, 1, 1.5, -1}, // run times drawn with the noise: not by hand
	} {
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: eightCPUs(t), Model: &m, Seed: 1,
			DeadlineFraction: tc.fraction, Slack: 1.5, RunNoise: tc.noise, Executors: ExecutorsAuto, Estimates: EstimatesOracle,
			Policy: PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"}})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 2 {
			t.Fatalf("deadline fraction %v: %+v", tc.fraction, r)
		}
		if r.AutoSizedJobs != tc.sized || r.AutoChangedJobs != tc.changed {
			t.Errorf("deadline fraction %v: %d sized, %d changed; want %d and %d", tc.fraction, r.AutoSizedJobs, r.AutoChangedJobs, tc.sized, tc.changed)
		}
		near(t, "mean executors", r.MeanExecutors, tc.meanExecutors)
		if tc.jctMean >= 0 {
			near(t, "jct mean", r.JCTMeanS, tc.jctMean)
		}
	}
}

// wcN is a WordCount of n executors of 2 cores reading gb GB.
func wcN(id string, gb float64, n int) workload.Job {
	return workload.Job{Profile: workload.Profile{JobID: id, App: workload.WordCount, InputBytes: int64(gb * 1e9),
		Executors: n, ExecutorCores: 2, ExecutorMemoryMB: 1024}}
}

// TestAutoSizeUserEstimateScaled: with the users' estimates the sizer
// waits for LearnWarmup runs of the signature, then sizes from the
// learned model within the counts its runs had, and scales the user's
// estimate by what the model expects the new count to change.
//
// Six runs of 4 GB at 1, 2 and 4 executors, on one agent half busy,
// took 10 + 400/n s (410, 210, 110 s); a seventh job of one executor, its user's estimate 50 s, comes
// without a deadline. Within [1, 4] one more executor always saves more
// than 10% of the run time (1 -> 2: 49%, 2 -> 3: 32%, 3 -> 4: 23%): the
// knee is the maximum, 4, and the estimate told is 50 x 110 / 410 =
// 13.4 s (the model's fit of the runs, within 5%).
func TestAutoSizeUserEstimateScaled(t *testing.T) {
	m := workload.DefaultModel
	var wl []workload.Job
	counts := []int{1, 2, 4, 1, 2, 4}
	for i, n := range counts {
		wl = append(wl, wcN("r"+string(rune('0'+i)), 4, n))
	}
	wl = append(wl, wcN("new", 4, 1))
	jobs, profiles := BuildWorkload(wl, m, 0, 1, 1)
	e, err := newEstimator(jobs, profiles, m, EstimatesUser, 0, false, 1)
	if err != nil {
		t.Fatal(err)
	}
	e.enableAuto(m, profiles, 0)
	for i, n := range counts {
		j := &jobs[i]
		e.submit(j)
		if i < LearnWarmup && (j.Executors != n || e.auto.sized != 0) {
			t.Fatalf("job %d sized before %d runs: %d executors, %d sized", i, LearnWarmup, j.Executors, e.auto.sized)
		}
		e.start(j.ID, []workload.AgentShare{{Executors: n, CPUs: 16, UsedCPUs: 8}})
		e.finish(j.ID, 10+400/float64(n))
	}
	j := &jobs[len(jobs)-1]
	e.jobs[j.ID].user = 50
	j.EstimatedDurationSeconds = 50
	e.submit(j)
	if j.Executors != 4 || profiles[j.ID].Executors != 4 {
		t.Fatalf("sized to %d executors (profile %d), want 4", j.Executors, profiles[j.ID].Executors)
	}
	if want := 50 * 110.0 / 410; j.EstimatedDurationSeconds < 0.95*want || j.EstimatedDurationSeconds > 1.05*want {
		t.Errorf("estimate told %.2f s, want about %.2f s", j.EstimatedDurationSeconds, want)
	}
	if e.auto.sized != 2 || e.auto.changed != 1 {
		t.Errorf("%d sized, %d changed; want 2 (the sixth job, at 1 of [1, 4]... and the seventh) and 1", e.auto.sized, e.auto.changed)
	}
}
