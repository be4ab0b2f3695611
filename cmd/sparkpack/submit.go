package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparkrest"
)

// kvFlag collects repeated key=value flags.
type kvFlag map[string]string

func (k kvFlag) String() string { return fmt.Sprint(map[string]string(k)) }
func (k kvFlag) Set(v string) error {
	key, val, ok := strings.Cut(v, "=")
	if !ok || key == "" {
		return fmt.Errorf("want key=value, got %q", v)
	}
	k[key] = val
	return nil
}

// listFlag collects repeated values.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, " ") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// memFlag is a memory size in MiB, given as a whole number of MiB (4096)
// or with a unit as Spark takes it (4096m, 4g).
type memFlag struct{ mb int }

func (m *memFlag) String() string {
	if m == nil || m.mb == 0 {
		return ""
	}
	return strconv.Itoa(m.mb)
}

func (m *memFlag) Set(v string) error {
	mb, err := sparkrest.ParseSizeMB(v)
	if err != nil || mb <= 0 {
		return fmt.Errorf("%q: give MiB as a whole number (e.g. 4096) or with a unit (4096m, 4g)", v)
	}
	m.mb = mb
	return nil
}

type submitConfig struct {
	clientFlags
	file, name, appResource, mainClass, deadline string
	executors                                    executorsFlag
	cores                                        int
	mem, overhead, driverMem                     memFlag
	driverCores                                  float64
	retries                                      int
	minExecutors, maxExecutors, iterations       int
	inputSizeGB                                  float64
	duration                                     float64
	follow                                       bool
	poll, timeout                                time.Duration
	retryFor                                     time.Duration
	args                                         listFlag
	conf, env, labels                            kvFlag
	set                                          map[string]bool
	notBefore                                    string // --not-before (notbefore.go)
}

// requiredFlags are the flags a job needs unless its -f file gives them.
var requiredFlags = []string{"app-resource", "main-class", "executors", "executor-cores", "executor-memory"}

// fieldFlags maps the job contract's fields to the flags that set them.
var fieldFlags = map[string]string{
	"app.appResource": "--app-resource", "app.mainClass": "--main-class", "app.args": "--arg",
	"app.sparkConf": "--conf", "app.environment": "--env", "labels": "--label", "name": "--name",
	"executors": "--executors", "executorCores": "--executor-cores", "executorMemoryMB": "--executor-memory",
	"memoryOverheadMB": "--memory-overhead", "driver.cores": "--driver-cores", "driver.memoryMB": "--driver-memory",
	"driver": "--driver-cores/--driver-memory", "deadline": "--deadline", "estimatedDurationSeconds": "--estimated-duration",
	"retries": "--retries", "id": "the id in -f", "minExecutors": "--min-executors", "maxExecutors": "--max-executors",
	"inputSizeGB": "--input-size-gb", "iterations": "--iterations",
}

func runSubmit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return submitOrPlan(ctx, "submit", args, stdout, stderr)
}

// submitOrPlan is `sparkpack submit` (name "submit") and `sparkpack plan`
// (name "plan": submit --dry-run, without the flags that follow a
// submitted job).
func submitOrPlan(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	c := submitConfig{conf: kvFlag{}, env: kvFlag{}, labels: kvFlag{}}
	plan := name == "plan"
	fs := newFlagSet(name, stderr)
	c.clientFlags.register(fs)
	req := "(required unless -f gives it) "
	fs.StringVar(&c.file, "f", "", "job JSON file ('-' for standard input); the flags below override its fields")
	fs.StringVar(&c.name, "name", "", "job name")
	fs.StringVar(&c.appResource, "app-resource", "", req+"application jar or file, e.g. local:///opt/spark/examples/jars/spark-examples.jar")
	fs.StringVar(&c.mainClass, "main-class", "", req+"main class, e.g. org.apache.spark.examples.SparkPi")
	fs.Var(&c.args, "arg", "an application argument (repeat for more)")
	fs.Var(c.conf, "conf", "a Spark property key=value (repeat)")
	fs.Var(c.env, "env", "an environment variable NAME=value (repeat)")
	fs.Var(c.labels, "label", "a label key=value (repeat)")
	fs.Var(&c.executors, "executors", req+"number of executors, or auto: sparkpack chooses from the learned run times (with a deadline the cheapest count that meets it; bounds --min-executors, --max-executors)")
	fs.IntVar(&c.minExecutors, "min-executors", 0, "with --executors auto: the least it may choose")
	fs.IntVar(&c.maxExecutors, "max-executors", 0, "with --executors auto: the most it may choose (default 32)")
	fs.Float64Var(&c.inputSizeGB, "input-size-gb", 0, "the job's input size in GB (a hint for the learned run times)")
	fs.IntVar(&c.iterations, "iterations", 0, "the job's iterations (a hint for the learned run times)")
	fs.IntVar(&c.cores, "executor-cores", 0, req+"cpus per executor")
	fs.Var(&c.mem, "executor-memory", req+"memory per executor: MiB (4096) or with a unit (4096m, 4g)")
	fs.Var(&c.mem, "executor-memory-mb", "the same as --executor-memory")
	fs.Var(&c.overhead, "memory-overhead", "memory overhead per executor, like --executor-memory (default: Spark's max(384 MiB, 10%))")
	fs.Var(&c.overhead, "memory-overhead-mb", "the same as --memory-overhead")
	fs.Float64Var(&c.driverCores, "driver-cores", 0, "cpus of the driver (default 1)")
	fs.Var(&c.driverMem, "driver-memory", "memory of the driver, like --executor-memory (default 1g)")
	fs.StringVar(&c.deadline, "deadline", "", "deadline: an RFC 3339 time, seconds from now, or a duration such as 15m")
	fs.StringVar(&c.notBefore, "not-before", "", "earliest start: an RFC 3339 time or a duration from now such as 2h; the job runs inside\n[not-before, deadline] when that is cheapest")
	fs.Float64Var(&c.duration, "estimated-duration", 0, "estimated run time in seconds")
	fs.IntVar(&c.retries, "retries", -1, "how often a failed driver is launched again (0-10; default 0, or the -f file's)")
	fs.DurationVar(&c.retryFor, "retry-for", 30*time.Second, "while sparkpack does not answer (connection refused, 503 while it restarts or waits for PostgreSQL), try again for up to this long, saying so; never on a refusal (4xx, but for a 429 with Retry-After, which is waited for). The job carries its own id: it is stored once however often it is sent (0: try once)")
	dryRun := &plan
	var out *outputFormat
	if plan {
		out = registerOutput(fs, "json or yaml print the server's answer; a plan has no id for name")
		fs.Usage = func() {
			fmt.Fprintln(fs.Output(), "Usage: sparkpack plan [flags]   (where the job would go now, what it would add to the bill, when it would start and end; submits nothing)")
			fmt.Fprintln(fs.Output(), "  e.g. sparkpack plan --app-resource local:///opt/spark/examples/jars/spark-examples.jar \\")
			fmt.Fprintln(fs.Output(), "         --main-class org.apache.spark.examples.SparkPi --executors 2 --executor-cores 1 --executor-memory 1g --deadline 30m")
			fs.PrintDefaults()
		}
	} else {
		fs.BoolVar(&c.follow, "follow", false, "follow the job until it ends, printing its state; exit 0 only when it FINISHED")
		fs.DurationVar(&c.poll, "poll", time.Second, "with --follow: how often to ask (at least 100ms)")
		fs.DurationVar(&c.timeout, "timeout", 0, "with --follow: give up after this long (0: never)")
		dryRun = fs.Bool("dry-run", false, "submit nothing: say where the job would go now, what it would add to the bill, and when it would start and end (the same as sparkpack plan)")
		out = registerOutput(fs, "a submission prints the job's id: table or name; with --dry-run, table, wide, or json or yaml for the server's answer")
		fs.Usage = func() {
			fmt.Fprintln(fs.Output(), "Usage: sparkpack submit [flags]   (prints the job id; the state goes to standard error)")
			fmt.Fprintln(fs.Output(), "  e.g. sparkpack submit --app-resource local:///opt/spark/examples/jars/spark-examples.jar \\")
			fmt.Fprintln(fs.Output(), "         --main-class org.apache.spark.examples.SparkPi --executors 2 --executor-cores 1 --executor-memory 1g --follow")
			fs.PrintDefaults()
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	c.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { c.set[f.Name] = true })
	if err := c.checkModeFlags(*dryRun, *out); err != nil {
		return err
	}
	body, err := c.jobBody()
	if err != nil {
		return err
	}
	cl, err := c.client()
	if err != nil {
		return err
	}
	if c.retryFor < 0 {
		return fmt.Errorf("--retry-for %s: want a duration of 0 or more (0: try once)", c.retryFor)
	}
	cl.retryFor, cl.stderr = c.retryFor, stderr
	if *dryRun {
		return planJob(ctx, cl, body, *out, stdout)
	}
	var job api.JobView
	status, err := cl.do(ctx, http.MethodPost, "/api/v1/jobs", body, &job)
	if err != nil && refused(err) && c.retryFor > 0 {
		return fmt.Errorf("%w (tried for --retry-for %s)", explain(err, "submit"), c.retryFor)
	}
	if err != nil {
		return explain(err, "submit")
	}
	fmt.Fprintln(stdout, job.ID)
	again := ""
	if status == http.StatusOK {
		again = " (submitted before with this id)"
	}
	if job.State == scheduler.Rejected {
		return fmt.Errorf("job %s was REJECTED%s: %s; change the job and submit it again", job.ID, again, rejectReason(job))
	}
	fmt.Fprintf(stderr, "job %s%s: %s%s\n", job.ID, again, job.State, stateNote(job.Job))
	if !c.follow {
		return nil
	}
	// The line above said the state: follow prints each change from here
	// (it printed it again, "QUEUED" then "QUEUED after 0s").
	return followJob(ctx, cl, c.poll, c.timeout, job.Job, true, stderr)
}

// rejectReason is why a job was rejected (its waiting reason or last event).
func rejectReason(v api.JobView) string {
	if v.WaitingReason != "" {
		return v.WaitingReason
	}
	for i := len(v.Events) - 1; i >= 0; i-- {
		if v.Events[i].Reason != "" {
			return v.Events[i].Reason
		}
	}
	return "no reason given"
}

// stateNote says why a job waits and whether its deadline is at risk.
func stateNote(j scheduler.Job) string {
	var parts []string
	if r := j.WaitingReason; r != "" && !strings.EqualFold(r, string(j.State)) {
		parts = append(parts, r)
	}
	// The flag stays on an ended job (its deadline line says met or
	// missed), and a job without a deadline is flagged for running past
	// its predicted run time: say only what is true now.
	switch {
	case !j.AtRisk || j.State.Terminal():
	case j.DeadlineAt != nil:
		parts = append(parts, "at risk of missing its deadline")
	default:
		parts = append(parts, "running past its predicted run time")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// jobBody builds the job JSON from -f and the flags, validated locally
// with the same rules as the server, with a client-chosen id so that
// retries are idempotent. Missing required flags are reported together.
func (c *submitConfig) jobBody() ([]byte, error) {
	var spec scheduler.Spec
	if c.file != "" {
		var r io.Reader = os.Stdin
		if c.file != "-" {
			f, err := os.Open(c.file)
			if err != nil {
				return nil, fmt.Errorf("-f: %w", err)
			}
			defer f.Close()
			r = f
		}
		s, err := scheduler.DecodeSpec(io.LimitReader(r, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("job file %s: %w", c.file, err)
		}
		spec = s
	}
	set := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	set(&spec.Name, c.name)
	set(&spec.App.AppResource, c.appResource)
	set(&spec.App.MainClass, c.mainClass)
	if len(c.args) > 0 {
		spec.App.Args = c.args
	}
	merge := func(dst *map[string]string, src kvFlag) {
		if len(src) == 0 {
			return
		}
		if *dst == nil {
			*dst = map[string]string{}
		}
		for k, v := range src {
			(*dst)[k] = v
		}
	}
	merge(&spec.App.SparkConf, c.conf)
	merge(&spec.App.Environment, c.env)
	merge(&spec.Labels, c.labels)
	if c.set["executors"] {
		spec.Executors, spec.Sizing = c.executors.n, nil
		if c.executors.auto {
			spec.Executors, spec.Sizing = 0, &scheduler.Sizing{Auto: true}
		}
	}
	if c.set["min-executors"] {
		spec.MinExecutors = c.minExecutors
	}
	if c.set["max-executors"] {
		spec.MaxExecutors = c.maxExecutors
	}
	if c.set["input-size-gb"] {
		spec.InputSizeGB = c.inputSizeGB
	}
	if c.set["iterations"] {
		spec.Iterations = c.iterations
	}
	if c.set["executor-cores"] {
		spec.ExecutorCores = c.cores
	}
	if c.mem.mb != 0 {
		spec.ExecutorMemoryMB = c.mem.mb
	}
	if c.overhead.mb != 0 {
		spec.MemoryOverheadMB = c.overhead.mb
	}
	if c.driverCores != 0 || c.driverMem.mb != 0 {
		d := spec.DriverOrDefault()
		if c.driverCores != 0 {
			d.Cores = c.driverCores
		}
		if c.driverMem.mb != 0 {
			d.MemoryMB = c.driverMem.mb
		}
		spec.Driver = &d
	}
	if c.retries >= 0 {
		spec.Retries = c.retries
	}
	if c.duration != 0 {
		spec.EstimatedDurationSeconds = c.duration
	}
	if c.deadline != "" {
		d, err := parseDeadlineFlag(c.deadline)
		if err != nil {
			return nil, err
		}
		spec.Deadline = d
	}
	if c.notBefore != "" {
		nb, err := parseNotBeforeFlag(c.notBefore, time.Now())
		if err != nil {
			return nil, err
		}
		spec.NotBefore = nb
	}
	var missing []string
	for _, name := range requiredFlags {
		var empty bool
		switch name {
		case "app-resource":
			empty = spec.App.AppResource == ""
		case "main-class":
			empty = spec.App.MainClass == ""
		case "executors":
			empty = spec.Executors == 0 && !c.set["executors"] && !spec.AutoExecutors()
		case "executor-cores":
			empty = spec.ExecutorCores == 0 && !c.set["executor-cores"]
		case "executor-memory":
			empty = spec.ExecutorMemoryMB == 0
		}
		if empty {
			missing = append(missing, "--"+name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required flags: %s (or give them in a job file with -f; see sparkpack submit --help)", strings.Join(missing, ", "))
	}
	if spec.ID == "" {
		spec.ID = uuid.NewString()
	}
	if err := spec.Validate(); err != nil {
		return nil, flagError(err)
	}
	if spec.AutoExecutors() {
		return autoJSON(&spec)
	}
	return json.Marshal(&spec)
}

// executorsFlag is --executors: a count or "auto".
type executorsFlag struct {
	n    int
	auto bool
}

func (f *executorsFlag) String() string {
	if f.auto {
		return "auto"
	}
	return strconv.Itoa(f.n)
}

func (f *executorsFlag) Set(v string) error {
	if strings.EqualFold(strings.TrimSpace(v), "auto") {
		f.n, f.auto = 0, true
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return fmt.Errorf("want a whole number or auto, got %q", v)
	}
	f.n, f.auto = n, false
	return nil
}

// autoJSON is the job's JSON with "executors": "auto" (the contract's
// form; sizing is sparkpack's to set).
func autoJSON(spec *scheduler.Spec) ([]byte, error) {
	b, err := json.Marshal(spec)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "sizing")
	m["executors"] = json.RawMessage(`"auto"`)
	return json.Marshal(m)
}

// flagError names the flag behind a validation error of the job contract.
func flagError(err error) error {
	var fe *scheduler.FieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("invalid job: %w", err)
	}
	keys := make([]string, 0, len(fieldFlags))
	for k := range fieldFlags {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) })
	for _, k := range keys {
		if fe.Field == k || strings.HasPrefix(fe.Field, k+".") || strings.HasPrefix(fe.Field, k+"[") {
			return fmt.Errorf("%s: %s (job field %s)", fieldFlags[k], fe.Msg, fe.Field)
		}
	}
	return fmt.Errorf("invalid job: %w", err)
}

// parseDeadlineFlag reads --deadline: an RFC 3339 time, a number of
// seconds from now, or a Go duration such as 15m or 1h30m.
func parseDeadlineFlag(v string) (*scheduler.Deadline, error) {
	var raw string
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		raw = v
	} else if d, err := time.ParseDuration(v); err == nil {
		raw = strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
	} else {
		raw = strconv.Quote(v)
	}
	var d scheduler.Deadline
	if err := d.UnmarshalJSON([]byte(raw)); err != nil {
		return nil, fmt.Errorf("--deadline %q: want an RFC 3339 time (2026-11-22T10:00:00Z), seconds from now (600) or a duration (10m)", v)
	}
	return &d, nil
}

// followJob prints the job's state whenever it changes until it ends
// (printed: the caller has printed its state as job has it); the exit
// status is 0 only when it finished.
func followJob(ctx context.Context, cl *apiClient, poll, timeout time.Duration, job scheduler.Job, printed bool, stderr io.Writer) error {
	start := time.Now()
	last := scheduler.State("")
	lastNote := ""
	if printed {
		last, lastNote = job.State, stateNote(job)
	}
	for {
		if note := stateNote(job); job.State != last || note != lastNote {
			fmt.Fprintf(stderr, "job %s: %s after %s%s\n", job.ID, job.State, time.Since(start).Round(time.Second), note)
			last, lastNote = job.State, note
		}
		if job.State.Terminal() {
			if job.State == scheduler.Finished {
				return nil
			}
			return exitCode(1)
		}
		if timeout > 0 && time.Since(start) > timeout {
			return fmt.Errorf("job %s still %s after %s; it goes on: follow it with sparkpack job %s, stop it with sparkpack cancel %s", job.ID, job.State, timeout, job.ID, job.ID)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		var next scheduler.Job
		if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+job.ID, nil, &next); err != nil {
			if retry, _ := transient(err); retry {
				fmt.Fprintf(stderr, "follow: %v (trying again)\n", err)
				continue
			}
			return explain(err, "follow job "+job.ID)
		}
		job = next
	}
}

// runPlan is `sparkpack plan`: submit --dry-run.
func runPlan(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return submitOrPlan(ctx, "plan", args, stdout, stderr)
}

// checkModeFlags refuses the flags that would do nothing in this mode,
// rather than ignore them: --follow, --poll and --timeout follow a
// submitted job (a plan submits none); -o json, yaml or wide shows a plan
// (a submission prints the job's id), and a plan has no id for -o name.
// --poll must also be long enough not to flood the server.
func (c *submitConfig) checkModeFlags(dryRun bool, out outputFormat) error {
	if dryRun {
		for _, f := range []string{"follow", "poll", "timeout"} {
			if c.set[f] {
				return fmt.Errorf("--%s follows a submitted job, and --dry-run submits nothing: drop --%s, or drop --dry-run to submit the job", f, f)
			}
		}
		if out == outName {
			return fmt.Errorf("-o name prints a job's id, and a plan has none: use -o table, wide, json or yaml")
		}
		return nil
	}
	if out != outTable && out != outName {
		return fmt.Errorf("-o %s shows a plan (--dry-run or sparkpack plan); submit prints the job's id: see the job as %s with sparkpack job ID -o %s", out, out, out)
	}
	if c.poll < 100*time.Millisecond {
		return fmt.Errorf("--poll %s: want at least 100ms", c.poll)
	}
	if c.timeout < 0 {
		return fmt.Errorf("--timeout %s: want a duration >= 0 (0: follow as long as it takes)", c.timeout)
	}
	return nil
}

// planRejected is the error of a plan the server would reject, nil for
// one that would run or wait: plan fails as submit does, so a script
// that plans before it submits stops here.
func planRejected(p scheduler.Preview) error {
	if p.Rejected == "" {
		return nil
	}
	if p.RefusedStatus != 0 {
		why := strconv.Itoa(p.RefusedStatus)
		if p.RefusedReason != "" {
			why += " " + p.RefusedReason
		}
		return fmt.Errorf("a submission would be refused (%s): %s", why, p.Rejected)
	}
	return fmt.Errorf("would be REJECTED: %s; change what this names (fewer or smaller executors, a later deadline; for a team's budget or waiting jobs, what it says) and plan it again", p.Rejected)
}

// planJob asks the server what would happen to the job now (POST
// /api/v1/plan) and prints it.
func planJob(ctx context.Context, cl *apiClient, body []byte, format outputFormat, stdout io.Writer) error {
	var p scheduler.Preview
	if _, err := cl.do(ctx, http.MethodPost, "/api/v1/plan", body, &p); err != nil {
		var he *httpError
		if errors.As(err, &he) && he.Status == http.StatusNotFound && !he.foreign && he.Field == "" {
			return fmt.Errorf("this sparkpack cannot plan jobs: plans are made by serve with --mesos-master (as in the demo)")
		}
		return explain(err, "plan")
	}
	switch format {
	case outJSON, outYAML:
		if err := writeStructured(stdout, format, p); err != nil {
			return err
		}
		return planRejected(p)
	}
	if p.Rejected != "" {
		return planRejected(p)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if p.StartsNow {
		fmt.Fprintf(tw, "start\tnow (nothing waits before it and it fits)\n")
	} else {
		fmt.Fprintf(tw, "start\twaits: %s\n", p.WaitingReason)
	}
	fmt.Fprintf(tw, "queue\t%s, behind %s", p.Queue, plural.N(p.Ahead, "job"))
	if len(p.TeamsBefore) > 0 {
		team := "team"
		if len(p.TeamsBefore) > 1 {
			team = "teams"
		}
		fmt.Fprintf(tw, " (fair share between teams: %s %s first)", team, strings.Join(p.TeamsBefore, ", "))
	}
	if p.Queue == "regular" && p.DeadlineWaiting > 0 {
		fmt.Fprintf(tw, " (and %s, which go first)", plural.N(p.DeadlineWaiting, "deadline job"))
	}
	fmt.Fprintln(tw)
	if pl := p.Plan; pl != nil {
		var where []string
		for _, a := range pl.Assignments {
			where = append(where, fmt.Sprintf("%s×%d", agentName(a.Hostname, a.AgentID), a.Executors))
		}
		fmt.Fprintf(tw, "placement\t%s (%s)\n", strings.Join(where, " "), pl.Policy)
		if len(pl.Activated) > 0 {
			fmt.Fprintf(tw, "cost\t+$%.4f/h: it activates %s\n", pl.AddedUSDPerHour, plural.N(len(pl.Activated), "idle agent"))
		} else {
			fmt.Fprintf(tw, "cost\t+$0/h: only agents already active\n")
		}
	}
	if p.EstimatedFinish != nil {
		src := p.EstimateSource
		if src == "" { // a server from before estimateSource
			src = "from its estimated run time"
		}
		fmt.Fprintf(tw, "finish\t%s (%s)\n", p.EstimatedFinish.Local().Format(cliTime), src)
	}
	if p.DeadlineMarginSeconds != nil {
		m := time.Duration(*p.DeadlineMarginSeconds * float64(time.Second))
		if m >= 0 {
			fmt.Fprintf(tw, "deadline\twould be met by %s\n", marginDur(m))
		} else {
			fmt.Fprintf(tw, "deadline\twould be missed by %s\n", marginDur(-m))
		}
	}
	if p.AtRisk != "" {
		fmt.Fprintf(tw, "at risk\t%s\n", p.AtRisk)
	}
	return tw.Flush()
}
