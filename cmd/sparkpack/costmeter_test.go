package main

import (
	"context"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
)

// TestCostMeterOfATermThatEndsAtOnceWarnsOfNothing: a term that ends
// before its cost meter was read (a shutdown while the leader waited on
// an unreachable master) loads the saved total on the way out, without a
// warning that reading it failed ("context canceled", seen at every such
// shutdown).
func TestCostMeterOfATermThatEndsAtOnceWarnsOfNothing(t *testing.T) {
	st, _ := quietStore(context.Background(), t)
	log, hook := logtest.NewNullLogger()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	l := &live{}
	l.keepCostMeter(ctx, st, log)
	if n := len(hook.AllEntries()); n != 0 {
		t.Fatalf("%d log lines, first %q; want none", n, hook.AllEntries()[0].Message)
	}
	if !l.costBase.loaded {
		t.Fatal("the saved total was not read on the way out")
	}
}

// TestCostSaveDue: the meter is saved every costSaveEvery, and at the next
// check after an agent went idle (its last active seconds would not be
// counted again after a crash).
func TestCostSaveDue(t *testing.T) {
	saved := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	cases := []struct {
		name            string
		now             time.Time
		idleNow, idleAt uint64
		want            bool
	}{
		{"never saved", saved, 0, 0, true},
		{"just saved, nothing went idle", saved.Add(time.Second), 3, 3, false},
		{"just saved, an agent went idle", saved.Add(time.Second), 4, 3, true},
		{"10 s after the save", saved.Add(costSaveEvery), 3, 3, true},
		{"the clock went back", saved.Add(-time.Minute), 3, 3, false},
	}
	for _, c := range cases {
		last := saved
		if c.name == "never saved" {
			last = time.Time{}
		}
		if got := costSaveDue(c.now, last, c.idleNow, c.idleAt); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
