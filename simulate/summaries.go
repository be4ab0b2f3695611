package simulate

import (
	"fmt"
	"io"
)

// Per-policy summaries printed after the table (estimates, auto sizing).

// writeEstimates says, per policy over all runs, how wrong the estimates
// the scheduler was told were and, for learned ones, the model's error.
func writeEstimates(w io.Writer, runs []RunResult, mode string) {
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
	fmt.Fprintf(w, "\n%s estimates:\n", mode)
	width := nameWidth(order)
	for _, p := range order {
		a := by[p]
		fmt.Fprintf(w, "  %-*s mean estimate error %.1f%%", width, p, a.err/float64(a.n))
		if a.mapeN > 0 {
			fmt.Fprintf(w, "; model MAPE after 10 runs of a signature %.1f%% (%d runs)", a.mape/float64(a.mapeN), a.mapeN)
		}
		fmt.Fprintln(w)
	}
}

// writeAutoSized says, per policy over all runs, how many jobs
// --executors auto sized and changed, and the mean executor count (the
// table had none of it: JSON and CSV only).
func writeAutoSized(w io.Writer, runs []RunResult) {
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
	fmt.Fprintln(w, "\nauto executors (--executors auto):")
	width := nameWidth(order)
	for _, p := range order {
		a := by[p]
		mean := 0.0
		if a.jobs > 0 {
			mean = a.execs / float64(a.jobs)
		}
		fmt.Fprintf(w, "  %-*s %d of %d jobs sized by the model, %d of them changed from the user's count; mean executors %.2f\n",
			width, p, a.sized, a.jobs, a.changed, mean)
	}
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
