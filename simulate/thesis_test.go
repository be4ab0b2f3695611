package simulate

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

func near(t *testing.T, name string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("%s = %v, want %v", name, got, want)
	}
}

// wc is a WordCount of one executor (2 cores) that runs ref seconds
// packed and uncontended: 10 s of startup + input / (20 MB/s x 2 cores).
func wc(id string, submit, ref float64) workload.Job {
	return workload.Job{Submit: time.Duration(submit * float64(time.Second)), Profile: workload.Profile{
		JobID: id, App: workload.WordCount, InputBytes: int64((ref - 10) * 40e6), Executors: 1, ExecutorCores: 2, ExecutorMemoryMB: 1024}}
}

// TestFeasibleEDFByHand: one agent of 2 cpus at $1/h, no contention in
// the model, every job's deadline 1.5 x its run time:
//
//	j0 at 0 s runs 100 s (deadline 150): 0-100, met.
//	jA at 1 s runs 20 s (deadline 31): cannot start before 100, hopeless.
//	jB at 1 s runs 220 s (deadline 331): started at 100 it ends at 320.
//
// Algorithm 3 (EDF) runs jA at 100-120 and jB at 120-340: both miss (JCTs
// 100, 119, 339). feasible-edf runs jB at 100-320 (met) and jA at 320-340:
// one miss (JCTs 100, 319, 339). Either way the agent is busy 0-340 s:
// $0.094444.
func TestFeasibleEDFByHand(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	wl := []workload.Job{wc("j0", 0, 100), wc("jA", 1, 20), wc("jB", 1, 220)}
	for _, tc := range []struct {
		ordering scheduler.Ordering
		missed   int
		jctMean  float64
	}{
		{scheduler.OrderAlgorithm3, 2, (100 + 119 + 339) / 3.0},
		{scheduler.OrderFeasibleEDF, 1, (100 + 319 + 339) / 3.0},
	} {
		t.Run(string(tc.ordering), func(t *testing.T) {
			r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, DeadlineFraction: 1, Slack: 1.5, Seed: 1,
				Policy: PolicySpec{Name: "x", Ordering: tc.ordering, Placement: "exact"}})
			if err != nil {
				t.Fatal(err)
			}
			if r.DeadlineJobs != 3 || r.DeadlineMissed != tc.missed || r.Completed != 3 || r.Rejected != 0 {
				t.Fatalf("%+v", r)
			}
			near(t, "cost", r.TotalCostUSD, 340.0/3600)
			near(t, "jct mean", r.JCTMeanS, tc.jctMean)
			near(t, "met %", r.DeadlineMetPct, 100*float64(3-tc.missed)/3)
			near(t, "violations among admitted %", r.AdmittedViolationPct, 100*float64(tc.missed)/3)
			near(t, "stretch", r.Stretch, 1)
		})
	}
}

// TestRejectedDeadlineJobIsNotMet: a job whose executor is larger than the
// only agent is rejected. It counts as a missed deadline in "met % of all
// deadline jobs" and not among the admitted jobs' violations.
func TestRejectedDeadlineJobIsNotMet(t *testing.T) {
	big := wc("big", 0, 20)
	big.Profile.ExecutorCores = 4
	wl := []workload.Job{wc("ok", 0, 20), big}
	r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), DeadlineFraction: 1, Slack: 1.5, Seed: 1, Policy: DefaultPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if r.DeadlineJobs != 2 || r.Rejected != 1 || r.DeadlineRejected != 1 || r.DeadlineMissed != 1 || r.Completed != 1 {
		t.Fatalf("%+v", r)
	}
	near(t, "met %", r.DeadlineMetPct, 50)
	near(t, "violations among admitted %", r.AdmittedViolationPct, 0)
	near(t, "violations % (all)", r.DeadlineViolationPct, 50)
}

// TestThesisWorkloadRuns replays a small thesis-like window end to end
// with the default and a baseline on the thesis cluster.
func TestThesisWorkloadRuns(t *testing.T) {
	arr := workload.First(workload.Hour(loadTrace(t), 0), 20)
	wl := workload.DefaultModel.Thesis(arr, workload.DefaultThesisMix, 3)
	for _, name := range []string{DefaultPolicy().Name, "fifo-consolidate"} {
		p, err := LookupPolicy(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Run(context.Background(), Options{Workload: wl, From: 0, Cluster: clusterspec.Thesis14(), Policy: p, DeadlineFraction: 1, Slack: 1.5, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		if r.Jobs != 20 || r.Completed != 20 || r.DeadlineJobs != 20 || r.Stretch < 1 || r.UtilisationPct <= 0 || r.UtilisationPct > 100 {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

func TestDefaultPolicyIsTheLiveDefault(t *testing.T) {
	p := DefaultPolicy()
	if p.Placement != scheduler.DefaultPolicy || p.Ordering != scheduler.DefaultOrdering || p.Name != scheduler.DefaultPolicy {
		t.Fatalf("simulator default %+v, live default %s under %s", p, scheduler.DefaultPolicy, scheduler.DefaultOrdering)
	}
	for _, b := range Baselines {
		if _, err := LookupPolicy(b); err != nil {
			t.Error(err)
		}
	}
}

func TestCommandThesisCompareDefault(t *testing.T) {
	trace := tracePath(t)
	out, progress, err := runCommand(t, "--trace", trace, "--workload", "thesis", "--hours", "0,6", "--jobs", "8", "--seeds", "1-2", "--compare-default")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"hour 0 (light), 8 jobs, seeds 1,2", "hour 6 (busy)", "dap (default)", "fifo-consolidate", "Pareto-better runs", "default policy: dap"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(progress, "thesis workload, 8 jobs") {
		t.Errorf("progress: %s", progress)
	}
	out, _, err = runCommand(t, "--trace", trace, "--workload", "thesis", "--hour", "0", "--jobs", "8", "--seeds", "1-2", "--compare-default", "--format", "json", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	var runs []RunResult
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	defaults := 0
	for _, r := range runs[0].Results {
		if r.Default {
			defaults++
		}
		if r.DeadlineJobs != 8 || r.Jobs != 8 {
			t.Errorf("%s: %+v (thesis mode gives every job a deadline)", r.Policy, r)
		}
	}
	if defaults != 1 || len(runs[0].Results) != len(Baselines)+1 || runs[0].Class != ClassLight || runs[1].Seed != 2 {
		t.Errorf("runs %+v", runs)
	}
	out, _, err = runCommand(t, "--trace", trace, "--workload", "thesis", "--hour", "0", "--jobs", "8", "--seeds", "1,2", "--policies", "exact", "--compare-default", "--format", "markdown", "--quiet")
	if err != nil || !strings.Contains(out, "| **dap** (default) |") || !strings.Contains(out, "| exact |") || !strings.Contains(out, "| hour 0 | light | ") {
		t.Errorf("markdown: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"--workload", "other"},
		{"--jobs", "-1"},
		{"--seeds", "5-1"},
		{"--seeds", "x"},
		{"--seeds", "1-3", "--seed", "2"},
		{"--hours", "0,24"},
		{"--hours", "0", "--hour", "1"},
		{"--hours", "0,1", "--chart", "x.svg"},
	} {
		if _, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet"}, args...)...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestAggregateVerdict(t *testing.T) {
	res := func(pol string, cost float64, missed int) Result {
		return Result{Policy: pol, TotalCostUSD: cost, DeadlineMissed: missed, DeadlineJobs: 10, Default: pol == "dap",
			DeadlineMetPct: float64(10-missed) * 10}
	}
	run := func(seed uint64, d, c, b float64, dm, cm, bm int) RunResult {
		return RunResult{Workload: WorkloadThesis, Window: "hour 5", Hour: 5, Class: ClassLight, Seed: seed, Jobs: 10, Results: []Result{
			res("fifo-consolidate", c, cm), res("bfd", b, bm), res("dap", d, dm)}}
	}
	was := Aggregate([]RunResult{
		run(1, 8, 10, 9, 1, 1, 2),  // Pareto-better
		run(2, 9, 10, 8, 0, 1, 1),  // dearer than bfd
		run(3, 8, 10, 12, 2, 1, 3), // one miss more than consolidate
	})
	if len(was) != 1 {
		t.Fatalf("%+v", was)
	}
	wa := was[0]
	if len(wa.Policies) != 3 || wa.Policies[2].Policy != "dap" || !wa.Policies[2].Default {
		t.Fatalf("%+v", wa.Policies)
	}
	c := wa.Policies[0].Cost
	near(t, "consolidate mean", c.Mean, 10)
	near(t, "consolidate sd", c.SD, 0)
	b := wa.Policies[1].Cost
	near(t, "bfd mean", b.Mean, 29.0/3)
	near(t, "bfd sd", b.SD, math.Sqrt(((9-29.0/3)*(9-29.0/3)+(8-29.0/3)*(8-29.0/3)+(12-29.0/3)*(12-29.0/3))/2))
	v := wa.Verdict
	if v == nil || v.Runs != 3 || v.ParetoRuns != 1 || v.NotDearerRuns != 2 || v.NoMoreMissesRuns != 2 {
		t.Fatalf("verdict %+v", v)
	}
	near(t, "cost vs consolidate", v.CostVsConsolidatePct, 100*(25.0/3/10-1))
	near(t, "misses default", v.MissesDefault, 1)
	near(t, "misses consolidate", v.MissesConsolidate, 1)
	if v.TargetMet { // -16.7% but as many misses: met; check the rule
		if !(v.CostVsConsolidatePct <= -15 && v.MissesDefault <= v.MissesConsolidate) {
			t.Fatal("target rule")
		}
	} else {
		t.Fatalf("light target: -16.7%% and equal misses should meet it: %+v", v)
	}
}

func TestParseSeedsAndClasses(t *testing.T) {
	got, err := parseSeeds("1-3,9, 11")
	if err != nil || len(got) != 5 || got[0] != 1 || got[2] != 3 || got[3] != 9 || got[4] != 11 {
		t.Fatalf("%v %v", got, err)
	}
	for n, want := range map[int]string{0: "", 78: ClassLight, 150: ClassLight, 200: "", 300: ClassBusy, 554: ClassBusy} {
		if got := HourClass(n); got != want {
			t.Errorf("HourClass(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzParseSeeds: --seeds never panics, and what it accepts is at most
// 1,000 seeds per range, each range ascending, no seed twice (results are
// aggregated over the seeds).
func FuzzParseSeeds(f *testing.F) {
	for _, s := range []string{"1-5", "1,2,7", "1-3,9", "", "x", "5-1", "0-999", "18446744073709551615", "1-18446744073709551615", "1-5,3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		seeds, err := parseSeeds(s)
		if err != nil {
			return
		}
		if len(seeds) == 0 || len(seeds) > 1000*(strings.Count(s, ",")+1) {
			t.Fatalf("%q: %d seeds", s, len(seeds))
		}
		seen := map[uint64]bool{}
		for _, x := range seeds {
			if seen[x] {
				t.Fatalf("%q: seed %d twice", s, x)
			}
			seen[x] = true
		}
	})
}
