package simulate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/teams"
)

// ignoredFlags lists, as warnings that say what to do, the flags given on
// the command line (set) that have no effect on this run because the
// option they modify is off: --boot-time without --power-off-after,
// --estimate-error with oracle estimates, and so on. The run goes ahead
// (scripts pass one set of flags to several modes), but an operator who
// asked for --boot-time 5m is told that nothing was booted.
func ignoredFlags(f flags, set map[string]bool, specs []PolicySpec) []string {
	var out []string
	warn := func(flag, why, todo string) {
		if set[flag] {
			out = append(out, fmt.Sprintf("--%s has no effect %s: %s, or drop --%s", flag, why, todo, flag))
		}
	}
	if f.powerOffAfter <= 0 {
		for _, fl := range []string{"boot-time", "boot-aware"} {
			warn(fl, "without --power-off-after (no agent is ever powered off, so none boots)", "add --power-off-after D (e.g. 2m)")
		}
	}
	if f.fraction == 0 && f.notBeforeLead > 0 {
		// Only deadline jobs are submitted ahead: the run was the same
		// as without the lead, and said nothing.
		warn("not-before-lead", "with --deadline-fraction 0 (it submits deadline jobs ahead, and no job has a deadline)", "give --deadline-fraction above 0 (e.g. 0.5)")
	}
	if !f.warmPool {
		warn("miss-cost", "without --warm-pool (only the warm pool prices a missed deadline)", "add --power-off-after D --warm-pool")
	}
	if f.estimates == EstimatesOracle {
		warn("estimate-error", "with --estimates oracle (the scheduler is told the profiled run time)", "add --estimates user or learned")
	}
	if f.estimates != EstimatesLearned {
		warn("learned-decisions", "without --estimates learned", "add --estimates learned")
	}
	preempts := slices.ContainsFunc(specs, func(p PolicySpec) bool {
		return p.Preemption != "" && p.Preemption != scheduler.PreemptNone
	})
	if !preempts {
		for _, fl := range []string{"preempt-protect", "preempt-max-share", "max-preemptions"} {
			warn(fl, "without --preemption (nothing is evicted)", "add --preemption mdf, mlf or srt")
		}
	}
	if !slices.ContainsFunc(specs, func(p PolicySpec) bool { return p.Placement == "ilp" }) {
		warn("ilp-time-limit", "without the ilp policy in --policies (only ilp calls the solver)", "add ilp to --policies")
	}
	if f.teamMix == "" {
		warn("teams", "without --team-mix (every job is then in the default team, which a teams file does not configure)", "add --team-mix team=share,...")
	}
	if ext := strings.ToLower(filepath.Ext(f.jobLog)); jobLogFormatOf(f.jobLog) == JobLogCSV && (ext == ".json" || ext == ".ndjson") {
		// Only .jsonl picks JSON lines: jobs.json got CSV without a word.
		out = append(out, fmt.Sprintf("--job-log %s is written as CSV (JSON lines only for a name ending in .jsonl): name it %s for JSON lines, or .csv",
			f.jobLog, strings.TrimSuffix(f.jobLog, filepath.Ext(f.jobLog))+".jsonl"))
	}
	if f.teamMix != "" && (f.format == "csv" || f.format == "markdown") {
		// The runs still draw teams (and the teams file's shares apply);
		// only the by-team results are not printed.
		out = append(out, fmt.Sprintf("--team-mix's results by team are printed with --format table or json only (json: each result's \"teams\"); --format %s has none", f.format))
	}
	if f.compareDefault && (f.format == "json" || f.format == "csv") {
		// The baselines still run; only the verdict is not printed.
		marked := `"default": true`
		if f.format == "csv" {
			marked = "true in the default column"
		}
		out = append(out, fmt.Sprintf("--compare-default prints its verdict (Pareto-better runs, targets) with --format table or markdown only; --format %s lists the runs, the default policy's marked %s", f.format, marked))
	}
	return out
}

// unlistedTeams warns of the teams of --team-mix that the --teams file
// does not list: they run with weight 1, no guarantee and no limit, which
// is what a misspelt name gets too.
func unlistedTeams(cfg *teams.Config, mix []TeamShare, file string) []string {
	if cfg == nil {
		return nil
	}
	var out []string
	for _, ts := range mix {
		if ts.Team != "" && !cfg.Listed(ts.Team) {
			out = append(out, fmt.Sprintf("--team-mix: team %q is not in the teams file %s: its jobs run with weight 1, no guarantee and no limit; check the name, or add a line for it", ts.Team, file))
		}
	}
	return out
}
