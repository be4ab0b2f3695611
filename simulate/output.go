package simulate

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/sparkpack/sparkpack/workload"
)

// The command's outputs: CSV, the table, and trace scaling (moved from
// command.go unchanged).

var csvHeader = []string{"policy", "jobs", "total_cost_usd", "jct_mean_s", "jct_p95_s", "deadline_jobs", "deadline_violation_pct",
	"sched_delay_mean_ms", "sched_delay_p99_ms", "agent_active_s", "deadline_missed", "completed", "rejected", "unfinished",
	"wait_mean_s", "wait_p95_s", "makespan_s", "placements", "utilisation_pct", "deadline_met_pct", "deadline_rejected",
	"admitted_violation_pct", "default", "bill_usd", "always_on_usd", "preemptions", "lost_work_s", "lost_cpu_s",
	// Added after the first CSV readers (by name, so appended): the rest
	// of JSON's numbers, so that a CSV run is not missing the warm pool's
	// boots or the learned estimates' errors.
	"stretch", "boots", "mean_on_cpus", "mean_executors", "estimate_error_pct", "model_mape_pct", "model_mape_runs",
	"auto_sized_jobs", "auto_changed_jobs"}

func writeCSV(w io.Writer, runs []RunResult, multi bool) error {
	cw := csv.NewWriter(w)
	header := csvHeader
	if multi {
		header = append(slices.Clone(csvHeader), "window", "seed")
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	i := strconv.Itoa
	for _, run := range runs {
		for _, r := range run.Results {
			row := []string{r.Policy, i(r.Jobs), g(r.TotalCostUSD), g(r.JCTMeanS), g(r.JCTP95S), i(r.DeadlineJobs),
				g(r.DeadlineViolationPct), g(r.SchedDelayMeanMS), g(r.SchedDelayP99MS), g(r.AgentActiveS), i(r.DeadlineMissed),
				i(r.Completed), i(r.Rejected), i(r.Unfinished), g(r.WaitMeanS), g(r.WaitP95S), g(r.MakespanS), i(r.Placements),
				g(r.UtilisationPct), g(r.DeadlineMetPct), i(r.DeadlineRejected), g(r.AdmittedViolationPct), strconv.FormatBool(r.Default),
				g(r.BillUSD), g(r.AlwaysOnUSD), i(r.Preemptions), g(r.LostWorkS), g(r.LostCPUS),
				g(r.Stretch), i(r.Boots), g(r.MeanOnCPUs), g(r.MeanExecutors), g(r.EstimateErrorPct), g(r.ModelMAPEPct), i(r.ModelMAPERuns),
				i(r.AutoSizedJobs), i(r.AutoChangedJobs)}
			if multi {
				row = append(row, run.Window, strconv.FormatUint(run.Seed, 10))
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// displayName marks the default policy.
func displayName(r Result) string {
	if r.Default {
		return r.Policy + " (default)"
	}
	return r.Policy
}

// writeTable prints one run's results, a row per policy; "vs" is the
// cost meter against the first policy's. With power management
// (powerOff), what the operator pays is the bill: "bill vs" then gives
// the bill against the first policy's too.
func writeTable(w io.Writer, rs []Result, powerOff bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	billVs := ""
	if powerOff {
		billVs = "bill vs " + rs[0].Policy + "\t"
	}
	fmt.Fprintln(tw, "policy\tjobs\tcost $\tvs "+rs[0].Policy+"\tbill $\t"+billVs+"always-on $\tJCT mean s\tJCT p95 s\twait mean s\tdeadline jobs\tmissed\tviolations %\tmet % (all)\tsched mean ms\tsched p99 ms\tagent-active h\tutilisation %\tevicted\tlost work h\t")
	relative := func(x, first float64) string {
		if first > 0 {
			return fmt.Sprintf("%+.1f%%", 100*(x/first-1))
		}
		return "-"
	}
	for _, r := range rs {
		rel := relative(r.TotalCostUSD, rs[0].TotalCostUSD)
		bill := fmt.Sprintf("%.2f\t", r.BillUSD)
		if powerOff {
			bill += relative(r.BillUSD, rs[0].BillUSD) + "\t"
		}
		bill += fmt.Sprintf("%.2f\t", r.AlwaysOnUSD)
		// With no deadline job nothing was met or missed: "-", not a 0%
		// met that reads as every deadline missed.
		viol, met := "-", "-"
		if r.DeadlineJobs > 0 {
			viol, met = fmt.Sprintf("%.1f", r.DeadlineViolationPct), fmt.Sprintf("%.1f", r.DeadlineMetPct)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%s%.1f\t%.1f\t%.1f\t%d\t%d\t%s\t%s\t%.3f\t%.3f\t%.1f\t%.1f\t%d\t%.2f\t\n",
			displayName(r), r.Jobs, r.TotalCostUSD, rel, bill, r.JCTMeanS, r.JCTP95S, r.WaitMeanS, r.DeadlineJobs, r.DeadlineMissed,
			viol, met, r.SchedDelayMeanMS, r.SchedDelayP99MS, r.AgentActiveS/3600, r.UtilisationPct, r.Preemptions, r.LostWorkS/3600)
	}
	return tw.Flush()
}

// Scale returns a copy of jobs with every byte count multiplied by k
// (saturating at the largest int64).
func Scale(jobs []workload.TraceJob, k float64) []workload.TraceJob {
	out := make([]workload.TraceJob, len(jobs))
	copy(out, jobs)
	if k == 1 {
		return out
	}
	mul := func(b int64) int64 {
		v := float64(b) * k
		if v >= math.MaxInt64 {
			return math.MaxInt64
		}
		return int64(v)
	}
	for i := range out {
		out[i].InputBytes, out[i].ShuffleBytes, out[i].OutputBytes = mul(out[i].InputBytes), mul(out[i].ShuffleBytes), mul(out[i].OutputBytes)
	}
	return out
}
