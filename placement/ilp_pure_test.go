package placement

// The ilp policy's decision is a pure function of its input (issue: "an
// ILP solve with a time limit is not a pure function of its input under
// load"): CBC stops on a node bound, and only a stop by the wall-clock
// safety net, which the outcome reports, can depend on the machine.

import (
	"math/rand/v2"
	"reflect"
	"runtime"
	"testing"
	"time"
)

// ilpBranching returns two fresh 14-agent clusters and jobs (genFresh,
// stream 27, seeds 143 and 217) on which CBC branches: it proves the first
// optimal after a few dozen nodes; the second needs more nodes than the
// default bound to prove, so CBC stops on the bound.
func ilpBranching(t *testing.T) []benchCase {
	t.Helper()
	var out []benchCase
	for _, seed := range []uint64{143, 217} {
		s, d := genFresh(rand.New(rand.NewPCG(seed, 27)), 14)
		out = append(out, benchCase{s, d})
	}
	return out
}

// warmMILP is the model ilp hands CBC for c, with the DP's plan as MIP
// start, the node bound maxNodes and the safety net seconds.
func warmMILP(t *testing.T, c benchCase, maxNodes int, seconds float64) (*prep, []int, *milp) {
	t.Helper()
	p, err := prepare(c.s, c.d)
	if err != nil {
		t.Fatal(err)
	}
	items := p.pruned()
	dpCounts, _ := p.solveExact(items)
	m, yCol := p.buildMILP(items, seconds, DefaultILPRatioGap)
	m.maxNodes = maxNodes
	for t, i := range items {
		if n := dpCounts[i]; n > 0 {
			m.startIdx = append(m.startIdx, int32(t))
			m.startVal = append(m.startVal, float64(n))
			if y := yCol[t]; y >= 0 {
				m.startIdx = append(m.startIdx, int32(y))
				m.startVal = append(m.startVal, 1)
			}
		}
	}
	return p, items, m
}

// TestCBCStopsOnTheNodeBound: CBC branches on both instances and, with a
// safety net no solve comes near (10 min), is stopped by the clock on
// neither: the first is proven within the default bound, the second stops
// on it with an answer as cheap as the DP's, and ilp places exact's plan,
// "incumbent". A 600-node bound is kept too, on a fresh 100-agent
// cluster (CBC may count a few nodes more, not the 100,000 or so of its
// fast depth-first search after 500 nodes, which "depthMiniBab -999"
// turns off; not with -short).
func TestCBCStopsOnTheNodeBound(t *testing.T) {
	cases := ilpBranching(t)
	for i, c := range cases {
		p, items, m := warmMILP(t, c, DefaultILPMaxNodes, 600)
		res := cbcSolve(m)
		counts, ok := p.milpCounts(items, res.x)
		_, dpk := p.solveExact(items)
		if !ok || p.planKey(counts).cost != dpk.cost || res.nodes == 0 || res.stoppedOnTime {
			t.Fatalf("case %d: %d nodes, on time %v, answer %v (cost %+v, DP %+v): want a branching solve as cheap as the DP's", i, res.nodes, res.stoppedOnTime, ok, p.planKey(counts), dpk)
		}
		if hard := i == 1; res.stoppedOnNodes != hard || res.provenOptimal == hard {
			t.Errorf("case %d: on the node bound %v, proven %v after %d nodes; want %v, %v", i, res.stoppedOnNodes, res.provenOptimal, res.nodes, hard, !hard)
		}
	}
	pol, err := New("ilp", Options{ILPTimeLimit: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := pol.Place(cases[1].s, cases[1].d)
	ex, _ := exactPolicy{}.Place(cases[1].s, cases[1].d)
	if err != nil || pl.Outcome != OutcomeIncumbent || !reflect.DeepEqual(pl.Assignments, ex.Assignments) {
		t.Errorf("ilp: %s %+v, %v; want incumbent, exact's %+v", pl.Outcome, pl.Assignments, err, ex.Assignments)
	}

	if testing.Short() {
		return
	}
	// A fresh 100-agent cluster that needs tens of thousands of nodes.
	_, _, m := warmMILP(t, ilpCorpus("fresh", 100, 28)[27], 600, 600)
	if res := cbcSolve(m); !res.stoppedOnNodes || res.nodes > 1200 || res.stoppedOnTime {
		t.Errorf("600-node bound: on it %v after %d nodes, on time %v", res.stoppedOnNodes, res.nodes, res.stoppedOnTime)
	}
}

// TestILPSameDecisionUnderLoad: each instance of ilpBranching is placed
// once, then twice while GOMAXPROCS goroutines spin, with safety nets
// of 10 min (never reached), 20 ms (sometimes) and 1 µs (always): every
// decision that does not report the safety net is identical to the first.
// Before the node bound, CBC stopped only on its time limit and said
// "incumbent" or "fallback-bfd" as if nothing depended on the load: with 1
// µs it stopped on time on every solve, and its decisions were not the
// unhurried "optimal" ones.
func TestILPSameDecisionUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("solves under load: about 2 s")
	}
	cases := ilpBranching(t)
	calm, err := New("ilp", Options{ILPTimeLimit: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]Plan, len(cases))
	for i, c := range cases {
		if want[i], err = calm.Place(c.s, c.d); err != nil || onTime(want[i]) {
			t.Fatalf("case %d: %+v, %v", i, want[i], err)
		}
	}
	defer busy(runtime.GOMAXPROCS(0))()
	reported := 0
	for _, limit := range []time.Duration{10 * time.Minute, 20 * time.Millisecond, time.Microsecond} {
		pol, err := New("ilp", Options{ILPTimeLimit: limit})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cases {
			for run := range 2 {
				pl, err := pol.Place(c.s, c.d)
				if err != nil {
					t.Fatal(err)
				}
				if onTime(pl) {
					// The safety net stopped CBC, and the outcome says so.
					reported++
					continue
				}
				if !reflect.DeepEqual(pl, want[i]) {
					t.Errorf("safety net %v, case %d, run %d: %s %+v; want %s %+v", limit, i, run, pl.Outcome, pl.Assignments, want[i].Outcome, want[i].Assignments)
				}
			}
		}
	}
	if reported < 4 {
		t.Errorf("the safety net was reported %d times; want at least the 4 solves with 1 µs", reported)
	}
}

// TestCBCSafetyNetReported: a solve that lasted at least the safety net
// counts as stopped by it, even when CBC finished without saying so (the
// model of TestBuildMILPByHand is proven at the root, before CBC's first
// clock check that reports a stop): with 1 ns the policy says time-limit
// (or time-limit-fallback-bfd); with 1 min, optimal.
func TestCBCSafetyNetReported(t *testing.T) {
	s, d, p := ilpHand(t)
	m, _ := p.buildMILP([]int{0, 1, 2}, 1e-9, 0.01)
	if res := cbcSolve(m); !res.stoppedOnTime {
		t.Errorf("1 ns: not stopped on time: %+v", res)
	}
	for _, tc := range []struct {
		limit time.Duration
		want  string
	}{{time.Nanosecond, OutcomeTimeLimit}, {time.Minute, OutcomeOptimal}} {
		// With 1 ns CBC may not even hand back the MIP start: then bfd's
		// plan, time-limit-fallback-bfd.
		pol, err := New("ilp", Options{ILPTimeLimit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		if pl, err := pol.Place(s, d); err != nil || pl.Outcome != tc.want && !(onTime(pl) && tc.want == OutcomeTimeLimit) {
			t.Errorf("%v: %s, %v; want %s", tc.limit, pl.Outcome, err, tc.want)
		}
	}
}

func onTime(pl Plan) bool {
	return pl.Outcome == OutcomeTimeLimit || pl.Outcome == OutcomeTimeLimitBFD
}
