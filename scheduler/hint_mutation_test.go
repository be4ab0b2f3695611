package scheduler

// A test written from a mutant scripts/mutation.sh found alive in
// hint.go (docs/testing.md, "Mutation testing").

import (
	"testing"
	"time"
)

// TestPredictedReasonWithPreemption: with a full 4-cpu agent left by the
// last pass, a job of one 4-cpu executor is predicted to wait short of
// cpus; with preemption on, a deadline job's reason is left to the pass
// (it tells what preemption does about it), a regular job's is predicted
// as without preemption.
func TestPredictedReasonWithPreemption(t *testing.T) {
	for _, c := range []struct {
		name              string
		preemption        PreemptionPolicy
		regular, deadline string
	}{
		{"preemption on", PreemptMDF, "does not fit now: short of cpus", ""},
		{"preemption off", PreemptNone, "does not fit now: short of cpus", "does not fit now: short of cpus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{Preemption: c.preemption}, agent("a1", 4, 16384, 0.24))
			h.submit(mkJob("hold", 1, 4, submittedAt(-time.Hour)))
			h.schedule()
			h.schedule()
			r := mkJob("r", 1, 4)
			d := mkJob("d", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute))
			if got := h.core.Decide(&r, h.clock.Now()).Reason; got != c.regular {
				t.Errorf("regular job: predicted %q, want %q", got, c.regular)
			}
			if got := h.core.Decide(&d, h.clock.Now()).Reason; got != c.deadline {
				t.Errorf("deadline job: predicted %q, want %q", got, c.deadline)
			}
		})
	}
}
