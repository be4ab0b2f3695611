package latest

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/importcheck"
)

// gatedSource is a source whose builds the test lets through one by one:
// each build reads the source, says it started (with what it read) and
// waits to be released. No timing is involved.
type gatedSource struct {
	state   atomic.Int64
	started chan int64
	release chan struct{}
}

func newGatedSource() *gatedSource {
	return &gatedSource{started: make(chan int64), release: make(chan struct{})}
}

func (s *gatedSource) build(ctx context.Context) (int64, bool) {
	v := s.state.Load()
	select {
	case s.started <- v:
	case <-ctx.Done():
		return 0, false
	}
	select {
	case <-s.release:
	case <-ctx.Done():
	}
	return v, true
}

func run[T any](t *testing.T, v *Value[T]) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); v.Run(ctx) }()
	return func() { cancel(); <-done }
}

// waitFor spins (yielding) until cond holds: it waits for a goroutine's
// step, not for a duration, and the test's own timeout bounds it.
func waitFor(cond func() bool) {
	for !cond() {
		time.Sleep(time.Millisecond)
	}
}

// A read during a build returns the value published before it at once:
// the build is held by the test for as long as the reads take.
func TestReadDuringBuildReturnsPreviousValue(t *testing.T) {
	src := newGatedSource()
	v := New(src.build, Options[int64]{})
	if v.Load() != nil {
		t.Fatal("a value before any build")
	}
	src.state.Store(1)
	stop := run(t, v)
	defer stop()

	<-src.started // the first build, held
	src.release <- struct{}{}
	first, err := v.Wait(context.Background())
	if err != nil || *first != 1 {
		t.Fatalf("first value %v, %v; want 1", first, err)
	}

	src.state.Store(2)
	v.Changed()
	if got := <-src.started; got != 2 {
		t.Fatalf("the rebuild read %d, want 2", got)
	}
	// The rebuild is in progress and cannot end until released: every
	// read must return the first value, without waiting for it.
	for i := 0; i < 100; i++ {
		if p := v.Load(); p == nil || *p != 1 {
			t.Fatalf("read during the rebuild = %v, want the previous value 1", p)
		}
		if p, err := v.Wait(context.Background()); err != nil || *p != 1 {
			t.Fatalf("Wait during the rebuild = %v, %v, want the previous value 1", p, err)
		}
	}
	src.release <- struct{}{}
	waitFor(func() bool { return *v.Load() == 2 })
	if b := v.Builds(); b != 2 {
		t.Errorf("%d builds, want 2", b)
	}
}

// A burst of changes while a build runs costs one more build, and the
// value published last reflects the last change.
func TestBurstOfChangesCoalesces(t *testing.T) {
	const n = 1000
	src := newGatedSource()
	var published atomic.Int64
	v := New(src.build, Options[int64]{Published: func(p *int64) { published.Add(1) }})
	stop := run(t, v)

	<-src.started
	src.release <- struct{}{}
	src.state.Store(1)
	v.Changed()
	if got := <-src.started; got != 1 { // the second build, held
		t.Fatalf("second build read %d, want 1", got)
	}
	for i := 2; i <= n; i++ {
		src.state.Store(int64(i))
		v.Changed()
	}
	src.release <- struct{}{}
	if got := <-src.started; got != n { // one build for the whole burst
		t.Fatalf("the build after the burst read %d, want %d", got, n)
	}
	src.release <- struct{}{}
	waitFor(func() bool { return *v.Load() == n })
	// Every change came before the third build started: nothing is
	// pending, so no fourth build can follow.
	if len(v.kick) != 0 {
		t.Error("a change is still pending after the build that saw the last one")
	}
	stop()
	if b := v.Builds(); b != 3 {
		t.Errorf("%d changes cost %d builds, want 3 (the first, the one running, one after)", n, b)
	}
	if p := published.Load(); p != 3 {
		t.Errorf("Published called %d times, want 3", p)
	}
}

// Before the first build, Wait waits for it (or for its context).
func TestWaitForFirstValue(t *testing.T) {
	src := newGatedSource()
	v := New(src.build, Options[int64]{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := v.Wait(ctx); err == nil {
		t.Fatal("Wait without a value and with its context over returned no error")
	}
	src.state.Store(7)
	stop := run(t, v)
	defer stop()
	got := make(chan int64)
	go func() {
		p, err := v.Wait(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- *p
	}()
	<-src.started
	src.release <- struct{}{}
	if g := <-got; g != 7 {
		t.Fatalf("Wait = %d, want 7", g)
	}
}

// An incomplete build is done again without a change.
func TestIncompleteBuildIsRetried(t *testing.T) {
	var calls atomic.Int64
	v := New(func(ctx context.Context) (int64, bool) {
		c := calls.Add(1)
		return c, c >= 3
	}, Options[int64]{Retry: time.Millisecond})
	stop := run(t, v)
	waitFor(func() bool { p := v.Load(); return p != nil && *p == 3 })
	stop()
	if c := calls.Load(); c != 3 {
		t.Errorf("%d builds, want 3 (two incomplete, then complete)", c)
	}
}

// Run ends with its context, also while a build is held.
func TestRunEndsWithContext(t *testing.T) {
	src := newGatedSource()
	v := New(src.build, Options[int64]{})
	stop := run(t, v)
	<-src.started
	stop() // returns only once Run has
	if v.Load() != nil {
		t.Error("a build cut short by the context was published")
	}
}

func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	importcheck.Check(t, func(p string) bool { return !strings.Contains(p, ".") })
}
