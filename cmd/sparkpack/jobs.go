package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

var jobIDPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// checkJobID says what a job id looks like and where to find one.
func checkJobID(id string) error {
	if !jobIDPattern.MatchString(id) {
		return fmt.Errorf("%q is not a job id: ids are UUIDs such as 6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f; list them with sparkpack jobs", id)
	}
	return nil
}

// notFound turns a 404 for a job into a hint.
func notFound(err error, id string) error {
	var he *httpError
	if errors.As(err, &he) && he.Status == http.StatusNotFound {
		return fmt.Errorf("no job %s on this server; list the jobs with sparkpack jobs (is --server the right sparkpack?)", id)
	}
	return err
}

// runJobs is `sparkpack jobs`: a table of jobs, newest first.
func runJobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf clientFlags
	fs := newFlagSet("jobs", stderr)
	cf.register(fs)
	state := fs.String("state", "", "only jobs in these states, comma-separated (e.g. QUEUED,RUNNING; waiting = SUBMITTED,QUEUED; active = every state before the end)")
	var labels listFlag
	fs.Var(&labels, "label", "only jobs with this label key=value (repeat: all must match)")
	search := fs.String("search", "", "only jobs whose name contains this, whose id starts with it, or with this label key=value (the server searches every job)")
	limit := fs.Int("limit", 50, "at most this many jobs (1-1000)")
	all := fs.Bool("all", false, "every matching job (follows the pages)")
	asJSON := fs.Bool("json", false, "print the jobs as JSON, one object per line")
	out := registerOutput(fs, "wide adds executors, agents, labels and the attempt")
	watch := fs.Bool("watch", false, "after the list, print each job whose state or note changes, until Ctrl-C (also -w)")
	fs.BoolVar(watch, "w", false, "the same as --watch")
	interval := fs.Duration("interval", 2*time.Second, "how often --watch asks the server")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack jobs [flags]   (newest first)")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *limit < 1 || *limit > 1000 {
		return fmt.Errorf("--limit %d: want 1 to 1000", *limit)
	}
	if *interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: want at least 100ms", *interval)
	}
	q := url.Values{}
	if *state != "" {
		states, err := expandStates(*state)
		if err != nil {
			return err
		}
		q.Set("state", states)
	}
	for _, l := range labels {
		if !strings.Contains(l, "=") {
			return fmt.Errorf("--label %q: want key=value, e.g. --label team=analytics", l)
		}
		q.Add("label", l)
	}
	q.Set("limit", fmt.Sprint(*limit))
	if *search != "" {
		q.Set("q", *search)
	}
	cl, err := cf.client()
	if err != nil {
		return err
	}
	cl.retries = 2
	more := false
	list := func(ctx context.Context) ([]api.JobView, error) {
		var jobs []api.JobView
		q := maps.Clone(q)
		for {
			var page api.ListResponse
			if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs?"+q.Encode(), nil, &page); err != nil {
				return nil, explain(err, "list jobs")
			}
			jobs = append(jobs, page.Jobs...)
			if !*all || page.Next == "" {
				more = page.Next != ""
				return jobs, nil
			}
			q.Set("cursor", page.Next)
		}
	}
	jobs, err := list(ctx)
	if err != nil {
		return err
	}
	if more {
		defer fmt.Fprintf(stderr, "(more jobs: --all, or --limit above %d)\n", *limit)
	}
	if *asJSON {
		*out = "jsonl"
	}
	if err := printJobs(stdout, stderr, *out, jobs, true); err != nil || !*watch {
		return err
	}
	seen := make(map[string]string, len(jobs))
	for _, j := range jobs {
		seen[j.ID] = watchKey(j)
	}
	return watchLoop(ctx, *interval, stderr, func(ctx context.Context) error {
		jobs, err := list(ctx)
		if err != nil {
			return err
		}
		var changed []api.JobView
		for i := len(jobs) - 1; i >= 0; i-- { // oldest change first
			j := jobs[i]
			if k := watchKey(j); seen[j.ID] != k {
				seen[j.ID] = k
				changed = append(changed, j)
			}
		}
		if len(changed) == 0 {
			return nil
		}
		return printJobs(stdout, stderr, *out, changed, false)
	})
}

// watchKey is what --watch compares: a job is printed again when its
// state, note or deadline outcome changes (not as its run time grows).
func watchKey(j api.JobView) string {
	return string(j.State) + "\x00" + jobNote(j) + "\x00" + deadlineNote(j.Job)
}

// printJobs writes jobs in the chosen format; header is false for the
// rows --watch adds under the first table.
func printJobs(stdout, stderr io.Writer, format outputFormat, jobs []api.JobView, header bool) error {
	switch format {
	case "jsonl":
		enc := json.NewEncoder(stdout)
		for _, j := range jobs {
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		return nil
	case outJSON, outYAML:
		if !header { // a watch: one document per change
			for _, j := range jobs {
				if format == outYAML {
					fmt.Fprintln(stdout, "---")
				}
				if err := writeStructured(stdout, format, j); err != nil {
					return err
				}
			}
			return nil
		}
		if jobs == nil {
			jobs = []api.JobView{}
		}
		return writeStructured(stdout, format, map[string]any{"jobs": jobs})
	case outName:
		for _, j := range jobs {
			fmt.Fprintln(stdout, j.ID)
		}
		return nil
	}
	if len(jobs) == 0 && header {
		fmt.Fprintln(stderr, "no jobs match")
		return nil
	}
	wide := format == outWide
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	if header {
		h := "ID\tNAME\tSTATE\tSUBMITTED\tWAITED\tRAN\tDEADLINE\tCOST\tNOTE"
		if wide {
			h += "\tEXECUTORS\tAGENTS\tATTEMPT\tLABELS"
		}
		fmt.Fprintln(tw, h)
	}
	now := time.Now()
	for _, j := range jobs {
		name := j.Name
		if name == "" {
			name = "-"
		}
		note := jobNote(j)
		if !wide {
			note = clip(note, 60)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s", j.ID, clip(name, 32), j.State, ago(now, j.SubmittedAt),
			waited(j.Job, now), ran(j.Job, now), deadlineNote(j.Job), costText(j.CostUSD), note)
		if wide {
			fmt.Fprintf(tw, "\t%d×(%s, %d MiB)\t%d\t%d\t%s", j.Executors, plural.N(j.ExecutorCores, "cpu"), j.ExecutorMemoryMB,
				len(j.Placement), j.Attempt, labelText(j.Labels))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// labelText is a job's labels as key=value, sorted, comma-separated.
func labelText(l map[string]string) string {
	if len(l) == 0 {
		return "-"
	}
	keys := slices.Sorted(maps.Keys(l))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + l[k]
	}
	return strings.Join(parts, ",")
}

// expandStates checks --state and expands the shorthands waiting and active.
func expandStates(s string) (string, error) {
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.ToUpper(strings.TrimSpace(name))
		switch name {
		case "WAITING":
			out = append(out, "SUBMITTED", "QUEUED")
			continue
		case "ACTIVE":
			out = append(out, "SUBMITTED", "QUEUED", "PLACING", "RESERVING", "LAUNCHING", "RUNNING")
			continue
		}
		if _, err := scheduler.ParseState(name); err != nil {
			return "", fmt.Errorf("--state: %q is not a state; use SUBMITTED, QUEUED, PLACING, RESERVING, LAUNCHING, RUNNING, FINISHED, FAILED, KILLED, REJECTED or CANCELLED (comma-separated), or waiting or active", name)
		}
		out = append(out, name)
	}
	return strings.Join(out, ","), nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return shortDur(now.Sub(t)) + " ago"
}

func shortDur(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Second).String()
	case d < time.Hour:
		return d.Round(time.Second).String()
	case d < 48*time.Hour:
		return d.Round(time.Minute).String()
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// waited is how long the job waited before its (last) run started, or has
// waited so far.
func waited(j scheduler.Job, now time.Time) string {
	start := j.LastStartedAt
	if start == nil {
		start = j.StartedAt
	}
	switch {
	case start != nil:
		return shortDur(max(start.Sub(j.SubmittedAt), 0))
	case j.State.Terminal():
		return "-"
	}
	return shortDur(max(now.Sub(j.SubmittedAt), 0))
}

// ran is how long the job has run (or ran).
func ran(j scheduler.Job, now time.Time) string {
	if j.StartedAt == nil {
		return "-"
	}
	end := now
	if j.FinishedAt != nil {
		end = *j.FinishedAt
	}
	return shortDur(end.Sub(*j.StartedAt))
}

// deadlineNote is "-", the time left, "met" or "missed" (only a job that
// ran can miss: a CANCELLED or REJECTED one did not).
func deadlineNote(j scheduler.Job) string {
	if j.DeadlineAt == nil {
		return "-"
	}
	switch {
	case j.State == scheduler.Finished && j.FinishedAt != nil:
		if j.FinishedAt.After(*j.DeadlineAt) {
			return "missed by " + shortDur(j.FinishedAt.Sub(*j.DeadlineAt))
		}
		return "met by " + shortDur(j.DeadlineAt.Sub(*j.FinishedAt))
	case (j.State == scheduler.Failed || j.State == scheduler.Killed) && j.FinishedAt != nil && j.FinishedAt.After(*j.DeadlineAt):
		return "missed"
	case j.State.Terminal():
		return "-"
	}
	left := time.Until(*j.DeadlineAt)
	note := "in " + shortDur(left)
	if left < 0 {
		note = "passed"
	}
	if j.AtRisk {
		note += " (at risk)"
	}
	return note
}

func costText(c *float64) string {
	if c == nil {
		return "-"
	}
	return fmt.Sprintf("$%.4f", *c)
}

// jobNote is why a waiting or ended job is where it is.
func jobNote(j api.JobView) string {
	if j.WaitingReason != "" {
		return j.WaitingReason
	}
	if j.KillRequested && !j.State.Terminal() {
		return "kill requested"
	}
	if len(j.Placement) > 0 && !j.State.Terminal() {
		hosts := make([]string, 0, len(j.Placement))
		for _, p := range j.Placement {
			hosts = append(hosts, fmt.Sprintf("%s×%d", agentName(p.Hostname, p.AgentID), p.Executors))
		}
		return "on " + strings.Join(hosts, " ")
	}
	return ""
}

func agentName(host, id string) string {
	if host != "" {
		return host
	}
	return id
}

// runJob is `sparkpack job ID`: one job with its placement and timeline.
func runJob(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf clientFlags
	fs := newFlagSet("job", stderr)
	cf.register(fs)
	asJSON := fs.Bool("json", false, "print the job as the API returns it (JSON; the same as -o json)")
	out := registerOutput(fs, "table and wide print the job's facts and timeline")
	watch := fs.Bool("watch", false, "after the job, print each new event of its timeline until it ends or Ctrl-C (also -w)")
	fs.BoolVar(watch, "w", false, "the same as --watch")
	interval := fs.Duration("interval", 2*time.Second, "how often --watch asks the server")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: sparkpack job [flags] JOB-ID   (the job, where it runs, its timeline and driver command)")
		fs.PrintDefaults()
	}
	id, err := parseWithIDs(fs, args, 1)
	if err != nil {
		return err
	}
	if *interval < 100*time.Millisecond {
		return fmt.Errorf("--interval %s: want at least 100ms", *interval)
	}
	if *asJSON {
		*out = outJSON
	}
	cl, err := cf.client()
	if err != nil {
		return err
	}
	cl.retries = 2
	if id, err = resolveIDs(ctx, cl, id); err != nil {
		return err
	}
	get := func(ctx context.Context) (api.JobView, error) {
		var v api.JobView
		if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+id[0], nil, &v); err != nil {
			return v, explain(notFound(err, id[0]), "job "+id[0])
		}
		return v, nil
	}
	v, err := get(ctx)
	if err != nil {
		return err
	}
	show := func(v api.JobView) error {
		switch *out {
		case outJSON, outYAML:
			return writeStructured(stdout, *out, v)
		case outName:
			_, err := fmt.Fprintln(stdout, v.ID)
			return err
		}
		printJob(stdout, v)
		return nil
	}
	if err := show(v); err != nil || !*watch || v.State.Terminal() {
		return err
	}
	shown := len(v.Events)
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	return watchLoop(wctx, *interval, stderr, func(ctx context.Context) error {
		nv, err := get(ctx)
		if err != nil {
			return err
		}
		if len(nv.Events) > shown {
			switch *out {
			case outTable, outWide:
				tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
				for _, e := range nv.Events[shown:] {
					timelineRow(tw, e)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
			case outName:
			default:
				if *out == outYAML {
					fmt.Fprintln(stdout, "---")
				}
				if err := writeStructured(stdout, *out, nv); err != nil {
					return err
				}
			}
			shown = len(nv.Events)
		}
		if nv.State.Terminal() {
			stop()
		}
		return nil
	})
}

func printJob(w io.Writer, v api.JobView) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, val string) {
		if val != "" {
			fmt.Fprintf(tw, "%s\t%s\n", k, val)
		}
	}
	t := func(p *time.Time) string {
		if p == nil {
			return ""
		}
		return p.Local().Format(cliTime)
	}
	now := time.Now()
	row("id", v.ID)
	row("name", v.Name)
	row("state", string(v.State)+stateNote(v.Job))
	row("submitted", v.SubmittedAt.Local().Format(cliTime))
	row("started", t(v.StartedAt))
	row("finished", t(v.FinishedAt))
	if w := waited(v.Job, now); w != "-" {
		row("waited", w)
	}
	if v.StartedAt != nil {
		row("ran", ran(v.Job, now))
	}
	if v.DeadlineAt != nil {
		row("deadline", t(v.DeadlineAt)+" ("+deadlineNote(v.Job)+")")
	}
	row("executors", fmt.Sprintf("%d × (%s, %d MiB + %d MiB overhead)", v.Executors, plural.N(v.ExecutorCores, "cpu"), v.ExecutorMemoryMB, v.ExecutorTotalMemMB()-v.ExecutorMemoryMB))
	d := v.DriverOrDefault()
	row("driver", fmt.Sprintf("%s, %d MiB", plural.G(d.Cores, "cpu"), d.MemoryMB))
	row("application", v.App.AppResource+" "+v.App.MainClass)
	if v.EstimatedDurationSeconds > 0 {
		row("estimated run", (time.Duration(v.EstimatedDurationSeconds * float64(time.Second))).String())
	}
	if v.Retries > 0 {
		row("retries", fmt.Sprint(v.Retries))
	}
	if v.Preemptions > 0 {
		row("preempted", fmt.Sprintf("%d× (evicted for deadline jobs), %s of work lost", v.Preemptions,
			(time.Duration(v.LostWorkSeconds*float64(time.Second))).Round(time.Second)))
	}
	if v.PreemptRequested != "" {
		row("being evicted", v.PreemptRequested)
	}
	if len(v.Labels) > 0 {
		var l []string
		for k, val := range v.Labels {
			l = append(l, k+"="+val)
		}
		row("labels", strings.Join(sortedCopy(l), ", "))
	}
	if v.CostUSD != nil {
		row("cost", costText(v.CostUSD))
	}
	for i, p := range v.Placement {
		k := ""
		if i == 0 {
			k = "placement"
		}
		fmt.Fprintf(tw, "%s\t%s: %s\n", k, agentName(p.Hostname, p.AgentID), plural.N(p.Executors, "executor"))
	}
	tw.Flush()
	if len(v.Events) > 0 {
		fmt.Fprintln(w, "\ntimeline:")
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range v.Events {
			timelineRow(tw, e)
		}
		tw.Flush()
	}
	if len(v.DriverCommand) > 0 {
		fmt.Fprintln(w, "\ndriver command:")
		for _, line := range commandLines(v.DriverCommand) {
			fmt.Fprintln(w, "  "+line)
		}
	}
}

// commandLines splits an argument vector into the program and one
// "--flag value" pair a line, the way the dashboard shows it.
func commandLines(argv []string) []string {
	if len(argv) == 0 {
		return nil
	}
	out := []string{argv[0]}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if strings.HasPrefix(a, "--") && i+1 < len(argv) && !strings.HasPrefix(argv[i+1], "--") && a != "--verbose" && a != "--supervise" {
			out = append(out, a+" "+argv[i+1])
			i++
			continue
		}
		out = append(out, a)
	}
	return out
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// parseWithIDs parses flags given before or after job ids, and checks the
// ids (exactly n when n > 0, at least one otherwise).
func parseWithIDs(fs *flag.FlagSet, args []string, n int) ([]string, error) {
	var ids []string
	rest := args
	for {
		if err := parseFlagsOnly(fs, rest); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		ids = append(ids, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	switch {
	case n > 0 && len(ids) != n:
		fmt.Fprintf(fs.Output(), "%s: give one job id (list them with sparkpack jobs); see %s --help\n", fs.Name(), fs.Name())
		return nil, errUsage
	case len(ids) == 0:
		fmt.Fprintf(fs.Output(), "%s: give at least one job id (list them with sparkpack jobs); see %s --help\n", fs.Name(), fs.Name())
		return nil, errUsage
	}
	for _, id := range ids {
		if strings.TrimSpace(id) == "" || strings.HasPrefix(id, "-") {
			return nil, fmt.Errorf("%q is not a job: give a job id, the start of one, or a job's name (list them with sparkpack jobs)", id)
		}
	}
	return ids, nil
}

// resolveIDs turns what the user typed into job ids, as kubectl and nomad
// do: a whole id as it is; otherwise the one job whose id starts with it
// or whose name is it (a name or prefix that fits several jobs is an
// error listing them).
func resolveIDs(ctx context.Context, cl *apiClient, args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if jobIDPattern.MatchString(a) {
			out = append(out, strings.ToLower(a))
			continue
		}
		var page api.ListResponse
		q := url.Values{"q": {a}, "limit": {"50"}}
		if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs?"+q.Encode(), nil, &page); err != nil {
			return nil, explain(err, "look up job "+a)
		}
		var byID, byName []api.JobView
		for _, j := range page.Jobs {
			switch {
			case strings.HasPrefix(j.ID, strings.ToLower(a)):
				byID = append(byID, j)
			case j.Name == a:
				byName = append(byName, j)
			}
		}
		matches := byID
		if len(matches) == 0 {
			matches = byName
		}
		switch {
		case len(matches) == 1:
			out = append(out, matches[0].ID)
		case len(matches) == 0:
			return nil, fmt.Errorf("no job has an id starting with %q or the name %q; list them with sparkpack jobs", a, a)
		default:
			var list []string
			for i, j := range matches {
				if i == 5 {
					list = append(list, fmt.Sprintf("and %d more", len(matches)-5))
					break
				}
				list = append(list, fmt.Sprintf("%s (%s, %s)", j.ID, j.Name, j.State))
			}
			return nil, fmt.Errorf("%q fits %d jobs: %s; give more of the id", a, len(matches), strings.Join(list, "; "))
		}
	}
	return out, nil
}

// runCancel is `sparkpack cancel ID...`: DELETE /api/v1/jobs/{id}. A
// waiting job is cancelled; one that holds resources has its driver
// killed and its reservations released (202: kill requested).
// A job that has already ended is not an error (nothing is left to stop).
// `sparkpack kill` is the same command.
func runCancel(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cancelJobs(ctx, "cancel", args, stdout, stderr)
}

func cancelJobs(ctx context.Context, name string, args []string, stdout, stderr io.Writer) error {
	var cf clientFlags
	fs := newFlagSet(name, stderr)
	cf.register(fs)
	wait := fs.Bool("wait", false, "wait until each job has ended, printing its final state")
	timeout := fs.Duration("timeout", 2*time.Minute, "with --wait: give up after this long")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: sparkpack %s [flags] JOB-ID...   (a waiting job is cancelled; a running one killed and its reservations released)\n", name)
		fs.PrintDefaults()
	}
	ids, err := parseWithIDs(fs, args, 0)
	if err != nil {
		return err
	}
	cl, err := cf.client()
	if err != nil {
		return err
	}
	cl.retries, cl.stderr = 3, stderr
	if ids, err = resolveIDs(ctx, cl, ids); err != nil {
		return err
	}
	failed := 0
	for _, id := range ids {
		var v api.JobView
		status, err := cl.do(ctx, http.MethodDelete, "/api/v1/jobs/"+id, nil, &v)
		var he *httpError
		switch {
		case errors.As(err, &he) && he.Status == http.StatusConflict:
			fmt.Fprintf(stderr, "%s; nothing to cancel (%d)\n", he.Msg, he.Status)
			continue
		case err != nil:
			fmt.Fprintf(stderr, "job %s: %v\n", id, explain(notFound(err, id), "cancel"))
			failed++
			continue
		case status == http.StatusAccepted:
			fmt.Fprintf(stdout, "job %s: kill requested (%s); its driver is stopped and its reservations released\n", id, v.State)
		default:
			fmt.Fprintf(stdout, "job %s: %s\n", id, v.State)
		}
		if *wait && !v.State.Terminal() {
			end, err := waitJobEnd(ctx, cl, id, *timeout)
			if err != nil {
				fmt.Fprintf(stderr, "job %s: %v\n", id, err)
				failed++
				continue
			}
			fmt.Fprintf(stdout, "job %s: %s\n", id, end.State)
		}
	}
	if failed > 0 {
		verb := "cancelled"
		if name == "kill" {
			verb = "killed"
		}
		return fmt.Errorf("%d of %d jobs could not be %s", failed, len(ids), verb)
	}
	return nil
}

// waitJobEnd polls a job until it has ended.
func waitJobEnd(ctx context.Context, cl *apiClient, id string, timeout time.Duration) (scheduler.Job, error) {
	deadline := time.Now().Add(timeout)
	var j scheduler.Job
	for {
		if _, err := cl.do(ctx, http.MethodGet, "/api/v1/jobs/"+id, nil, &j); err != nil {
			if retry, _ := transient(err); !retry {
				return j, explain(err, "job "+id)
			}
		} else if j.State.Terminal() {
			return j, nil
		}
		if time.Now().After(deadline) {
			return j, fmt.Errorf("still %s after %s; the kill stays requested and is carried out when it can be (check with sparkpack job %s)", j.State, timeout, id)
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// cliTime is how the CLI writes a moment: local time with its zone, so
// that it can be compared with the API's UTC times without guessing.
const cliTime = "2006-01-02 15:04:05 MST"

// timelineRow writes one event of a job's timeline.
func timelineRow(w io.Writer, e store.Event) {
	move := string(e.To)
	if e.From != nil && *e.From != e.To {
		move = string(*e.From) + " → " + string(e.To)
	}
	who := ""
	if e.Actor != "" {
		who = " (by " + e.Actor + ")"
	}
	fmt.Fprintf(w, "  %s\t%s\t%s%s\n", e.At.Local().Format("15:04:05.000"), move, e.Reason, who)
}
