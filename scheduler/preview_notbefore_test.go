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
