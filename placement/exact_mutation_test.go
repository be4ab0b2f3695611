package placement

// exact's pruning checked by hand (issue 33).

import (
	"fmt"
	"reflect"
	"slices"
	"testing"
)

// TestPrunedByHand: pruned() keeps, per (capacity k, active?) class,
// ceil(E/k) agents — the first ones in snapshot order if active, the
// cheapest (ties: snapshot order) if idle — active classes first, then
// capacity descending; a class that needs no cut keeps snapshot order.
// Executors of 1 cpu, E = 3 (capacities capped at 3):
//
//	active, 2 free (k = 2, keep 2): act2a (1), act2b (5), act2c (6) -> act2a, act2b
//	idle 4 cpus (k = 3, keep 1): i3 (7, $0.24), i3b (8, $0.20) -> i3b
//	idle 2 cpus (k = 2, keep 2): i2a (10, $0.10), i2b (11, $0.09) -> i2a, i2b (no cut)
//	idle 1 cpu (k = 1, keep 3): i1a (0, $0.05), i1b (2, $0.03), i1c (3, $0.05),
//	    i1d (4, $0.01) -> i1d, i1b, i1a
//	full (9): active, nothing free: no capacity, left out
func TestPrunedByHand(t *testing.T) {
	s := Snapshot{Agents: []Agent{
		priced(ag("i1a", 1, 1, false), 50000),  // 0
		ag("act2a", 4, 2, true),                // 1
		priced(ag("i1b", 1, 1, false), 30000),  // 2
		priced(ag("i1c", 1, 1, false), 50000),  // 3
		priced(ag("i1d", 1, 1, false), 10000),  // 4
		ag("act2b", 4, 2, true),                // 5
		ag("act2c", 4, 2, true),                // 6
		priced(ag("i3", 4, 4, false), 240000),  // 7
		priced(ag("i3b", 4, 4, false), 200000), // 8
		ag("full", 4, 0, true),                 // 9
		priced(ag("i2a", 2, 2, false), 100000), // 10
		priced(ag("i2b", 2, 2, false), 90000),  // 11
	}}
	p, err := prepare(s, Demand{JobID: "j", Executors: 3, CPUs: 1, MemMB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.pruned(), []int{1, 5, 8, 10, 11, 4, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("pruned = %v, want %v", got, want)
	}
}

// TestExactIdleOnlyFillByHand: the idle-only plan read from exact's DP
// fills its agents larger capacity first. Executors of 1 cpu, E = 5:
// a (active, 5 free) holds them all (exact's plan, price 0); on the idle
// agents alone only x (4 cpus) + y (2 cpus) hold 5: x 4, then y 1.
func TestExactIdleOnlyFillByHand(t *testing.T) {
	s := Snapshot{Agents: []Agent{ag("a", 8, 5, true), ag("x", 4, 4, false), ag("y", 2, 2, false)}}
	p, err := prepare(s, Demand{JobID: "j", Executors: 5, CPUs: 1, MemMB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	counts, key, idle := p.solveExactIdle(p.pruned(), true)
	if !slices.Equal(counts, []int{5, 0, 0}) || key != (dpKey{n: 1}) {
		t.Errorf("exact's plan %v (key %+v), want [5 0 0]", counts, key)
	}
	if !slices.Equal(idle, []int{0, 4, 1}) {
		t.Errorf("idle-only plan %v, want [0 4 1]", idle)
	}
}

// TestExactFillOrderByHand: exact fills its chosen agents active first,
// then larger capacity first, then in snapshot order; the last one takes
// what is left. Executors of 1 cpu:
//
//	E = 7 on a (active, 2 free), x (idle, 4 cpus), y (idle, 2 cpus): all
//	three are needed (a + x = 6, a + y = 4, x + y = 6): a 2, x 4, y 1.
//	E = 33 on 5 actives with 2 free, 4 idle 4-cpu and 4 idle 2-cpu agents
//	(34 in all, every agent holds 2 or more: all are needed), 13 agents,
//	more than a sort's insertion pass handles: the actives 2 each, the
//	4-cpu agents 4 each, y0, y1, y2 2 each, y3 the last 1.
func TestExactFillOrderByHand(t *testing.T) {
	exact := exactPolicy{}
	d := Demand{JobID: "j", Executors: 7, CPUs: 1, MemMB: 1024}
	s := Snapshot{Agents: []Agent{ag("a", 4, 2, true), ag("x", 4, 4, false), ag("y", 2, 2, false)}}
	pl, err := exact.Place(s, d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toAsg(pl), (asg{"a": 2, "x": 4, "y": 1}); !reflect.DeepEqual(got, want) {
		t.Errorf("E = 7: exact = %v, want %v", got, want)
	}

	s = Snapshot{}
	want := asg{}
	for i := range 5 {
		id := fmt.Sprintf("a%d", i)
		s.Agents = append(s.Agents, ag(id, 4, 2, true))
		want[id] = 2
	}
	for i := range 4 {
		id := fmt.Sprintf("x%d", i)
		s.Agents = append(s.Agents, ag(id, 4, 4, false))
		want[id] = 4
	}
	for i := range 4 {
		id := fmt.Sprintf("y%d", i)
		s.Agents = append(s.Agents, ag(id, 2, 2, false))
		want[id] = 2
	}
	want["y3"] = 1
	d.Executors = 33
	pl, err = exact.Place(s, d)
	if err != nil {
		t.Fatal(err)
	}
	if got := toAsg(pl); !reflect.DeepEqual(got, want) {
		t.Errorf("E = 33: exact = %v, want %v", got, want)
	}
}
