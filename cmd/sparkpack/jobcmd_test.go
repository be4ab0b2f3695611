package main

import (
	"bytes"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
)

// sparkpack job shows the job's team and what the learned model predicts.
func TestPrintJobShowsTeamAndPrediction(t *testing.T) {
	p50, p90 := 62.4, 95.0
	v := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", Name: "etl", Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 1024},
		Team: "analytics", State: scheduler.Queued, SubmittedAt: time.Now()},
		PredictedSeconds: &p50, PredictedP90Seconds: &p90, PredictionLevel: "signature"}
	var b bytes.Buffer
	printJob(&b, v)
	out := b.String()
	for _, want := range []string{"team           analytics", "predicted run  1m2s (p90 1m35s; learned from runs: signature)"} {
		if !strings.Contains(out, want) {
			t.Errorf("sparkpack job output lacks %q:\n%s", want, out)
		}
	}
	// Which prediction it is: the run's start's (an ended or running
	// job's) or the model's now.
	for at, want := range map[string]string{api.PredictedAtStart: "predicted run  1m2s (p90 1m35s; learned from runs: signature; at its start)",
		api.PredictedAtNow: "predicted run  1m2s (p90 1m35s; learned from runs: signature; now)"} {
		v.PredictedAt = at
		b.Reset()
		printJob(&b, v)
		if out := b.String(); !strings.Contains(out, want) {
			t.Errorf("predictedAt %q: sparkpack job output lacks %q:\n%s", at, want, out)
		}
	}
	v.Team, v.PredictedSeconds = "", nil
	b.Reset()
	printJob(&b, v)
	if out := b.String(); strings.Contains(out, "team") || strings.Contains(out, "predicted") {
		t.Errorf("a job without team or prediction shows them:\n%s", out)
	}
}

// TestStateNoteAtRisk: the at-risk flag is told only while it means
// something: for a running job with a deadline, "at risk of missing its
// deadline"; without one, running past its predicted run time; not on a
// job that ended (its deadline line says met or missed).
func TestStateNoteAtRisk(t *testing.T) {
	dl := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		state    scheduler.State
		deadline *time.Time
		want     string
	}{
		{scheduler.Running, &dl, " (at risk of missing its deadline)"},
		{scheduler.Running, nil, " (running past its predicted run time)"},
		{scheduler.Finished, &dl, ""},
		{scheduler.Failed, nil, ""},
	} {
		j := scheduler.Job{State: c.state, DeadlineAt: c.deadline, AtRisk: true}
		if got := stateNote(j); got != c.want {
			t.Errorf("%s, deadline %v: %q, want %q", c.state, c.deadline != nil, got, c.want)
		}
	}
}

// TestMarginDur: how much a deadline was met or missed by is never "0s"
// for a job that was late (a job 0.4 s late read "missed by 0s").
func TestMarginDur(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"}, {30 * time.Millisecond, "<0.1s"}, {400 * time.Millisecond, "400ms"}, {1450 * time.Millisecond, "1.5s"},
		{9940 * time.Millisecond, "9.9s"}, {10 * time.Second, "10s"}, {90*time.Second + 400*time.Millisecond, "1m30s"},
	} {
		if got := marginDur(c.d); got != c.want {
			t.Errorf("marginDur(%s) = %q, want %q", c.d, got, c.want)
		}
	}
	dl := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	end := dl.Add(400 * time.Millisecond)
	if got := deadlineNote(scheduler.Job{State: scheduler.Finished, DeadlineAt: &dl, FinishedAt: &end}); got != "missed by 400ms" {
		t.Errorf("a job 0.4 s late: %q", got)
	}
}

// TestRunNeverSeenRunningShowsUnknown: a job whose driver ended before it
// was seen running (runTimeUnknown: docs/learning.md, "Runs never seen
// running") has no run time: sparkpack job, sparkpack jobs and the demo's
// outcome line say it is unknown, never its launch-to-end span or "0s"
// (its start is its launch, or its end).
func TestRunNeverSeenRunningShowsUnknown(t *testing.T) {
	launched := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		started time.Time
		note    string
	}{
		{"from its launch", launched, "(its launch: it was never seen running)"},
		{"from its end", launched.Add(20 * time.Second), "(its end: it was never seen running)"},
	} {
		start, end := c.started, launched.Add(20*time.Second)
		v := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", Name: "unseen", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024},
			State: scheduler.Finished, SubmittedAt: launched.Add(-5 * time.Second), StartedAt: &start, LastStartedAt: &start, FinishedAt: &end, Attempt: 1},
			RunTimeUnknown: true}
		var b bytes.Buffer
		printJob(&b, v)
		out := b.String()
		if !regexp.MustCompile(`\nran +unknown \(the driver ended before sparkpack saw it running\)\n`).MatchString(out) || !strings.Contains(out, c.note) {
			t.Errorf("%s: sparkpack job does not say the run time is unknown:\n%s", c.name, out)
		}
		b.Reset()
		if err := printJobs(&b, io.Discard, outTable, []api.JobView{v}, true); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(b.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("%s: sparkpack jobs printed %q", c.name, b.String())
		}
		if ranCol := columnAt(lines[0], lines[1], "RAN"); ranCol != "unknown" || !strings.Contains(lines[1], unseenNote) {
			t.Errorf("%s: sparkpack jobs' RAN reads %q (want unknown, the note saying why):\n%s", c.name, ranCol, b.String())
		}
		if line, _, _ := outcomeLine(v); !strings.Contains(line, "run time unknown (never seen running)") || strings.Contains(line, "ran ") {
			t.Errorf("%s: demo outcome line %q", c.name, line)
		}
	}
}

// columnAt is the cell of row that starts exactly where header's column
// col does (a table's cells start where their header does); "" when no
// cell starts there.
func columnAt(header, row, col string) string {
	i := strings.Index(header, col)
	if i < 0 || i >= len(row) || row[i] == ' ' || (i > 0 && row[i-1] != ' ') {
		return ""
	}
	f := strings.Fields(row[i:])
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
