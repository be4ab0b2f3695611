package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// views.go (docs/testing.md, "Mutation testing"); expected figures by hand.

import (
	"fmt"
	"testing"
	"time"
)

// TestViewAtIsThePassThatChangedIt: a new core publishes an empty view
// at once (as of its clock's now), and the view's time is that of the
// last pass that changed the queues: a pass a minute later that changes
// nothing leaves it.
func TestViewAtIsThePassThatChangedIt(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	if p, err := h.core.QueuePage(10, ""); err != nil || !p.At.Equal(t0) {
		t.Fatalf("new core: view at %s (%v), want %s", p.At, err, t0)
	}
	h.submit(mkJob("hog", 1, 4), mkJob("w", 1, 4, submittedAt(time.Second)))
	h.schedule()
	h.clock.Advance(time.Minute)
	h.schedule()
	p, err := h.core.QueuePage(10, "")
	if err != nil || len(p.Regular) != 1 || !p.At.Equal(t0) {
		t.Fatalf("view %+v (%v): want w waiting, as of %s", p, err, t0)
	}
}

// TestHeldJobWarmWithoutBootTime: with no boot time known (no BootInfo),
// a job held for a start time an hour ahead still counts for CouldUse:
// only a known boot time says how long ahead an agent is needed.
func TestHeldJobWarmWithoutBootTime(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 2, 16384, 0.24))
	h.submit(mkJob("hog", 1, 2))
	h.submit(mkJob("later", 1, 2, withDeadline(3*time.Hour), withEstimate(10*time.Minute), withNotBefore(time.Hour)))
	h.schedule()
	if !h.core.CouldUse(8, 32768) {
		t.Fatal("a held job keeps no agent warm without a boot time")
	}
}

// TestLargeQueuePublishedAtMostEveryGap: under Run (async), a queue of
// more than publishSmall (5000) jobs is published at most every
// publishGap; one of at most 5000 at every pass. One 4-cpu agent held by
// "hog"; jobs of one 4-cpu executor wait. The last publish is made to
// look recent (publishedAt ahead of now) or old (the zero time) so that
// nothing depends on the wall clock.
func TestLargeQueuePublishedAtMostEveryGap(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.t = t
	h.submit(mkJob("hog", 1, 4, submittedAt(-time.Hour)))
	h.schedule()
	add := func(from, to int) {
		for i := from; i < to; i++ {
			h.core.JobSubmitted(h.store.add(mkJob(fmt.Sprintf("w-%05d", i), 1, 4, submittedAt(time.Duration(i)*time.Millisecond))))
		}
	}
	regular := func() int { return h.core.Lengths().Regular }
	add(0, 4999)
	h.schedule()
	if n := regular(); n != 4999 {
		t.Fatalf("%d waiting in the view, want 4999", n)
	}
	h.core.async.Store(true)
	recent := time.Now().Add(time.Hour)
	// 5000 waiting: not more than publishSmall, published at once.
	h.core.publishedAt = recent
	add(4999, 5000)
	h.schedule()
	if n := regular(); n != 5000 {
		t.Fatalf("5000 waiting: the view shows %d, want 5000 (published at every pass)", n)
	}
	// 5001 waiting, published a moment ago: not yet.
	h.core.publishedAt = recent
	add(5000, 5001)
	h.schedule()
	if n := regular(); n != 5000 {
		t.Fatalf("5001 waiting, just published: the view shows %d, want still 5000", n)
	}
	// The gap has passed: the next pass publishes it.
	h.core.publishedAt = time.Time{}
	h.schedule()
	if n := regular(); n != 5001 {
		t.Fatalf("5001 waiting, published long ago: the view shows %d, want 5001", n)
	}
}
