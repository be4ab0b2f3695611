package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

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
	if err := otherFormat(fs, "json", *asJSON, *out, outJSON); err != nil {
		return err
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
	// The timeline's rows --watch adds line up with those above.
	timeline := &jobsTable{}
	if *watch {
		timeline.reserve(1, longestMove())
	}
	show := func(v api.JobView) error {
		switch *out {
		case outJSON, outYAML:
			return writeStructured(stdout, *out, v)
		case outName:
			_, err := fmt.Fprintln(stdout, v.ID)
			return err
		}
		printJobWith(stdout, v, timeline)
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
				if err := writeTimeline(stdout, timeline, nv.Events[shown:]); err != nil {
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

func printJob(w io.Writer, v api.JobView) { printJobWith(w, v, &jobsTable{}) }

// printJobWith is printJob with its timeline's columns in timeline (which
// sparkpack job --watch's later rows keep).
func printJobWith(w io.Writer, v api.JobView, timeline *jobsTable) {
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
	row("team", v.Team)
	row("state", string(v.State)+stateNote(v.Job))
	row("submitted", v.SubmittedAt.Local().Format(cliTime))
	switch {
	case v.RunTimeUnknown && v.StartedAt != nil && v.FinishedAt != nil && v.StartedAt.Equal(*v.FinishedAt):
		row("started", t(v.StartedAt)+" (its end: it was never seen running)")
	case v.RunTimeUnknown && v.StartedAt != nil:
		row("started", t(v.StartedAt)+" (its launch: it was never seen running)")
	default:
		row("started", t(v.StartedAt))
	}
	row("finished", t(v.FinishedAt))
	if w := waited(v, now); w != "-" {
		row("waited", w)
	}
	if v.RunTimeUnknown {
		row("ran", "unknown (the driver ended before sparkpack saw it running)")
	} else if v.StartedAt != nil {
		row("ran", ran(v, now))
	}
	if nb := v.NotBeforeAt(); nb != nil {
		row("not before", t(nb))
	}
	if v.DeadlineAt != nil {
		row("deadline", t(v.DeadlineAt)+" ("+deadlineNote(v.Job)+")")
	}
	row("executors", fmt.Sprintf("%d × (%s, %d MiB + %d MiB overhead)", v.Executors, plural.N(v.ExecutorCores, "cpu"), v.ExecutorMemoryMB, v.ExecutorTotalMemMB()-v.ExecutorMemoryMB))
	if sz := v.Sizing; sz != nil && sz.Auto {
		row("sized", sz.Reason) // "executors": "auto" (docs/learning.md)
	}
	d := v.DriverOrDefault()
	row("driver", fmt.Sprintf("%s, %d MiB", plural.G(d.Cores, "cpu"), d.MemoryMB))
	row("application", v.App.AppResource+" "+v.App.MainClass)
	if v.EstimatedDurationSeconds > 0 {
		est := time.Duration(v.EstimatedDurationSeconds * float64(time.Second)).String()
		if w := v.EstimatedWallSeconds; w != nil {
			// On the clock of "ran" and "predicted run" (the demo's
			// --sim-speed runs simulated time faster).
			est = fmt.Sprintf("%s (%s as submitted, in simulated time)", marginDur(time.Duration(*w*float64(time.Second))), est)
		}
		row("estimated run", est)
	}
	if v.PredictedSeconds != nil && v.PredictedP90Seconds != nil {
		sec := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)).Round(time.Second) }
		// When: at the run's start (what the scheduler decided with, to
		// compare the run with) or now (docs/models.md, "The job view").
		when := map[string]string{api.PredictedAtStart: "; at its start", api.PredictedAtNow: "; now"}[v.PredictedAt]
		row("predicted run", fmt.Sprintf("%s (p90 %s; learned from runs: %s%s)", sec(*v.PredictedSeconds), sec(*v.PredictedP90Seconds), v.PredictionLevel, when))
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
		writeTimeline(w, timeline, v.Events)
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

// cliTime is how the CLI writes a moment: local time with its zone, so
// that it can be compared with the API's UTC times without guessing.
const cliTime = "2006-01-02 15:04:05 MST"

// writeTimeline writes events of a job's timeline, a row each, in t's
// columns.
func writeTimeline(w io.Writer, t *jobsTable, events []store.Event) error {
	rows := make([][]string, len(events))
	for i, e := range events {
		rows[i] = timelineRow(e)
	}
	return t.write(w, rows)
}

// timelineRow is one event of a job's timeline: its time, its move, why.
func timelineRow(e store.Event) []string {
	move := string(e.To)
	if e.From != nil && *e.From != e.To {
		move = string(*e.From) + " → " + string(e.To)
	}
	who := ""
	if e.Actor != "" {
		who = " (by " + e.Actor + ")"
	}
	return []string{"  " + e.At.Local().Format("15:04:05.000"), move, e.Reason + who}
}

// longestMove is the length of the longest move a timeline can show
// (from one state to another).
func longestMove() int {
	n := 0
	for _, st := range scheduler.AllStates {
		n = max(n, utf8.RuneCountInString(string(st)))
	}
	return 2*n + utf8.RuneCountInString(" → ")
}
