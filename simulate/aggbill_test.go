package simulate

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestAggregateTablesShowTheBillWithPowerOff: with --power-off-after and
// several seeds or hours, the aggregated text and Markdown tables showed
// the core's meter only; the bill, what power management is about, was
// in JSON and CSV alone. By hand: bills $1 and $3 over two seeds are
// 2.00 ± 1.41 (sample SD), always-on $5 and $5 are 5.00 ± 0.00. Without
// power management the columns stay out (the bill is the always-on bill).
func TestAggregateTablesShowTheBillWithPowerOff(t *testing.T) {
	runs := func(power bool) []WindowAggregate {
		return Aggregate([]RunResult{
			{Window: "hour 1", Seed: 1, PowerOff: power, Results: []Result{{Policy: "bfd", TotalCostUSD: 0.5, BillUSD: 1, AlwaysOnUSD: 5}}},
			{Window: "hour 1", Seed: 2, PowerOff: power, Results: []Result{{Policy: "bfd", TotalCostUSD: 0.5, BillUSD: 3, AlwaysOnUSD: 5}}},
		})
	}
	var text, md strings.Builder
	if err := writeAggregateTable(&text, runs(true)); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, runs(true), false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if len(lines) < 3 || !strings.Contains(lines[1], "bill $  always-on $") ||
		!strings.Contains(lines[2], "0.50 ± 0.00  2.00 ± 1.41  5.00 ± 0.00") {
		t.Errorf("text table without the bill:\n%s", text.String())
	}
	if !strings.Contains(md.String(), "| policy | cost $ | bill $ | always-on $ | deadlines missed |") ||
		!strings.Contains(md.String(), "|---|---:|---:|---:|---:|") ||
		!strings.Contains(md.String(), "| bfd | 0.50 ± 0.00 | 2.00 ± 1.41 | 5.00 ± 0.00 | 0.0 ± 0.0 |") {
		t.Errorf("markdown without the bill:\n%s", md.String())
	}
	text.Reset()
	md.Reset()
	if err := writeAggregateTable(&text, runs(false)); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, runs(false), false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "bill") || strings.Contains(md.String(), "bill") {
		t.Errorf("bill columns without power management:\n%s\n%s", text.String(), md.String())
	}
}

// TestCommandAggregateShowsTheBill: the command marks its runs with
// power management, so `--seeds 1,2 --power-off-after 2m` prints the
// bill, and without --power-off-after it does not.
func TestCommandAggregateShowsTheBill(t *testing.T) {
	base := []string{"--trace", tinyTrace(t, 3), "--quiet", "--policies", "bfd", "--seeds", "1,2"}
	out, _, err := runCommand(t, append(base, "--power-off-after", "2m")...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "bill $") {
		t.Errorf("--power-off-after, two seeds: no bill in\n%s", out)
	}
	out, _, err = runCommand(t, base...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "bill $") {
		t.Errorf("no power management: a bill column in\n%s", out)
	}
}

// TestAggregateTablesWithoutDeadlineJobs: a policy whose runs had no
// deadline job (--deadline-fraction 0) showed "0.0 ± 0.0" met, which
// reads as every deadline missed; it shows "-" (text and Markdown). With
// deadline jobs, the shares as before: 1 of 2 met is 50.0 met, 50.0 violated.
func TestAggregateTablesWithoutDeadlineJobs(t *testing.T) {
	was := Aggregate([]RunResult{{Window: "hour 1", Seed: 1, Results: []Result{
		{Policy: "bfd", Jobs: 3},
		{Policy: "dap", Jobs: 3, DeadlineJobs: 2, DeadlineMissed: 1, DeadlineMetPct: 50, AdmittedViolationPct: 50},
	}}})
	var text, md strings.Builder
	if err := writeAggregateTable(&text, was); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, was, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text.String(), "\n")
	if f := strings.Fields(lines[2]); len(f) < 9 || f[0] != "bfd" || f[7] != "-" || f[8] != "-" {
		t.Errorf("text, no deadline job: %q", lines[2])
	}
	if !strings.Contains(lines[3], "50.0 ± 0.0               50.0 ± 0.0") {
		t.Errorf("text, deadline jobs: %q", lines[3])
	}
	if !strings.Contains(md.String(), "| bfd | 0.00 ± 0.00 | 0.0 ± 0.0 | - | - |") ||
		!strings.Contains(md.String(), "| dap | 0.00 ± 0.00 | 1.0 ± 0.0 | 50.0 ± 0.0 | 50.0 ± 0.0 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

// TestCSVHasEveryJSONNumber: every scalar key of a Result's JSON is a CSV
// column (CSV lacked stretch, the warm pool's boots and on-cpus, and the
// learned estimates' errors: the same run read differently by format).
func TestCSVHasEveryJSONNumber(t *testing.T) {
	rt := reflect.TypeFor[Result]()
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		k := rt.Field(i).Type.Kind()
		if name == "" || name == "-" || k == reflect.Slice || k == reflect.Struct {
			continue
		}
		if !slices.Contains(csvHeader, name) {
			t.Errorf("JSON key %q is no CSV column", name)
		}
	}
}

// TestAutoSizedInTheTable: with --executors auto the text output says how
// many jobs the model sized and changed (it was in JSON and CSV only). By
// hand: runs of 10 jobs (4 sized, 1 changed, mean 3) and 30 jobs (6
// sized, 2 changed, mean 5): 10 of 40 sized, 3 changed, mean (30+150)/40
// = 4.50.
func TestAutoSizedInTheTable(t *testing.T) {
	var sb strings.Builder
	writeAutoSized(&sb, []RunResult{
		{Seed: 1, Results: []Result{{Policy: "dap", Jobs: 10, AutoSizedJobs: 4, AutoChangedJobs: 1, MeanExecutors: 3}}},
		{Seed: 2, Results: []Result{{Policy: "dap", Jobs: 30, AutoSizedJobs: 6, AutoChangedJobs: 2, MeanExecutors: 5}}},
	})
	if want := "dap              10 of 40 jobs sized by the model, 3 of them changed from the user's count; mean executors 4.50"; !strings.Contains(sb.String(), want) {
		t.Errorf("got\n%s\nwant %q", sb.String(), want)
	}
	trace := tinyTrace(t, 3)
	out, _, err := runCommand(t, "--trace", trace, "--quiet", "--policies", "bfd", "--executors", "auto")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "auto executors (--executors auto):\n  bfd ") {
		t.Errorf("--executors auto: no auto-sizing section in\n%s", out)
	}
	if out, _, _ = runCommand(t, "--trace", trace, "--quiet", "--policies", "bfd"); strings.Contains(out, "auto executors") {
		t.Errorf("users' counts: an auto-sizing section in\n%s", out)
	}
}
