package main

import (
	"context"
	"testing"

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
