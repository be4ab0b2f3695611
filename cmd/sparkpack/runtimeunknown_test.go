package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestRunTimeUnknownIsNotZero: a FINISHED job whose last run was never
// seen running (runTimeUnknown; its start is its end here) "ran" unknown in
// `sparkpack jobs` and `sparkpack job`, and the demo's outcome line names
// no run time, instead of "0s"; a run seen running keeps its time.
func TestRunTimeUnknownIsNotZero(t *testing.T) {
	end := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	start := end.Add(-90 * time.Second)
	v := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{Name: "wc"}, State: scheduler.Finished, StartedAt: &end, LastStartedAt: &end, FinishedAt: &end},
		RunTimeUnknown: true}
	if got := ran(v, end); got != "unknown" {
		t.Errorf("ran, run time unknown: %q; want unknown", got)
	}
	if line, _, _ := outcomeLine(v); strings.Contains(line, "ran ") {
		t.Errorf("demo outcome, run time unknown: %q; want no run time", line)
	}
	v.RunTimeUnknown, v.StartedAt, v.LastStartedAt = false, &start, &start
	if got := ran(v, end); got != "1m30s" {
		t.Errorf("ran, seen running: %q; want 1m30s", got)
	}
	if line, _, _ := outcomeLine(v); !strings.Contains(line, "ran 1m30s") {
		t.Errorf("demo outcome, seen running: %q; want ran 1m30s", line)
	}
}
