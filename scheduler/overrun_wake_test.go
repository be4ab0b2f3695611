package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// TestOverrunFlaggedAtItsWakeUp: the pass asks to be woken at a running
// job's p90 (1.5 x 1200 s / 2 = 900 s), and a pass at exactly that
// wake-up flags it and asks for no wake-up at or before now: a virtual
// clock that jumps to each wake-up (the simulator's) would otherwise pass
// at the same instant for ever.
func TestOverrunFlaggedAtItsWakeUp(t *testing.T) {
	ms := &markingStore{testStore: newTestStore()}
	core, clock := runningOnModel(t, ms, ms, DiscardLogger(), 1200)
	ctx := context.Background()
	if _, err := core.Schedule(ctx); err != nil {
		t.Fatal(err)
	}
	wake, ok := core.NextWake()
	if !ok || wake.Sub(clock.Now()) != 900*time.Second {
		t.Fatalf("wake-up in %v (%v), want at the p90, 900 s from now", wake.Sub(clock.Now()), ok)
	}
	clock.Advance(wake.Sub(clock.Now()))
	if _, err := core.Schedule(ctx); err != nil {
		t.Fatal(err)
	}
	if want := []string{"j: " + overrunReason}; !slices.Equal(ms.marked, want) {
		t.Fatalf("marked %v at the wake-up, want %v", ms.marked, want)
	}
	if at, ok := core.NextWake(); ok && !at.After(clock.Now()) {
		t.Fatalf("asks to be woken at %v, not after now", at.Sub(clock.Now()))
	}
}

// runningOnModel is a core whose model predicts base / executors seconds
// (p90 1.5 x that: tableModel) on one 4-cpu agent, with job "j" (2
// executors of 1 cpu) started and reported running at t0; ms records the
// flags, st is the store the core writes (ms, or a wrapper of it).
func runningOnModel(t *testing.T, st Store, ms *markingStore, log logrus.FieldLogger, base float64) (*Core, *manualClock) {
	t.Helper()
	clock := newManualClock(t0)
	core, err := New(Config{Model: &tableModel{base: map[string]float64{xSig: base}}, Log: log}, newTestCluster(agent("a1", 4, 16384, 0.24)), st, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j := mkJob("j", 2, 1, withEstimate(time.Minute))
	ms.add(j)
	if _, err := core.Submit(ctx, j); err != nil {
		t.Fatal(err)
	}
	if n, err := core.Schedule(ctx); err != nil || n != 1 {
		t.Fatalf("schedule: %d, %v", n, err)
	}
	for _, s := range []State{Launching, Running} {
		if err := core.Report(ctx, "j", s, ""); err != nil {
			t.Fatal(err)
		}
	}
	return core, clock
}
