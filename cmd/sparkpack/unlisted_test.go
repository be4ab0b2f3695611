package main

import (
	"fmt"
	"testing"

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

// TestWithUnlistedOffLarge: the view of a large cluster whose idle half
// is powered off and no longer listed (30,000 agents listed, 30,000 off)
// holds every agent once. How long it takes is BenchmarkWithUnlistedOff's
// to say (each record is looked up among the listed agents by id: 27 ms
// where comparing it with every listed agent took 1.5-5.4 s), not a
// timed test's.
func TestWithUnlistedOffLarge(t *testing.T) {
	listed := testAgents(30000, 4)
	recs := make([]power.Record, 0, 30000)
	for i := range 30000 {
		recs = append(recs, power.Record{AgentID: fmt.Sprintf("off-%d", i), State: power.StateOff, CPUs: 4, MemMB: 16384})
	}
	out := withUnlistedOff(listed, recs)
	if len(out) != 60000 {
		t.Fatalf("%d agents, want 60000", len(out))
	}
}
