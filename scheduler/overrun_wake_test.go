package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestOverrunFlaggedAtItsWakeUp: the pass asks to be woken at a running
// job's p90 (1.5 x 1200 s / 2 = 900 s), and a pass at exactly that
// wake-up flags it and asks for no wake-up at or before now: a virtual
// clock that jumps to each wake-up (the simulator's) would otherwise pass
// at the same instant for ever.
func TestOverrunFlaggedAtItsWakeUp(t *testing.T) {
	ms := &markingStore{testStore: newTestStore()}
	clock := newManualClock(t0)
	core, err := New(Config{Model: &tableModel{base: map[string]float64{xSig: 1200}}, Log: DiscardLogger()}, newTestCluster(agent("a1", 4, 16384, 0.24)), ms, clock)
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
