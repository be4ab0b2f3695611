package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/store"
)

// runUsage is `sparkpack usage`: GET /api/v1/usage as a table (one line
// per group and period, the idle remainder and the total last), wide
// (more columns), json, yaml, name (the groups) or --csv.
func runUsage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	v, fs := newViewFlags("usage", "wide adds memory, every outcome and p90 waiting", stderr)
	by := fs.String("by", "team", "group by team, job or label:KEY")
	from := fs.String("from", "", "start of the window, RFC 3339 (default: --since before --to)")
	to := fs.String("to", "", "end of the window, RFC 3339 (default: now)")
	since := newSpanFlag(24 * time.Hour)
	fs.Var(since, "since", "the window's length when --from is not given: a `duration` such as 36h, or days: 7d")
	step := fs.String("step", "", "cut the window in periods of this length (whole minutes: 15m, 1h, 24h, or days: 1d); default one period")
	asCSV := fs.Bool("csv", false, "write CSV (the columns of GET /api/v1/usage with Accept: text/csv) instead of -o")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack usage [--by team|job|label:KEY] [--since 24h | --from T --to T] [--step 1h] [-o table|wide|json|yaml|name] [--csv]")
		fmt.Fprintln(fs.Output(), "  (cost, cpu- and memory-hours, jobs by outcome, deadlines met and waiting, by team; the idle remainder is the part of the meter no job held)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := otherFormat(fs, "csv", *asCSV, *v.out, ""); err != nil {
		return err
	}
	q := url.Values{}
	q.Set("by", *by)
	if *to != "" {
		q.Set("to", *to)
	}
	switch {
	case *from != "":
		q.Set("from", *from)
	case since.get() > 0:
		end := time.Now()
		if *to != "" {
			t, err := time.Parse(time.RFC3339Nano, *to)
			if err != nil {
				return fmt.Errorf("--to %q: want an RFC 3339 time such as 2026-11-26T00:00:00Z", *to)
			}
			end = t
		}
		q.Set("from", end.Add(-since.get()).UTC().Format(time.RFC3339))
	default:
		return fmt.Errorf("--since %s: want a positive duration", since)
	}
	if *step != "" {
		s := *step
		if strings.HasSuffix(s, "d") {
			// the server reads Go durations; days go as hours
			var err error
			if s, err = spanParam(s); err != nil {
				return fmt.Errorf("--step %q: %w", *step, err)
			}
		}
		q.Set("step", s)
	}
	return v.run(ctx, stderr, "/api/v1/usage?"+q.Encode(), "usage", func(x any) error {
		u := x.(*api.UsageView)
		if *asCSV {
			return api.WriteUsageCSV(stdout, u.Rows)
		}
		switch *v.out {
		case outJSON, outYAML:
			return writeStructured(stdout, *v.out, u)
		}
		byCost(u.Rows)
		switch *v.out {
		case outName:
			// Names, one a line, as the other -o name give ids: the jobs
			// without a team (or the label) have none, so they are not
			// an (empty) line; standard error says they are left out.
			var seen []string
			unnamed := false
			for _, r := range u.Rows {
				switch {
				case r.Idle || slices.Contains(seen, r.Group):
				case r.Group == "":
					unnamed = true
				default:
					seen = append(seen, r.Group)
					fmt.Fprintln(stdout, r.Group)
				}
			}
			if unnamed {
				fmt.Fprintln(stderr, unnamedGroupNote(u.By))
			}
			return nil
		}
		printUsage(stdout, u, *v.out == outWide)
		return nil
	}, func() any { return new(api.UsageView) })
}

// unnamedGroupNote says -o name left out the group of jobs without a team
// (or without the label of --by label:KEY).
func unnamedGroupNote(by string) string {
	if key, ok := strings.CutPrefix(by, "label:"); ok {
		return fmt.Sprintf("(the jobs without the label %s are not listed: they have no name; the table shows them as (none))", key)
	}
	return "(the jobs without a team are not listed: they have no name; the table shows them as (none), sparkpack jobs --team= lists them)"
}

func printUsage(w io.Writer, u *api.UsageView, wide bool) {
	fmt.Fprintf(w, "usage by %s from %s to %s", u.By, u.From.Local().Format(cliTime), u.To.Local().Format(cliTime))
	periods := u.StepSeconds > 0 && u.To.Sub(u.From).Seconds() > u.StepSeconds
	if periods {
		fmt.Fprintf(w, ", every %s", shortDur(time.Duration(u.StepSeconds*float64(time.Second))))
	}
	fmt.Fprintln(w)
	if len(u.Rows) == 0 {
		fmt.Fprintln(w, "nothing ran or ended in this window")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{}
	if periods {
		head = append(head, "FROM")
	}
	group := u.By
	if _, key, ok := strings.Cut(u.By, ":"); ok {
		group = key // by label:KEY
	}
	head = append(head, strings.ToUpper(group), "COST", "SHARE", "CPU-H")
	if wide {
		head = append(head, "MEM-GIB-H", "FINISHED", "FAILED", "KILLED", "REJECTED", "CANCELLED")
	} else {
		head = append(head, "ENDED", "FAILED")
	}
	head = append(head, "DEADLINES-MET", "WAIT-MEAN")
	if wide {
		head = append(head, "WAIT-P90")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	total := 0.0
	for _, r := range u.Rows {
		total += r.CostUSD
	}
	opt := func(x *float64, f func(float64) string) string {
		if x == nil {
			return "-"
		}
		return f(*x)
	}
	secs := func(s float64) string { return shortDur(time.Duration(s * float64(time.Second))) }
	pct := func(p float64) string { return fmt.Sprintf("%.0f%%", p) }
	for _, r := range u.Rows {
		cols := []string{}
		if periods {
			cols = append(cols, r.From.Local().Format(cliTime))
		}
		group := r.Group
		if group == "" {
			group = "(none)"
		}
		share := "-"
		if total > 0 {
			share = fmt.Sprintf("%.1f%%", 100*r.CostUSD/total)
		}
		cols = append(cols, group, fmt.Sprintf("$%.4f", r.CostUSD), share, fmt.Sprintf("%.2f", r.CPUHours))
		ended := 0
		for _, n := range r.Jobs {
			ended += n
		}
		if wide {
			cols = append(cols, fmt.Sprintf("%.2f", r.MemoryGiBHours))
			for _, st := range store.UsageOutcomes {
				cols = append(cols, fmt.Sprint(r.Jobs[string(st)]))
			}
		} else {
			cols = append(cols, fmt.Sprint(ended), fmt.Sprint(r.Jobs["FAILED"]))
		}
		met := "-"
		if r.DeadlineMetPct != nil {
			met = fmt.Sprintf("%s (%d of %d)", pct(*r.DeadlineMetPct), r.DeadlineMet, r.DeadlineMet+r.DeadlineMissed)
		}
		cols = append(cols, met, opt(r.WaitMeanSeconds, secs))
		if wide {
			cols = append(cols, opt(r.WaitP90Seconds, secs))
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	tw.Flush()
	fmt.Fprintf(w, "total $%.4f (the groups and the idle remainder add up to the cost meter over the window)\n", total)
}

// byCost orders usage rows as an operator reads them (and the dashboard's
// Usage page shows them): by period, then the costliest group first, ties
// by group, the idle remainder last in its period. The server sends them
// by group, which for --by job is the order of the job ids.
func byCost(rows []store.UsageRow) {
	slices.SortStableFunc(rows, func(a, b store.UsageRow) int {
		if c := a.From.Compare(b.From); c != 0 {
			return c
		}
		if a.Idle != b.Idle {
			if a.Idle {
				return 1
			}
			return -1
		}
		if c := cmp.Compare(b.CostUSD, a.CostUSD); c != 0 {
			return c
		}
		return strings.Compare(a.Group, b.Group)
	})
}
