package placement

// dap's candidates and deadline mode checked by hand (issue 33): each case
// names the candidates dap builds (exact's plan, the idle-only plan, the
// fewest agents, the best and the fastest single agent) and their scores
// from the formulas of docs/placement.md, computed in the comments:
//
//	factor = (1 - s) x (1 + 0.15 x cpuBound x clamp((u - 0.5) / 0.5, 0, 1)) + s x (1 + 3 x r)
//	score  = factor x (own share of the agents' prices + 0.25 x the rest of each agent it activates
//	         + 0.0625 x the rest of each active agent it keeps active longer, in proportion)
//
// Sort: s = 0.2, cpuBound 0.3; WordCount: s = 0.01, cpuBound 1. Prices
// are $0.06 per cpu-hour (ag) unless set.

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// priced sets an agent's hourly price (micro-dollars).
func priced(a Agent, p int64) Agent {
	a.PriceMicroUSDPerHour = p
	return a
}

func dapPlace(t *testing.T, s Snapshot, d Demand) asg {
	t.Helper()
	pl, err := dapPolicy{}.Place(s, d)
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(s, d, pl); err != nil {
		t.Fatal(err)
	}
	return toAsg(pl)
}

// TestDAPFewestAgentsByHand: the fewest-agents candidate takes the
// largest capacities first, an active agent before an idle one of the same
// capacity, a cheaper idle one before a dearer one. A Sort of 6 executors
// of 2 cpus, 100 s; no agent holds 6 (no single-agent candidate).
func TestDAPFewestAgentsByHand(t *testing.T) {
	sort6 := Demand{JobID: "j", Executors: 6, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: AppSort}
	act := func(id string) Agent { return ag(id, 8, 4, true) } // 2 executors, full after: u = 1
	for _, tc := range []struct {
		name string
		s    Snapshot
		want asg
	}{
		{
			// exact: a1 + a2 + a3 (price 0): r = 1 - 3/9 = 2/3, u = 1:
			// factor 0.8 x 1.045 + 0.2 x 3 = 1.436, own 3 x 0.5 x 480000:
			// score 1,033,920. Fewest: big (4, idle, taken whole) + a1:
			// r = 1 - (16 + 4)/36 = 4/9: factor 0.836 + 0.2 x 7/3 =
			// 1.30267, own 480000 + 240000: score 937,920 (its price
			// 480000 is within 0 + 2 x 12 cpus x 60000). Taking the actives
			// first would rebuild exact's plan.
			name: "largest capacity first",
			s:    Snapshot{Agents: []Agent{act("a1"), act("a2"), act("a3"), ag("big", 8, 8, false)}},
			want: asg{"big": 4, "a1": 2},
		},
		{
			// sm (idle, 4 cpus: 2 executors, taken whole) has a1's
			// capacity: big + sm scores 937,920 as well (own 480000 +
			// 240000, the same factor), and is also the idle-only
			// candidate; big + a1 wins the tie by exact's key (price
			// 480000 < 720000), if the fewest-agents candidate takes the
			// active a1 before the idle sm.
			name: "active before idle at equal capacity",
			s:    Snapshot{Agents: []Agent{act("a1"), act("a2"), act("a3"), ag("big", 8, 8, false), ag("sm", 4, 4, false)}},
			want: asg{"big": 4, "a1": 2},
		},
		{
			// Two idle 8-cpu agents, the dearer first in the snapshot.
			// exact's plan fills dear first: dear 4 + cheap 2: own 600000
			// + 0.5 x 480000, spare 0.25 x 0.5 x 480000 = 60000: 900000 x
			// 1.30267 = 1,172,400. Fewest, cheaper first: cheap 4 + dear
			// 2: own 480000 + 300000, spare 0.25 x 0.5 x 600000 = 75000:
			// 855000 x 1.30267 = 1,113,780.
			name: "cheaper idle first at equal capacity",
			s:    Snapshot{Agents: []Agent{priced(ag("dear", 8, 8, false), 600000), ag("cheap", 8, 8, false)}},
			want: asg{"cheap": 4, "dear": 2},
		},
	} {
		if got := dapPlace(t, tc.s, sort6); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: dap = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestDAPFewestAgentsSnapshotOrder: among equal agents the fewest-agents
// candidate takes them in snapshot order, also with more agents than a
// sort's insertion pass handles. A Sort of 12 executors of 1 cpu on one
// idle 4-cpu agent and 14 active 4-cpu agents with 1 cpu free (exact keeps
// the first 12 of them, one executor each):
//
//	exact: the 12 actives (price 0): r = 1 - 12/144 = 11/12, u = 1:
//	  factor 0.836 + 0.2 x 3.75 = 1.586, own 12 x 0.25 x 240000 = 720000: 1,141,920
//	fewest: big 4 + 8 actives: r = 1 - 24/144 = 5/6: factor 0.836 + 0.2 x 3.5 = 1.536,
//	  own 240000 + 8 x 60000 = 720000: 1,105,920
//
// so the fewest-agents plan wins, with the first 8 actives.
func TestDAPFewestAgentsSnapshotOrder(t *testing.T) {
	s := Snapshot{}
	want := asg{"big": 4}
	for i := range 14 {
		id := fmt.Sprintf("a%02d", i)
		s.Agents = append(s.Agents, ag(id, 4, 1, true))
		if i < 8 {
			want[id] = 1
		}
	}
	s.Agents = append(s.Agents, ag("big", 4, 4, false))
	d := Demand{JobID: "j", Executors: 12, CPUs: 1, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: AppSort}
	if got := dapPlace(t, s, d); !reflect.DeepEqual(got, want) {
		t.Errorf("dap = %v, want %v", got, want)
	}
}

// TestDAPFewestActiveFirstManyAgents: with more agents than a sort's
// insertion pass handles, the fewest-agents candidate still takes the
// active agents before idle ones of the same capacity. A Sort of 7
// executors of 1 cpu on (snapshot order) 5 active 4-cpu agents with 1 cpu
// free, big (idle, 4 cpus) and 7 idle 1-cpu agents ($0.06/h each):
//
//	exact: the 5 actives + 2 idle 1-cpu agents (price 120000): r = 6/7, u = 1:
//	  factor 0.836 + 0.2 x (1 + 18/7) = 1.55029, own 5 x 60000 + 120000: 651,120
//	idle-only: big + 3 idle 1-cpu agents (420000; 7 of them cost as much, more agents):
//	  r = 1 - 19/49 = 30/49: factor 0.836 + 0.2 x (1 + 90/49) = 1.40335, own 420000: 589,406
//	fewest: big + a0, a1, a2: the same factor, own 240000 + 3 x 60000: 589,406,
//	  and the better key (price 240000 against 420000)
//
// An idle 1-cpu agent in place of an active one would cost 60000 more.
func TestDAPFewestActiveFirstManyAgents(t *testing.T) {
	var s Snapshot
	for i := range 5 {
		s.Agents = append(s.Agents, ag(fmt.Sprintf("a%d", i), 4, 1, true))
	}
	s.Agents = append(s.Agents, ag("big", 4, 4, false))
	for i := range 7 {
		s.Agents = append(s.Agents, ag(fmt.Sprintf("i%d", i), 1, 1, false))
	}
	d := Demand{JobID: "j", Executors: 7, CPUs: 1, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: AppSort}
	if got, want := dapPlace(t, s, d), (asg{"big": 4, "a0": 1, "a1": 1, "a2": 1}); !reflect.DeepEqual(got, want) {
		t.Errorf("dap = %v, want %v", got, want)
	}
}

// TestDAPBestSingleAgentByHand: the best single agent is a candidate of its
// own. A Sort of 4 executors of 2 cpus, 100 s:
//
//	z: active 16 cpus, 8 free, active for 10 s more: u = 1, factor 1.036, t = 103.6 s,
//	   own 480000, extension 0.0625 x 0.5 x 960000 x 93.6/103.6 = 27104: 525,360
//	   (exact's plan and the fewest agents: the active one of the largest capacity)
//	i1: idle 8 cpus, taken whole: factor 1.036, own 480000: 497,280
//	i2 + i3: idle 4 cpus at $0.20/h each (the cheapest idle-only plan, 400000):
//	   r = 0.5: factor 0.836 + 0.2 x 2.5 = 1.336, own 400000: 534,400
//
// i1 (price 480000, within 0 + 2 x 8 cpus x 60000) is only a single-agent
// candidate, and the best.
func TestDAPBestSingleAgentByHand(t *testing.T) {
	z := ag("z", 16, 8, true)
	z.RemainingActive = 10 * time.Second
	s := Snapshot{Agents: []Agent{z, ag("i1", 8, 8, false), priced(ag("i2", 4, 4, false), 200000), priced(ag("i3", 4, 4, false), 200000)}}
	d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: AppSort}
	if got, want := dapPlace(t, s, d), (asg{"i1": 4}); !reflect.DeepEqual(got, want) {
		t.Errorf("dap = %v, want %v", got, want)
	}
}

// TestDAPFastestSingleAgentByHand: in deadline mode the fastest single
// agent (ties: the better score) is the candidate that ends in time. A Sort
// of 4 executors of 2 cpus, 100 s, on (snapshot order):
//
//	x: idle 16 cpus ($0.96/h): u = 0.5, factor 1, own 480000 + spare 0.25 x 0.5 x 960000: 600,000
//	y: idle 16 cpus ($1.04/h): factor 1, own 520000 + spare 130000: 650,000
//	z: active 16 cpus, 8 free: u = 1, factor 1.036 (103.6 s), own 480000: 497,280
//	   (exact's plan, the fewest agents and the best single agent)
//	i2 + i3: idle 4 cpus at $0.10/h: factor 1.336 (133.6 s), own 200000: 267,200,
//	   the cheapest plan (price bound 0 + 2 x 8 cpus x $0.065 = 1,040,000 keeps all)
//
// Without a deadline i2 + i3; with 102 s or exactly 100 s left only x
// ends in time (y as fast but dearer, z 3.6 s late); with 99 s none
// does: the cheapest plan stays.
func TestDAPFastestSingleAgentByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := Snapshot{Agents: []Agent{ag("x", 16, 16, false), priced(ag("y", 16, 16, false), 1040000), ag("z", 16, 8, true),
		priced(ag("i2", 4, 4, false), 100000), priced(ag("i3", 4, 4, false), 100000)}}
	for _, tc := range []struct {
		left float64 // seconds to the deadline; 0: none
		want asg
	}{
		{0, asg{"i2": 2, "i3": 2}},
		{102, asg{"x": 4}},
		{100, asg{"x": 4}},
		{99, asg{"i2": 2, "i3": 2}},
	} {
		d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: AppSort}
		if tc.left > 0 {
			d.Now, d.Deadline = t0, t0.Add(time.Duration(tc.left*float64(time.Second)))
		}
		if got := dapPlace(t, s, d); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%g s left: dap = %v, want %v", tc.left, got, tc.want)
		}
	}
}

// TestDAPDeadlineKeepsExactByHand: in deadline mode exact's own plan is a
// candidate like the others: when it ends in time and scores best among
// those that do, it is the answer. A WordCount of 4 executors of 2 cpus
// and 8 GiB, 100 s:
//
//	a1 + a2: active 16 cpus with 16 GiB of 64 free (2 executors each; exact's
//	   plan, price 0): u = 0.25, r = 0.5: factor 0.99 + 0.01 x 2.5 = 1.015 (101.5 s),
//	   own 2 x 0.25 x 960000: 487,200
//	x: idle 16 cpus, 64 GiB, $0.90/h (the fewest agents, the single agent):
//	   factor 1 (100 s), own 450000 + spare 0.25 x 0.5 x 900000: 562,500
//	i2 + i3: idle 4 cpus, 16 GiB, $0.05/h (the idle-only plan): u = 1:
//	   factor 0.99 x 1.15 + 0.025 = 1.1635 (116.35 s), own 100000: 116,350
//
// The cheapest is i2 + i3; with 110 s left a1 + a2 and x end in time, and
// a1 + a2 scores better.
func TestDAPDeadlineKeepsExactByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := dapDeadlineCluster()
	d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 8192, EstimatedDuration: 100 * time.Second, App: AppWordCount}
	if got, want := dapPlace(t, s, d), (asg{"i2": 2, "i3": 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("no deadline: dap = %v, want %v", got, want)
	}
	d.Now, d.Deadline = t0, t0.Add(110*time.Second)
	if got, want := dapPlace(t, s, d), (asg{"a1": 2, "a2": 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("110 s left: dap = %v, want %v", got, want)
	}
}

// TestDAPMemoryOnlyJob: a job of no cpus on agents without cpus: the
// price bound has no price per cpu to take (0 added to exact's price), and
// dap places it.
func TestDAPMemoryOnlyJob(t *testing.T) {
	s := Snapshot{Agents: []Agent{{ID: "m", CPUs: 0, MemMB: 8192, FreeMemMB: 8192, PriceMicroUSDPerHour: 100000}}}
	d := Demand{JobID: "j", Executors: 2, CPUs: 0, MemMB: 1024, EstimatedDuration: 100 * time.Second}
	if lim, ok := DAPPriceLimit(s, d); !ok || lim != 100000 {
		t.Errorf("DAPPriceLimit = %v, %v; want 100000 (exact's price, nothing per cpu)", lim, ok)
	}
	if got, want := dapPlace(t, s, d), (asg{"m": 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("dap = %v, want %v", got, want)
	}
}

// dapDeadlineCluster is TestDAPDeadlineKeepsExactByHand's cluster: a1 and
// a2 active with 16 cpus and 16 GiB free of 64, x idle with 16 cpus at
// $0.90/h, i2 and i3 idle with 4 cpus at $0.05/h.
func dapDeadlineCluster() Snapshot {
	a := func(id string) Agent {
		x := ag(id, 16, 16, true)
		x.FreeMemMB = 16384
		return x
	}
	return Snapshot{Agents: []Agent{a("a1"), a("a2"), priced(ag("x", 16, 16, false), 900000),
		priced(ag("i2", 4, 4, false), 50000), priced(ag("i3", 4, 4, false), 50000)}}
}
