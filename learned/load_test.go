package learned

import (
	"context"
	"errors"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// blockingHistory is a run history whose read waits until release is
// closed (or ctx ends), as a slow read of a large history does; started
// is closed when the read begins.
type blockingHistory struct {
	runs             []scheduler.RunRecord
	started, release chan struct{}
}

func (h *blockingHistory) RunHistory(ctx context.Context, limit int) ([]scheduler.RunRecord, error) {
	close(h.started)
	select {
	case <-h.release:
		return h.runs, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// TestReloadCountsRunsObservedMeanwhileOnce: runs the core teaches the
// model while a reload reads the history are learned once each: those
// the read holds too (committed before it) are not counted twice, those
// it missed (committed after it) are not lost when the reload swaps its
// state in. Until then the model answers with what it knew.
func TestReloadCountsRunsObservedMeanwhileOnce(t *testing.T) {
	all := runs(30, 3)
	for i := range all {
		all[i].JobID, all[i].Attempt, all[i].ID = "job-"+string(rune('a'+i)), 1, int64(i+1)
	}
	m := New()
	h := &blockingHistory{runs: all[:25], started: make(chan struct{}), release: make(chan struct{})}
	done := make(chan error, 1)
	go func() { _, err := m.Reload(context.Background(), h); done <- err }()
	<-h.started
	// During the read: runs 20..29 end; 20..24 are in what the read
	// returns, 25..29 are not.
	for _, r := range all[20:] {
		rec := r
		rec.ID = 0 // the core's record has no row ID
		m.Observe(rec)
	}
	if got := m.Runs(); got != 10 {
		t.Fatalf("during the reload the model knows %d runs; want the 10 it was taught", got)
	}
	close(h.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := m.Runs(); got != len(all) {
		t.Fatalf("after the reload: %d runs; want each of the %d once", got, len(all))
	}
	ref := New()
	ref.Load(all)
	k := scheduler.RunKey{Signature: sig, Size: 1, EstimateSeconds: 100}
	got, ok1 := m.Predict(k, 4, ref.book.UsualPlacement(sig, ""))
	want, ok2 := ref.Predict(k, 4, ref.book.UsualPlacement(sig, ""))
	if !ok1 || !ok2 || got.Runs != want.Runs {
		t.Fatalf("prediction %+v (%v); the whole history's %+v (%v)", got, ok1, want, ok2)
	}
	// Once the reload is over, Observe keeps nothing for it.
	m.Observe(runs(1, 9)[0])
	if len(m.loads) != 0 {
		t.Fatalf("%d reloads still keeping runs", len(m.loads))
	}
}

// TestReloadStopsWithItsContext: cancelling a reload (its term ended)
// stops it, during the read or while learning, and the model keeps what
// it knew.
func TestReloadStopsWithItsContext(t *testing.T) {
	m := New()
	m.Load(runs(12, 1))
	v := m.Version()
	h := &blockingHistory{runs: runs(40, 2), started: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := m.Reload(ctx, h); done <- err }()
	<-h.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("reload: %v; want it cancelled", err)
	}
	if m.Runs() != 12 || m.Version() != v || len(m.loads) != 0 {
		t.Fatalf("after a cancelled reload: %d runs, version %d (was %d), %d loads kept", m.Runs(), m.Version(), v, len(m.loads))
	}
	// Cancelled while learning (the read returned): stopped too.
	if _, err := m.load(ctx, bigHistory(2000, false), m.beginLoad()); !errors.Is(err, context.Canceled) || m.Runs() != 12 {
		t.Fatalf("load under a cancelled context: %v, %d runs", err, m.Runs())
	}
}
