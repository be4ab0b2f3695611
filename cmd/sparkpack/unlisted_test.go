package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/power"
)

// The cluster view's agents of a restarted serve on a large cluster
// whose idle third is powered off: 20,000 listed, 10,000 off and no longer
// listed (withUnlistedOff): `go test -run XXX -bench WithUnlistedOff ./cmd/sparkpack/`.
func BenchmarkWithUnlistedOff(b *testing.B) {
	listed := testAgents(20000, 4)
	recs := make([]power.Record, 0, 10000)
	for i := range 10000 {
		recs = append(recs, power.Record{AgentID: fmt.Sprintf("off-%d", i), State: power.StateOff, CPUs: 4, MemMB: 16384})
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if out := withUnlistedOff(listed, recs); len(out) != 30000 {
			b.Fatalf("%d agents", len(out))
		}
	}
}

// TestWithUnlistedOffScales: the view of a large cluster whose idle half
// is powered off and no longer listed (30,000 agents listed, 30,000 off)
// is built in milliseconds: each record looked up among the listed agents
// by id, not compared with every listed agent (that took seconds per
// build, 9e8 comparisons, in the view's owner on every change). The
// bound, 2 s, is some 100 times what the lookup takes on a busy machine.
func TestWithUnlistedOffScales(t *testing.T) {
	listed := testAgents(30000, 4)
	recs := make([]power.Record, 0, 30000)
	for i := range 30000 {
		recs = append(recs, power.Record{AgentID: fmt.Sprintf("off-%d", i), State: power.StateOff, CPUs: 4, MemMB: 16384})
	}
	start := time.Now()
	out := withUnlistedOff(listed, recs)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("withUnlistedOff of 30,000 listed agents and 30,000 off took %s, want milliseconds", took)
	}
	if len(out) != 60000 {
		t.Fatalf("%d agents, want 60000", len(out))
	}
}
