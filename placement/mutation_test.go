package placement

// Tests that pin behaviour an audit could change without any other test
// failing (issue 33): expected plans are derived by hand or by a second,
// simpler implementation, never from the implementation's constants.

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// TestMorpheusOrderByHand: Morpheus fills the agent that is the most
// loaded after taking one executor first (docs/placement.md). A job of 2
// executors of 1 cpu and 1 GiB on three active agents:
//
//	lo: 8 cpus, 7 free: (1 + 1) / 8 = 0.25 after one executor
//	hi: 8 cpus, 3 free: (5 + 1) / 8 = 0.75
//	mid: 4 cpus, 3 free: (1 + 1) / 4 = 0.5
//
// hi takes both. With 4 executors: hi 3, then mid 1.
func TestMorpheusOrderByHand(t *testing.T) {
	s := Snapshot{Agents: []Agent{ag("lo", 8, 7, true), ag("hi", 8, 3, true), ag("mid", 4, 3, true)}}
	m, _ := Get("morpheus")
	for _, tc := range []struct {
		e    int
		want asg
	}{
		{2, asg{"hi": 2}},
		{4, asg{"hi": 3, "mid": 1}},
		{8, asg{"hi": 3, "mid": 3, "lo": 2}},
	} {
		d := Demand{JobID: "j", Executors: tc.e, CPUs: 1, MemMB: 1024}
		pl, err := m.Place(s, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := toAsg(pl); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%d executors: morpheus = %v, want %v", tc.e, got, tc.want)
		}
	}
	// Idle agents come after active ones, cheapest first; memory counts
	// too: on "memfull" (8 cpus, 7 free, but 1 GiB of 32 free) one
	// executor of 1 GiB fills the memory: load 1, first.
	memfull := ag("memfull", 8, 7, true)
	memfull.FreeMemMB = 1024
	s = Snapshot{Agents: []Agent{ag("idle-dear", 4, 4, false), ag("idle-cheap", 2, 2, false), ag("lo", 8, 7, true), memfull}}
	s.Agents[0].PriceMicroUSDPerHour = 500000
	d := Demand{JobID: "j", Executors: 10, CPUs: 1, MemMB: 1024}
	pl, err := m.Place(s, d)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := toAsg(pl), (asg{"memfull": 1, "lo": 7, "idle-cheap": 2}); !reflect.DeepEqual(got, want) {
		t.Errorf("morpheus = %v, want %v", got, want)
	}
}

// morpheusOracle is a second, plain implementation of the rule of
// docs/placement.md: repeatedly pick, among the agents with room left,
// the active ones if any (else the cheapest idle ones), the one most
// loaded after one more executor of the job as the agents were before
// the job (ties: snapshot order), and give it all the executors it holds.
func morpheusOracle(s Snapshot, d Demand) map[string]int {
	type cand struct {
		i    int
		load float64
		n    int
	}
	var cs []cand
	for i, a := range s.Agents {
		n := FitsOn(a, d)
		if n == 0 {
			continue
		}
		l := 0.0
		if a.CPUs > 0 {
			l = (a.CPUs - a.FreeCPUs + d.CPUs) / a.CPUs
		}
		if a.MemMB > 0 && (a.MemMB-a.FreeMemMB+d.MemMB)/a.MemMB > l {
			l = (a.MemMB - a.FreeMemMB + d.MemMB) / a.MemMB
		}
		cs = append(cs, cand{i, l, n})
	}
	price := func(c cand) int64 {
		if s.Agents[c.i].Active {
			return 0
		}
		return s.Agents[c.i].PriceMicroUSDPerHour
	}
	out := map[string]int{}
	left := d.Executors
	for left > 0 && len(cs) > 0 {
		best := 0
		for k := 1; k < len(cs); k++ {
			pb, pk := price(cs[best]), price(cs[k])
			if pk < pb || pk == pb && (cs[k].load > cs[best].load || cs[k].load == cs[best].load && cs[k].i < cs[best].i) {
				best = k
			}
		}
		c := cs[best]
		n := min(c.n, left)
		out[s.Agents[c.i].ID] = n
		left -= n
		cs = slices.Delete(cs, best, best+1)
	}
	return out
}

// TestMorpheusAgainstOracle: morpheus places as the plain implementation
// does on random clusters.
func TestMorpheusAgainstOracle(t *testing.T) {
	m, _ := Get("morpheus")
	placed := 0
	for seed := range 3000 {
		r := rand.New(rand.NewPCG(uint64(seed), 4))
		s := genSnapshot(r, 1+r.IntN(20))
		d := genDemand(r, 20)
		pl, err := m.Place(s, d)
		if err != nil {
			continue
		}
		placed++
		if got, want := toAsg(pl), asg(morpheusOracle(s, d)); !reflect.DeepEqual(got, want) {
			t.Fatalf("seed %d: morpheus %v, oracle %v", seed, got, want)
		}
	}
	if placed < 1000 {
		t.Fatalf("only %d placed", placed)
	}
}

// TestDAPPriceBoundByHand: docs/placement.md says no dap plan adds more
// than exact's price plus 2 x the job's own price (E x c x the dearest
// price per cpu among the agents that can take an executor). a1, a2:
// active 8-cpu agents with 4 cpus free (exact's plan, price 0); a3 idle,
// k cpus at $0.06 per cpu-hour. A WordCount of 4 x 2 cpus, 100 s, due in
// 115 s: on a1 + a2 it takes 116.35 s (TestDAPHandChecked), on a3 alone
// at most half loaded 100 s: only a3 ends in time. Its added price is
// k x 60000; the bound 0 + 2 x 8 cpus x 60000 = 960000: a3 qualifies up
// to k = 16 cpus, not at 17.
func TestDAPPriceBoundByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: AppWordCount,
		Now: t0, Deadline: t0.Add(115 * time.Second)}
	dap, _ := Get("dap")
	for _, tc := range []struct {
		a3cpus float64
		want   asg
	}{
		{12, asg{"a3": 4}},
		{16, asg{"a3": 4}},
		{17, asg{"a1": 2, "a2": 2}},
		{32, asg{"a1": 2, "a2": 2}},
	} {
		s := Snapshot{Agents: []Agent{ag("a1", 8, 4, true), ag("a2", 8, 4, true), ag("a3", tc.a3cpus, tc.a3cpus, false)}}
		pl, err := dap.Place(s, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := toAsg(pl); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("a3 of %g cpus: dap = %v, want %v", tc.a3cpus, got, tc.want)
		}
	}
}

// independentPriceLimit is the bound of docs/placement.md computed from
// exact's plan: its added price + 2 x E x c x the dearest price per cpu
// among the agents that can take an executor.
func independentPriceLimit(s Snapshot, d Demand, exactPrice int64) float64 {
	var perCPU float64
	for _, a := range s.Agents {
		if FitsOn(a, d) > 0 && a.CPUs > 0 {
			perCPU = max(perCPU, float64(a.PriceMicroUSDPerHour)/a.CPUs)
		}
	}
	return float64(exactPrice) + 2*float64(d.Executors)*d.CPUs*perCPU
}

// TestDAPPriceBoundProperty: on random clusters, in cost and deadline
// mode, dap's added price stays within the bound computed here from
// exact's plan (not from the package's constant), and DAPPriceLimit
// agrees with it.
func TestDAPPriceBoundProperty(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	dap, _ := Get("dap")
	exact, _ := Get("exact")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	apps := []string{"", AppWordCount, AppSort, AppPageRank}
	checked := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 2026))
		s := genSnapshot(r, 1+r.IntN(30))
		d := genDemand(r, 30)
		d.App = apps[r.IntN(len(apps))]
		ex, err := exact.Place(s, d)
		if err != nil {
			continue
		}
		limit := independentPriceLimit(s, d, ex.CostMicroUSDPerHour)
		if got, ok := DAPPriceLimit(s, d); !ok || got != limit {
			t.Fatalf("seed %d: DAPPriceLimit %v, want %v", seed, got, limit)
		}
		for _, dd := range []Demand{d, func() Demand {
			x := d
			x.Now = t0
			x.Deadline = t0.Add(time.Duration(float64(d.EstimatedDuration) * (0.9 + r.Float64()*0.3)))
			return x
		}()} {
			pl, err := dap.Place(s, dd)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			// Plan.Assignments: in snapshot order.
			pos := map[string]int{}
			for i, a := range s.Agents {
				pos[a.ID] = i
			}
			for k := 1; k < len(pl.Assignments); k++ {
				if pos[pl.Assignments[k-1].AgentID] >= pos[pl.Assignments[k].AgentID] {
					t.Fatalf("seed %d: assignments %+v not in snapshot order", seed, pl.Assignments)
				}
			}
			if float64(pl.CostMicroUSDPerHour) > limit {
				t.Fatalf("seed %d: dap adds %d per hour, above exact's %d + 2 job-prices = %.0f", seed, pl.CostMicroUSDPerHour, ex.CostMicroUSDPerHour, limit)
			}
			checked++
		}
	}
	if checked < seeds/2 {
		t.Fatalf("only %d plans checked", checked)
	}
}

// TestResourceAvailabilityByHand: RA = alpha x free cpus / total cpus +
// beta x free memory / total memory; a zero total leaves its term out.
func TestResourceAvailabilityByHand(t *testing.T) {
	a := Agent{FreeCPUs: 2, FreeMemMB: 1024}
	for _, tc := range []struct {
		tc, tm, want float64
	}{
		{8, 4096, 0.8*2/8 + 0.2*1024/4096},
		{0, 4096, 0.2 * 1024 / 4096},
		{8, 0, 0.8 * 2 / 8},
		{0, 0, 0},
	} {
		if got := ResourceAvailability(a, tc.tc, tc.tm, 0.8, 0.2); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("RA with totals %v cpus, %v MiB = %v, want %v", tc.tc, tc.tm, got, tc.want)
		}
	}
	d := Demand{Executors: 3, CPUs: 2, MemMB: 1024}
	if got, want := ResourceDemand(d, 0, 4096, 0.8, 0.2), 3*(0.2*1024/4096.0); got < want-1e-12 || got > want+1e-12 {
		t.Errorf("RD without cpus = %v, want %v", got, want)
	}
	if got, want := ResourceDemand(d, 8, 0, 0.8, 0.2), 3*(0.8*2/8.0); got < want-1e-12 || got > want+1e-12 {
		t.Errorf("RD without memory = %v, want %v", got, want)
	}
}

// TestBFDIdleOrderByHand: bfd takes idle agents cheapest first, and among
// equally priced ones the best fit (lowest RA) first.
//
//	cheap-big (8 cpus, $0.10/h) before dear-small (4 cpus, $0.20/h);
//	at one price, small (4 cpus) before big (8 cpus).
func TestBFDIdleOrderByHand(t *testing.T) {
	bfd, _ := Get("bfd")
	d := Demand{JobID: "j", Executors: 2, CPUs: 1, MemMB: 1024}
	priced := func(a Agent, p int64) Agent { a.PriceMicroUSDPerHour = p; return a }
	for _, tc := range []struct {
		name string
		s    Snapshot
		want asg
	}{
		{"cheapest first", Snapshot{Agents: []Agent{priced(ag("dear-small", 4, 4, false), 200000), priced(ag("cheap-big", 8, 8, false), 100000)}}, asg{"cheap-big": 2}},
		{"same price: best fit first", Snapshot{Agents: []Agent{priced(ag("big", 8, 8, false), 100000), priced(ag("small", 4, 4, false), 100000)}}, asg{"small": 2}},
	} {
		pl, err := bfd.Place(tc.s, d)
		if err != nil {
			t.Fatal(err)
		}
		if got := toAsg(pl); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: bfd = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestFitsOnZeroSize: a zero size does not constrain its dimension, even
// on an agent whose free amount of it is negative (over-committed).
func TestFitsOnZeroSize(t *testing.T) {
	for _, tc := range []struct {
		a    Agent
		d    Demand
		want int
	}{
		{Agent{FreeCPUs: -1, FreeMemMB: 4096}, Demand{Executors: 3, CPUs: 0, MemMB: 1024}, 3},
		{Agent{FreeCPUs: 4, FreeMemMB: -1}, Demand{Executors: 3, CPUs: 1, MemMB: 0}, 3},
		{Agent{FreeCPUs: -1, FreeMemMB: 4096}, Demand{Executors: 3, CPUs: 1, MemMB: 1024}, 0},
		{Agent{FreeCPUs: 4, FreeMemMB: 2048}, Demand{Executors: 3, CPUs: 1, MemMB: 1024}, 2},
	} {
		if got := FitsOn(tc.a, tc.d); got != tc.want {
			t.Errorf("FitsOn(%+v, %+v) = %d, want %d", tc.a, tc.d, got, tc.want)
		}
	}
}

// TestShortOfTolerance: a shortage counts when it exceeds 1e-9 (float
// noise), not at exactly 1e-9: one executor of 1e-9 cpus on nothing free
// is short by exactly the tolerance.
func TestShortOfTolerance(t *testing.T) {
	if got := ShortOf(Demand{Executors: 1, CPUs: 1e-9}, 0, 0); got != "" {
		t.Errorf("short by exactly 1e-9 cpus: %q, want none", got)
	}
	if got := ShortOf(Demand{Executors: 1, CPUs: 2e-9}, 0, 0); got != "cpus" {
		t.Errorf("short by 2e-9 cpus: %q, want cpus", got)
	}
	if got := ShortOf(Demand{Executors: 1, MemMB: 1e-9}, 0, 0); got != "" {
		t.Errorf("short by exactly 1e-9 MiB: %q, want none", got)
	}
}

// TestSortByKeyTies: equal keys keep snapshot (index) order, ascending or
// descending.
func TestSortByKeyTies(t *testing.T) {
	key := []float64{2, 1, 2, 1, 2}
	for _, tc := range []struct {
		desc bool
		want []int
	}{{false, []int{1, 3, 0, 2, 4}}, {true, []int{0, 2, 4, 1, 3}}} {
		for _, in := range [][]int{{4, 3, 2, 1, 0}, {0, 1, 2, 3, 4}, {2, 0, 4, 1, 3}} {
			idx := slices.Clone(in)
			sortByKey(idx, key, tc.desc)
			if !slices.Equal(idx, tc.want) {
				t.Errorf("desc %v, from %v: %v, want %v", tc.desc, in, idx, tc.want)
			}
		}
	}
}

// TestShareByHand: the share of an agent n executors take is the larger
// of the cpu and memory shares, at most 1; a dimension the agent has none
// of (capacity 0) is left out.
func TestShareByHand(t *testing.T) {
	for _, tc := range []struct {
		a    Agent
		d    Demand
		n    int
		want float64
	}{
		{Agent{CPUs: 8, MemMB: 8192}, Demand{CPUs: 2, MemMB: 1024}, 2, 0.5},
		{Agent{CPUs: 8, MemMB: 8192}, Demand{CPUs: 1, MemMB: 2048}, 2, 0.5},
		{Agent{CPUs: 8, MemMB: 8192}, Demand{CPUs: 4, MemMB: 1024}, 3, 1},
		{Agent{CPUs: 0, MemMB: 4096}, Demand{CPUs: 0, MemMB: 1024}, 2, 0.5},
		{Agent{CPUs: 4, MemMB: 0}, Demand{CPUs: 1, MemMB: 0}, 2, 0.5},
	} {
		if got := share(&tc.a, tc.d, tc.n); got != tc.want {
			t.Errorf("share(%v cpus %v MiB, %d x (%v, %v)) = %v, want %v", tc.a.CPUs, tc.a.MemMB, tc.n, tc.d.CPUs, tc.d.MemMB, got, tc.want)
		}
	}
}

// TestDAPFactorByHand: the run-time factor of docs/placement.md,
// (1 - s) x (1 + 0.15 x cpuBound x clamp((u - 0.5) / 0.5, 0, 1)) + s x (1 + 3 x r),
// for a Sort (s 0.2, cpu-bound 0.3) of 4 executors of 2 cpus:
//
//	2 + 2 on two 8-cpu agents with 4 free: u = 1, r = 0.5: 0.8 x 1.045 + 0.2 x 2.5 = 1.336
//	4 on one idle 16-cpu agent: u = 0.5, r = 0: 0.8 + 0.2 = 1
//	3 + 1 on the 16-cpu and an idle 8-cpu agent: u = 6/16, r = 1 - 10/16: 0.8 + 0.2 x 2.125 = 1.225
//
// and for a job of no cpus on an agent of no cpus (memory only): u = 0.
func TestDAPFactorByHand(t *testing.T) {
	s := Snapshot{Agents: []Agent{ag("a1", 8, 4, true), ag("a2", 8, 4, true), ag("big", 16, 16, false), ag("a3", 8, 8, false)}}
	d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, App: AppSort}
	p, err := prepare(s, d)
	if err != nil {
		t.Fatal(err)
	}
	ev := &dapEval{p: p, tr: traitsOf(AppSort), est: 1}
	for _, tc := range []struct {
		allocs []alloc
		want   float64
	}{
		{[]alloc{{0, 2}, {1, 2}}, 0.8*1.045 + 0.2*2.5},
		{[]alloc{{2, 4}}, 1},
		{[]alloc{{2, 3}, {3, 1}}, 0.8 + 0.2*(1+3*(1-10.0/16))},
	} {
		if got := ev.factor(tc.allocs); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("factor(%v) = %v, want %v", tc.allocs, got, tc.want)
		}
	}
	memOnly := Snapshot{Agents: []Agent{{ID: "m", CPUs: 0, MemMB: 8192, FreeMemMB: 8192}}}
	dm := Demand{JobID: "j", Executors: 2, CPUs: 0, MemMB: 1024, App: AppWordCount}
	p, err = prepare(memOnly, dm)
	if err != nil {
		t.Fatal(err)
	}
	ev = &dapEval{p: p, tr: traitsOf(AppWordCount), est: 1}
	if got := ev.factor([]alloc{{0, 2}}); got != 1 {
		t.Errorf("factor on a memory-only agent = %v, want 1", got)
	}
}

// TestDAPEvalByHand: dap's scores of docs/placement.md (the numbers of
// TestDAPHandChecked's comments): factor x (own share of the prices +
// 0.25 x the rest of each agent it activates + 0.0625 x the rest of each
// active agent whose remaining active time it extends, in proportion).
func TestDAPEvalByHand(t *testing.T) {
	job := func(app string) Demand {
		return Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: app}
	}
	e1 := ag("e1", 12, 8, true)
	e1.RemainingActive = 10 * time.Second
	for _, tc := range []struct {
		name   string
		s      Snapshot
		d      Demand
		allocs []alloc
		score  float64
		key    dpKey
	}{
		// a1 + a2 (active, 4 of 8 cpus free): 1.336 x 2 x 0.5 x 480000.
		{"sort on the leftovers", Snapshot{Agents: []Agent{ag("a1", 8, 4, true), ag("a2", 8, 4, true), ag("a3", 8, 8, false)}}, job(AppSort),
			[]alloc{{0, 2}, {1, 2}}, 641280, dpKey{n: 2}},
		// a3 idle, 8 cpus, taken whole: 1.036 x 480000, no spare.
		{"sort on an idle agent", Snapshot{Agents: []Agent{ag("a1", 8, 4, true), ag("a2", 8, 4, true), ag("a3", 8, 8, false)}}, job(AppSort),
			[]alloc{{2, 4}}, 497280, dpKey{cost: 480000, n: 1, idle: 1}},
		// a3 idle, 12 cpus, 2/3 taken: 1.0495 x (480000 + 0.25 x 1/3 x 720000).
		{"wordcount on a larger idle agent", Snapshot{Agents: []Agent{ag("a3", 12, 12, false)}}, job(AppWordCount),
			[]alloc{{0, 4}}, 1.0495 * 540000, dpKey{cost: 720000, n: 1, idle: 1}},
		// e1 active for 10 s more; the job runs 114.85 s: it extends e1 by
		// 104.85/114.85: 1.1485 x (480000 + 0.0625 x 1/3 x 720000 x 104.85/114.85).
		{"wordcount extending an active agent", Snapshot{Agents: []Agent{e1}}, job(AppWordCount),
			[]alloc{{0, 4}}, 1.1485 * (480000 + 0.0625/3*720000*104.85/114.85), dpKey{n: 1}},
	} {
		p, err := prepare(tc.s, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		ev := &dapEval{p: p, tr: traitsOf(tc.d.App), est: tc.d.EstimatedDuration.Seconds(), estSet: true}
		c := ev.eval(tc.allocs)
		if c.score < tc.score*(1-1e-9) || c.score > tc.score*(1+1e-9) || c.key != tc.key {
			t.Errorf("%s: score %.3f key %+v, want %.3f %+v", tc.name, c.score, c.key, tc.score, tc.key)
		}
	}
}

// TestGIOTiesByHand: GIO's ties on extra cost (docs/placement.md): active
// first, then local, then cheaper, then snapshot order.
func TestGIOTiesByHand(t *testing.T) {
	gio, _ := Get("gio")
	priced := func(a Agent, p int64, loc Location) Agent {
		a.PriceMicroUSDPerHour, a.Location = p, loc
		return a
	}
	hour := time.Hour
	// y active for 2 h more: extra max(0, 1 h - 2 h) x price = 0, as x's (price 0).
	yActive := priced(ag("y", 4, 4, true), 100000, LocationCloud)
	yActive.RemainingActive = 2 * hour
	for _, tc := range []struct {
		name string
		s    Snapshot
		d    Demand
		want asg
	}{
		{"active first", Snapshot{Agents: []Agent{priced(ag("x", 4, 4, false), 0, LocationCloud), yActive}},
			Demand{JobID: "j", Executors: 2, CPUs: 1, MemMB: 1024, EstimatedDuration: hour}, asg{"y": 2}},
		// y local with room for one executor: the local agents cannot hold
		// the job, so all are used, y first.
		{"local first", Snapshot{Agents: []Agent{priced(ag("x", 4, 4, false), 0, LocationCloud), priced(ag("y", 4, 1, false), 0, LocationLocal)}},
			Demand{JobID: "j", Executors: 2, CPUs: 1, MemMB: 1024, EstimatedDuration: hour}, asg{"y": 1, "x": 1}},
		// No estimate: every extra cost is 0.
		{"cheaper first", Snapshot{Agents: []Agent{priced(ag("x", 4, 4, false), 200000, LocationCloud), priced(ag("y", 4, 4, false), 100000, LocationCloud)}},
			Demand{JobID: "j", Executors: 2, CPUs: 1, MemMB: 1024}, asg{"y": 2}},
	} {
		pl, err := gio.Place(tc.s, tc.d)
		if err != nil {
			t.Fatal(err)
		}
		if got := toAsg(pl); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: gio = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestMorpheusMemoryOnlyAgent: an agent without cpus (memory only) is
// ranked by its memory load: m0 (4 of 8 GiB used, 5/8 after one executor
// of 1 GiB) before m1 (1/8 after); one without memory by its cpus.
func TestMorpheusMemoryOnlyAgent(t *testing.T) {
	m, _ := Get("morpheus")
	s := Snapshot{Agents: []Agent{
		{ID: "m1", CPUs: 4, MemMB: 8192, FreeCPUs: 4, FreeMemMB: 8192, Active: true},
		{ID: "m0", CPUs: 0, MemMB: 8192, FreeCPUs: 0, FreeMemMB: 4096, Active: true},
	}}
	pl, err := m.Place(s, Demand{JobID: "j", Executors: 1, CPUs: 0, MemMB: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if got := toAsg(pl); !reflect.DeepEqual(got, asg{"m0": 1}) {
		t.Errorf("morpheus = %v, want m0", got)
	}
	// And without memory: c0 (3 of 4 cpus used: 1 after one executor)
	// before c1 (1/8).
	s = Snapshot{Agents: []Agent{
		{ID: "c1", CPUs: 8, FreeCPUs: 8, Active: true},
		{ID: "c0", CPUs: 4, FreeCPUs: 1, Active: true},
	}}
	pl, err = m.Place(s, Demand{JobID: "j", Executors: 1, CPUs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := toAsg(pl); !reflect.DeepEqual(got, asg{"c0": 1}) {
		t.Errorf("morpheus = %v, want c0", got)
	}
}

// TestOptionsBounds: alpha and beta in [0, 1] summing to 1 (0 and 1
// included), a time limit >= 0, a ratio gap in [0, 1).
func TestOptionsBounds(t *testing.T) {
	for _, o := range []Options{{Alpha: 1, Beta: 0}, {Beta: 1}, {Alpha: 0.5, Beta: 0.5}, {ILPRatioGap: 0.999}} {
		if _, err := New("bfd", o); err != nil {
			t.Errorf("%+v refused: %v", o, err)
		}
	}
	for _, o := range []Options{{Alpha: 1.5}, {Alpha: 0.6, Beta: 0.5}, {Alpha: 0.4, Beta: 0.5}, {ILPTimeLimit: -1}, {ILPRatioGap: 1}, {ILPRatioGap: -0.1}} {
		if _, err := New("bfd", o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}
