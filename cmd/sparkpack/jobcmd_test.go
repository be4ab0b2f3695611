package main

import (
	"bytes"
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
