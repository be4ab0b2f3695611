package simulate

// Tests of the command's CSV and table outputs and of Scale (issue 33);
// expected values by hand.

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/workload"
)

// TestWriteCSVByHand: a row per policy and run, every column in the
// header's order, numbers as short as they are; with several runs the
// window and seed close each row.
func TestWriteCSVByHand(t *testing.T) {
	r := Result{Policy: "dap", Jobs: 3, TotalCostUSD: 1.5, JCTMeanS: 2.25, JCTP95S: 4, DeadlineJobs: 2, DeadlineViolationPct: 50,
		SchedDelayMeanMS: 0.125, SchedDelayP99MS: 0.5, AgentActiveS: 7200, DeadlineMissed: 1, Completed: 2, Rejected: 1, Unfinished: 0,
		WaitMeanS: 3.5, WaitP95S: 6, MakespanS: 99, Placements: 4, UtilisationPct: 62.5, DeadlineMetPct: 50, DeadlineRejected: 1,
		AdmittedViolationPct: 100, Default: true, BillUSD: 2.75, AlwaysOnUSD: 3.25, Preemptions: 5, LostWorkS: 12.5, LostCPUS: 25,
		Stretch: 1.25, Boots: 7, MeanOnCPUs: 40.5, MeanExecutors: 2.5, EstimateErrorPct: 12.5, ModelMAPEPct: 8.25, ModelMAPERuns: 9,
		AutoSizedJobs: 2, AutoChangedJobs: 1}
	row := []string{"dap", "3", "1.5", "2.25", "4", "2", "50", "0.125", "0.5", "7200", "1", "2", "1", "0", "3.5", "6", "99", "4",
		"62.5", "50", "1", "100", "true", "2.75", "3.25", "5", "12.5", "25",
		"1.25", "7", "40.5", "2.5", "12.5", "8.25", "9", "2", "1"}
	header := []string{"policy", "jobs", "total_cost_usd", "jct_mean_s", "jct_p95_s", "deadline_jobs", "deadline_violation_pct",
		"sched_delay_mean_ms", "sched_delay_p99_ms", "agent_active_s", "deadline_missed", "completed", "rejected", "unfinished",
		"wait_mean_s", "wait_p95_s", "makespan_s", "placements", "utilisation_pct", "deadline_met_pct", "deadline_rejected",
		"admitted_violation_pct", "default", "bill_usd", "always_on_usd", "preemptions", "lost_work_s", "lost_cpu_s",
		"stretch", "boots", "mean_on_cpus", "mean_executors", "estimate_error_pct", "model_mape_pct", "model_mape_runs",
		"auto_sized_jobs", "auto_changed_jobs"}
	runs := []RunResult{{Window: "hour 4", Seed: 2, Results: []Result{r}}, {Window: "hour 5", Seed: 3, Results: []Result{{Policy: "bfd"}}}}
	read := func(multi bool) [][]string {
		var buf bytes.Buffer
		if err := writeCSV(&buf, runs, multi); err != nil {
			t.Fatal(err)
		}
		rows, err := csv.NewReader(&buf).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	join := func(s []string) string { return strings.Join(s, "|") }
	one := read(false)
	if len(one) != 3 || join(one[0]) != join(header) || join(one[1]) != join(row) || one[2][0] != "bfd" || one[2][22] != "false" {
		t.Errorf("one run:\n%q", one)
	}
	many := read(true)
	if len(many) != 3 || join(many[0]) != join(append(append([]string{}, header...), "window", "seed")) ||
		join(many[1]) != join(append(append([]string{}, row...), "hour 4", "2")) || join(many[2][len(row):]) != "hour 5|3" {
		t.Errorf("several runs:\n%q", many)
	}
	if len(csvHeader) != len(header) {
		t.Errorf("csvHeader has %d columns, this test %d", len(csvHeader), len(header))
	}
}

// TestWriteTableByHand: the table's columns, the cost against the first
// policy's (+50.0% for $3 against $2; "-" when the first cost nothing),
// agent-active and lost work in hours.
func TestWriteTableByHand(t *testing.T) {
	rs := []Result{
		{Policy: "bfd", Jobs: 3, TotalCostUSD: 2, BillUSD: 2.5, AlwaysOnUSD: 4, JCTMeanS: 10.25, JCTP95S: 20, WaitMeanS: 1.5, DeadlineJobs: 2,
			DeadlineMissed: 1, DeadlineViolationPct: 50, DeadlineMetPct: 50, SchedDelayMeanMS: 0.25, SchedDelayP99MS: 1.5, AgentActiveS: 5400,
			UtilisationPct: 40, Preemptions: 2, LostWorkS: 1800},
		{Policy: "dap", Default: true, Jobs: 3, TotalCostUSD: 3, AgentActiveS: 360, LostWorkS: 36},
		{Policy: "exact", Jobs: 3, TotalCostUSD: 1},
	}
	var buf bytes.Buffer
	if err := writeTable(&buf, rs, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	want := [][]string{
		{"policy", "jobs", "cost", "$", "vs", "bfd", "bill", "$", "always-on", "$", "JCT", "mean", "s", "JCT", "p95", "s", "wait", "mean", "s",
			"deadline", "jobs", "missed", "violations", "%", "met", "%", "(all)", "sched", "mean", "ms", "sched", "p99", "ms", "agent-active", "h",
			"utilisation", "%", "evicted", "lost", "work", "h"},
		{"bfd", "3", "2.00", "+0.0%", "2.50", "4.00", "10.2", "20.0", "1.5", "2", "1", "50.0", "50.0", "0.250", "1.500", "1.5", "40.0", "2", "0.50"},
		// No deadline job: violations and met are "-", not 0.0 (a met 0%
		// read as every deadline missed).
		{"dap", "(default)", "3", "3.00", "+50.0%", "0.00", "0.00", "0.0", "0.0", "0.0", "0", "0", "-", "-", "0.000", "0.000", "0.1", "0.0", "0", "0.01"},
		{"exact", "3", "1.00", "-50.0%", "0.00", "0.00", "0.0", "0.0", "0.0", "0", "0", "-", "-", "0.000", "0.000", "0.0", "0.0", "0", "0.00"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("line %d:\n got %q\nwant %q", i, got, w)
		}
	}
	// The first policy cost nothing: no ratio.
	buf.Reset()
	if err := writeTable(&buf, []Result{{Policy: "bfd"}, {Policy: "dap", TotalCostUSD: 1}}, false); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	for i, l := range lines[1:] {
		if f := strings.Fields(l); len(f) < 4 || f[3] != "-" {
			t.Errorf("line %d: %q, want \"-\" against a first policy of $0", i+1, l)
		}
	}
}

// TestScaleByHand: every byte count times k, truncated; at or beyond the
// largest int64 it saturates (2^62 x 2 is exactly 2^63, one past it);
// k = 1 is a copy.
func TestScaleByHand(t *testing.T) {
	in := []workload.TraceJob{{ID: "a", InputBytes: 3, ShuffleBytes: 10, OutputBytes: 1 << 62}}
	got := Scale(in, 2.5)
	if g := got[0]; g.ID != "a" || g.InputBytes != 7 || g.ShuffleBytes != 25 || g.OutputBytes != math.MaxInt64 {
		t.Errorf("x 2.5: %+v", g)
	}
	got = Scale(in, 2)
	if g := got[0]; g.InputBytes != 6 || g.ShuffleBytes != 20 || g.OutputBytes != math.MaxInt64 {
		t.Errorf("x 2: %+v", g)
	}
	got = Scale(in, 1)
	if got[0] != in[0] {
		t.Errorf("x 1: %+v", got[0])
	}
	got[0].InputBytes = 99
	if in[0].InputBytes != 3 {
		t.Error("Scale changed its input")
	}
}
