package offers

import (
	"testing"

	"github.com/sparkpack/sparkpack/placement"
)

// TestSnapshotHoldings: a snapshot lists, per agent, what each job holds
// there (its reservations summed, and its driver), for the cost meter's
// attribution; an agent holding nothing of ours has no entry.
func TestSnapshotHoldings(t *testing.T) {
	agents := []Agent{
		{ID: "a1", CPUs: 8, MemMB: 16384,
			Reservations: []Reserved{{JobID: "j1", CPUs: 2, MemMB: 2048}, {JobID: "j2", CPUs: 1, MemMB: 1024}, {JobID: "j1", CPUs: 2, MemMB: 2048}},
			Drivers:      []DriverTask{{JobID: "j2", CPUs: 1, MemMB: 1024}, {JobID: "j3", CPUs: 1, MemMB: 512}}},
		{ID: "a2", CPUs: 8, MemMB: 16384},
	}
	s := Snapshot(agents)
	want := []placement.Holding{{JobID: "j1", CPUs: 4, MemMB: 4096}, {JobID: "j2", CPUs: 2, MemMB: 2048}, {JobID: "j3", CPUs: 1, MemMB: 512}}
	got := s.Holdings["a1"]
	if len(got) != len(want) {
		t.Fatalf("a1 holdings %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("holding %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, ok := s.Holdings["a2"]; ok || !s.Agents[0].Active || s.Agents[1].Active {
		t.Errorf("a2 holds nothing: %+v; active %v %v", s.Holdings["a2"], s.Agents[0].Active, s.Agents[1].Active)
	}
}
