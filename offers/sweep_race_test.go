package offers

import (
	"context"
	"testing"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
)

// lateJobPinner is a sweepPinner during whose GET_AGENTS a job is started
// (followed and reserved): before asks who is kept.
type lateJobPinner struct {
	sweepPinner
	before func()
}

func (p *lateJobPinner) Orphans(ctx context.Context, keep func(string) bool) ([]string, error) {
	p.before()
	return p.sweepPinner.Orphans(ctx, keep)
}

// TestSweepKeepsJobStartedDuringLook: a job the cluster starts following
// (and reserves for) while the sweep reads the agents is not taken for a
// leak: the jobs followed were copied before the look, and the new job's
// fresh reservations were released under it.
func TestSweepKeepsJobStartedDuringLook(t *testing.T) {
	st := &unfinishedStore{memStore: *newMemStore()}
	p := &lateJobPinner{sweepPinner: sweepPinner{labelled: []string{"new", "old"}}}
	c := NewCluster(ClusterConfig{Store: st, Reserver: p, Log: quietLog()})
	p.before = func() {
		c.mu.Lock()
		heldJob(c, "new", lifecycle.Reserving)
		c.mu.Unlock()
	}
	if err := c.sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(p.released) != 1 || p.released[0] != "old" {
		t.Fatalf("released %v, want only old (new started during the look)", p.released)
	}
}
