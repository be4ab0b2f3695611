package simulate

import (
	"fmt"
	"io"
)

// Per-policy summaries printed after the table (estimates, auto sizing).

// estimateSummary is one policy's estimates over all runs: the mean
// error of the estimates the scheduler was told, and for learned ones the
// model's MAPE over mapeN runs.
type estimateSummary struct {
	policy   string
	errPct   float64
	mapePct  float64
	mapeRuns int
}

// estimateSummaries are the policies' estimate summaries, in the order
// the policies first appear.
func estimateSummaries(runs []RunResult) []estimateSummary {
	type acc struct {
		err, mape float64
		n, mapeN  int
	}
	order, by := perPolicy(runs, func(a *acc, r Result) {
		a.err += r.EstimateErrorPct
		a.n++
		a.mape += r.ModelMAPEPct * float64(r.ModelMAPERuns)
		a.mapeN += r.ModelMAPERuns
	})
	var out []estimateSummary
	for _, p := range order {
		a := by[p]
		s := estimateSummary{policy: p, errPct: a.err / float64(a.n), mapeRuns: a.mapeN}
		if a.mapeN > 0 {
			s.mapePct = a.mape / float64(a.mapeN)
		}
		out = append(out, s)
	}
	return out
}

// writeEstimates says, per policy over all runs, how wrong the estimates
// the scheduler was told were and, for learned ones, the model's error.
func writeEstimates(w io.Writer, runs []RunResult, mode string) {
	sums := estimateSummaries(runs)
	fmt.Fprintf(w, "\n%s estimates:\n", mode)
	var names []string
	for _, s := range sums {
		names = append(names, s.policy)
	}
	width := nameWidth(names)
	for _, s := range sums {
		fmt.Fprintf(w, "  %-*s mean estimate error %.1f%%", width, s.policy, s.errPct)
		if s.mapeRuns > 0 {
			fmt.Fprintf(w, "; model MAPE after 10 runs of a signature %.1f%% (%d runs)", s.mapePct, s.mapeRuns)
		}
		fmt.Fprintln(w)
	}
}

// writeEstimatesMarkdown is writeEstimates as a Markdown table (--format
// markdown printed none, where the table and JSON carry them); "-" where
// no signature had 10 runs.
func writeEstimatesMarkdown(w io.Writer, runs []RunResult, mode string) {
	fmt.Fprintf(w, "Estimates (`--estimates %s`), per policy over all runs:\n\n", mode)
	fmt.Fprintln(w, "| policy | mean estimate error % | model MAPE after 10 runs of a signature % | runs |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, s := range estimateSummaries(runs) {
		mape := "-"
		if s.mapeRuns > 0 {
			mape = fmt.Sprintf("%.1f", s.mapePct)
		}
		fmt.Fprintf(w, "| %s | %.1f | %s | %d |\n", s.policy, s.errPct, mape, s.mapeRuns)
	}
	fmt.Fprintln(w)
}

// autoSizedSummary is one policy's --executors auto over all runs: the
// jobs, those the model sized and those it changed, and the mean
// executor count.
type autoSizedSummary struct {
	policy               string
	jobs, sized, changed int
	meanExecutors        float64
}

// autoSizedSummaries are the policies' auto-sizing summaries, in the
// order the policies first appear.
func autoSizedSummaries(runs []RunResult) []autoSizedSummary {
	type acc struct {
		jobs, sized, changed int
		execs                float64
	}
	order, by := perPolicy(runs, func(a *acc, r Result) {
		a.jobs += r.Jobs
		a.sized += r.AutoSizedJobs
		a.changed += r.AutoChangedJobs
		a.execs += r.MeanExecutors * float64(r.Jobs)
	})
	var out []autoSizedSummary
	for _, p := range order {
		a := by[p]
		s := autoSizedSummary{policy: p, jobs: a.jobs, sized: a.sized, changed: a.changed}
		if a.jobs > 0 {
			s.meanExecutors = a.execs / float64(a.jobs)
		}
		out = append(out, s)
	}
	return out
}

// writeAutoSized says, per policy over all runs, how many jobs
// --executors auto sized and changed, and the mean executor count (the
// table had none of it: JSON and CSV only).
func writeAutoSized(w io.Writer, runs []RunResult) {
	sums := autoSizedSummaries(runs)
	fmt.Fprintln(w, "\nauto executors (--executors auto):")
	var names []string
	for _, s := range sums {
		names = append(names, s.policy)
	}
	width := nameWidth(names)
	for _, s := range sums {
		fmt.Fprintf(w, "  %-*s %d of %d jobs sized by the model, %d of them changed from the user's count; mean executors %.2f\n",
			width, s.policy, s.sized, s.jobs, s.changed, s.meanExecutors)
	}
}

// writeAutoSizedMarkdown is writeAutoSized as a Markdown table (--format
// markdown printed none).
func writeAutoSizedMarkdown(w io.Writer, runs []RunResult) {
	fmt.Fprintln(w, "Auto executors (`--executors auto`), per policy over all runs:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| policy | jobs | sized by the model | changed from the user's count | mean executors |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, s := range autoSizedSummaries(runs) {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %.2f |\n", s.policy, s.jobs, s.sized, s.changed, s.meanExecutors)
	}
	fmt.Fprintln(w)
}

// nameWidth is the width of the policy column of the summaries: 16, or
// the longest name (fifo-consolidate+srt, dap@feasible-edf+mdf), so that
// the figures after it line up.
func nameWidth(names []string) int {
	w := 16
	for _, n := range names {
		w = max(w, len(n))
	}
	return w
}

// perPolicy folds every run's results into one accumulator per policy,
// with the policies in the order they first appear.
func perPolicy[T any](runs []RunResult, add func(*T, Result)) ([]string, map[string]*T) {
	var order []string
	by := map[string]*T{}
	for _, run := range runs {
		for _, r := range run.Results {
			a := by[r.Policy]
			if a == nil {
				a = new(T)
				by[r.Policy] = a
				order = append(order, r.Policy)
			}
			add(a, r)
		}
	}
	return order, by
}
