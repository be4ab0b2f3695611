package latest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// Build builds the value from the source as it is now. It is called by
// Run only, one call at a time. complete is false when part of the value
// could not be had (a read that failed): the value is published all the
// same and built again after Options.Retry.
type Build[T any] func(ctx context.Context) (v T, complete bool)

// Options tune a Value. The zero value builds once per change, at once.
type Options[T any] struct {
	// Gap, if set, is the least time from the end of a build to the start
	// of the next, given how long the build took: changes meanwhile are
	// coalesced into the next build. It bounds the cpu and the garbage of
	// a source that changes all the time.
	Gap func(took time.Duration) time.Duration
	// Retry is how soon an incomplete build is done again without a
	// change (default 1 s).
	Retry time.Duration
	// Published, if set, is called by Run after each value is published
	// (e.g. to tell watchers that a new view is there to read).
	Published func(v *T)
}

// Value is the latest value of a Build. Its zero value is not usable: use
// New.
type Value[T any] struct {
	build Build[T]
	opt   Options[T]

	cur       atomic.Pointer[T]
	kick      chan struct{} // one pending change at most: changes coalesce
	ready     chan struct{} // closed when the first value is published
	readyOnce sync.Once
	builds    atomic.Uint64
}

// New returns a Value that build fills once Run runs.
func New[T any](build Build[T], opt Options[T]) *Value[T] {
	if opt.Retry <= 0 {
		opt.Retry = time.Second
	}
	return &Value[T]{build: build, opt: opt, kick: make(chan struct{}, 1), ready: make(chan struct{})}
}

// Changed tells the owner that the source changed. It never blocks and
// may be called from anywhere, with any lock held.
func (v *Value[T]) Changed() {
	select {
	case v.kick <- struct{}{}:
	default: // a build is pending already: it will see this change too
	}
}

// Load returns the value last published, or nil before the first. The
// value is shared: callers must not modify it.
func (v *Value[T]) Load() *T { return v.cur.Load() }

// Wait returns the value last published, waiting for the first one if
// none is yet (or until ctx ends).
func (v *Value[T]) Wait(ctx context.Context) (*T, error) {
	if p := v.cur.Load(); p != nil {
		return p, nil
	}
	select {
	case <-v.ready:
		return v.cur.Load(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Builds counts the builds done so far.
func (v *Value[T]) Builds() uint64 { return v.builds.Load() }

// Run is the owner: it builds the value at once, then again after every
// change (Changed) and after an incomplete build (Options.Retry), until
// ctx ends. Call it once.
func (v *Value[T]) Run(ctx context.Context) {
	var retry <-chan time.Time
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-v.kick:
			case <-retry:
			}
		}
		// A change from here on kicks again: the build after this one
		// sees it, so the last value published follows the last change.
		select {
		case <-v.kick:
		default:
		}
		start := time.Now()
		val, complete := v.build(ctx)
		if ctx.Err() != nil {
			return
		}
		took := time.Since(start)
		v.cur.Store(&val)
		v.builds.Add(1)
		v.readyOnce.Do(func() { close(v.ready) })
		if v.opt.Published != nil {
			v.opt.Published(&val)
		}
		retry = nil
		if !complete {
			retry = time.After(v.opt.Retry)
		}
		if v.opt.Gap != nil {
			if gap := v.opt.Gap(took); gap > 0 {
				t := time.NewTimer(gap)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
	}
}
