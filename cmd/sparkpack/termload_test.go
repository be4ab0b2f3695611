package main

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/scheduler"
)

// slowHistory is a run history whose read blocks until its context ends
// (a read of a large history that has not returned yet): read is closed
// when the read starts, stopped when its context ended it.
type slowHistory struct{ read, stopped chan struct{} }

func (s *slowHistory) RunHistory(ctx context.Context, limit int) ([]scheduler.RunRecord, error) {
	close(s.read)
	<-ctx.Done()
	close(s.stopped)
	return nil, ctx.Err()
}

// TestTermStartsItsSchedulerBeforeTheHistoryLoads: a new term starts its
// scheduler while the run history it reloads the model from is still
// being read (a large history takes seconds), with what the model knew;
// when the term ends the load is stopped, and the term waits for it.
func TestTermStartsItsSchedulerBeforeTheHistoryLoads(t *testing.T) {
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	hist := &slowHistory{read: make(chan struct{}), stopped: make(chan struct{})}
	m := learned.New()
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	var known []scheduler.RunRecord
	for i := range 12 {
		e := 1 + i%6
		secs := 300/float64(e) + 40
		known = append(known, scheduler.RunRecord{JobID: "j", Attempt: i, Signature: "sig", Executors: e, StartedAt: t0,
			EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs, Outcome: scheduler.RunFinished})
	}
	m.Load(known) // the previous term's model
	started := make(chan int, 1)
	h := &leadership{log: quiet, model: m, history: hist}
	h.startTerm = func(ctx context.Context, l leader.Lease) (*live, error) {
		<-hist.read // the term's load is under way...
		select {
		case <-hist.stopped:
			t.Error("the load ended before the scheduler started")
		default: // ...and has not returned: the scheduler starts anyway
		}
		started <- h.model.Runs()
		return nil, errors.New("no Mesos in this test: the term ends")
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		h.lead(context.Background(), leader.Lease{Token: 1})
	}()
	select {
	case n := <-started:
		if n != len(known) {
			t.Errorf("the scheduler started with a model of %d runs; want the previous term's %d", n, len(known))
		}
	case <-time.After(2 * time.Minute): // a deadlock guard, not a measure
		t.Fatal("the term did not start its scheduler while the run history was being read")
	}
	select {
	case <-ended:
	case <-time.After(2 * time.Minute):
		t.Fatal("the term did not end: its load was not stopped")
	}
	select {
	case <-hist.stopped:
	default:
		t.Fatal("the term ended before its load stopped")
	}
	if h.leading || !h.stale || m.Runs() != len(known) {
		t.Fatalf("after the term: leading %v, stale %v, %d runs; want false, true, %d", h.leading, h.stale, m.Runs(), len(known))
	}
}
