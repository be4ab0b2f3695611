package scheduler

import (
	"slices"
	"testing"
	"time"
)

// countByChoice recounts the deadline queue's entries that wait by choice.
func countByChoice(c *Core) int {
	n := 0
	for _, e := range c.dq.Entries() {
		if e.wait.byChoice {
			n++
		}
	}
	return n
}

// TestDeferredDeadlineJobHoldsNoRegularJob: a deadline job waiting for its
// start time waits by choice and holds no regular job back, in a pass that
// looks only at the new jobs too (nothing freed, no timer due): such a
// pass counted it as a deadline job that waits for room, and regular jobs
// submitted meanwhile waited "deadline jobs first" on an idle cluster
// until its start time (hours) or until some job ended.
func TestDeferredDeadlineJobHoldsNoRegularJob(t *testing.T) {
	h := newHarness(t, Config{Policy: "bfd"}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("later", 1, 2, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour)))
	h.schedule()
	if got := countByChoice(h.core); got != 1 || h.core.byChoiceDQ != 1 {
		t.Fatalf("entries waiting by choice: %d, counted %d; want 1", got, h.core.byChoiceDQ)
	}
	h.clock.Advance(time.Minute)
	h.submit(mkJob("r1", 1, 2, submittedAt(time.Minute)))
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"r1"}) {
		t.Fatalf("started %v, want r1 (the deadline job waits for its start time); r1 waits: %q", got, h.store.get("r1").WaitingReason)
	}
	// A deadline job that waits for room still holds regular jobs back.
	h.submit(mkJob("big", 8, 2, withDeadline(5*time.Hour), submittedAt(time.Minute)))
	h.schedule()
	h.submit(mkJob("r2", 1, 2, submittedAt(time.Minute+time.Second)))
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"r1"}) {
		t.Fatalf("started %v, want r2 waiting behind deadline job big", got)
	}
	// Cancelled, the deferred job leaves the count.
	h.core.JobCancelled(h.store.get("later"), false)
	h.schedule()
	if got := countByChoice(h.core); got != 0 || h.core.byChoiceDQ != 0 {
		t.Fatalf("after the cancel: entries waiting by choice %d, counted %d; want 0", got, h.core.byChoiceDQ)
	}
}

// TestByChoiceCountFollowsStartTime: the count follows an entry from its
// wait for its start time to its start.
func TestByChoiceCountFollowsStartTime(t *testing.T) {
	h := newHarness(t, Config{Policy: "bfd"}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("later", 1, 2, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(time.Hour)),
		mkJob("later2", 1, 2, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(3*time.Hour)))
	h.schedule()
	if h.core.byChoiceDQ != 2 {
		t.Fatalf("counted %d, want 2", h.core.byChoiceDQ)
	}
	h.clock.Advance(time.Hour)
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"later"}) {
		t.Fatalf("started %v, want later at its start time", got)
	}
	if got := countByChoice(h.core); got != 1 || h.core.byChoiceDQ != 1 {
		t.Fatalf("entries waiting by choice %d, counted %d; want 1", got, h.core.byChoiceDQ)
	}
}

// TestNotBlockedBehindDeferredJobs: a pass in which the only deadline job
// waits by choice leaves the regular queue unblocked, so that the next
// pass that looks only at new jobs does not look at every regular job
// again (blocked was "the deadline queue is not empty").
func TestNotBlockedBehindDeferredJobs(t *testing.T) {
	h := newHarness(t, Config{Policy: "bfd"}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("later", 1, 2, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour)))
	h.schedule()
	if h.core.blocked {
		t.Fatal("regular jobs marked blocked behind a deadline job that waits for its start time")
	}
	h.submit(mkJob("big", 8, 2, withDeadline(5*time.Hour), submittedAt(time.Second)),
		mkJob("r1", 1, 2, submittedAt(2*time.Second)))
	h.schedule() // big starts, r1 too
	h.submit(mkJob("big2", 8, 2, withDeadline(5*time.Hour), submittedAt(3*time.Second)))
	h.schedule() // big2 waits for room
	if !h.core.blocked {
		t.Fatal("regular jobs not blocked behind a deadline job that waits for room")
	}
}
