package simulate

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/teams"
	"github.com/sparkpack/sparkpack/workload"
)

// DefaultTrace is the trace path relative to the repository root.
const DefaultTrace = "../shared/traces/FB-2009_samples_24_times_1hr_0.tsv"

// Defaults of the command's flags.
const (
	DefaultPolicies         = "fifo-spread,fifo-consolidate,morpheus,bfd,ilp,exact,gio,dap"
	DefaultDeadlineFraction = 0.5
	DefaultSlack            = 2.0
	DefaultSeed             = 1
)

type flags struct {
	trace, cluster, policies, format, chart string
	workload, hours, seeds                  string
	hour, jobs, sample                      int
	from, to                                string
	fraction, slack, scale                  float64
	seed                                    uint64
	promoteAfter, ilpLimit, powerOffAfter   time.Duration
	bootTime                                time.Duration
	bootAware                               bool
	notBeforeLead                           time.Duration
	quiet, compareDefault                   bool
	preemption                              string
	preemptProtect                          time.Duration
	preemptMaxShare                         float64
	maxPreemptions                          int
	estimates, appType, mix, executors      string
	learnedDecisions                        string
	userExecutors                           string
	estimateError, runNoise                 float64
	warmPool, warmHistory                   bool
	learnHistory                            bool
	missCost                                float64
	// teamsFile and teamMix: serve's teams file and the jobs' teams (teams.go).
	teamsFile, teamMix string
	// jobLog: --job-log, a CSV row or JSON line per job and run (joblog.go).
	jobLog string
}

// Workload modes of --workload.
const (
	WorkloadTrace  = "trace"
	WorkloadThesis = "thesis"
)

// Defaults of --deadline-fraction and --slack in --workload thesis (thesis
// section 4.6: every job has a deadline of 1.5 x its profiled duration).
const (
	ThesisDeadlineFraction = 1.0
	ThesisSlack            = 1.5
)

func newFlagSet(f *flags) *flag.FlagSet {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; --help goes to stdout
	fs.StringVar(&f.workload, "workload", WorkloadTrace, "jobs to run: trace (each trace job sized from its own bytes, docs/simulation.md) or thesis\n(thesis-like BigDataBench mix at the trace's arrival times: WordCount or Sort on 1-20 GB, PageRank with\n5-15 iterations on a 1-4 GB graph, drawn with --seed; default --deadline-fraction 1 --slack 1.5)")
	fs.IntVar(&f.jobs, "jobs", 0, "use only the first N submissions of each window (0: all); e.g. --workload thesis --hour 0 --jobs 50")
	fs.IntVar(&f.sample, "sample", 0, "replay N of each window's submissions drawn uniformly with the seed, at their own times (excludes --jobs):\nwith --hour/--hours, N jobs an hour over the whole hour; e.g. --workload thesis --hours 5,13 --sample 50")
	fs.StringVar(&f.hours, "hours", "", "run several one-hour windows, e.g. 0,22,16 (excludes --hour/--from/--to): results are aggregated per hour")
	fs.StringVar(&f.seeds, "seeds", "", "run several seeds, e.g. 1-5 or 1,2,7 (instead of --seed): results are aggregated over seeds (mean and spread)")
	fs.BoolVar(&f.compareDefault, "compare-default", false, "compare the default policy ("+DefaultPolicy().Name+") with the baselines (fifo-spread, fifo-consolidate,\nmorpheus, bfd; plus any --policies) and check, run by run, that it is no dearer than the cheapest and\nmisses no more deadlines than the best (dearer on the cost meter; with --power-off-after, on the bill)")
	fs.StringVar(&f.trace, "trace", "", "SWIM trace file (TSV: job id, submit s, gap s, map input bytes, shuffle bytes, output bytes);\ndefault "+DefaultTrace+" relative to the repository root, else the copy built into sparkpack")
	fs.IntVar(&f.hour, "hour", -1, "replay only the N-th one-hour sample, 0-23 (jobs submitted in [N h, N+1 h));\nexcludes --from/--to; -1, the default: the whole trace")
	fs.StringVar(&f.from, "from", "", "replay jobs submitted at or after this offset into the trace: seconds (3600) or a duration (1h)")
	fs.StringVar(&f.to, "to", "", "replay jobs submitted before this offset into the trace: seconds or a duration; default: the end")
	fs.StringVar(&f.cluster, "cluster", "thesis14", "cluster: thesis14 (6 x (4 cpu, 16 GiB, $0.24/h), 5 x (8, 32, $0.48/h), 3 x (12, 48, $0.72/h))\nor a cluster JSON file (see package clusterspec)")
	fs.StringVar(&f.policies, "policies", DefaultPolicies, "comma-separated policies to compare: fifo-spread, fifo-consolidate, morpheus, bfd, ilp, exact, gio, dap\n(dap, the default, runs under feasible-lpt; any other placement policy name runs under Algorithm 3;\nPLACEMENT@QUEUE runs a placement policy under a queue discipline: algorithm3, fifo, feasible-edf or feasible-lpt)")
	fs.Float64Var(&f.fraction, "deadline-fraction", DefaultDeadlineFraction, "fraction of the jobs, chosen at random with --seed, that get a deadline (0 to 1)")
	fs.Float64Var(&f.slack, "slack", DefaultSlack, "deadline = submission + profiled duration x slack (> 0; the profiled duration is the\njob's run time packed on one uncontended agent)")
	fs.Float64Var(&f.scale, "scale", 1, "multiply every job's input, shuffle and output bytes by this factor (> 0) to load the cluster more")
	fs.Uint64Var(&f.seed, "seed", DefaultSeed, "seed of every random draw: the deadline jobs, the thesis-like or --mix jobs, --sample, the users'\nestimates, --run-noise, --team-mix; the same seed gives the same results")
	fs.StringVar(&f.format, "format", "table", "output format: table, json (one array, one object per policy; with --hours/--seeds one object per run),\ncsv (one row per policy and run) or markdown (the aggregated tables of docs/simulation.md)")
	fs.StringVar(&f.chart, "chart", "", "also write an SVG chart (cost and deadline violations per policy, cumulative cost over time) to this file")
	fs.DurationVar(&f.promoteAfter, "promote-after", 0, "anti-starvation age of the scheduler core: a regular job skipped this long is promoted\n(default 15m; negative disables)")
	fs.DurationVar(&f.ilpLimit, "ilp-time-limit", 0, "ilp's wall-clock safety net per CBC solve (default 2s): CBC stops on a 100-node bound first,\nso ilp's plans do not depend on the machine's load unless this limit stops a solve (outcome time-limit)")
	fs.DurationVar(&f.powerOffAfter, "power-off-after", 0, "power management as in serve: agents idle this long are powered off and powered on again when a plan\nneeds them (their jobs wait --boot-time); the bill column then shows what the cloud would bill (0: off)")
	fs.DurationVar(&f.bootTime, "boot-time", 60*time.Second, "with --power-off-after: how long a powered-off agent takes to boot")
	fs.DurationVar(&f.notBeforeLead, "not-before-lead", 0, "model earliest start times (notBefore): every deadline job is submitted this much before its\narrival, with notBefore at the arrival and the same deadline (its wait counts from the arrival; 0: off)")
	fs.BoolVar(&f.bootAware, "boot-aware", true, "with --power-off-after: placement counts the boot time as serve does (a job waits for a booting agent,\nshares one boot, or waits for warm capacity when its deadline leaves the slack; docs/power.md);\n--boot-aware=false starts a job at once on a plan that powers agents on")
	fs.StringVar(&f.preemption, "preemption", "none", "eviction policy for deadline jobs that would miss their deadline waiting, as serve's --preemption:\nnone, mdf (furthest deadline first), mlf (largest laxity first), srt (longest remaining first), or a\ncomma-separated list to compare (each policy of --policies runs once per entry, named e.g. dap+mdf)")
	fs.DurationVar(&f.preemptProtect, "preempt-protect", 0, "with --preemption: never evict a job expected to end within this (default 1m)")
	fs.Float64Var(&f.preemptMaxShare, "preempt-max-share", 0, "with --preemption: evict at most this share of the running jobs' cpus per minute (default 0.5)")
	fs.IntVar(&f.maxPreemptions, "max-preemptions", 0, "with --preemption: a job evicted this often is not evicted again (default 3)")
	fs.StringVar(&f.estimates, "estimates", EstimatesOracle, "what the scheduler is told of run times: oracle (the profiled run time), user (the profiled run time\ntimes exp(N(0, --estimate-error)), drawn with the seed) or learned (the user's estimate corrected online\nby the performance model from the simulated runs that finished, after a warm-up; docs/simulation.md)")
	fs.StringVar(&f.learnedDecisions, "learned-decisions", LearnedDecisionsModel, "with --estimates learned: told (the learned estimate told at submission decides, fixed for the job's\nlife) or model (as live: every decision that needs a run time asks the model for the job on the plan in\nquestion, p50 for cost, p90 for deadlines; jobs carry their users' estimates, which it corrects);\nmodel is the default (docs/simulation.md, \"Learned decisions as live\")")
	fs.StringVar(&f.executors, "executors", ExecutorsUser, "user (every job runs with its user's executor count) or auto (right-sized at submission by the learned\nmodel once its signature has a few runs: with a deadline the cheapest count whose p90 meets it; docs/simulation.md)")
	fs.Float64Var(&f.estimateError, "estimate-error", 0.5, "with --estimates user or learned: sigma of the log-normal error of the users' estimates (0 to 5)")
	fs.Float64Var(&f.runNoise, "run-noise", 0, "multiply every job's simulated run time by exp(N(0, SIGMA)), drawn per job with the seed (0 to 5;\n0: runs take exactly what the performance model says)")
	fs.StringVar(&f.appType, "app-type", AppTypeKnown, "known (placement infers the application type from the main class) or hidden (opaque main classes:\npolicies see no application type and fall back)")
	fs.StringVar(&f.userExecutors, "user-executors", workload.UserExecutorsProportional, "how the simulated users choose a job's executor count (--workload thesis or --mix): proportional\n(one up to 256 MiB of input, one more per doubling, at most 16) or habit (one count per signature,\ndrawn once from 2, 4, 8, 16, whatever the input; docs/simulation.md)")
	fs.StringVar(&f.mix, "mix", "", "JSON job mix (application kinds with shares, input ranges, iterations, shuffle ratios; see\ndocs/simulation.md and examples/mixes/) drawn at the trace's arrival times instead of the thesis mix;\nimplies --workload thesis's deadline defaults")
	fs.BoolVar(&f.warmPool, "warm-pool", false, "with --power-off-after: keep a warm pool sized from a forecast of the arrivals (fitted online from those\nreplayed so far): idle agents kept on, or powered on ahead, while they save more in expected missed deadlines\n(--miss-cost each) than they cost over the boot time (docs/power.md)")
	fs.Float64Var(&f.missCost, "miss-cost", 0, "with --warm-pool: the price of one missed deadline in USD (default 2)")
	fs.BoolVar(&f.learnHistory, "learn-history", false, "with --estimates learned or --executors auto: the model starts from the runs of the trace's window\nbefore each window (the hour before, drawn as the window is: its first --jobs or --sample N; the\nhour before hour 0 is hour 23), simulated first with the same policy and options, as serve's model\nstarts from its stored run history; without it, each window's model starts empty")
	fs.BoolVar(&f.warmHistory, "warm-history", false, "with --warm-pool: the forecast starts from the jobs of the trace's hour before each window (built as the\nwindow's are, never replayed), as serve's starts from its stored history; without it, from the window's first arrivals")
	fs.StringVar(&f.teamsFile, "teams", "", "run the scheduler with this teams file, as serve --teams (weights, guarantees, maximums;\ndocs/teams.md); with --team-mix the results show each team's jobs, waiting, deadlines and cost")
	fs.StringVar(&f.teamMix, "team-mix", "", "give each job a team, drawn with the seed: team=share,... e.g. analytics=0.5,ml=0.3,etl=0.2\n(- names jobs without a team)")
	fs.StringVar(&f.jobLog, "job-log", "", "also write a record per job and run to this file, CSV, or JSON lines if it ends in .jsonl: its arrival,\nstart, wait, run, cpus, slack (deadline minus arrival minus profiled run time), whether it missed, the\narrivals in the boot time before it, the free cpus of the agents on at its submission (total and on one\nagent), its profiled and estimated run time, run noise, and the agents it ran on (their shares in JSON only)")
	fs.BoolVar(&f.quiet, "quiet", false, "no progress lines on stderr")
	return fs
}

// Command runs `sparkpack simulate`: it parses args (without the command
// name), replays each window (and seed) once per policy through the
// scheduler core on a virtual clock, and prints the results to stdout;
// progress goes to stderr. --help prints the usage to stdout and returns nil.
func Command(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f flags
	fs := newFlagSet(&f)
	usage := func() {
		out := fs.Output()
		fmt.Fprintf(out, "Usage: sparkpack simulate [flags]\n\n"+
			"Replays the SWIM Facebook 2009 trace through sparkpack's scheduler core and placement policies on a\n"+
			"virtual clock (no Mesos, no database) and compares, per policy: total cost ($, thesis eq. 4.11),\n"+
			"deadline violations (%%; deadline met %% counts rejected jobs as not met), mean and p95 job\n"+
			"completion time, mean and p99 scheduling delay (real time spent placing), queue wait and\n"+
			"agent-active seconds. The default policy (the one `sparkpack serve` uses) is %s.\n"+
			"Deterministic for a given --seed (except the measured scheduling delays). See docs/simulation.md\n"+
			"for the job and performance model.\n\nFlags:\n", DefaultPolicy().Name)
		fs.PrintDefaults()
	}
	fs.Usage = func() {} // errors name the flag; --help prints the usage to stdout
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stdout)
			usage()
			return nil
		}
		if near := nearFlags(fs, err); len(near) > 0 {
			return fmt.Errorf("%w (did you mean --%s? see --help)", err, strings.Join(near, " or --"))
		}
		return fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		// Parsing stops at the first argument that is not a flag: the
		// flags after it were not read either.
		return fmt.Errorf("unexpected argument %q: simulate takes flags only, and the flags after it were not read (a flag's value with spaces needs quotes; see --help)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	var mix *workload.Mix
	if f.mix != "" {
		if set["workload"] && f.workload != WorkloadThesis {
			return fmt.Errorf("--mix replaces the thesis mix: use it with --workload thesis (or without --workload)")
		}
		f.workload = WorkloadThesis
		m, err := readMix(f.mix)
		if err != nil {
			return err
		}
		mix = &m
	}
	switch f.estimates {
	case EstimatesOracle, EstimatesUser, EstimatesLearned:
	default:
		return fmt.Errorf("--estimates %q: want oracle, user or learned", f.estimates)
	}
	if math.IsNaN(f.estimateError) || f.estimateError < 0 || f.estimateError > 5 {
		return fmt.Errorf("--estimate-error %g not in [0, 5]", f.estimateError)
	}
	if math.IsNaN(f.runNoise) || f.runNoise < 0 || f.runNoise > 5 {
		return fmt.Errorf("--run-noise %g not in [0, 5]", f.runNoise)
	}
	if err := checkExecutors(f.executors); err != nil {
		return fmt.Errorf("--%w", err)
	}
	if err := checkLearnedDecisions(f.learnedDecisions); err != nil {
		return fmt.Errorf("--%w", err)
	}
	switch f.userExecutors {
	case workload.UserExecutorsProportional:
	case workload.UserExecutorsHabit:
		if f.workload != WorkloadThesis && f.mix == "" {
			return fmt.Errorf("--user-executors habit: use it with --workload thesis or --mix (the trace's jobs have no signature)")
		}
	default:
		return fmt.Errorf("--user-executors %q: want proportional or habit", f.userExecutors)
	}
	switch f.appType {
	case AppTypeKnown, AppTypeHidden:
	default:
		return fmt.Errorf("--app-type %q: want known or hidden", f.appType)
	}
	switch f.workload {
	case WorkloadTrace:
	case WorkloadThesis:
		if !set["deadline-fraction"] {
			f.fraction = ThesisDeadlineFraction
		}
		if !set["slack"] {
			f.slack = ThesisSlack
		}
	default:
		return fmt.Errorf("--workload %q: want trace or thesis", f.workload)
	}
	if f.jobs < 0 {
		return fmt.Errorf("--jobs %d must be >= 0", f.jobs)
	}
	if err := checkSample(f.sample, f.jobs, set); err != nil {
		return err
	}
	windows, err := f.windows(fs, set)
	if err != nil {
		return err
	}
	seeds := []uint64{f.seed}
	if f.seeds != "" {
		if set["seed"] {
			return errors.New("use --seed or --seeds, not both")
		}
		if seeds, err = parseSeeds(f.seeds); err != nil {
			return fmt.Errorf("--seeds: %w", err)
		}
	}
	if f.fraction < 0 || f.fraction > 1 || math.IsNaN(f.fraction) {
		return fmt.Errorf("--deadline-fraction %g not in [0, 1]", f.fraction)
	}
	if !(f.slack > 0) || math.IsInf(f.slack, 0) {
		return fmt.Errorf("--slack %g must be > 0", f.slack)
	}
	if !(f.scale > 0) || math.IsInf(f.scale, 0) {
		return fmt.Errorf("--scale %g must be > 0", f.scale)
	}
	if f.preemptMaxShare < 0 || f.preemptMaxShare > 1 || math.IsNaN(f.preemptMaxShare) {
		return fmt.Errorf("--preempt-max-share %g not in (0, 1]", f.preemptMaxShare)
	}
	if f.maxPreemptions < 0 {
		return fmt.Errorf("--max-preemptions %d must be >= 1", f.maxPreemptions)
	}
	// Options read a zero as "the default": an explicit zero would run
	// with the default and say nothing (--boot-time 0 booted in 60 s).
	for _, z := range []struct {
		flag  string
		zero  bool
		means string
	}{
		{"boot-time", f.bootTime <= 0, "must be > 0 (0 ran with the default 60s; 1s models a near-instant boot)"},
		{"miss-cost", f.missCost == 0, "must be > 0 (0 ran with the default $2; without --warm-pool no agent is kept warm)"},
		{"preempt-max-share", f.preemptMaxShare == 0, "not in (0, 1] (0 ran with the default 0.5)"},
		{"max-preemptions", f.maxPreemptions == 0, "must be >= 1 (0 ran with the default 3)"},
		{"preempt-protect", f.preemptProtect == 0, "is read as the default 1m: give a duration, or a negative one (-1s) for no protection"},
		{"ilp-time-limit", f.ilpLimit <= 0, "must be > 0 (0 ran with the default, 2s since 2026-11-27, 200ms before)"},
		{"promote-after", f.promoteAfter == 0, "is read as the default 15m: give a duration, or a negative one (-1s) to disable promotion"},
	} {
		if set[z.flag] && z.zero {
			return fmt.Errorf("--%s %s %s", z.flag, fs.Lookup(z.flag).Value, z.means)
		}
	}
	// A negative duration ran as 0 (power management off, no lead) and
	// said nothing.
	if f.powerOffAfter < 0 {
		return fmt.Errorf("--power-off-after %s must be >= 0 (0, the default, keeps every agent on; e.g. 2m powers agents off after 2 minutes idle)", f.powerOffAfter)
	}
	if f.notBeforeLead < 0 {
		return fmt.Errorf("--not-before-lead %s must be >= 0 (0, the default, submits every job at its arrival; e.g. 5m submits deadline jobs 5 minutes ahead)", f.notBeforeLead)
	}
	if f.warmPool && f.powerOffAfter <= 0 {
		return errors.New("--warm-pool needs --power-off-after")
	}
	if f.warmHistory && !f.warmPool {
		return errors.New("--warm-history needs --warm-pool")
	}
	if f.learnHistory && f.estimates != EstimatesLearned && f.executors != ExecutorsAuto {
		return errors.New("--learn-history needs --estimates learned or --executors auto (nothing else learns)")
	}
	if f.missCost < 0 || math.IsNaN(f.missCost) || math.IsInf(f.missCost, 0) {
		return fmt.Errorf("--miss-cost %g must be >= 0", f.missCost)
	}
	var teamsCfg *teams.Config
	if f.teamsFile != "" {
		if teamsCfg, err = teams.Load(f.teamsFile); err != nil {
			return fmt.Errorf("--teams: %w", err)
		}
	}
	var teamMix []TeamShare
	if f.teamMix != "" {
		if teamMix, err = ParseTeamMix(f.teamMix); err != nil {
			return fmt.Errorf("--team-mix: %w", err)
		}
	}
	switch f.format {
	case "table", "json", "csv", "markdown":
	default:
		return fmt.Errorf("--format %q: want table, json, csv or markdown", f.format)
	}
	specs, err := f.policySpecs(set)
	if err != nil {
		return err
	}
	// The verdict judges the default as serve runs it, without
	// preemption: with --preemption srt alone every policy ran as
	// "<name>+srt" and the verdict said the default had not run.
	if f.compareDefault && !slices.ContainsFunc(specs, func(p PolicySpec) bool { return p.Name == DefaultPolicy().Name }) {
		return fmt.Errorf("--compare-default judges %s as serve runs it by default, without preemption, and --preemption %s leaves none out: add none (e.g. --preemption none,%s), or drop --compare-default",
			DefaultPolicy().Name, f.preemption, f.preemption)
	}
	// Not progress: shown with --quiet too.
	for _, w := range append(ignoredFlags(f, set, specs), unlistedTeams(teamsCfg, teamMix, f.teamsFile)...) {
		fmt.Fprintf(stderr, "simulate: warning: %s\n", w)
	}
	cl, err := clusterspec.Named(f.cluster)
	if err != nil {
		return fmt.Errorf("--cluster: %w", err)
	}
	all, traceName, err := readTrace(f.trace)
	if err != nil {
		return err
	}
	multi := len(windows) > 1 || len(seeds) > 1
	if multi && f.chart != "" {
		return errors.New("--chart draws one run; drop --hours/--seeds or --chart")
	}
	// A run of no job prints a row of zeros (met 0%, $0) that reads as a
	// result: say which window is empty, before running any.
	// Errors name the trace as given: --trace /dev/null said "null holds
	// no job".
	given := traceName
	if f.trace != "" {
		given = f.trace
	}
	if len(all) == 0 {
		return fmt.Errorf("--trace %s holds no job: give a SWIM trace (TSV), or drop --trace for the FB-2009 trace", given)
	}
	for _, win := range windows {
		n := len(workload.Window(all, win.From, win.To))
		if n == 0 {
			return fmt.Errorf("%s: no job of %s is submitted in it: choose another --hour, --hours or --from/--to",
				win.Label, traceName)
		}
		// Fewer jobs than asked for: the run goes ahead with all of them,
		// and says so (the jobs column alone was easy to miss).
		for _, asked := range []struct {
			flag string
			n    int
		}{{"sample", f.sample}, {"jobs", f.jobs}} {
			if asked.n > n {
				fmt.Fprintf(stderr, "simulate: warning: --%s %d: %s has only %d submissions; all %d are replayed\n", asked.flag, asked.n, win.Label, n, n)
			}
		}
	}
	progress := io.Discard
	if !f.quiet {
		progress = stderr
	}
	var jobLog *jobLog
	if f.jobLog != "" {
		file, err := os.Create(f.jobLog)
		if err != nil {
			return fmt.Errorf("--job-log: %w", err)
		}
		defer file.Close()
		if jobLog, err = openJobLog(file, jobLogFormatOf(f.jobLog)); err != nil {
			return fmt.Errorf("--job-log: %w", err)
		}
	}
	var jobLogErr error
	model := workload.DefaultModel
	var runs []RunResult
	for _, win := range windows {
		for _, seed := range seeds {
			arrivals := f.arrivalsOf(workload.Window(all, win.From, win.To), seed)
			w := replayedWindow(win, arrivals, set)
			build := func(arrivals []workload.TraceJob) []workload.Job {
				var wl []workload.Job
				if mix != nil {
					wl = model.FromMix(arrivals, *mix, seed)
				} else if f.workload == WorkloadThesis {
					wl = model.Thesis(arrivals, workload.DefaultThesisMix, seed)
				} else {
					wl = model.FromTrace(Scale(arrivals, f.scale))
				}
				if f.userExecutors == workload.UserExecutorsHabit {
					wl = workload.Habit(wl, seed)
				}
				if f.workload == WorkloadThesis && f.scale != 1 {
					wl = scaleWorkload(wl, f.scale)
				}
				return wl
			}
			wl := build(arrivals)
			// The warm pool's forecast starts from the trace's hour before
			// the window, as serve's starts from its stored history.
			var past []workload.Job
			if f.warmPool && f.warmHistory {
				// With --sample, the hour before is drawn at the same N,
				// so that the forecast sees the window's rate.
				before := workload.Window(all, w.From-time.Hour, w.From)
				if f.sample > 0 {
					before = SampleArrivals(before, f.sample, seed)
				}
				past = build(before)
			}
			// The learned model starts from the window before, drawn as
			// this one is (the day wraps: before hour 0, hour 23).
			var learnPast []workload.Job
			var learnFrom time.Duration
			if f.learnHistory {
				span := w.To - w.From
				if learnFrom = w.From - span; learnFrom < 0 {
					learnFrom += 24 * time.Hour
				}
				learnPast = build(f.arrivalsOf(workload.Window(all, learnFrom, learnFrom+span), seed))
				fmt.Fprintf(progress, "simulate: each policy first learns from %d jobs of [%s, %s) (--learn-history)\n",
					len(learnPast), fmtOffset(learnFrom), fmtOffset(learnFrom+span))
			}
			fmt.Fprintf(progress, "simulate: %s workload, %d jobs from %s [%s, %s), seed %d, on %s (%d agents), %d policies\n",
				f.workload, len(wl), traceName, fmtOffset(w.From), fmtOffset(w.To), seed, cl.Name, len(cl.Agents), len(specs))
			rr := RunResult{Workload: f.workload, Window: w.Label, Hour: w.Hour, Seed: seed, Jobs: len(wl), PowerOff: f.powerOffAfter > 0,
				PowerOffAfterS: f.powerOffAfter.Seconds()}
			if w.Hour >= 0 {
				rr.Class = HourClass(len(workload.Hour(all, w.Hour)))
			}
			for _, p := range specs {
				began := time.Now()
				last := time.Time{}
				var logRun func([]JobRecord)
				if jobLog != nil {
					logRun = func(recs []JobRecord) {
						if jobLogErr == nil {
							jobLogErr = jobLog.write(w.Label, seed, p.Name, f.bootTime, recs)
						}
					}
				}
				r, err := Run(ctx, Options{
					Workload: wl, From: w.From, Cluster: cl, Policy: p,
					DeadlineFraction: f.fraction, Slack: f.slack, Seed: seed,
					PromoteAfter: f.promoteAfter, PolicyOptions: placement.Options{ILPTimeLimit: f.ilpLimit},
					PowerOffAfter: f.powerOffAfter, BootTime: f.bootTime, NoBootAware: !f.bootAware, NotBeforeLead: f.notBeforeLead, WarmPool: f.warmPool, MissCostUSD: f.missCost, WarmHistory: past,
					LearnHistory: learnPast, LearnHistoryFrom: learnFrom,
					PreemptProtect: f.preemptProtect, PreemptMaxShare: f.preemptMaxShare, MaxPreemptions: f.maxPreemptions,
					Estimates: f.estimates, EstimateError: f.estimateError, HideAppType: f.appType == AppTypeHidden, RunNoise: f.runNoise,
					Teams: teamsCfg, TeamMix: teamMix,
					Executors: f.executors, LearnedDecisions: f.learnedDecisions,
					JobLog: logRun,
					Progress: func(now time.Duration, done, total int) {
						if time.Since(last) < time.Second && done < total {
							return
						}
						last = time.Now()
						fmt.Fprintf(progress, "simulate: %-16s virtual %s  %d/%d jobs done\n", p.Name, fmtOffset(now), done, total)
					},
				})
				if err != nil {
					return fmt.Errorf("%s: %w", p.Name, err)
				}
				r.Default = p.Name == DefaultPolicy().Name
				cost := fmt.Sprintf("$%.2f", r.TotalCostUSD)
				if f.powerOffAfter > 0 {
					// What the operator pays under power management.
					cost = fmt.Sprintf("$%.2f on the meter, bill $%.2f", r.TotalCostUSD, r.BillUSD)
				}
				fmt.Fprintf(progress, "simulate: %-16s done in %s: %s, %d of %d deadlines missed\n", p.Name, time.Since(began).Round(time.Millisecond), cost, r.DeadlineMissed, r.DeadlineJobs)
				rr.Results = append(rr.Results, r)
			}
			runs = append(runs, rr)
		}
	}
	if jobLog != nil {
		if err := jobLog.flush(); jobLogErr == nil {
			jobLogErr = err
		}
		if jobLogErr != nil {
			return fmt.Errorf("--job-log: %w", jobLogErr)
		}
	}
	if f.chart != "" {
		w := windows[0]
		if err := writeChart(f.chart, runs[0].Results, chartTitle(runs[0].Jobs, w.From, w.To, cl.Name, f)); err != nil {
			return fmt.Errorf("--chart: %w", err)
		}
		fmt.Fprintf(progress, "simulate: chart written to %s\n", f.chart)
	}
	switch f.format {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if !multi {
			return enc.Encode(oneRunJSON(runs[0]))
		}
		return enc.Encode(runsJSON(runs))
	case "csv":
		return writeCSV(stdout, runs, multi)
	case "markdown":
		if err := writeMarkdown(stdout, Aggregate(runs), f.compareDefault); err != nil {
			return err
		}
		if err := writePreemption(stdout, Aggregate(runs), true); err != nil {
			return err
		}
		// The summaries the table prints (JSON and CSV carry their figures).
		if f.estimates != EstimatesOracle {
			writeEstimatesMarkdown(stdout, runs, f.estimates)
		}
		if f.executors == ExecutorsAuto {
			writeAutoSizedMarkdown(stdout, runs)
		}
		return nil
	}
	if !multi {
		if err := writeTable(stdout, runs[0].Results, runs[0].PowerOff); err != nil {
			return err
		}
	} else if err := writeAggregateTable(stdout, Aggregate(runs)); err != nil {
		return err
	}
	if err := writePreemption(stdout, Aggregate(runs), false); err != nil {
		return err
	}
	for _, run := range runs {
		label := ""
		if multi {
			// One block per run: say which.
			label = fmt.Sprintf(", %s, seed %d", run.Window, run.Seed)
		}
		if err := writeTeams(stdout, run.Results, label, run.PowerOff); err != nil {
			return err
		}
	}
	if f.estimates != EstimatesOracle {
		writeEstimates(stdout, runs, f.estimates)
	}
	if f.executors == ExecutorsAuto {
		writeAutoSized(stdout, runs)
	}
	if f.compareDefault {
		return writeVerdict(stdout, Aggregate(runs))
	}
	return nil
}

// policySpecs resolves --policies (and --compare-default).
func (f *flags) policySpecs(set map[string]bool) ([]PolicySpec, error) {
	list := f.policies
	if f.compareDefault && !set["policies"] {
		list = strings.Join(Baselines, ",")
	}
	var specs []PolicySpec
	seen := map[string]bool{}
	add := func(name string) error {
		name = strings.TrimSpace(name)
		if name == "" || seen[name] {
			return nil
		}
		p, err := LookupPolicy(name)
		if err != nil {
			return fmt.Errorf("--policies: %w", err)
		}
		seen[name] = true
		specs = append(specs, p)
		return nil
	}
	for _, name := range strings.Split(list, ",") {
		if err := add(name); err != nil {
			return nil, err
		}
	}
	if f.compareDefault {
		for _, name := range append(slices.Clone(Baselines), DefaultPolicy().Name) {
			if err := add(name); err != nil {
				return nil, err
			}
		}
	}
	if len(specs) == 0 {
		return nil, errors.New("--policies is empty")
	}
	var pres []scheduler.PreemptionPolicy
	for _, name := range strings.Split(f.preemption, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		p, err := scheduler.ParsePreemption(name)
		if err != nil {
			return nil, fmt.Errorf("--preemption: %w", err)
		}
		if !slices.Contains(pres, p) {
			pres = append(pres, p)
		}
	}
	if len(pres) == 0 {
		return nil, errors.New("--preemption is empty (none, mdf, mlf or srt)")
	}
	var out []PolicySpec
	for _, sp := range specs {
		for _, p := range pres {
			out = append(out, sp.WithPreemption(p))
		}
	}
	return out, nil
}

func chartTitle(n int, from, to time.Duration, cluster string, f flags) string {
	s := fmt.Sprintf("%d %s jobs, trace [%s, %s), %s, deadline fraction %g, slack %g, seed %d", n, f.workload, fmtOffset(from), fmtOffset(to), cluster, f.fraction, f.slack, f.seed)
	if f.sample > 0 {
		s += " (sampled across the window)"
	}
	if f.scale != 1 {
		s += fmt.Sprintf(", data x %g", f.scale)
	}
	if f.powerOffAfter > 0 {
		// The bars and curves are the meter's; under power management
		// the operator pays the bill, which the chart does not draw.
		s += fmt.Sprintf("\npower off after %s: the costs drawn are the core's meter, not the bill (in the table)", f.powerOffAfter)
	}
	return s
}
