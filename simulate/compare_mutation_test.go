package simulate

// Tests of compare.go's aggregation that kill mutants gremlins left alive
// (issue 33). Every expected value is derived by hand in the comments.

import (
	"math"
	"strings"
	"testing"
)

// TestStatOfByHand: the mean, sample standard deviation and range.
//
//	{4, 2, 9}: mean 5; deviations -1, -3, 4: squares 1 + 9 + 16 = 26, over
//	n-1 = 2: 13, SD sqrt(13); min 2 (not the first), max 9 (the last).
//	{7}: one value has no spread: SD 0 (not 0/0).
//	{1e9, 1e9+1, 1e9+1}: mean 1e9 + 2/3; deviations -2/3, 1/3, 1/3: squares
//	4/9 + 1/9 + 1/9 = 2/3, over 2: 1/3, SD sqrt(1/3). Summing
//	(x + mean)(x - mean) instead of (x - mean)^2 is the same in exact
//	arithmetic, but 2 x mean x (the rounding of the mean) is then added to
//	the sum: about 1e9 x 1e-7, far from 1/3.
func TestStatOfByHand(t *testing.T) {
	s := statOf([]float64{4, 2, 9})
	near(t, "mean", s.Mean, 5)
	near(t, "sd", s.SD, math.Sqrt(13))
	near(t, "min", s.Min, 2)
	near(t, "max", s.Max, 9)

	s = statOf([]float64{7})
	if s.SD != 0 || s.Mean != 7 || s.Min != 7 || s.Max != 7 {
		t.Errorf("statOf({7}) = %+v, want mean, min and max 7, SD 0", s)
	}
	if s := statOf(nil); s != (Stat{}) {
		t.Errorf("statOf(nil) = %+v", s)
	}

	s = statOf([]float64{1e9, 1e9 + 1, 1e9 + 1})
	near(t, "sd of large values", s.SD, math.Sqrt(1.0/3))
	near(t, "mean of large values", s.Mean-1e9, 2.0/3)
}

// TestAggregateCountsRuns: a policy's Runs is the number of runs it has
// in the window (2 and 1 here), its Rejected the sum over them.
func TestAggregateCountsRuns(t *testing.T) {
	runs := []RunResult{
		{Window: "hour 1", Seed: 1, Results: []Result{{Policy: "bfd", Rejected: 2}, {Policy: "dap", Default: true}}},
		{Window: "hour 1", Seed: 2, Results: []Result{{Policy: "bfd", Rejected: 3}}},
	}
	was := Aggregate(runs)
	if len(was) != 1 || len(was[0].Policies) != 2 {
		t.Fatalf("%+v", was)
	}
	bfd, dap := was[0].Policies[0], was[0].Policies[1]
	if bfd.Policy != "bfd" || bfd.Runs != 2 || bfd.Rejected != 5 || bfd.Default {
		t.Errorf("bfd: %+v, want 2 runs, 5 rejected, not the default", bfd)
	}
	if dap.Policy != "dap" || dap.Runs != 1 || !dap.Default {
		t.Errorf("dap: %+v, want 1 run, the default", dap)
	}
}

// TestVerdictCostTolerance: "not dearer" allows the cheapest baseline's
// cost times 1 + 1e-9 (rounding noise of float sums), that bound
// included: a default at exactly $1 x (1 + 1e-9) against a $1 baseline
// is not dearer; at $1 x (1 + 2e-9) it is.
func TestVerdictCostTolerance(t *testing.T) {
	for _, tc := range []struct {
		cost      float64
		notDearer int
	}{
		{1 * (1 + 1e-9), 1},
		{1 + 0.5e-9, 1},
		{1, 1},
		{1 * (1 + 2e-9), 0},
	} {
		runs := []RunResult{{Workload: WorkloadThesis, Window: "hour 1", Class: ClassLight, Seed: 1, Results: []Result{
			{Policy: "fifo-consolidate", TotalCostUSD: 1, DeadlineMissed: 3},
			{Policy: "dap", Default: true, TotalCostUSD: tc.cost, DeadlineMissed: 3},
		}}}
		v := Aggregate(runs)[0].Verdict
		if v == nil || v.Runs != 1 || v.NotDearerRuns != tc.notDearer || v.NoMoreMissesRuns != 1 || v.ParetoRuns != tc.notDearer {
			t.Errorf("default at $%.12f against $1: %+v, want %d not dearer, 1 no more misses", tc.cost, v, tc.notDearer)
		}
	}
}

// verdictOf aggregates one window of one seed: fifo-consolidate and the
// default ("dap") with the given costs and misses.
func verdictOf(t *testing.T, class string, consCost float64, consMissed int, defCost float64, defMissed int) *Verdict {
	t.Helper()
	runs := []RunResult{{Workload: WorkloadThesis, Window: "hour 1", Class: class, Seed: 1, Results: []Result{
		{Policy: "fifo-consolidate", TotalCostUSD: consCost, DeadlineMissed: consMissed},
		{Policy: "dap", Default: true, TotalCostUSD: defCost, DeadlineMissed: defMissed},
	}}}
	v := Aggregate(runs)[0].Verdict
	if v == nil {
		t.Fatalf("no verdict")
	}
	return v
}

// TestVerdictTargetsByHand: the light-hour target is "cost <= -15% vs
// fifo-consolidate, misses <= fifo-consolidate's", the busy-hour one
// "cost <= fifo-consolidate's, misses <= 0.9 x fifo-consolidate's".
//
//   - Light, $9 against $10 (-10%), no misses: not cheap enough.
//   - Light, $8 against $10 (-20%), as many misses: met, also at 2^24
//     misses each, where adding the 1e-9 rounding allowance to a mean
//     changes nothing (the bound itself must hold).
//   - Busy, the same cost, 0.9 x the misses at 335,544,320 (10 x 2^25)
//     against 301,989,888 (0.9 x it, rounded as the rule computes it):
//     met.
//   - fifo-consolidate at $0: the cost change is not a number; it is left
//     at 0 (not -100%, not NaN).
func TestVerdictTargetsByHand(t *testing.T) {
	if v := verdictOf(t, ClassLight, 10, 0, 9, 0); v.TargetMet || v.Target == "" {
		t.Errorf("light at -10%%: %+v, want a target not met", v)
	}
	near(t, "cost vs consolidate", verdictOf(t, ClassLight, 10, 0, 9, 0).CostVsConsolidatePct, -10)
	if v := verdictOf(t, ClassLight, 10, 3, 8, 3); !v.TargetMet {
		t.Errorf("light at -20%%, as many misses: %+v, want met", v)
	}
	if v := verdictOf(t, ClassLight, 10, 1<<24, 8, 1<<24); !v.TargetMet {
		t.Errorf("light at -20%%, 2^24 misses each: %+v, want met", v)
	}
	const cons = 10 << 25
	if v := verdictOf(t, ClassBusy, 10, cons, 10, 301989888); !v.TargetMet {
		t.Errorf("busy, same cost, 0.9 x %d misses: %+v, want met", cons, v)
	}
	if v := verdictOf(t, ClassBusy, 10, cons, 10, 301989889); v.TargetMet {
		t.Errorf("busy, same cost, one miss more than 0.9 x %d: %+v, want not met", cons, v)
	}
	if v := verdictOf(t, ClassBusy, 0, 1, 0, 0); v.CostVsConsolidatePct != 0 || !v.TargetMet {
		t.Errorf("fifo-consolidate at $0: %+v, want a cost change of 0 and the target met", v)
	}
}

// TestAggregateTableLayout: one block per window, a blank line between
// two blocks and none before the first.
func TestAggregateTableLayout(t *testing.T) {
	was := Aggregate([]RunResult{
		{Window: "hour 1", Class: ClassLight, Jobs: 3, Seed: 1, Results: []Result{{Policy: "bfd"}}},
		{Window: "hour 2", Jobs: 4, Seed: 7, Results: []Result{{Policy: "bfd"}}},
	})
	var sb strings.Builder
	if err := writeAggregateTable(&sb, was); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(sb.String(), "\n")
	if len(lines) != 8 || lines[0] != "hour 1 (light), 3 jobs, seeds 1" || lines[3] != "" || lines[4] != "hour 2, 4 jobs, seeds 7" || lines[7] != "" {
		t.Errorf("table:\n%s", sb.String())
	}
}

// TestVerdictTablesByHand: the verdict per window in the text table and
// in Markdown. "hour 1" (thesis-like, light): the default at $8 against
// fifo-consolidate's $10 (-20%), one miss each: the target is met.
// "hour 2" (trace-sized): the same numbers carry no target ("-").
// "hour 3": fifo-consolidate did not run: no verdict (the text table says
// so, Markdown leaves the window out).
func TestVerdictTablesByHand(t *testing.T) {
	res := func(cons bool) []Result {
		out := []Result{{Policy: "dap", Default: true, TotalCostUSD: 8, DeadlineMissed: 1}, {Policy: "bfd", TotalCostUSD: 9, DeadlineMissed: 2}}
		if cons {
			out = append(out, Result{Policy: "fifo-consolidate", TotalCostUSD: 10, DeadlineMissed: 1})
		}
		return out
	}
	was := Aggregate([]RunResult{
		{Workload: WorkloadThesis, Window: "hour 1", Class: ClassLight, Seed: 1, Results: res(true)},
		{Workload: WorkloadTrace, Window: "hour 2", Class: ClassLight, Seed: 1, Results: res(true)},
		{Workload: WorkloadThesis, Window: "hour 3", Class: ClassLight, Seed: 1, Results: res(false)},
	})
	var sb strings.Builder
	if err := writeVerdict(&sb, was); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(sb.String(), "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "hour" {
			rows[f[1]] = l
		}
	}
	if l := rows["1"]; !strings.Contains(l, "1/1") || !strings.HasSuffix(strings.TrimSpace(l), "yes (cost <= -15% vs fifo-consolidate, misses <= fifo-consolidate's)") {
		t.Errorf("hour 1: %q", l)
	}
	if l := strings.TrimSpace(rows["2"]); !strings.Contains(l, "-20.0%") || !strings.HasSuffix(l, " -") {
		t.Errorf("hour 2: %q", l)
	}
	if l := rows["3"]; !strings.Contains(l, "(the default or fifo-consolidate did not run)") {
		t.Errorf("hour 3: %q", l)
	}

	sb.Reset()
	if err := writeMarkdown(&sb, was, true); err != nil {
		t.Fatal(err)
	}
	md := sb.String()
	for _, want := range []string{
		"| hour 1 | light | 1/1 | 1/1 | 1/1 | -20.0% | 1.0 / 1.0 | yes |\n",
		"| hour 2 | light | 1/1 | 1/1 | 1/1 | -20.0% | 1.0 / 1.0 | - |\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| hour 3 | light |") {
		t.Errorf("markdown has a verdict for hour 3:\n%s", md)
	}
	sb.Reset()
	if err := writeMarkdown(&sb, was, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sb.String(), "Pareto") || !strings.Contains(sb.String(), "**hour 3 (light), 0 jobs, seeds 1**") {
		t.Errorf("markdown without verdicts:\n%s", sb.String())
	}
}

// TestPreemptionRowsBounds: a base without misses (or at $0) has no
// relative change (0, not a division by zero), and "at most 70% of the
// misses, at most 110% of the cost" includes the bounds even where the
// 1e-9 allowance for rounding vanishes in a large mean (1e9 misses or
// dollars, where a double's spacing is about 1e-7).
func TestPreemptionRowsBounds(t *testing.T) {
	agg := func(name string, missed, cost float64) PolicyAggregate {
		return PolicyAggregate{Policy: name, Runs: 1, Missed: Stat{Mean: missed}, Cost: Stat{Mean: cost}}
	}
	b := 1e9
	was := []WindowAggregate{{Window: "hour 1", Policies: []PolicyAggregate{
		agg("dap", 0, 0), agg("dap+mdf", 2, 5),
		agg("bfd", b, b), agg("bfd+mdf", 0.7*b, 1.1*b),
	}}}
	rows := PreemptionRows(was)
	if len(rows) != 2 {
		t.Fatalf("%+v", rows)
	}
	if r := rows[0]; r.MissesChangePct != 0 || r.CostChangePct != 0 || r.TargetMet {
		t.Errorf("against a base of no misses at $0: %+v, want no change and not met", r)
	}
	if r := rows[1]; !r.TargetMet {
		t.Errorf("70%% of 1e9 misses at 110%% of $1e9: %+v, want met", r)
	}

	var sb strings.Builder
	if err := writePreemption(&sb, was, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "bfd+mdf") {
		t.Errorf("text table:\n%s", sb.String())
	}
	sb.Reset()
	if err := writePreemption(&sb, was[:0], true); err != nil || sb.Len() != 0 {
		t.Errorf("no rows: %v %q", err, sb.String())
	}
}
