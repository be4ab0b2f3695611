package simulate

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/workload"
)

// DefaultTrace is the trace path relative to the repository root.
const DefaultTrace = "../shared/traces/FB-2009_samples_24_times_1hr_0.tsv"

// Defaults of the command's flags.
const (
	DefaultPolicies         = "fifo-spread,fifo-consolidate,morpheus,bfd,ilp,exact,gio"
	DefaultDeadlineFraction = 0.5
	DefaultSlack            = 2.0
	DefaultSeed             = 1
)

type flags struct {
	trace, cluster, policies, format, chart string
	hour                                    int
	from, to                                string
	fraction, slack, scale                  float64
	seed                                    uint64
	promoteAfter, ilpLimit                  time.Duration
	quiet                                   bool
}

func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; --help goes to stdout
	fs.StringVar(&f.trace, "trace", "", "SWIM trace file (TSV: job id, submit s, gap s, map input bytes, shuffle bytes, output bytes);\ndefault "+DefaultTrace+" relative to the repository root, else the copy built into sparkpack")
	fs.IntVar(&f.hour, "hour", -1, "replay only the N-th one-hour sample, 0-23 (jobs submitted in [N h, N+1 h));\nexcludes --from/--to; default: the whole trace")
	fs.StringVar(&f.from, "from", "", "replay jobs submitted at or after this offset into the trace: seconds (3600) or a duration (1h)")
	fs.StringVar(&f.to, "to", "", "replay jobs submitted before this offset into the trace: seconds or a duration; default: the end")
	fs.StringVar(&f.cluster, "cluster", "thesis14", "cluster: thesis14 (6 x (4 cpu, 16 GiB, $0.24/h), 5 x (8, 32, $0.48/h), 3 x (12, 48, $0.72/h))\nor a cluster JSON file (see package clusterspec)")
	fs.StringVar(&f.policies, "policies", DefaultPolicies, "comma-separated policies to compare: fifo-spread, fifo-consolidate, morpheus, bfd, ilp, exact, gio\n(or any placement policy name, run under Algorithm 3)")
	fs.Float64Var(&f.fraction, "deadline-fraction", DefaultDeadlineFraction, "fraction of the jobs, chosen at random with --seed, that get a deadline (0 to 1)")
	fs.Float64Var(&f.slack, "slack", DefaultSlack, "deadline = submission + profiled duration x slack (> 0; the profiled duration is the\njob's run time packed on one uncontended agent)")
	fs.Float64Var(&f.scale, "scale", 1, "multiply every job's input, shuffle and output bytes by this factor (> 0) to load the cluster more")
	fs.Uint64Var(&f.seed, "seed", DefaultSeed, "seed of the random choice of deadline jobs: the same seed gives the same results")
	fs.StringVar(&f.format, "format", "table", "output format: table, json (one array, one object per policy) or csv")
	fs.StringVar(&f.chart, "chart", "", "also write an SVG chart (cost and deadline violations per policy, cumulative cost over time) to this file")
	fs.DurationVar(&f.promoteAfter, "promote-after", 0, "anti-starvation age of the scheduler core: a regular job skipped this long is promoted\n(default 15m; negative disables)")
	fs.DurationVar(&f.ilpLimit, "ilp-time-limit", 0, "time limit per ILP solve (default 200ms)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	return fs
}

// Command runs `sparkpack simulate`: it parses args (without the command
// name), replays the trace window once per policy through the scheduler
// core on a virtual clock, and prints one result per policy to stdout;
// progress goes to stderr. --help prints the usage to stdout and returns nil.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f flags
	fs := newFlagSet(&f)
	usage := func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: sparkpack simulate [flags]\n\n"+
			"Replays the SWIM Facebook 2009 trace through sparkpack's scheduler core and placement policies on a\n"+
			"virtual clock (no Mesos, no database) and compares, per policy: total cost ($, thesis eq. 4.11),\n"+
			"deadline violations (%%), mean and p95 job completion time, mean and p99 scheduling delay (real time\n"+
			"spent placing), queue wait and agent-active seconds. Deterministic for a given --seed (except the\n"+
			"measured scheduling delays). See docs/simulation.md for the job and performance model.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	fs.Usage = func() {} // errors name the flag; --help prints the usage to stdout
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			usage()
			return nil
		}
		return fmt.Errorf("simulate: %w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("simulate: unexpected arguments %q", fs.Args())
	}
	from, to, err := f.window(fs)
	if err != nil {
		return err
	}
	if f.fraction < 0 || f.fraction > 1 || math.IsNaN(f.fraction) {
		return fmt.Errorf("simulate: --deadline-fraction %g not in [0, 1]", f.fraction)
	}
	if !(f.slack > 0) || math.IsInf(f.slack, 0) {
		return fmt.Errorf("simulate: --slack %g must be > 0", f.slack)
	}
	if !(f.scale > 0) || math.IsInf(f.scale, 0) {
		return fmt.Errorf("simulate: --scale %g must be > 0", f.scale)
	}
	switch f.format {
	case "table", "json", "csv":
	default:
		return fmt.Errorf("simulate: --format %q: want table, json or csv", f.format)
	}
	var specs []PolicySpec
	for _, name := range strings.Split(f.policies, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		p, err := LookupPolicy(name)
		if err != nil {
			return fmt.Errorf("simulate: --policies: %w", err)
		}
		specs = append(specs, p)
	}
	if len(specs) == 0 {
		return errors.New("simulate: --policies is empty")
	}
	cl, err := clusterspec.Named(f.cluster)
	if err != nil {
		return fmt.Errorf("simulate: --cluster: %w", err)
	}
	var all []workload.TraceJob
	tracePath, err := resolveTrace(f.trace)
	if err != nil && f.trace == "" {
		// The copy built into the binary.
		tracePath, err = "embedded "+workload.FB2009Name, nil
		all, err = workload.FB2009()
		if err != nil {
			return err
		}
	} else if err != nil {
		return err
	} else {
		file, err := os.Open(tracePath)
		if err != nil {
			return fmt.Errorf("simulate: --trace: %w", err)
		}
		all, err = workload.Parse(file)
		file.Close()
		if err != nil {
			return fmt.Errorf("simulate: %s: %w", tracePath, err)
		}
	}
	jobs := Scale(workload.Window(all, from, to), f.scale)
	progress := io.Discard
	if !f.quiet {
		progress = stderr
	}
	fmt.Fprintf(progress, "simulate: %d jobs from %s [%s, %s) on %s (%d agents), %d policies\n",
		len(jobs), filepath.Base(tracePath), fmtOffset(from), fmtOffset(to), cl.Name, len(cl.Agents), len(specs))
	var results []Result
	for _, p := range specs {
		began := time.Now()
		last := time.Time{}
		r, err := Run(ctx, Options{
			Jobs: jobs, From: from, Cluster: cl, Policy: p,
			DeadlineFraction: f.fraction, Slack: f.slack, Seed: f.seed,
			PromoteAfter: f.promoteAfter, PolicyOptions: placement.Options{ILPTimeLimit: f.ilpLimit},
			Progress: func(now time.Duration, done, total int) {
				if time.Since(last) < time.Second && done < total {
					return
				}
				last = time.Now()
				fmt.Fprintf(progress, "simulate: %-16s virtual %s  %d/%d jobs done\n", p.Name, fmtOffset(now), done, total)
			},
		})
		if err != nil {
			return fmt.Errorf("simulate: %s: %w", p.Name, err)
		}
		fmt.Fprintf(progress, "simulate: %-16s done in %s: $%.2f, %.1f%% deadline violations\n", p.Name, time.Since(began).Round(time.Millisecond), r.TotalCostUSD, r.DeadlineViolationPct)
		results = append(results, r)
	}
	if f.chart != "" {
		if err := writeChart(f.chart, results, chartTitle(len(jobs), from, to, cl.Name, f)); err != nil {
			return fmt.Errorf("simulate: --chart: %w", err)
		}
		fmt.Fprintf(progress, "simulate: chart written to %s\n", f.chart)
	}
	switch f.format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(results)
	case "csv":
		return writeCSV(stdout, results)
	}
	return writeTable(stdout, results)
}

func chartTitle(n int, from, to time.Duration, cluster string, f flags) string {
	s := fmt.Sprintf("%d jobs, trace [%s, %s), %s, deadline fraction %g, slack %g, seed %d", n, fmtOffset(from), fmtOffset(to), cluster, f.fraction, f.slack, f.seed)
	if f.scale != 1 {
		s += fmt.Sprintf(", data x %g", f.scale)
	}
	return s
}

func (f *flags) window(fs *flag.FlagSet) (from, to time.Duration, err error) {
	to = time.Duration(math.MaxInt64)
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if set["hour"] {
		if set["from"] || set["to"] {
			return 0, 0, errors.New("simulate: use --hour or --from/--to, not both")
		}
		if f.hour < 0 || f.hour > 23 {
			return 0, 0, fmt.Errorf("simulate: --hour %d not in 0..23", f.hour)
		}
		return time.Duration(f.hour) * time.Hour, time.Duration(f.hour+1) * time.Hour, nil
	}
	if f.from != "" {
		if from, err = parseOffset(f.from); err != nil {
			return 0, 0, fmt.Errorf("simulate: --from: %w", err)
		}
	}
	if f.to != "" {
		if to, err = parseOffset(f.to); err != nil {
			return 0, 0, fmt.Errorf("simulate: --to: %w", err)
		}
	}
	if to <= from {
		return 0, 0, fmt.Errorf("simulate: --to %s is not after --from %s", f.to, f.from)
	}
	return from, to, nil
}

// parseOffset reads seconds ("3600", "90.5") or a Go duration ("1h30m").
func parseOffset(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if v < 0 || v > workload.MaxTraceSeconds || math.IsNaN(v) {
			return 0, fmt.Errorf("%q out of range", s)
		}
		return time.Duration(v * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is neither seconds nor a duration such as 1h", s)
	}
	return d, nil
}

func fmtOffset(d time.Duration) string {
	if d == time.Duration(math.MaxInt64) {
		return "end"
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
}

// resolveTrace finds the trace: the given path, or DefaultTrace relative
// to the working directory or to the repository root above it.
func resolveTrace(p string) (string, error) {
	if p != "" {
		return p, nil
	}
	if _, err := os.Stat(DefaultTrace); err == nil {
		return DefaultTrace, nil
	}
	dir, err := os.Getwd()
	if err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				c := filepath.Join(dir, filepath.FromSlash(DefaultTrace))
				if _, err := os.Stat(c); err == nil {
					return c, nil
				}
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("simulate: trace %s not found (relative to the working directory or the repository root); use --trace", DefaultTrace)
}

var csvHeader = []string{"policy", "jobs", "total_cost_usd", "jct_mean_s", "jct_p95_s", "deadline_jobs", "deadline_violation_pct",
	"sched_delay_mean_ms", "sched_delay_p99_ms", "agent_active_s", "deadline_missed", "completed", "rejected", "unfinished",
	"wait_mean_s", "wait_p95_s", "makespan_s", "placements", "utilisation_pct"}

func writeCSV(w io.Writer, rs []Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	i := strconv.Itoa
	for _, r := range rs {
		if err := cw.Write([]string{r.Policy, i(r.Jobs), g(r.TotalCostUSD), g(r.JCTMeanS), g(r.JCTP95S), i(r.DeadlineJobs),
			g(r.DeadlineViolationPct), g(r.SchedDelayMeanMS), g(r.SchedDelayP99MS), g(r.AgentActiveS), i(r.DeadlineMissed),
			i(r.Completed), i(r.Rejected), i(r.Unfinished), g(r.WaitMeanS), g(r.WaitP95S), g(r.MakespanS), i(r.Placements), g(r.UtilisationPct)}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeTable(w io.Writer, rs []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "policy\tjobs\tcost $\tvs "+rs[0].Policy+"\tJCT mean s\tJCT p95 s\twait mean s\tdeadline jobs\tviolations %\tsched mean ms\tsched p99 ms\tagent-active h\tutilisation %\t")
	for _, r := range rs {
		rel := "-"
		if rs[0].TotalCostUSD > 0 {
			rel = fmt.Sprintf("%+.1f%%", 100*(r.TotalCostUSD/rs[0].TotalCostUSD-1))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%s\t%.1f\t%.1f\t%.1f\t%d\t%.1f\t%.3f\t%.3f\t%.1f\t%.1f\t\n",
			r.Policy, r.Jobs, r.TotalCostUSD, rel, r.JCTMeanS, r.JCTP95S, r.WaitMeanS, r.DeadlineJobs,
			r.DeadlineViolationPct, r.SchedDelayMeanMS, r.SchedDelayP99MS, r.AgentActiveS/3600, r.UtilisationPct)
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
