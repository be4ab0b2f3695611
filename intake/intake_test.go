package intake

import (
	"context"
	"errors"
	"io"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/scheduler"
)

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// fakeCore records what it is handed; it knows a job once handed (or
// listed in known: heard of through a notification).
type fakeCore struct {
	mu        sync.Mutex
	known     map[string]bool
	submitted []string
	cancelled []string // "id" or "id kill"
}

func newCore(known ...string) *fakeCore {
	c := &fakeCore{known: map[string]bool{}}
	for _, id := range known {
		c.known[id] = true
	}
	return c
}

func (c *fakeCore) JobSubmitted(j scheduler.Job) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.submitted = append(c.submitted, j.ID)
	c.known[j.ID] = true
}

func (c *fakeCore) JobCancelled(j scheduler.Job, kill bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if kill {
		c.cancelled = append(c.cancelled, j.ID+" kill")
	} else {
		c.cancelled = append(c.cancelled, j.ID)
	}
}

func (c *fakeCore) Unknown(ids []string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, id := range ids {
		if !c.known[id] {
			out = append(out, id)
		}
	}
	return out
}

func (c *fakeCore) hear(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.known[id] = true
}

func (c *fakeCore) took() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.submitted
	c.submitted = nil
	sort.Strings(out)
	return out
}

// fakeStore holds jobs in insertion order (seq = index + 1); fails makes
// that many next reads fail.
type fakeStore struct {
	mu     sync.Mutex
	jobs   []scheduler.Job
	fails  int
	reads  int
	afters []int64 // the after of every WaitingAfter
}

func (s *fakeStore) add(id string, st scheduler.State, kill bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jobs = append(s.jobs, scheduler.Job{Spec: scheduler.Spec{ID: id}, State: st, KillRequested: kill})
}

func (s *fakeStore) fail() error {
	s.reads++
	if s.fails > 0 {
		s.fails--
		return errors.New("connection refused")
	}
	return nil
}

func (s *fakeStore) JobsByID(_ context.Context, ids []string) ([]scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return nil, err
	}
	var out []scheduler.Job
	for _, j := range s.jobs {
		if slices.Contains(ids, j.ID) {
			out = append(out, j)
		}
	}
	return out, nil
}

func (s *fakeStore) Unfinished(context.Context) ([]scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.fail(); err != nil {
		return nil, err
	}
	var out []scheduler.Job
	for _, j := range s.jobs {
		if !j.State.Terminal() {
			out = append(out, j)
		}
	}
	return out, nil
}

func (s *fakeStore) WaitingAfter(_ context.Context, after int64) ([]string, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.afters = append(s.afters, after)
	if err := s.fail(); err != nil {
		return nil, after, err
	}
	var ids []string
	maxSeq := after
	for i, j := range s.jobs {
		if seq := int64(i + 1); seq > after && j.State.Waiting() {
			ids = append(ids, j.ID)
			maxSeq = max(maxSeq, seq)
		}
	}
	return ids, maxSeq, nil
}

// TestSubmitted: of the notified jobs, the waiting ones are handed over
// and counted; jobs that moved on or do not exist are not; a failed read
// is tried again.
func TestSubmitted(t *testing.T) {
	st := &fakeStore{fails: 2}
	st.add("q", scheduler.Queued, false)
	st.add("s", scheduler.Submitted, false)
	st.add("r", scheduler.Running, false)
	st.add("c", scheduler.Cancelled, false)
	core := newCore()
	in := New(core, st, quiet(), nil)
	if n := in.Submitted(context.Background(), []string{"q", "s", "r", "c", "gone"}); n != 2 {
		t.Fatalf("%d waiting, want 2", n)
	}
	if got := core.took(); !slices.Equal(got, []string{"q", "s"}) {
		t.Fatalf("handed %v", got)
	}
	if st.reads != 3 {
		t.Fatalf("%d reads, want 3 (two failed)", st.reads)
	}
}

// TestSubmittedEndsWithTheTerm: a read that keeps failing is given up
// when the term ends; nothing is handed over.
func TestSubmittedEndsWithTheTerm(t *testing.T) {
	st := &fakeStore{fails: 1 << 30}
	st.add("q", scheduler.Queued, false)
	core := newCore()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if n := New(core, st, quiet(), nil).Submitted(ctx, []string{"q"}); n != 0 {
		t.Fatalf("%d handed after the term ended", n)
	}
	if got := core.took(); got != nil {
		t.Fatalf("handed %v", got)
	}
}

// TestResync: every waiting job is handed over again, every pending kill
// passed on; running and ended jobs are left alone.
func TestResync(t *testing.T) {
	st := &fakeStore{fails: 1}
	st.add("q", scheduler.Queued, false)
	st.add("s", scheduler.Submitted, false)
	st.add("r", scheduler.Running, false)
	st.add("k", scheduler.Launching, true)
	st.add("f", scheduler.Finished, false)
	core := newCore("q")
	New(core, st, quiet(), nil).Resync(context.Background())
	if got := core.took(); !slices.Equal(got, []string{"q", "s"}) {
		t.Fatalf("handed %v", got)
	}
	if !slices.Equal(core.cancelled, []string{"k kill"}) {
		t.Fatalf("cancelled %v", core.cancelled)
	}
}

func TestCancelled(t *testing.T) {
	core := newCore()
	in := New(core, &fakeStore{}, quiet(), nil)
	in.Cancelled("a", false)
	in.Cancelled("b", true)
	if !slices.Equal(core.cancelled, []string{"a", "b kill"}) {
		t.Fatalf("cancelled %v", core.cancelled)
	}
}

// TestRescan: a waiting job the core has not heard of at two rescans in a
// row is handed over and counted; one whose notification was merely late
// (heard of by the second rescan) is not; each read starts where the one
// two rescans ago ended.
func TestRescan(t *testing.T) {
	st := &fakeStore{}
	core := newCore()
	var found []int
	in := New(core, st, quiet(), func(n int) { found = append(found, n) })
	ctx := context.Background()
	var r rescan

	st.add("heard", scheduler.Queued, false) // seq 1
	core.hear("heard")
	st.add("late", scheduler.Queued, false) // seq 2: its notice arrives after the first rescan
	st.add("lost", scheduler.Submitted, false)
	st.add("ran", scheduler.Running, false) // not waiting: never a suspect
	r.step(ctx, in)                         // suspects: late, lost
	if got := core.took(); got != nil || found != nil {
		t.Fatalf("the first sight of a job hands it over: %v %v", got, found)
	}
	core.hear("late")
	st.add("new", scheduler.Queued, false) // seq 5
	r.step(ctx, in)                        // hands lost; suspects: new
	if got := core.took(); !slices.Equal(got, []string{"lost"}) || !slices.Equal(found, []int{1}) {
		t.Fatalf("second rescan handed %v, found %v; want [lost], [1]", got, found)
	}
	r.step(ctx, in) // hands new
	if got := core.took(); !slices.Equal(got, []string{"new"}) || !slices.Equal(found, []int{1, 1}) {
		t.Fatalf("third rescan handed %v, found %v", got, found)
	}
	r.step(ctx, in)
	if got := core.took(); got != nil {
		t.Fatalf("a fourth rescan handed %v", got)
	}
	// A read starts after the largest waiting seq that the read before
	// the last one saw: 0, 0, 3 (lost), 5 (new).
	if !slices.Equal(st.afters, []int64{0, 0, 3, 5}) {
		t.Fatalf("reads after seq %v, want [0 0 3 5]", st.afters)
	}
}

// TestRescanSurvivesAFailedRead: a failed read of the jobs stored lately
// is tried at the next rescan; a job unheard of is still found.
func TestRescanSurvivesAFailedRead(t *testing.T) {
	st := &fakeStore{}
	core := newCore()
	in := New(core, st, quiet(), nil)
	ctx := context.Background()
	var r rescan
	r.step(ctx, in)
	st.add("lost", scheduler.Queued, false)
	st.fails = 1
	r.step(ctx, in) // the read fails
	r.step(ctx, in) // lost is suspected
	if got := core.took(); got != nil {
		t.Fatalf("handed %v before two sightings", got)
	}
	r.step(ctx, in)
	if got := core.took(); !slices.Equal(got, []string{"lost"}) {
		t.Fatalf("after a failed read: handed %v, want [lost]", got)
	}
}

func TestRouteOf(t *testing.T) {
	for _, c := range []struct {
		leading, valid bool
		sinceLed       time.Duration
		want           Route
	}{
		{true, true, 0, ToCore},
		{true, false, 0, Announce}, // the lease is in doubt
		{false, false, time.Second, Announce},
		{false, true, time.Second, Announce}, // the term just ended
		{false, false, 2 * AnnounceAfterLeading, Announced},
		{false, false, AnnounceAfterLeading + time.Nanosecond, Announced},
	} {
		if got := RouteOf(c.leading, c.valid, c.sinceLed); got != c.want {
			t.Errorf("RouteOf(%v, %v, %s) = %s, want %s", c.leading, c.valid, c.sinceLed, got, c.want)
		}
	}
}
