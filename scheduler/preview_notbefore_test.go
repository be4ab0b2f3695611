package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestPreviewNotBefore: a job whose start time is ahead does not start
// now, whatever room there is: the preview says it waits for its start
// time instead of promising a start (and an end) now.
func TestPreviewNotBefore(t *testing.T) {
	h := newHarness(t, Config{Policy: "bfd"}, agent("a1", 16, 65536, 0.24))
	h.schedule()
	j := mkJob("later", 1, 2, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour))
	p, err := h.core.Preview(context.Background(), j, t0)
	if err != nil {
		t.Fatal(err)
	}
	if p.StartsNow || p.EstimatedStart != nil || p.EstimatedFinish != nil || !strings.Contains(p.WaitingReason, "start time") {
		t.Fatalf("preview %+v, want no start now and a wait for its start time", p)
	}
	if p.Plan == nil {
		t.Fatalf("preview %+v, want the plan it would get on the cluster as it is", p)
	}
	// Without a start time it starts now.
	j.NotBefore = nil
	if p, err = h.core.Preview(context.Background(), j, t0); err != nil || !p.StartsNow {
		t.Fatalf("preview %+v (%v), want a start now", p, err)
	}
}

// TestPreviewBehindDeadlineJobs: a regular job previewed while the only
// deadline job waits by choice (for its start time) starts now; while a
// deadline job waits for room it waits "deadline jobs first", as the pass
// would decide.
func TestPreviewBehindDeadlineJobs(t *testing.T) {
	h := newHarness(t, Config{Policy: "bfd"}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("later", 1, 2, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour)))
	h.schedule()
	r := mkJob("r", 1, 2)
	p, err := h.core.Preview(context.Background(), r, t0)
	if err != nil || !p.StartsNow || p.DeadlineWaiting != 1 {
		t.Fatalf("preview %+v (%v), want a start now: the deadline job waits for its start time", p, err)
	}
	h.submit(mkJob("hog", 6, 2)) // 12 of the 16 cpus
	h.schedule()
	h.submit(mkJob("big", 3, 2, withDeadline(5*time.Hour))) // 6 cpus: waits for room
	h.schedule()
	if p, err = h.core.Preview(context.Background(), r, t0); err != nil || p.StartsNow || !strings.HasPrefix(p.WaitingReason, "deadline jobs first") {
		t.Fatalf("preview %+v (%v), want a wait behind the deadline job that waits for room", p, err)
	}
}
