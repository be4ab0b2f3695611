package simulate

// Tests of `sparkpack simulate`'s flag handling and wiring that run fast
// (issue 33: -short skips TestDocFigures, which ran most of command.go).
// Every expected value is derived by hand in the comments.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/workload"
)

// tinyTrace writes a trace of n empty jobs, one every 10 s from second 5,
// and returns its path.
func tinyTrace(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		// id, submit s, gap s, input, shuffle, output bytes.
		fmt.Fprintf(&b, "t%d\t%d\t10\t1000\t1000\t1000\n", i, 5+10*i)
	}
	p := filepath.Join(t.TempDir(), "tiny.tsv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinyJSON runs the command on a tiny trace with bfd alone and returns its
// JSON results.
func tinyJSON(t *testing.T, args ...string) ([]Result, error) {
	t.Helper()
	base := []string{"--trace", tinyTrace(t, 3), "--quiet", "--policies", "bfd", "--format", "json"}
	out, _, err := runCommand(t, append(base, args...)...)
	if err != nil {
		return nil, err
	}
	var rs []Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return rs, nil
}

// TestCommandFlagBoundsByHand: each bound of the flags' checks, on both
// sides: the values the help allows run, the ones just outside are refused
// with an error naming the flag.
func TestCommandFlagBoundsByHand(t *testing.T) {
	accepted := [][]string{
		{"--estimates", "user", "--estimate-error", "0"},
		{"--estimates", "user", "--estimate-error", "5"},
		{"--run-noise", "0"},
		{"--run-noise", "5"},
		{"--jobs", "0"},
		{"--deadline-fraction", "0"},
		{"--deadline-fraction", "1"},
		{"--preemption", "mdf", "--preempt-max-share", "0.001"},
		{"--preemption", "mdf", "--preempt-max-share", "1"},
		{"--preemption", "mdf", "--max-preemptions", "1"},
		{"--power-off-after", "1ns", "--warm-pool", "--miss-cost", "0.001"},
		{"--power-off-after", "1ns", "--boot-time", "1ns"},
		{"--preemption", "mdf", "--preempt-protect", "-1s"},
		{"--promote-after", "-1s"},
		{"--ilp-time-limit", "1ns"},
		{"--seeds", "3"},
		{"--sample", "1"},
	}
	for _, args := range accepted {
		if _, err := tinyJSON(t, args...); err != nil {
			t.Errorf("%v refused: %v", args, err)
		}
	}
	refused := []struct {
		args []string
		want string
	}{
		{[]string{"--estimate-error", "5.001"}, "--estimate-error"},
		{[]string{"--estimate-error", "-0.001"}, "--estimate-error"},
		{[]string{"--run-noise", "5.001"}, "--run-noise"},
		{[]string{"--run-noise", "-0.001"}, "--run-noise"},
		{[]string{"--run-noise", "NaN"}, "--run-noise"},
		{[]string{"--jobs", "-1"}, "--jobs -1"},
		{[]string{"--seed", "2", "--seeds", "1-2"}, "--seed or --seeds"},
		{[]string{"--seeds", "x"}, "--seeds"},
		{[]string{"--deadline-fraction", "1.001"}, "--deadline-fraction"},
		{[]string{"--deadline-fraction", "NaN"}, "--deadline-fraction"},
		{[]string{"--slack", "-1"}, "--slack"},
		{[]string{"--slack", "NaN"}, "--slack"},
		{[]string{"--slack", "+Inf"}, "--slack"},
		{[]string{"--scale", "NaN"}, "--scale"},
		{[]string{"--scale", "+Inf"}, "--scale"},
		{[]string{"--preempt-max-share", "-0.001"}, "--preempt-max-share"},
		{[]string{"--preempt-max-share", "1.001"}, "--preempt-max-share"},
		{[]string{"--preempt-max-share", "NaN"}, "--preempt-max-share"},
		{[]string{"--max-preemptions", "-1"}, "--max-preemptions"},
		// An explicit zero that Options would read as the default
		// (these ran with 0.5, 3 evictions, $2, 60 s, 1m, 200ms, 15m).
		{[]string{"--preemption", "mdf", "--preempt-max-share", "0"}, "--preempt-max-share 0 not in (0, 1] (0 ran with the default 0.5)"},
		{[]string{"--preemption", "mdf", "--max-preemptions", "0"}, "--max-preemptions 0 must be >= 1"},
		{[]string{"--power-off-after", "1ns", "--warm-pool", "--miss-cost", "0"}, "--miss-cost 0 must be > 0"},
		{[]string{"--power-off-after", "1m", "--boot-time", "0"}, "--boot-time 0s must be > 0 (0 ran with the default 60s"},
		{[]string{"--power-off-after", "1m", "--boot-time", "-1s"}, "--boot-time -1s must be > 0"},
		{[]string{"--preemption", "mdf", "--preempt-protect", "0"}, "--preempt-protect 0s is read as the default 1m"},
		{[]string{"--ilp-time-limit", "0"}, "--ilp-time-limit 0s must be > 0"},
		{[]string{"--promote-after", "0"}, "--promote-after 0s is read as the default 15m"},
		{[]string{"--warm-pool", "--power-off-after", "0"}, "--warm-pool needs --power-off-after"},
		// A negative one is refused as such (it ran as 0, power off).
		{[]string{"--warm-pool", "--power-off-after", "-1s"}, "--power-off-after -1s must be >= 0"},
		{[]string{"--warm-pool", "--power-off-after", "1m", "--miss-cost", "-0.001"}, "--miss-cost"},
		{[]string{"--warm-pool", "--power-off-after", "1m", "--miss-cost", "+Inf"}, "--miss-cost"},
		{[]string{"--teams", "/nonexistent/teams.yaml"}, "--teams"},
		{[]string{"--team-mix", "a=0"}, "--team-mix"},
		{[]string{"--workload", "magic"}, "--workload"},
		{[]string{"--policies", " , "}, "--policies is empty"},
		{[]string{"--preemption", " , "}, "--preemption is empty"},
		{[]string{"--preemption", "random"}, "--preemption"},
		{[]string{"--hours", "0,1", "--chart", filepath.Join(t.TempDir(), "c.svg")}, "--chart"},
		{[]string{"--seeds", "1-2", "--chart", filepath.Join(t.TempDir(), "c.svg")}, "--chart"},
		{[]string{"--job-log", filepath.Join(t.TempDir(), "no", "such", "dir.csv")}, "--job-log"},
		{[]string{"--mix", "../examples/mixes/iterative-graph.json", "--workload", "trace"}, "--mix"},
	}
	for _, c := range refused {
		_, err := tinyJSON(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
}

// TestChartTitleByHand: the chart's subtitle names the run, and says when
// the jobs were sampled and the data scaled.
func TestChartTitleByHand(t *testing.T) {
	f := flags{workload: "thesis", fraction: 1, slack: 1.5, seed: 7, scale: 1}
	if got, want := chartTitle(5, 0, time.Hour, "one", f),
		"5 thesis jobs, trace [00:00:00, 01:00:00), one, deadline fraction 1, slack 1.5, seed 7"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
	f.sample, f.scale = 3, 2.5
	if got, want := chartTitle(5, 0, time.Hour, "one", f),
		"5 thesis jobs, trace [00:00:00, 01:00:00), one, deadline fraction 1, slack 1.5, seed 7 (sampled across the window), data x 2.5"; got != want {
		t.Errorf("title %q, want %q", got, want)
	}
}

// TestScaleWorkloadByHand: every byte count times k, nothing else.
func TestScaleWorkloadByHand(t *testing.T) {
	in := []workload.Job{{Submit: time.Minute, Profile: workload.Profile{JobID: "a", InputBytes: 100, ShuffleBytes: 200, OutputBytes: 300, Executors: 4}}}
	out := scaleWorkload(in, 2.5)
	p := out[0].Profile
	if p.InputBytes != 250 || p.ShuffleBytes != 500 || p.OutputBytes != 750 || p.Executors != 4 || p.JobID != "a" || out[0].Submit != time.Minute {
		t.Errorf("scaled %+v", out[0])
	}
	if in[0].Profile.InputBytes != 100 {
		t.Errorf("the input was changed: %+v", in[0])
	}
}

// TestCommandThesisDefaultsByHand: --workload thesis gives every job a
// deadline (fraction 1) at slack 1.5 unless the flags say otherwise; the
// chart's subtitle shows both.
func TestCommandThesisDefaultsByHand(t *testing.T) {
	trace := tinyTrace(t, 3)
	run := func(args ...string) (Result, string) {
		chart := filepath.Join(t.TempDir(), "c.svg")
		out, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet", "--policies", "bfd", "--format", "json",
			"--workload", "thesis", "--chart", chart}, args...)...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		var rs []Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		svg, err := os.ReadFile(chart)
		if err != nil {
			t.Fatal(err)
		}
		return rs[0], string(svg)
	}
	r, svg := run()
	if r.Jobs != 3 || r.DeadlineJobs != 3 || !strings.Contains(svg, "deadline fraction 1, slack 1.5,") {
		t.Errorf("defaults: %d jobs, %d with a deadline; chart %q", r.Jobs, r.DeadlineJobs, subtitle(svg))
	}
	r, svg = run("--deadline-fraction", "0", "--slack", "3")
	if r.DeadlineJobs != 0 || !strings.Contains(svg, "deadline fraction 0, slack 3,") {
		t.Errorf("set: %d with a deadline; chart %q", r.DeadlineJobs, subtitle(svg))
	}
	// The trace workload keeps the trace defaults (0.5 and 2).
	_, svg = run("--workload", "trace")
	if !strings.Contains(svg, "deadline fraction 0.5, slack 2,") {
		t.Errorf("trace: chart %q", subtitle(svg))
	}
}

// subtitle is the chart's second text line, for error messages.
func subtitle(svg string) string {
	if i := strings.Index(svg, "deadline fraction"); i >= 0 {
		return svg[max(0, i-80):min(len(svg), i+60)]
	}
	return "(no subtitle)"
}

// TestCommandScaleThesis: --scale multiplies the thesis jobs' data too
// (after the mix drew them): at 4 x the data the same jobs run longer.
func TestCommandScaleThesis(t *testing.T) {
	one, err := tinyJSON(t, "--workload", "thesis")
	if err != nil {
		t.Fatal(err)
	}
	four, err := tinyJSON(t, "--workload", "thesis", "--scale", "4")
	if err != nil {
		t.Fatal(err)
	}
	if !(four[0].JCTMeanS > one[0].JCTMeanS) {
		t.Errorf("JCT mean %g s at 4 x the data, %g s at 1 x", four[0].JCTMeanS, one[0].JCTMeanS)
	}
}

// TestCommandRunsJSONByHand: with several seeds the JSON is one object per
// run, with its window, hour, class (3 jobs in hour 0: light, <= 150) and
// seed; the default policy is marked.
func TestCommandRunsJSONByHand(t *testing.T) {
	out, _, err := runCommand(t, "--trace", tinyTrace(t, 3), "--quiet", "--policies", "bfd,dap", "--format", "json",
		"--hour", "0", "--seeds", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	var runs []RunResult
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2:\n%s", len(runs), out)
	}
	for k, run := range runs {
		if run.Window != "hour 0" || run.Hour != 0 || run.Class != ClassLight || run.Seed != uint64(k+1) || run.Jobs != 3 || run.Workload != WorkloadTrace {
			t.Errorf("run %d: %+v", k, run)
		}
		if len(run.Results) != 2 || run.Results[0].Policy != "bfd" || run.Results[0].Default || run.Results[1].Policy != "dap" || !run.Results[1].Default {
			t.Errorf("run %d results: %+v", k, run.Results)
		}
	}
	// Without an hour: no class.
	out, _, err = runCommand(t, "--trace", tinyTrace(t, 3), "--quiet", "--policies", "bfd", "--format", "json", "--seeds", "1,2")
	if err != nil {
		t.Fatal(err)
	}
	runs = nil
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	if runs[0].Hour != -1 || runs[0].Class != "" || runs[0].Window != "[00:00:00, end)" {
		t.Errorf("whole trace: %+v", runs[0])
	}
}

// TestWriteEstimatesByHand: per policy over the runs, the mean estimate
// error, and the model's error weighted by its runs: dap (10% + 20%) / 2 =
// 15.0%, MAPE (10% x 2 + 40% x 1) / 3 = 20.0% over 3 runs; bfd without
// model runs has no MAPE part.
func TestWriteEstimatesByHand(t *testing.T) {
	runs := []RunResult{
		{Results: []Result{{Policy: "dap", EstimateErrorPct: 10, ModelMAPEPct: 10, ModelMAPERuns: 2}, {Policy: "bfd", EstimateErrorPct: 30}}},
		{Results: []Result{{Policy: "dap", EstimateErrorPct: 20, ModelMAPEPct: 40, ModelMAPERuns: 1}, {Policy: "bfd", EstimateErrorPct: 31}}},
	}
	var buf strings.Builder
	writeEstimates(&buf, runs, "learned")
	want := "\nlearned estimates:\n" +
		"  dap              mean estimate error 15.0%; model MAPE after 10 runs of a signature 20.0% (3 runs)\n" +
		"  bfd              mean estimate error 30.5%\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}
}

// TestPolicySpecsByHand: --policies in order without repeats or blanks;
// --compare-default adds the baselines and the default (dap) after them,
// or is them without --policies; each policy once per --preemption entry
// (none keeps its name).
func TestPolicySpecsByHand(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policies", "exact, bfd,,exact"}, "exact,bfd"},
		{[]string{"--compare-default"}, "fifo-spread,fifo-consolidate,morpheus,bfd,dap"},
		{[]string{"--compare-default", "--policies", "exact,bfd"}, "exact,bfd,fifo-spread,fifo-consolidate,morpheus,dap"},
		{[]string{"--policies", "bfd,dap", "--preemption", "mdf, none,mdf"}, "bfd+mdf,bfd,dap+mdf,dap"},
	} {
		f, _, set := parsedFlags(t, c.args...)
		specs, err := f.policySpecs(set)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		var names []string
		for _, s := range specs {
			names = append(names, s.Name)
		}
		if strings.Join(names, ",") != c.want {
			t.Errorf("%v: %v, want %s", c.args, names, c.want)
		}
	}
}

// TestCommandProgressEnds: the progress on stderr has the first report
// (the first is never throttled: nothing was printed before it) and the
// last (done == total is never throttled), whatever the real time taken;
// --quiet has none.
func TestCommandProgressEnds(t *testing.T) {
	trace := tinyTrace(t, 3)
	_, stderr, err := runCommand(t, "--trace", trace, "--policies", "bfd")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"simulate: bfd              virtual 00:00:05  0/3 jobs done\n", "  3/3 jobs done\n", "simulate: bfd              done in "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if _, stderr, err := runCommand(t, "--trace", trace, "--policies", "bfd", "--quiet"); err != nil || stderr != "" {
		t.Errorf("--quiet: %v %q", err, stderr)
	}
}

// TestCommandProgressLastLineOnce: when the last job ends on a multiple of
// 50 jobs, the run's loop reports it and the end of the run used to report
// the very same line again ("50/50 jobs done" twice).
func TestCommandProgressLastLineOnce(t *testing.T) {
	_, stderr, err := runCommand(t, "--trace", tinyTrace(t, 50), "--policies", "bfd")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stderr, "  50/50 jobs done\n"); n != 1 {
		t.Errorf("the final progress line is printed %d times, want once:\n%s", n, stderr)
	}
}

// TestCommandJobLogFlushError: a job log whose writes fail (/dev/full: no
// space left) is an error of the command, though the rows were buffered
// until the end.
func TestCommandJobLogFlushError(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	_, err := tinyJSON(t, "--job-log", "/dev/full")
	if err == nil || !strings.Contains(err.Error(), "--job-log") {
		t.Errorf("%v, want a --job-log error", err)
	}
}

// TestCommandMarkdownVerdicts: --format markdown writes the default
// policy's verdicts only with --compare-default, and the preemption table
// after the policies' when a policy ran with and without preemption.
func TestCommandMarkdownVerdicts(t *testing.T) {
	trace := tinyTrace(t, 3)
	const verdicts = "against the baselines"
	out, _, err := runCommand(t, "--trace", trace, "--quiet", "--policies", "bfd,dap", "--format", "markdown")
	if err != nil || strings.Contains(out, verdicts) || !strings.Contains(out, "| bfd |") {
		t.Errorf("without --compare-default: %v\n%s", err, out)
	}
	out, _, err = runCommand(t, "--trace", trace, "--quiet", "--compare-default", "--format", "markdown")
	if err != nil || !strings.Contains(out, verdicts) {
		t.Errorf("with --compare-default: %v\n%s", err, out)
	}
	out, _, err = runCommand(t, "--trace", trace, "--quiet", "--policies", "dap", "--preemption", "none,mdf", "--format", "markdown")
	if i := strings.Index(out, "Preemption against the same policy without it"); err != nil || i < 0 || i < strings.Index(out, "| dap+mdf |") {
		t.Errorf("with preemption: %v\n%s", err, out)
	}
}

// TestCommandAppTypeReachesPlacement: --app-type hidden runs as Run with
// HideAppType (dap then has no application type to pack by), known as Run
// without; the two differ on these 30 thesis jobs (on the first 20 they
// cost the same since dap's fewestRest candidate of 2026-11-27).
func TestCommandAppTypeReachesPlacement(t *testing.T) {
	trace := tracePath(t)
	command := func(appType string) float64 {
		out, _, err := runCommand(t, "--trace", trace, "--quiet", "--workload", "thesis", "--hour", "0", "--jobs", "30",
			"--policies", "dap", "--app-type", appType, "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		var rs []Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		return rs[0].TotalCostUSD
	}
	dap, _ := LookupPolicy("dap")
	wl := thesisHour(t, 0, 30, 1)
	run := func(hide bool) float64 {
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: clusterspec.Thesis14(), Policy: dap, DeadlineFraction: ThesisDeadlineFraction,
			Slack: ThesisSlack, Seed: 1, BootTime: time.Minute, Estimates: EstimatesOracle, EstimateError: 0.5, HideAppType: hide})
		if err != nil {
			t.Fatal(err)
		}
		return roundedResult(r).TotalCostUSD // as the JSON prints it
	}
	known, hidden := run(false), run(true)
	if known == hidden {
		t.Fatalf("the same cost $%g with known and hidden application types", known)
	}
	if c := command(AppTypeKnown); c != known {
		t.Errorf("--app-type known: $%g, Run with known types $%g (hidden $%g)", c, known, hidden)
	}
	if c := command(AppTypeHidden); c != hidden {
		t.Errorf("--app-type hidden: $%g, Run with hidden types $%g (known $%g)", c, hidden, known)
	}
}
