package simulate

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Tests of simulate's output as an operator comparing policies meets it
// (2026-11-27): flags that accepted nonsense, errors that did not say what
// to do, and the single-run table under power management.

// TestCommandRefusesNegativeDurations: a negative --power-off-after or
// --not-before-lead ran as 0 (power management off, no lead) and said
// nothing; it is refused, naming the flag and what 0 means.
func TestCommandRefusesNegativeDurations(t *testing.T) {
	trace := tracePath(t)
	for flag, means := range map[string]string{
		"--power-off-after": "keeps every agent on",
		"--not-before-lead": "submits every job at its arrival",
	} {
		_, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "0", "--jobs", "3", "--policies", "bfd", flag, "-1m")
		if err == nil || !strings.Contains(err.Error(), flag+" -1m0s must be >= 0") || !strings.Contains(err.Error(), means) {
			t.Errorf("%s -1m: %v, want it refused, saying what 0 does", flag, err)
		}
		if _, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "0", "--jobs", "3", "--policies", "bfd", flag, "0"); err != nil {
			t.Errorf("%s 0: %v", flag, err)
		}
	}
}

// TestCommandStrayArgumentSaysWhatToDo: parsing stops at the first
// argument that is not a flag, so the flags after it were silently not
// read; the error names that argument alone and says so.
func TestCommandStrayArgumentSaysWhatToDo(t *testing.T) {
	_, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "stray", "--policies", "bfd")
	if err == nil || !strings.Contains(err.Error(), `unexpected argument "stray"`) || !strings.Contains(err.Error(), "flags after it were not read") ||
		strings.Contains(err.Error(), "--policies") {
		t.Errorf("stray argument: %v", err)
	}
}

// TestCommandOffsetOutOfRangeSaysTheRange: --from -5 was `"-5" out of
// range`, without the range.
func TestCommandOffsetOutOfRangeSaysTheRange(t *testing.T) {
	for _, arg := range []string{"--from", "--to"} {
		_, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", arg, "-5")
		if err == nil || !strings.Contains(err.Error(), "want seconds from 0 to 315360000 into the trace, or a duration such as 1h") {
			t.Errorf("%s -5: %v", arg, err)
		}
	}
}

// TestCompareDefaultWarningNamesTheCSVColumn: with --format csv the
// default policy is marked in the default column, not by a JSON key.
func TestCompareDefaultWarningNamesTheCSVColumn(t *testing.T) {
	for format, want := range map[string]string{"csv": "true in the default column", "json": `"default": true`} {
		_, stderr, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "--jobs", "3", "--compare-default", "--format", format)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(stderr, "--format "+format+" lists the runs, the default policy's marked "+want) {
			t.Errorf("--format %s: %q", format, stderr)
		}
	}
}

// TestWriteTableBillVsUnderPowerOff: with power management the operator
// pays the bill, so the one-run table gives the bill against the first
// policy's too ("bill vs"), next to the meter's "vs": bfd $2 meter, $4
// bill; dap $1 (-50.0%) and $5 (+25.0%). Without power management the
// table is unchanged (the bill is the always-on bill).
func TestWriteTableBillVsUnderPowerOff(t *testing.T) {
	rs := []Result{{Policy: "bfd", TotalCostUSD: 2, BillUSD: 4, AlwaysOnUSD: 8}, {Policy: "dap", TotalCostUSD: 1, BillUSD: 5, AlwaysOnUSD: 8}}
	var buf bytes.Buffer
	if err := writeTable(&buf, rs, true); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if f := strings.Fields(lines[0]); strings.Join(f[:13], " ") != "policy jobs cost $ vs bfd bill $ bill vs bfd always-on $" {
		t.Errorf("header: %q", lines[0])
	}
	if f := strings.Fields(lines[2]); len(f) < 7 || strings.Join(f[:7], " ") != "dap 0 1.00 -50.0% 5.00 +25.0% 8.00" {
		t.Errorf("dap: %q", lines[2])
	}
	buf.Reset()
	if err := writeTable(&buf, rs, false); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "bill vs") {
		t.Errorf("always on: %q", buf.String())
	}
	out, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--workload", "thesis", "--hour", "0", "--sample", "5",
		"--policies", "fifo-consolidate,dap", "--power-off-after", "2m")
	if err != nil || !strings.Contains(out, "bill vs fifo-consolidate") {
		t.Errorf("--power-off-after: %v\n%s", err, out)
	}
}

// TestSummariesAlignLongPolicyNames: the estimates and auto-sizing lines
// padded names to 16 characters, so that dap+srt's figures and
// fifo-consolidate+srt's (20 characters) started at different columns.
func TestSummariesAlignLongPolicyNames(t *testing.T) {
	runs := []RunResult{{Results: []Result{
		{Policy: "dap", Jobs: 2, EstimateErrorPct: 10, AutoSizedJobs: 1, MeanExecutors: 2},
		{Policy: "fifo-consolidate+srt", Jobs: 2, EstimateErrorPct: 20, AutoSizedJobs: 1, MeanExecutors: 2},
	}}}
	for name, write := range map[string]func(*bytes.Buffer){
		"estimates":  func(b *bytes.Buffer) { writeEstimates(b, runs, "user") },
		"auto sized": func(b *bytes.Buffer) { writeAutoSized(b, runs) },
	} {
		var buf bytes.Buffer
		write(&buf)
		col := -1
		for _, l := range strings.Split(buf.String(), "\n") {
			if !strings.HasPrefix(l, "  ") {
				continue
			}
			// Where the figures start: after the name and its padding.
			rest := strings.TrimLeft(l, " ")
			i := strings.Index(rest, " ")
			at := len(l) - len(rest) + i + len(rest[i:]) - len(strings.TrimLeft(rest[i:], " "))
			if col >= 0 && at != col {
				t.Errorf("%s: figures at column %d and %d:\n%s", name, col, at, buf.String())
			}
			col = at
		}
		if col < 0 {
			t.Errorf("%s: no line:\n%s", name, buf.String())
		}
	}
}

// TestJobLogJSONNameWarns: only a name ending in .jsonl gives JSON lines;
// --job-log jobs.json was written as CSV without a word.
func TestJobLogJSONNameWarns(t *testing.T) {
	dir := t.TempDir()
	for name, warns := range map[string]bool{"jobs.json": true, "jobs.NDJSON": true, "jobs.jsonl": false, "jobs.csv": false, "jobs": false} {
		_, stderr, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "--jobs", "3", "--policies", "bfd", "--job-log", dir+"/"+name)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr, "is written as CSV (JSON lines only for a name ending in .jsonl)"); got != warns {
			t.Errorf("--job-log %s: warning %v, want %v: %q", name, got, warns, stderr)
		}
	}
}

// TestHelpSeedAndHour: --seed draws more than the deadline jobs (it
// said "seed of the random choice of deadline jobs"), --hour's default,
// shown as "(default -1)", says what -1 is, and --compare-default says
// what it compares.
func TestHelpSeedAndHour(t *testing.T) {
	var f flags
	fs := newFlagSet(&f)
	if u := fs.Lookup("seed").Usage; !strings.Contains(u, "--sample") || !strings.Contains(u, "--run-noise") || !strings.Contains(u, "thesis-like") {
		t.Errorf("--seed: %q", u)
	}
	if u := fs.Lookup("compare-default").Usage; !strings.Contains(u, "with --power-off-after, on the bill") {
		t.Errorf("--compare-default: %q", u)
	}
	if u := fs.Lookup("hour").Usage; !strings.Contains(u, "-1, the default: the whole trace") {
		t.Errorf("--hour: %q", u)
	}
}

// TestCompareDefaultNeedsARunWithoutPreemption: with --preemption srt
// alone every policy ran as "<name>+srt", and the verdict said "the
// default or fifo-consolidate did not run" after running them all; it is
// refused up front, saying to add none. With none in the list the
// verdict is there.
func TestCompareDefaultNeedsARunWithoutPreemption(t *testing.T) {
	trace := tracePath(t)
	_, _, err := runCommand(t, "--trace", trace, "--quiet", "--workload", "thesis", "--hour", "0", "--jobs", "3", "--compare-default", "--preemption", "srt")
	if err == nil || !strings.Contains(err.Error(), "add none (e.g. --preemption none,srt)") {
		t.Errorf("--compare-default --preemption srt: %v", err)
	}
	out, _, err := runCommand(t, "--trace", trace, "--quiet", "--workload", "thesis", "--hour", "0", "--jobs", "3", "--compare-default", "--preemption", "none,srt")
	if err != nil || strings.Contains(out, "did not run") || !strings.Contains(out, "Pareto-better runs") {
		t.Errorf("--compare-default --preemption none,srt: %v\n%s", err, out)
	}
}

// TestTextTablesHaveNoTrailingSpaces: the verdict, preemption and teams
// tables padded their last column (and the verdict's "did not run" row
// six empty columns), so every line ended in spaces, up to 60, that
// stuck to a copy into an issue or a doc.
func TestTextTablesHaveNoTrailingSpaces(t *testing.T) {
	out, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--workload", "thesis", "--hour", "0", "--sample", "6",
		"--compare-default", "--preemption", "none,srt", "--team-mix", "a=0.5,b=0.5")
	if err != nil {
		t.Fatal(err)
	}
	was := Aggregate([]RunResult{{Workload: WorkloadThesis, Window: "hour 3", Class: ClassLight, Seed: 1, Results: []Result{{Policy: "bfd"}}}})
	var sb strings.Builder
	if err := writeVerdict(&sb, was); err != nil {
		t.Fatal(err)
	}
	out += sb.String()
	for _, want := range []string{"Pareto-better runs", "preemption against the same policy", "By team", "did not run"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for i, l := range strings.Split(out, "\n") {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("line %d ends in spaces: %q", i+1, l)
		}
	}
}

// TestTeamMixWarnsWhereTeamsAreNotPrinted: --format csv and markdown have
// no by-team results; with --team-mix they printed none and said nothing.
func TestTeamMixWarnsWhereTeamsAreNotPrinted(t *testing.T) {
	for format, warns := range map[string]bool{"csv": true, "markdown": true, "json": false, "table": false} {
		out, stderr, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "--jobs", "4", "--policies", "bfd",
			"--team-mix", "a=0.5,b=0.5", "--format", format)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(stderr, "--team-mix's results by team are printed with --format table or json only"); got != warns {
			t.Errorf("--format %s: warning %v, want %v: %q", format, got, warns, stderr)
		}
		if shown := strings.Contains(out, `"team"`) || strings.Contains(out, "By team"); shown == warns {
			t.Errorf("--format %s: teams shown %v, and warned %v", format, shown, warns)
		}
	}
}

// TestProgressNamesTheBillUnderPowerOff: a run's progress line gave the
// meter's $ alone; under --power-off-after it gives the bill beside it.
func TestProgressNamesTheBillUnderPowerOff(t *testing.T) {
	_, progress, err := runCommand(t, "--trace", tracePath(t), "--workload", "thesis", "--hour", "0", "--sample", "4", "--policies", "dap", "--power-off-after", "2m")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress, "on the meter, bill $") {
		t.Errorf("progress: %q", progress)
	}
	_, progress, err = runCommand(t, "--trace", tracePath(t), "--workload", "thesis", "--hour", "0", "--sample", "4", "--policies", "dap")
	if err != nil || strings.Contains(progress, "bill") || !strings.Contains(progress, "done in") {
		t.Errorf("always on: %v %q", err, progress)
	}
}

// TestAggregateTableSaysSchedP99IsTheMax: the several-run table's last
// column is the largest p99 over the seeds, not a mean ± SD as every
// other column; its header said "sched p99 ms" alone.
func TestAggregateTableSaysSchedP99IsTheMax(t *testing.T) {
	was := Aggregate([]RunResult{
		{Window: "hour 1", Seed: 1, Results: []Result{{Policy: "bfd", SchedDelayP99MS: 0.5}}},
		{Window: "hour 1", Seed: 2, Results: []Result{{Policy: "bfd", SchedDelayP99MS: 2.25}}},
	})
	var sb strings.Builder
	if err := writeAggregateTable(&sb, was); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(sb.String(), "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[1]), "sched p99 ms (max)") || !strings.HasSuffix(strings.TrimSpace(lines[2]), " 2.250") {
		t.Errorf("table:\n%s", sb.String())
	}
}

// TestChartTitleSaysTheCostsAreTheMeters: under --power-off-after the
// chart's costs (the meter's) read as the bill; its title says which.
func TestChartTitleSaysTheCostsAreTheMeters(t *testing.T) {
	f := flags{workload: "thesis", fraction: 1, slack: 1.5, seed: 7, scale: 1, powerOffAfter: 2 * 60e9}
	if got := chartTitle(5, 0, 3600e9, "one", f); !strings.HasSuffix(got, ", seed 7\npower off after 2m0s: the costs drawn are the core's meter, not the bill (in the table)") {
		t.Errorf("title %q", got)
	}
	f.powerOffAfter = 0
	if got := chartTitle(5, 0, 3600e9, "one", f); strings.Contains(got, "power off") {
		t.Errorf("always on: title %q", got)
	}
	// Each line of the subtitle is a line of the SVG.
	var buf bytes.Buffer
	renderChart(&buf, []Result{{Policy: "bfd", TotalCostUSD: 1}}, "first line\nsecond line\nthird line")
	if svg := buf.String(); !strings.Contains(svg, `<text x="480" y="42" text-anchor="middle" fill="#555">first line</text>`) ||
		!strings.Contains(svg, `<text x="480" y="55" text-anchor="middle" font-size="11" fill="#555">second line</text>`) ||
		!strings.Contains(svg, `<text x="480" y="68" text-anchor="middle" font-size="11" fill="#555">third line</text>`) {
		t.Errorf("subtitle lines:\n%s", svg)
	}
}

// TestTeamsBlocksNameTheirRun: with several runs (--seeds 1-2) the by-team
// blocks came one per run under the same header, without saying which
// run; they name the window and seed. Under --power-off-after the header
// says the costs split are the meter's.
func TestTeamsBlocksNameTheirRun(t *testing.T) {
	out, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--workload", "thesis", "--hours", "0", "--seeds", "1-2", "--sample", "4",
		"--policies", "dap", "--team-mix", "a=1", "--power-off-after", "2m")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\nBy team, hour 0, seed 1 (cost: the run's agent cost split by the teams' executor cpu-hours; the core's meter, not the bill):\n",
		"\nBy team, hour 0, seed 2 (cost:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestEmptyTraceNamesThePathGiven: --trace /dev/null said "null holds no
// job" (the base name); the error names the path as given.
func TestEmptyTraceNamesThePathGiven(t *testing.T) {
	_, _, err := runCommand(t, "--trace", "/dev/null", "--quiet", "--policies", "bfd")
	if err == nil || !strings.HasPrefix(err.Error(), "--trace /dev/null holds no job: ") || !strings.Contains(err.Error(), "drop --trace") {
		t.Errorf("--trace /dev/null: %v", err)
	}
}

// TestPreemptionWithNoMissesJudgesNothing: with no miss with preemption
// or without, the preemption table said "target met: yes" and a misses
// change of +0%; there was nothing to cut, and it says so. A base of no
// misses with some after says "NO" (preemption added misses), its change
// "-" (no share of nothing); a base with misses is judged as before.
func TestPreemptionWithNoMissesJudgesNothing(t *testing.T) {
	agg := func(name string, missed float64) PolicyAggregate {
		return PolicyAggregate{Policy: name, Runs: 1, Missed: Stat{Mean: missed}, Cost: Stat{Mean: 10}}
	}
	was := []WindowAggregate{{Window: "hour 1", Class: "light", Policies: []PolicyAggregate{
		agg("dap", 0), agg("dap+mdf", 0), agg("bfd", 0), agg("bfd+mdf", 2), agg("gio", 10), agg("gio+mdf", 5),
	}}}
	for _, markdown := range []bool{false, true} {
		var sb strings.Builder
		if err := writePreemption(&sb, was, markdown); err != nil {
			t.Fatal(err)
		}
		sep := regexpSplit(markdown)
		rows := map[string][]string{}
		for _, line := range strings.Split(sb.String(), "\n") {
			f := sep(line)
			if len(f) >= 9 {
				rows[f[2]] = f
			}
		}
		for policy, want := range map[string][2]string{
			"dap+mdf": {"-", "- (no misses either way)"},
			"bfd+mdf": {"-", "NO"},
			"gio+mdf": {"-50%", "yes"},
		} {
			if f := rows[policy]; len(f) < 9 || f[4] != want[0] || f[8] != want[1] {
				t.Errorf("markdown %v, %s: %q, want misses change %q and target met %q\n%s", markdown, policy, f, want[0], want[1], sb.String())
			}
		}
	}
}

// regexpSplit splits a row of the text table (two spaces or more between
// columns) or of a Markdown table (|) into its trimmed cells.
func regexpSplit(markdown bool) func(string) []string {
	return func(line string) []string {
		var cells []string
		if markdown {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "|") {
				return nil
			}
			cells = strings.Split(strings.Trim(line, "|"), "|")
		} else {
			cells = strings.Split(line, "  ")
		}
		var out []string
		for _, c := range cells {
			if c = strings.TrimSpace(c); c != "" || markdown {
				out = append(out, c)
			}
		}
		return out
	}
}

// TestMarkdownCarriesTheSummaries: --format markdown printed neither the
// estimates nor the auto-sizing summary that the text table prints after
// its table (JSON and CSV carry their figures); it prints both as tables,
// with the table's figures, and neither with oracle estimates and the
// users' executor counts.
func TestMarkdownCarriesTheSummaries(t *testing.T) {
	args := []string{"--trace", tracePath(t), "--quiet", "--workload", "thesis", "--hour", "5", "--jobs", "30", "--policies", "bfd,dap"}
	learned := append(slices.Clone(args), "--estimates", "learned", "--executors", "auto")
	text, _, err := runCommand(t, learned...)
	if err != nil {
		t.Fatal(err)
	}
	md, _, err := runCommand(t, append(learned, "--format", "markdown")...)
	if err != nil {
		t.Fatal(err)
	}
	for _, head := range []string{
		"Estimates (`--estimates learned`), per policy over all runs:\n\n| policy | mean estimate error % | model MAPE after 10 runs of a signature % | runs |\n|---|---:|---:|---:|\n",
		"Auto executors (`--executors auto`), per policy over all runs:\n\n| policy | jobs | sized by the model | changed from the user's count | mean executors |\n|---|---:|---:|---:|---:|\n",
	} {
		if !strings.Contains(md, head) {
			t.Errorf("markdown has no %q:\n%s", head, md)
		}
	}
	// Each policy's row says what the text summary's line says.
	line := regexp.MustCompile(`(?m)^  (\S+) +mean estimate error ([0-9.]+)%(?:; model MAPE after 10 runs of a signature ([0-9.]+)% \((\d+) runs\))?$`)
	auto := regexp.MustCompile(`(?m)^  (\S+) +(\d+) of (\d+) jobs sized by the model, (\d+) of them changed from the user's count; mean executors ([0-9.]+)$`)
	n := 0
	for _, m := range line.FindAllStringSubmatch(text, -1) {
		mape, runs := "-", "0"
		if m[3] != "" {
			mape, runs = m[3], m[4]
		}
		if want := fmt.Sprintf("| %s | %s | %s | %s |\n", m[1], m[2], mape, runs); !strings.Contains(md, want) {
			t.Errorf("markdown has no estimates row %q:\n%s", want, md)
		}
		n++
	}
	for _, m := range auto.FindAllStringSubmatch(text, -1) {
		if want := fmt.Sprintf("| %s | %s | %s | %s | %s |\n", m[1], m[3], m[2], m[4], m[5]); !strings.Contains(md, want) {
			t.Errorf("markdown has no auto-sizing row %q:\n%s", want, md)
		}
		n++
	}
	if n != 4 {
		t.Errorf("%d summary lines in the text output, want 2 and 2:\n%s", n, text)
	}
	plain, _, err := runCommand(t, append(args, "--format", "markdown")...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain, "Estimates (") || strings.Contains(plain, "Auto executors (") {
		t.Errorf("oracle estimates, users' counts: summaries printed:\n%s", plain)
	}
}

// TestMarkdownSummariesByHand: the Markdown estimates table gives "-" for
// the model's MAPE where no signature had 10 runs (user estimates: no
// model), and each policy's mean over its runs; the auto-sizing table sums
// the jobs and weighs the mean executors by them.
func TestMarkdownSummariesByHand(t *testing.T) {
	runs := []RunResult{
		{Results: []Result{{Policy: "bfd", Jobs: 10, EstimateErrorPct: 10, AutoSizedJobs: 4, AutoChangedJobs: 1, MeanExecutors: 2},
			{Policy: "dap", Jobs: 10, EstimateErrorPct: 30, ModelMAPEPct: 20, ModelMAPERuns: 2, AutoSizedJobs: 5, MeanExecutors: 4}}},
		{Results: []Result{{Policy: "bfd", Jobs: 30, EstimateErrorPct: 20, AutoSizedJobs: 6, AutoChangedJobs: 2, MeanExecutors: 6},
			{Policy: "dap", Jobs: 30, EstimateErrorPct: 50, ModelMAPEPct: 10, ModelMAPERuns: 6, AutoSizedJobs: 7, MeanExecutors: 4}}},
	}
	var buf bytes.Buffer
	writeEstimatesMarkdown(&buf, runs, "user")
	writeAutoSizedMarkdown(&buf, runs)
	// bfd: errors 10, 20: 15; no MAPE runs. dap: 30, 50: 40; MAPE (20 x 2 +
	// 10 x 6) / 8 = 12.5. Executors: bfd (2 x 10 + 6 x 30) / 40 = 5.
	want := "Estimates (`--estimates user`), per policy over all runs:\n\n" +
		"| policy | mean estimate error % | model MAPE after 10 runs of a signature % | runs |\n|---|---:|---:|---:|\n" +
		"| bfd | 15.0 | - | 0 |\n| dap | 40.0 | 12.5 | 8 |\n\n" +
		"Auto executors (`--executors auto`), per policy over all runs:\n\n" +
		"| policy | jobs | sized by the model | changed from the user's count | mean executors |\n|---|---:|---:|---:|---:|\n" +
		"| bfd | 40 | 10 | 3 | 5.00 |\n| dap | 40 | 12 | 0 | 4.00 |\n\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
