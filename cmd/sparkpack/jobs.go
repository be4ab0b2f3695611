package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/scheduler"
)

// runJobs is `sparkpack jobs`: a table of jobs, newest first.
func runJobs(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf clientFlags
	fs := newFlagSet("jobs", stderr)
	cf.register(fs)
	state := fs.String("state", "", "only jobs in these states, comma-separated (e.g. QUEUED,RUNNING; waiting = SUBMITTED,QUEUED; active = every state before the end)")
	var labels listFlag
	fs.Var(&labels, "label", "only jobs with this label key=value (repeat: all must match)")
	team := fs.String("team", "", "only jobs of this team (the submitting token's, or the team label); --team= for jobs without a team")
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
	// --json prints one object a line, which no -o does.
	if err := otherFormat(fs, "json", *asJSON, *out, ""); err != nil {
		return err
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
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "team" {
			q.Set("team", *team)
		}
	})
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
	// One table for the list and the rows --watch adds under it, so that
	// they line up with its header.
	table := &jobsTable{}
	if *watch {
		table.reserveStates()
	}
	if err := table.print(stdout, stderr, *out, jobs, true); err != nil || !*watch {
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
		return table.print(stdout, stderr, *out, changed, false)
	})
}

// watchKey is what --watch compares: a job is printed again when its
// state, note or deadline outcome changes (not as its run time grows).
func watchKey(j api.JobView) string {
	return string(j.State) + "\x00" + jobNote(j) + "\x00" + deadlineNote(j.Job)
}

// printJobs writes jobs in the chosen format (a table of its own).
func printJobs(stdout, stderr io.Writer, format outputFormat, jobs []api.JobView, header bool) error {
	return (&jobsTable{}).print(stdout, stderr, format, jobs, header)
}

// jobsTable is sparkpack jobs' table across the prints of a --watch: the
// columns keep the widths the header and the rows printed so far gave
// them (each batch through a tabwriter of its own lined up only with
// itself, not with the header above), widening only for a longer cell.
// sparkpack job --watch's timeline is one too.
type jobsTable struct {
	widths []int
}

// reserve makes column col at least n wide.
func (t *jobsTable) reserve(col, n int) {
	row := make([]string, col+2) // fit leaves the last cell out
	row[col] = strings.Repeat(" ", n)
	t.fit(row)
}

// jobsStateCol is the STATE column's index.
const jobsStateCol = 2

// reserveStates makes the STATE column as wide as the longest state, so
// that a job's later state does not shift the rows of a --watch.
func (t *jobsTable) reserveStates() {
	n := 0
	for _, st := range scheduler.AllStates {
		n = max(n, len(st))
	}
	t.reserve(jobsStateCol, n)
}

// fit widens the columns to row's cells (the last cell is not padded).
func (t *jobsTable) fit(row []string) {
	for i, c := range row[:len(row)-1] {
		if i == len(t.widths) {
			t.widths = append(t.widths, 0)
		}
		t.widths[i] = max(t.widths[i], utf8.RuneCountInString(c))
	}
}

// write writes rows, each cell padded to its column's width and two
// spaces, as the other tables' tabwriters do.
func (t *jobsTable) write(w io.Writer, rows [][]string) error {
	for _, r := range rows {
		t.fit(r)
	}
	var b strings.Builder
	for _, r := range rows {
		b.Reset()
		for i, c := range r {
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", t.widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		if _, err := fmt.Fprintln(w, strings.TrimRight(b.String(), " ")); err != nil {
			return err
		}
	}
	return nil
}

// print writes jobs in the chosen format; header is false for the rows
// --watch adds under the first table.
func (t *jobsTable) print(stdout, stderr io.Writer, format outputFormat, jobs []api.JobView, header bool) error {
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
	var rows [][]string
	if header {
		h := []string{"ID", "NAME", "STATE", "SUBMITTED", "WAITED", "RAN", "DEADLINE", "COST", "NOTE"}
		if wide {
			h = append(h, "EXECUTORS", "AGENTS", "ATTEMPT", "LABELS")
		}
		rows = append(rows, h)
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
		r := []string{j.ID, clip(name, 32), string(j.State), ago(now, j.SubmittedAt),
			waited(j, now), ran(j, now), deadlineNote(j.Job), costText(j.CostUSD), note}
		if wide {
			r = append(r, fmt.Sprintf("%d×(%s, %d MiB)", j.Executors, plural.N(j.ExecutorCores, "cpu"), j.ExecutorMemoryMB),
				fmt.Sprint(len(j.Placement)), fmt.Sprint(j.Attempt), labelText(j.Labels))
		}
		rows = append(rows, r)
	}
	return t.write(stdout, rows)
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

// marginDur is how much a deadline was met or missed by: below 10 s in
// tenths, so that a job late by 0.4 s is not "missed by 0s" (and one on
// the dot is "met by 0s").
func marginDur(d time.Duration) string {
	if d < 10*time.Second {
		if r := d.Round(100 * time.Millisecond); r > 0 || d <= 0 {
			return r.String()
		}
		return "<0.1s"
	}
	return shortDur(d)
}

// waited is how long the job waited in the queue (SUBMITTED or QUEUED),
// summed over its waits (the server's queuedSeconds, and the time since
// queuedSince when it waits now): a run that failed or a launch that was
// lost is not waiting. "-" for a job that never waited. From a server
// without queuedSeconds, the time from submission to its (last) start.
func waited(v api.JobView, now time.Time) string {
	if v.QueuedSeconds != nil {
		d := time.Duration(*v.QueuedSeconds * float64(time.Second))
		if v.QueuedSince != nil {
			d += max(now.Sub(*v.QueuedSince), 0)
		}
		return shortDur(d)
	}
	j := v.Job
	if j.State == scheduler.Rejected {
		return "-"
	}
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

// ran is how long the job has run (or ran); "unknown" when its last run
// ended before its driver was seen running (its start is only its launch:
// docs/learning.md, "Runs never seen running").
func ran(v api.JobView, now time.Time) string {
	if v.RunTimeUnknown {
		return "unknown"
	}
	j := v.Job
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
			return "missed by " + marginDur(j.FinishedAt.Sub(*j.DeadlineAt))
		}
		return "met by " + marginDur(j.DeadlineAt.Sub(*j.FinishedAt))
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
// unseenNote explains a run time shown as unknown.
const unseenNote = "run time unknown: the driver was never seen running"

func jobNote(j api.JobView) string {
	if j.State == scheduler.Failed && j.FailedReason != "" {
		return j.FailedReason
	}
	if j.WaitingReason != "" {
		return j.WaitingReason
	}
	if j.KillRequested && !j.State.Terminal() {
		return "kill requested"
	}
	if j.RunTimeUnknown {
		return unseenNote
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
