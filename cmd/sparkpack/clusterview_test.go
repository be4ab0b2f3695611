package main

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/sparkpack/sparkpack/api"
)

// hostOrder sorts as a stable sort by naturalLess does, also when agents
// come and go between calls (its ranks are cached).
func TestHostOrderMatchesNaturalSort(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	var h hostOrder
	for round := 0; round < 50; round++ {
		n := rng.Intn(300)
		agents := make([]api.AgentView, n)
		for i := range agents {
			host := fmt.Sprintf("agent-%d", rng.Intn(400))
			if rng.Intn(5) == 0 {
				host = fmt.Sprintf("db%d-rack%d", rng.Intn(30), rng.Intn(12))
			}
			agents[i] = api.AgentView{ID: fmt.Sprint(i), Hostname: host}
		}
		want := slices.Clone(agents)
		slices.SortStableFunc(want, func(a, b api.AgentView) int {
			switch {
			case naturalLess(a.Hostname, b.Hostname):
				return -1
			case naturalLess(b.Hostname, a.Hostname):
				return 1
			}
			return 0
		})
		agents = h.sorted(agents)
		for i := range agents {
			if agents[i].ID != want[i].ID {
				t.Fatalf("round %d: position %d is %s (%s), want %s (%s)", round, i, agents[i].ID, agents[i].Hostname, want[i].ID, want[i].Hostname)
			}
		}
	}
}

func BenchmarkHostOrder10000(b *testing.B) {
	agents := make([]api.AgentView, 10000)
	for i := range agents {
		agents[i] = api.AgentView{ID: fmt.Sprint(i), Hostname: fmt.Sprintf("agent-%d", (i*7919)%10000)}
	}
	var h hostOrder
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = h.sorted(agents)
	}
}

// The cluster view's agents are ordered in place: a second slice of every
// agent's view (6 MiB at 30,000 agents) per build was garbage (issue 30).
func TestHostOrderSortsInPlace(t *testing.T) {
	agents := make([]api.AgentView, 10000)
	for i := range agents {
		agents[i] = api.AgentView{ID: fmt.Sprint(i), Hostname: fmt.Sprintf("agent-%d", (i*7919)%10000)}
	}
	var h hostOrder
	_ = h.sorted(slices.Clone(agents)) // ranks the hostnames
	shuffled := slices.Clone(agents)
	// Two allocations (the order's indices and ranks), no copy of the agents.
	if n := testing.AllocsPerRun(5, func() {
		copy(shuffled, agents)
		if out := h.sorted(shuffled); &out[0] != &shuffled[0] {
			t.Fatal("sorted returned another slice")
		}
	}); n > 2 {
		t.Errorf("%v allocations per sort, want at most 2", n)
	}
	for i, a := range h.sorted(shuffled) {
		if a.Hostname != fmt.Sprintf("agent-%d", i) {
			t.Fatalf("position %d is %s", i, a.Hostname)
		}
	}
}
