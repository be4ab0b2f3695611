package simulate

// TestDocFigures keeps the deterministic figures of the docs from going
// stale (issue 33): it reruns the simulations behind them and compares.
//
//   - docs/simulation.md "All figures" and docs/preemption-results.md: every
//     fenced `sparkpack simulate ... --format markdown` command is rerun and
//     its output compared with the tables under it (scripts/compare-policies.sh
//     and scripts/compare-preemption.sh write them). ilp's rows are left
//     out: CBC runs under a wall-clock limit, so on a loaded machine its
//     plans can differ; every other policy is deterministic.
//   - docs/preemption.md's two summary tables, from the runs of
//     preemption-results.md.
//   - docs/simulation.md's power-management table.
//
// `go test ./simulate/ -run TestDocFigures -update-docs` rewrites the
// summary and power tables (scripts/docs-figures.sh does, after the
// comparison scripts). Skipped with -short (mutation testing).

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite the derived tables of docs/preemption.md and docs/simulation.md (scripts/docs-figures.sh)")

func docPath(t *testing.T, name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "docs", name)
}

func readDoc(t *testing.T, name string) string {
	b, err := os.ReadFile(docPath(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docBlock is a fenced simulate command and the generated tables under it.
type docBlock struct {
	doc, title, args, content string
}

var blockRE = regexp.MustCompile("(?m)^```\nsparkpack simulate ([^\n]*--format markdown)\n```\n")

// commandBlocks finds the fenced commands of a doc; a block's tables run
// to the next heading or HTML comment.
func commandBlocks(doc, text string) []docBlock {
	var out []docBlock
	locs := blockRE.FindAllStringSubmatchIndex(text, -1)
	for _, l := range locs {
		rest := text[l[1]:]
		end := len(rest)
		for _, stop := range []string{"\n#", "\n<!--"} {
			if i := strings.Index(rest, stop); i >= 0 && i < end {
				end = i
			}
		}
		title := ""
		if i := strings.LastIndex(text[:l[0]], "\n#"); i >= 0 {
			title = strings.TrimLeft(strings.SplitN(text[i+1:], "\n", 2)[0], "# ")
		}
		out = append(out, docBlock{doc: doc, title: title, args: text[l[2]:l[3]], content: rest[:end]})
	}
	return out
}

// withoutILP drops ilp from --policies.
func withoutILP(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == "--policies" {
			var keep []string
			for _, p := range strings.Split(out[i+1], ",") {
				if p != "ilp" {
					keep = append(keep, p)
				}
			}
			out[i+1] = strings.Join(keep, ",")
		}
	}
	return out
}

// simulateRuns runs a doc's command with --format json.
func simulateRuns(t *testing.T, args []string) []RunResult {
	t.Helper()
	a := slices.Clone(args)
	for i := range a {
		if a[i] == "markdown" && i > 0 && a[i-1] == "--format" {
			a[i] = "json"
		}
	}
	out, stderr, err := runCommand(t, append(a, "--quiet")...)
	if err != nil {
		t.Fatalf("sparkpack simulate %s: %v\n%s", strings.Join(a, " "), err, stderr)
	}
	var runs []RunResult
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("sparkpack simulate %s: %v", strings.Join(a, " "), err)
	}
	return runs
}

// normalize drops blank lines, trailing spaces and ilp's rows.
func normalize(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimRight(l, " ")
		if l == "" || strings.HasPrefix(l, "| ilp |") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// firstDiff describes where got and want part.
func firstDiff(got, want []string) string {
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n  doc:  %s\n  code: %s", i+1, w, g)
		}
	}
	return ""
}

func TestDocFigures(t *testing.T) {
	if testing.Short() {
		t.Skip("reruns the simulations behind the docs (about 20 s of cpu)")
	}
	var mu sync.Mutex
	runsOf := map[string][]RunResult{} // block title -> runs
	var blocks []docBlock
	for _, doc := range []string{"simulation.md", "preemption-results.md"} {
		bs := commandBlocks(doc, readDoc(t, doc))
		if len(bs) == 0 {
			t.Fatalf("%s: no fenced sparkpack simulate command found", doc)
		}
		blocks = append(blocks, bs...)
	}
	t.Run("tables", func(t *testing.T) {
		for _, b := range blocks {
			t.Run(b.doc+"/"+b.title, func(t *testing.T) {
				t.Parallel()
				args := withoutILP(strings.Fields(b.args))
				runs := simulateRuns(t, args)
				mu.Lock()
				runsOf[b.doc+"/"+b.title] = runs
				mu.Unlock()
				var sb strings.Builder
				was := Aggregate(runs)
				if err := writeMarkdown(&sb, was, slices.Contains(args, "--compare-default")); err != nil {
					t.Fatal(err)
				}
				if err := writePreemption(&sb, was, true); err != nil {
					t.Fatal(err)
				}
				if d := firstDiff(normalize(sb.String()), normalize(b.content)); d != "" {
					t.Errorf("docs/%s, %q: the tables differ from this build's (regenerate them with scripts/docs-figures.sh, or the script named in the doc) at %s", b.doc, b.title, d)
				}
			})
		}
	})
	t.Run("preemption summary", func(t *testing.T) {
		for _, kind := range []struct{ prefix, header string }{
			{"Trace workload x10", "**Trace workload ×10"},
			{"Thesis-like workload", "**Thesis-like workload"},
		} {
			var rows []string
			for _, set := range []string{"tuning", "held-out"} {
				for title, runs := range runsOf {
					if strings.HasPrefix(title, "preemption-results.md/"+kind.prefix+", "+set+" set") {
						rows = append(rows, preemptionSummaryRows(set, runs)...)
					}
				}
			}
			if len(rows) == 0 {
				t.Fatalf("no preemption-results.md runs for %q", kind.prefix)
			}
			checkTable(t, "preemption.md", kind.header, rows)
		}
	})
	t.Run("power", func(t *testing.T) {
		checkTable(t, "simulation.md", "Thesis-like workload, first 50 (light hours 0, 16)", powerRows(t))
	})
}

// minus writes a signed figure with a typographic minus, as the docs do.
func minus(s string) string { return strings.ReplaceAll(s, "-", "−") }

// preemptionSummaryRows are docs/preemption.md's summary rows of one set:
// per hour, missed deadlines without preemption and with mdf, mlf, srt
// (change), and the cost changes.
func preemptionSummaryRows(set string, runs []RunResult) []string {
	label := set
	if set == "held-out" {
		label = "**held-out**"
	}
	var out []string
	for _, wa := range Aggregate(runs) {
		byPol := map[string]PreemptionRow{}
		for _, r := range PreemptionRows([]WindowAggregate{wa}) {
			byPol[r.Policy] = r
		}
		mdf, mlf, srt := byPol["dap+mdf"], byPol["dap+mlf"], byPol["dap+srt"]
		cell := func(r PreemptionRow) string {
			return fmt.Sprintf("%.1f (%s)", r.Misses, minus(fmt.Sprintf("%+.0f%%", r.MissesChangePct)))
		}
		out = append(out, fmt.Sprintf("| %s | %d | %.1f | %s | %s | %s | %s |", label, wa.Hour, mdf.MissesBase, cell(mdf), cell(mlf), cell(srt),
			minus(fmt.Sprintf("%+.1f%% / %+.1f%% / %+.1f%%", mdf.CostChangePct, mlf.CostChangePct, srt.CostChangePct))))
	}
	return out
}

// powerRows are docs/simulation.md's power-management rows: thesis-like
// workload, seeds 1-3, fifo-consolidate and dap, power off never, after
// 2 minutes or after 10 minutes.
func powerRows(t *testing.T) []string {
	var out []string
	for _, off := range []string{"never", "2m", "10m"} {
		for _, h := range []struct{ hour, jobs string }{{"0", "50"}, {"16", "50"}, {"6", "100"}, {"7", "100"}} {
			args := []string{"--workload", "thesis", "--jobs", h.jobs, "--hours", h.hour, "--seeds", "1-3", "--policies", "fifo-consolidate,dap", "--format", "json"}
			if off != "never" {
				args = append(args, "--power-off-after", off)
			}
			runs := simulateRuns(t, args)
			for _, pol := range []string{"fifo-consolidate", "dap"} {
				var bill, always, meter, missed, wait float64
				n := 0.0
				for _, r := range runs {
					for _, x := range r.Results {
						if x.Policy == pol {
							bill += x.BillUSD
							always += x.AlwaysOnUSD
							meter += x.TotalCostUSD
							missed += float64(x.DeadlineMissed)
							wait += x.WaitMeanS
							n++
						}
					}
				}
				out = append(out, fmt.Sprintf("| %s | %s (%s) | %s | %.2f | %.2f | %.0f%% | %.2f | %.1f | %.1f |",
					off, h.hour, h.jobs, pol, bill/n, always/n, 100*bill/always, meter/n, missed/n, wait/n))
			}
		}
	}
	return out
}

// checkTable compares the rows of the first table after the line that
// starts with anchor in docs/name with want (or rewrites them with
// -update-docs).
func checkTable(t *testing.T, name, anchor string, want []string) {
	t.Helper()
	text := readDoc(t, name)
	i := strings.Index(text, "\n"+anchor)
	if i < 0 {
		t.Fatalf("docs/%s: no line starting %q", name, anchor)
	}
	// The table: a header line, a separator line, then rows up to a blank line.
	start := i + strings.Index(text[i:], "\n|---")
	if start < i {
		t.Fatalf("docs/%s: no table after %q", name, anchor)
	}
	start += strings.Index(text[start+1:], "\n") + 2 // first row
	end := start + strings.Index(text[start:], "\n\n")
	if end < start {
		end = len(text)
	}
	got := strings.Split(text[start:end], "\n")
	if *updateDocs {
		text = text[:start] + strings.Join(want, "\n") + text[end:]
		if err := os.WriteFile(docPath(t, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if d := firstDiff(want, got); d != "" {
		t.Errorf("docs/%s, table after %q: stale (regenerate with scripts/docs-figures.sh) at %s", name, anchor, d)
	}
}

// TestLookupPlacementAtQueue: "<placement>@<queue>" names (the ablations
// of scripts/dap-sensitivity.sh) run that placement under that queue
// discipline; unknown halves are refused.
func TestLookupPlacementAtQueue(t *testing.T) {
	p, err := LookupPolicy("dap@algorithm3")
	if err != nil || p.Placement != "dap" || p.Ordering != "algorithm3" || p.Name != "dap@algorithm3" {
		t.Fatalf("dap@algorithm3: %+v, %v", p, err)
	}
	if p, err := LookupPolicy("exact@feasible-edf"); err != nil || p.Placement != "exact" || p.Ordering != "feasible-edf" {
		t.Fatalf("exact@feasible-edf: %+v, %v", p, err)
	}
	if p, err := LookupPolicy("consolidate@feasible-lpt"); err != nil || p.Placement != "consolidate" || p.Ordering != scheduler.OrderFeasibleLPT {
		t.Fatalf("consolidate@feasible-lpt: %+v, %v", p, err)
	}
	if p, err := LookupPolicy("dap"); err != nil || p.Ordering != scheduler.DefaultOrdering {
		t.Fatalf("dap runs under %q, the default queue is %q", p.Ordering, scheduler.DefaultOrdering)
	}
	for _, bad := range []string{"dap@lifo", "nosuch@fifo", "@fifo", "dap@"} {
		if _, err := LookupPolicy(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
