package placement

// The ilp policy's model, warm start and answer checks by hand (issue 33).
// No assertion here depends on CBC's time limit.

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

// ilpHand: executors of 1 cpu, E = 3, on
//
//	0 a:  active, 4 cpus with 2 free (capacity 2)
//	1 i1: idle, 2 cpus, $0.12/h (capacity 2)
//	2 i2: idle, 4 cpus, $0.24/h (capacity 3)
//
// exact's plan: a 2 + i1 1 (price 120000; i2 alone costs 240000).
func ilpHand(t *testing.T) (Snapshot, Demand, *prep) {
	t.Helper()
	s := Snapshot{Agents: []Agent{ag("a", 4, 2, true), priced(ag("i1", 2, 2, false), 120000), priced(ag("i2", 4, 4, false), 240000)}}
	d := Demand{JobID: "j", Executors: 3, CPUs: 1, MemMB: 1024}
	p, err := prepare(s, d)
	if err != nil {
		t.Fatal(err)
	}
	return s, d, p
}

// TestBuildMILPByHand: the aggregated model over items [a, i1, i2]:
// columns n_a, n_i1, n_i2 (bounds 0..capacity), y_i1, y_i2 (0..1, the
// price in dollars per hour as objective); row 0: n_a + n_i1 + n_i2 = 3;
// rows 1, 2: n_i1 - 2 y_i1 <= 0, n_i2 - 3 y_i2 <= 0. In column form:
//
//	n_a: row 0 (1); n_i1: rows 0 (1), 1 (1); n_i2: rows 0 (1), 2 (1);
//	y_i1: row 1 (-2); y_i2: row 2 (-3).
func TestBuildMILPByHand(t *testing.T) {
	_, _, p := ilpHand(t)
	m, yCol := p.buildMILP([]int{0, 1, 2}, 7, 0.03)
	inf := math.Inf(-1)
	want := &milp{
		start:   []int32{0, 1, 3, 5, 6, 7},
		index:   []int32{0, 0, 1, 0, 2, 1, 2},
		value:   []float64{1, 1, 1, 1, 1, -2, -3},
		colLo:   []float64{0, 0, 0, 0, 0},
		colUp:   []float64{2, 2, 3, 1, 1},
		obj:     []float64{0, 0, 0, 0.12, 0.24},
		rowLo:   []float64{3, inf, inf},
		rowUp:   []float64{3, 0, 0},
		seconds: 7,
		gap:     0.03,
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("model\n%+v\nwant\n%+v", *m, *want)
	}
	if !slices.Equal(yCol, []int{-1, 3, 4}) {
		t.Errorf("y columns %v, want [-1 3 4]", yCol)
	}
}

// TestMILPCountsByHand: a solution is read as per-agent counts when its
// first len(items) values are integers (within 1e-6, included), within
// 0..capacity, summing to E. Items [a, i1, i2], capacities 2, 2, 3.
func TestMILPCountsByHand(t *testing.T) {
	_, _, p := ilpHand(t)
	items := []int{0, 1, 2}
	for _, tc := range []struct {
		name string
		x    []float64
		want []int // nil: rejected
	}{
		{"with the y columns", []float64{1, 0, 2, 0, 1}, []int{1, 0, 2}},
		{"n columns only", []float64{1, 0, 2}, []int{1, 0, 2}},
		{"too short", []float64{1, 2}, nil},
		{"float noise", []float64{1 + 5e-7, 0, 2 - 5e-7}, []int{1, 0, 2}},
		{"off by exactly 1e-6", []float64{1e-6, 1, 2}, []int{0, 1, 2}},
		{"off by 2e-6", []float64{2e-6, 1, 2}, nil},
		{"fractional", []float64{1.5, 0, 1.5}, nil},
		{"a full agent", []float64{2, 1, 0}, []int{2, 1, 0}},
		{"over a capacity", []float64{3, 0, 0}, nil},
		{"negative", []float64{-1, 2, 2}, nil},
		{"wrong total", []float64{1, 1, 0}, nil},
		{"NaN", []float64{math.NaN(), 1, 2}, nil},
	} {
		counts, ok := p.milpCounts(items, tc.x)
		if ok != (tc.want != nil) || ok && !slices.Equal(counts, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, counts, ok, tc.want)
		}
	}
}

// TestILPWarmStartAndAnswers: the MIP start is exact's plan (n_a = 2,
// n_i1 = 1, y_i1 = 1, over pruned items [a, i2, i1]: columns 0, 2 and 4);
// CBC's answer replaces it only when it is no dearer and its key no
// worse: the same key on other agents' counts is taken, a dearer answer
// falls back to bfd. The outcome says how CBC stopped: proven (optimal),
// on the node bound or unproven (incumbent), on the wall-clock safety net
// (time-limit, time-limit-fallback-bfd).
func TestILPWarmStartAndAnswers(t *testing.T) {
	s, d, p := ilpHand(t)
	if got := p.pruned(); !slices.Equal(got, []int{0, 2, 1}) {
		t.Fatalf("pruned %v, want [0 2 1]", got)
	}
	base := ilpPolicy{maxNodes: 7, timeLimit: DefaultILPTimeLimit, gap: 0.01, alpha: 0.8, beta: 0.2}
	var seen *milp
	answer := func(res milpResult) func(*milp) milpResult {
		return func(m *milp) milpResult {
			seen = m
			return res
		}
	}
	place := func(pol ilpPolicy) Plan {
		t.Helper()
		pl, err := pol.Place(s, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(s, d, pl); err != nil {
			t.Fatal(err)
		}
		return pl
	}

	pol := base
	pol.solve = answer(milpResult{})
	pl := place(pol)
	if !slices.Equal(seen.startIdx, []int32{0, 2, 4}) || !slices.Equal(seen.startVal, []float64{2, 1, 1}) {
		t.Errorf("MIP start %v = %v, want [0 2 4] = [2 1 1]", seen.startIdx, seen.startVal)
	}
	if seen.maxNodes != 7 || seen.seconds != DefaultILPTimeLimit.Seconds() {
		t.Errorf("node limit %d, seconds %g; want 7, %g", seen.maxNodes, seen.seconds, DefaultILPTimeLimit.Seconds())
	}
	bfd, _ := bfdPolicy{alpha: 0.8, beta: 0.2}.Place(s, d)
	if pl.Outcome != OutcomeFallbackBFD || !reflect.DeepEqual(pl.Assignments, bfd.Assignments) {
		t.Errorf("no answer: %s %+v, want bfd's %+v", pl.Outcome, pl.Assignments, bfd.Assignments)
	}
	pol.noWarmStart = true
	place(pol)
	if len(seen.startIdx) != 0 || len(seen.startVal) != 0 {
		t.Errorf("noWarmStart: MIP start %v = %v", seen.startIdx, seen.startVal)
	}

	exacts := []float64{2, 0, 1, 0, 1} // n_a, n_i2, n_i1, y_i2, y_i1
	dearer := []float64{0, 3, 0, 1, 0} // i2 alone
	for _, tc := range []struct {
		name    string
		res     milpResult
		outcome string
		want    asg
	}{
		{"exact's plan, proven", milpResult{x: exacts, provenOptimal: true}, OutcomeOptimal, asg{"a": 2, "i1": 1}},
		{"exact's plan, not proven", milpResult{x: exacts}, OutcomeIncumbent, asg{"a": 2, "i1": 1}},
		{"exact's plan, node bound", milpResult{x: exacts, provenOptimal: true, stoppedOnNodes: true}, OutcomeIncumbent, asg{"a": 2, "i1": 1}},
		{"exact's plan, safety net", milpResult{x: exacts, provenOptimal: true, stoppedOnTime: true}, OutcomeTimeLimit, asg{"a": 2, "i1": 1}},
		{"the same key, other counts", milpResult{x: []float64{1, 0, 2, 0, 1}, provenOptimal: true}, OutcomeOptimal, asg{"a": 1, "i1": 2}},
		{"the same key, safety net", milpResult{x: []float64{1, 0, 2, 0, 1}, stoppedOnTime: true}, OutcomeTimeLimit, asg{"a": 1, "i1": 2}},
		{"dearer (i2 alone)", milpResult{x: dearer, provenOptimal: true}, OutcomeFallbackBFD, toAsg(bfd)},
		{"dearer, node bound", milpResult{x: dearer, stoppedOnNodes: true}, OutcomeFallbackBFD, toAsg(bfd)},
		{"dearer, safety net", milpResult{x: dearer, stoppedOnTime: true}, OutcomeTimeLimitBFD, toAsg(bfd)},
		{"nothing, safety net", milpResult{stoppedOnTime: true}, OutcomeTimeLimitBFD, toAsg(bfd)},
	} {
		pol := base
		pol.solve = answer(tc.res)
		pl := place(pol)
		if pl.Outcome != tc.outcome || !reflect.DeepEqual(toAsg(pl), tc.want) {
			t.Errorf("%s: %s %v, want %s %v", tc.name, pl.Outcome, toAsg(pl), tc.outcome, tc.want)
		}
	}
}

// TestCBCSolvesByHand: CBC itself on the model of TestBuildMILPByHand
// (generous limit and no gap: the answer, not the speed, is checked)
// finds the cheapest cover, a + i1 (0.12 $/h; i2 costs 0.24), proven,
// not stopped on the limit; with the total raised to 8 (capacities sum
// to 7) it reports no solution; an empty model has none either.
func TestCBCSolvesByHand(t *testing.T) {
	_, _, p := ilpHand(t)
	items := []int{0, 1, 2}
	m, _ := p.buildMILP(items, 60, 1e-9)
	res := cbcSolve(m)
	if !res.provenOptimal || res.stoppedOnTime {
		t.Errorf("proven %v, stopped on limit %v", res.provenOptimal, res.stoppedOnTime)
	}
	counts, ok := p.milpCounts(items, res.x)
	if !ok || len(res.x) != 5 || counts[2] != 0 || counts[0]+counts[1] != 3 || math.Round(res.x[3]) != 1 || math.Round(res.x[4]) != 0 {
		t.Errorf("CBC: %v (counts %v, %v), want a + i1 with y_i1 = 1, y_i2 = 0", res.x, counts, ok)
	}
	m.rowLo[0], m.rowUp[0] = 8, 8
	if res := cbcSolve(m); res.x != nil {
		t.Errorf("infeasible model: CBC gave %v", res.x)
	}
	if res := cbcSolve(&milp{}); res.x != nil || res.provenOptimal {
		t.Errorf("empty model: %+v", res)
	}
}

// TestCBCUsesMIPStart: CBC starts from the MIP start it is given. On the
// model of TestBuildMILPByHand, with a ratio gap of 0.99 (any solution
// within 99% of the bound ends the search), a start that is optimal —
// a 1, i1 2 (y_i1 = 1), price 0.12, one of two optimal plans — is the
// answer; no time limit is reached (60 s).
func TestCBCUsesMIPStart(t *testing.T) {
	_, _, p := ilpHand(t)
	for _, start := range [][]float64{{1, 2, 0, 1, 0}, {2, 1, 0, 1, 0}} {
		m, _ := p.buildMILP([]int{0, 1, 2}, 60, 0.99)
		for c, v := range start {
			if v != 0 {
				m.startIdx = append(m.startIdx, int32(c))
				m.startVal = append(m.startVal, v)
			}
		}
		res := cbcSolve(m)
		if len(res.x) != len(start) {
			t.Fatalf("start %v: no answer %+v", start, res)
		}
		for c := range start {
			if math.Round(res.x[c]) != start[c] {
				t.Errorf("start %v: CBC answered %v", start, res.x)
				break
			}
		}
	}
}
