package scheduler

import (
	"strings"
	"testing"
	"time"
)

// TestRightSizeFromStartTime: an "auto" job with a start time (notBefore)
// has from its start time to its deadline to run, not from its
// submission: it is sized as the same job submitted at its start time.
// Sized from its submission, it got the cheapest count that meets the
// deadline hours after it may start, and missed it.
func TestRightSizeFromStartTime(t *testing.T) {
	deadline := t0.Add(5*time.Hour + 2*time.Minute)
	start := t0.Add(5 * time.Hour)
	auto := func(nb *NotBefore) Job {
		j := mkJob("auto", 0, 2)
		j.Sizing, j.MaxExecutors, j.InputSizeGB = &Sizing{Auto: true}, 64, 50
		j.DeadlineAt, j.NotBefore = &deadline, nb
		return j
	}
	late := auto(&NotBefore{Time: start})
	if err := RightSize(nil, &late, t0); err != nil {
		t.Fatal(err)
	}
	atStart := auto(nil)
	if err := RightSize(nil, &atStart, start); err != nil {
		t.Fatal(err)
	}
	if atStart.Executors <= 1 {
		t.Fatalf("sized at its start time: %d executors (%s); the test wants a deadline that needs more than one", atStart.Executors, atStart.Sizing.Reason)
	}
	if late.Executors != atStart.Executors {
		t.Fatalf("with its start time ahead: %d executors (%s), want %d as sized at its start time (%s)",
			late.Executors, late.Sizing.Reason, atStart.Executors, atStart.Sizing.Reason)
	}
}

// TestRightSizeReasonSaysOneExecutor: a job sized to one executor says
// so in the singular ("1 executor (model: ...)", not "1 executors"), as
// its timeline and `sparkpack job` show it.
func TestRightSizeReasonSaysOneExecutor(t *testing.T) {
	deadline := t0.Add(10 * time.Hour)
	j := mkJob("auto", 0, 2)
	j.Sizing, j.MaxExecutors, j.DeadlineAt = &Sizing{Auto: true}, 8, &deadline
	if err := RightSize(nil, &j, t0); err != nil {
		t.Fatal(err)
	}
	if j.Executors != 1 {
		t.Fatalf("sized %d executors (%s); the test wants a deadline one executor meets", j.Executors, j.Sizing.Reason)
	}
	if !strings.HasPrefix(j.Sizing.Reason, "1 executor (model: ") {
		t.Fatalf("reason %q, want it to begin %q", j.Sizing.Reason, "1 executor (model: ")
	}
}
