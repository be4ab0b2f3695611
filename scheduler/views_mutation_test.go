package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// views.go (docs/testing.md, "Mutation testing"); expected figures by hand.

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
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

// TestCouldUseEveryShape: CouldUse looks at every executor size waiting,
// and an agent of exactly a size (or short of it by at most 1e-9) fits.
// Agents of 2 and 8 cpus are held by "hog1" and "hog2"; waiting: "big" (1 x 8 cpus, 1024 + 384 =
// 1408 MiB) and "small" (1 x 2 cpus, 1408 MiB), tried big first (larger
// RD). An agent of 2 cpus and 1408 MiB fits small only; 1.999999999 cpus
// (or 1407.999999999 MiB) is within 1e-9 of it; 1.99 cpus or 1407 MiB is
// not.
func TestCouldUseEveryShape(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 2, 16384, 0.24), agent("a2", 8, 16384, 0.24))
	h.submit(mkJob("hog1", 1, 2, submittedAt(-time.Hour)), mkJob("hog2", 1, 8, submittedAt(-time.Hour)))
	h.schedule()
	h.submit(mkJob("big", 1, 8), mkJob("small", 1, 2, submittedAt(time.Second)))
	h.schedule()
	if l := h.core.Lengths(); l.Regular != 2 {
		t.Fatalf("lengths %+v, want big and small waiting", l)
	}
	for _, c := range []struct {
		cpus, mem float64
		want      bool
	}{
		{2, 1408, true},
		{1.999999999, 1408, true},
		{2, 1407.999999999, true},
		{1.99, 1408, false},
		{2, 1407, false},
		{8, 1408, true},
	} {
		if got := h.core.CouldUse(c.cpus, c.mem); got != c.want {
			t.Errorf("CouldUse(%v, %v) = %v, want %v", c.cpus, c.mem, got, c.want)
		}
	}
}

// TestPublishGap: the least time between two publishes of a large queue
// is 100 ms (publishEvery) or twenty times the last publish, whichever
// is longer.
func TestPublishGap(t *testing.T) {
	c := &Core{}
	for took, want := range map[time.Duration]time.Duration{
		0:                     100 * time.Millisecond,
		time.Millisecond:      100 * time.Millisecond,
		5 * time.Millisecond:  100 * time.Millisecond,
		10 * time.Millisecond: 200 * time.Millisecond,
		time.Second:           20 * time.Second,
	} {
		c.publishTook = took
		if got := c.publishGap(); got != want {
			t.Errorf("last publish took %s: gap %s, want %s", took, got, want)
		}
	}
}

// TestQueueCursorSizeLimit: a cursor of up to 512 bytes (decoded) is
// read; a longer one is refused. The cursors here point before every
// job of the deadline queue (no key, an id of padding), so the page
// starts at its first job.
func TestQueueCursorSizeLimit(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.submit(mkJob("hog", 1, 4, submittedAt(-time.Hour)))
	h.schedule()
	h.submit(mkJob("d1", 1, 4, withDeadline(time.Hour)))
	h.schedule()
	cursorOf := func(size int) string {
		b, _ := json.Marshal(queueCursor{Queue: "d", ID: "x"})
		id := strings.Repeat("x", size-len(b)+1)
		b, _ = json.Marshal(queueCursor{Queue: "d", ID: id})
		if len(b) != size {
			t.Fatalf("cursor of %d bytes, want %d", len(b), size)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	p, err := h.core.QueuePage(10, cursorOf(512))
	if err != nil || len(p.Deadline) != 1 || p.Deadline[0].ID != "d1" {
		t.Fatalf("512-byte cursor: %+v, %v; want the page from d1", p, err)
	}
	if _, err := h.core.QueuePage(10, cursorOf(513)); !errors.Is(err, ErrBadQueueCursor) {
		t.Fatalf("513-byte cursor: %v, want ErrBadQueueCursor", err)
	}
}

// TestQueueCursorPastTheEnd: a cursor whose job has left its queue goes
// on after it, even when nothing of that queue is left after it: from a
// deadline job that left, to the regular queue; from a regular job after
// every one left, to an empty last page. One 4-cpu agent held by "hog";
// d1 (deadline), r1, r2 and r3 (regular) wait, jobs of one 4-cpu
// executor; pages of one job; then d1, r2 and r3 are cancelled.
func TestQueueCursorPastTheEnd(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.submit(mkJob("hog", 1, 4, submittedAt(-time.Hour)))
	h.schedule()
	h.submit(mkJob("d1", 1, 4, withDeadline(time.Hour)), mkJob("r1", 1, 4, submittedAt(time.Second)),
		mkJob("r2", 1, 4, submittedAt(2*time.Second)), mkJob("r3", 1, 4, submittedAt(3*time.Second)))
	h.schedule()
	ids := func(p QueuePage) string {
		var out []string
		for _, q := range append(p.Deadline, p.Regular...) {
			out = append(out, q.ID)
		}
		return strings.Join(out, ",")
	}
	var cursors []string
	cursor := ""
	for _, want := range []string{"d1", "r1", "r2"} {
		p, err := h.core.QueuePage(1, cursor)
		if err != nil || ids(p) != want || p.Next == "" {
			t.Fatalf("page %q, next %q, %v; want %s and a cursor", ids(p), p.Next, err, want)
		}
		cursor = p.Next
		cursors = append(cursors, cursor)
	}
	for _, id := range []string{"d1", "r2", "r3"} {
		h.cancel(id, "user")
	}
	h.schedule()
	for i, want := range []string{"r1", "", ""} {
		if p, err := h.core.QueuePage(10, cursors[i]); err != nil || ids(p) != want || p.Next != "" {
			t.Fatalf("after the cursor of page %d: page %q, next %q, %v; want %q, the last page", i+1, ids(p), p.Next, err, want)
		}
	}
}
