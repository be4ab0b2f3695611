package placement

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// oracleNoFit recomputes the expected "does not fit" answer naively, or nil
// when the job fits.
func oracleNoFit(s Snapshot, d Demand) *NoFit {
	sum, maxPer := 0, 0
	var freeC, freeM float64
	never := len(s.Agents) > 0
	for _, a := range s.Agents {
		n := 0
		for n < d.Executors && float64(n+1)*d.CPUs <= a.FreeCPUs+1e-6 && float64(n+1)*d.MemMB <= a.FreeMemMB+1e-6 {
			n++
		}
		sum += n
		maxPer = max(maxPer, n)
		freeC += a.FreeCPUs
		freeM += a.FreeMemMB
		if d.CPUs <= a.CPUs+1e-6 && d.MemMB <= a.MemMB+1e-6 {
			never = false
		}
	}
	if sum >= d.Executors {
		return nil
	}
	nf := &NoFit{MaxPerAgent: maxPer, Placeable: sum, Never: never}
	needC, needM := float64(d.Executors)*d.CPUs, float64(d.Executors)*d.MemMB
	relC, relM := 0.0, 0.0
	if needC > freeC+1e-6 {
		relC = (needC - freeC) / needC
	}
	if needM > freeM+1e-6 {
		relM = (needM - freeM) / needM
	}
	switch {
	case relC > 0 && relC >= relM:
		nf.Resource, nf.Short = "cpus", needC-freeC
	case relM > 0:
		nf.Resource, nf.Short = "mem", needM-freeM
	default:
		nf.Resource = "agent"
	}
	return nf
}

func allPolicies(t testing.TB) map[string]Policy {
	t.Helper()
	out := map[string]Policy{}
	for _, n := range Names() {
		p, ok := Get(n)
		if !ok {
			t.Fatalf("Get(%q) failed", n)
		}
		out[n] = p
	}
	return out
}

func TestRegistry(t *testing.T) {
	want := []string{"bfd", "consolidate", "dap", "exact", "firstfit", "gio", "ilp", "morpheus", "spread"}
	if got := Names(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
	for _, n := range want {
		p, ok := Get(n)
		if !ok || p.Name() != n {
			t.Errorf("Get(%q) = %v, %v", n, p, ok)
		}
	}
	if _, ok := Get("nope"); ok {
		t.Error("Get(nope) succeeded")
	}
	if _, err := New("bfd", Options{Alpha: 0.7, Beta: 0.7}); err == nil {
		t.Error("alpha+beta != 1 accepted")
	}
	p, err := New("bfd", Options{Alpha: 0.5})
	if err != nil || p.(bfdPolicy).beta != 0.5 {
		t.Errorf("New(bfd, alpha .5) = %+v, %v", p, err)
	}
	p, err = New("ilp", Options{ILPTimeLimit: 50e6})
	if err != nil || p.(ilpPolicy).timeLimit != 50e6 || p.(ilpPolicy).gap != DefaultILPRatioGap || p.(ilpPolicy).maxNodes != DefaultILPMaxNodes {
		t.Errorf("New(ilp) = %+v, %v", p, err)
	}
	if p, err = New("ilp", Options{ILPMaxNodes: 3}); err != nil || p.(ilpPolicy).maxNodes != 3 || p.(ilpPolicy).timeLimit != DefaultILPTimeLimit {
		t.Errorf("New(ilp, 3 nodes) = %+v, %v", p, err)
	}
	if _, err := New("ilp", Options{ILPMaxNodes: -1}); err == nil {
		t.Error("a negative node limit accepted")
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate Register did not panic")
		}
	}()
	Register("bfd", func(Options) Policy { return bfdPolicy{} })
}

func TestBadDemand(t *testing.T) {
	s := Snapshot{Agents: []Agent{{ID: "a", CPUs: 4, MemMB: 4096, FreeCPUs: 4, FreeMemMB: 4096}}}
	for _, d := range []Demand{{Executors: 0, CPUs: 1}, {Executors: 1, CPUs: -1}, {Executors: 1, MemMB: math.NaN()}} {
		for n, p := range allPolicies(t) {
			if _, err := p.Place(s, d); !errors.Is(err, ErrBadDemand) {
				t.Errorf("%s.Place(%+v) err = %v, want ErrBadDemand", n, d, err)
			}
		}
	}
}

// TestProperties runs every policy on thousands of seeded random clusters
// and jobs.
func TestProperties(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	pols := allPolicies(t)
	// The property is that ilp is exact when it solves; whether it solves
	// within the default 200 ms is the machine's load (a loaded CI machine
	// fell back to bfd once): a limit no solve here comes near.
	pols["ilp"] = ilpWithin(t, time.Minute)
	fits := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 42))
		s := genSnapshot(r, 1+r.IntN(30))
		d := genDemand(r, 40)
		want := oracleNoFit(s, d)
		exactPlan, exactErr := pols["exact"].Place(s, d)
		if want == nil {
			fits++
		}
		for name, p := range pols {
			pl, err := p.Place(s, d)
			if want != nil {
				var nf *NoFit
				if !errors.As(err, &nf) {
					t.Fatalf("seed %d %s: got %+v, %v; want NoFit %+v", seed, name, pl, err, want)
				}
				if nf.Resource != want.Resource || math.Abs(nf.Short-want.Short) > 1e-6 ||
					nf.MaxPerAgent != want.MaxPerAgent || nf.Placeable != want.Placeable || nf.Never != want.Never {
					t.Fatalf("seed %d %s: NoFit %+v, want %+v", seed, name, nf, want)
				}
				continue
			}
			if err != nil {
				t.Fatalf("seed %d %s: unexpected error %v (job %+v)", seed, name, err, d)
			}
			if err := Check(s, d, pl); err != nil {
				t.Fatalf("seed %d %s: invalid plan: %v\n%+v", seed, name, err, pl)
			}
			if pl.Policy != name {
				t.Fatalf("seed %d: plan.Policy = %q, want %q", seed, pl.Policy, name)
			}
			if exactErr != nil {
				t.Fatalf("seed %d: exact failed: %v", seed, exactErr)
			}
			if pl.CostMicroUSDPerHour < exactPlan.CostMicroUSDPerHour {
				t.Fatalf("seed %d: %s costs %d < exact %d", seed, name, pl.CostMicroUSDPerHour, exactPlan.CostMicroUSDPerHour)
			}
			switch name {
			case "ilp":
				if pl.CostMicroUSDPerHour != exactPlan.CostMicroUSDPerHour {
					t.Fatalf("seed %d: ilp cost %d != exact %d (outcome %s)", seed, pl.CostMicroUSDPerHour, exactPlan.CostMicroUSDPerHour, pl.Outcome)
				}
				if pl.Outcome == OutcomeFallbackBFD {
					t.Fatalf("seed %d: ilp fell back to bfd", seed)
				}
			case "bfd":
				activeCap := 0
				for _, a := range s.Agents {
					if a.Active {
						activeCap += FitsOn(a, d)
					}
				}
				if activeCap >= d.Executors && len(pl.Activated) > 0 {
					t.Fatalf("seed %d: bfd activated %v although active agents hold %d >= %d", seed, pl.Activated, activeCap, d.Executors)
				}
			}
		}
	}
	if fits < seeds/3 || fits == seeds {
		t.Fatalf("generator gives %d fitting jobs of %d; want a mix", fits, seeds)
	}
}

// bruteKey enumerates all agent subsets of a small cluster and returns the
// best (cost, agents, idle agents) key of a subset that holds the job.
func bruteKey(s Snapshot, d Demand) (dpKey, bool) {
	best, found := dpInf, false
	n := len(s.Agents)
	for mask := 1; mask < 1<<n; mask++ {
		var k dpKey
		capSum := 0
		for i := range n {
			if mask&(1<<i) == 0 {
				continue
			}
			a := s.Agents[i]
			capSum += FitsOn(a, d)
			k.n++
			if !a.Active {
				k.idle++
				k.cost += a.PriceMicroUSDPerHour
			}
		}
		if capSum >= d.Executors && k.less(best) {
			best, found = k, true
		}
	}
	return best, found
}

// TestExactMatchesBruteForce checks the DP, tie-breaks included, against
// enumeration of every subset on small clusters.
func TestExactMatchesBruteForce(t *testing.T) {
	seeds := 3000
	if testing.Short() {
		seeds = 300
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		s := genSnapshot(r, 1+r.IntN(10))
		d := genDemand(r, 25)
		want, ok := bruteKey(s, d)
		p, err := prepare(s, d)
		if !ok {
			if err == nil {
				t.Fatalf("seed %d: brute force finds no cover but prepare says it fits", seed)
			}
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		counts, got := p.solveExact(p.pruned())
		if got != want {
			t.Fatalf("seed %d: DP key %+v, brute force %+v", seed, got, want)
		}
		if k := p.planKey(counts); k != want {
			t.Fatalf("seed %d: plan key %+v, want %+v (counts %v)", seed, k, want, counts)
		}
	}
}

// TestCBCModelMatchesDP solves the aggregated MILP with CBC alone (no warm
// start, tight gap) and checks it reaches the DP's optimal cost: the model,
// not the warm start, is right.
func TestCBCModelMatchesDP(t *testing.T) {
	seeds := 400
	if testing.Short() {
		seeds = 60
	}
	solved := 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		s := genSnapshot(r, 1+r.IntN(60))
		d := genDemand(r, 60)
		p, err := prepare(s, d)
		if err != nil {
			continue
		}
		items := p.pruned()
		_, dpk := p.solveExact(items)
		// A generous limit: this checks the model, not CBC's speed, and a
		// loaded machine (CI's two cores shared) once took over 5 s here.
		m, _ := p.buildMILP(items, 60, 1e-9)
		res := cbcSolve(m)
		counts, ok := p.milpCounts(items, res.x)
		if !ok {
			t.Fatalf("seed %d: CBC gave no valid solution: %+v", seed, res)
		}
		if !res.provenOptimal {
			t.Fatalf("seed %d: CBC not proven optimal in 60 s", seed)
		}
		if c := p.planKey(counts).cost; c != dpk.cost {
			t.Fatalf("seed %d: CBC cost %d, DP cost %d", seed, c, dpk.cost)
		}
		solved++
	}
	if solved < seeds/3 {
		t.Fatalf("only %d of %d instances fit", solved, seeds)
	}
}

func TestILPOutcomes(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var s Snapshot
	var d Demand
	var trivial struct {
		s Snapshot
		d Demand
	}
	for {
		s, d = genSnapshot(r, 20), genDemand(r, 30)
		if _, err := prepare(s, d); err != nil {
			continue
		}
		// A model CBC is asked about: the job needs an idle agent.
		if pl, _ := (exactPolicy{}).Place(s, d); pl.CostMicroUSDPerHour > 0 && d.Executors > 1 {
			break
		}
		trivial.s, trivial.d = s, d
	}
	bfdPlan, _ := bfdPolicy{alpha: 0.8, beta: 0.2}.Place(s, d)
	exactPlan, _ := exactPolicy{}.Place(s, d)
	base := ilpPolicy{timeLimit: DefaultILPTimeLimit, gap: 0.01, alpha: 0.8, beta: 0.2}

	// Trivial models (free on active agents, or one executor) never reach
	// CBC: the DP's plan is optimal.
	one := Snapshot{Agents: []Agent{{ID: "a", CPUs: 4, MemMB: 4096, FreeCPUs: 4, FreeMemMB: 4096, PriceMicroUSDPerHour: 1}}}
	for _, tc := range []struct {
		s Snapshot
		d Demand
	}{{trivial.s, trivial.d}, {one, Demand{Executors: 1, CPUs: 1, MemMB: 1}}} {
		if tc.s.Agents == nil {
			t.Fatal("the generator gave no trivial instance")
		}
		pol := base
		pol.solve = func(*milp) milpResult { t.Fatal("CBC called on a trivial model"); return milpResult{} }
		pl, err := pol.Place(tc.s, tc.d)
		ex, _ := exactPolicy{}.Place(tc.s, tc.d)
		if err != nil || pl.Outcome != OutcomeOptimal || !reflect.DeepEqual(pl.Assignments, ex.Assignments) {
			t.Fatalf("trivial model: %+v %v, want exact's %+v", pl, err, ex)
		}
	}

	check := func(name string, solve func(*milp) milpResult, wantOutcome string, want Plan) {
		t.Helper()
		pol := base
		pol.solve = solve
		pl, err := pol.Place(s, d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := Check(s, d, pl); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if pl.Outcome != wantOutcome || !reflect.DeepEqual(pl.Assignments, want.Assignments) {
			t.Errorf("%s: got %s %+v, want %s %+v", name, pl.Outcome, pl.Assignments, wantOutcome, want.Assignments)
		}
	}
	// Nothing found: the bfd plan; stopped by the safety net, it says so.
	check("no answer", func(*milp) milpResult { return milpResult{stoppedOnNodes: true} }, OutcomeFallbackBFD, bfdPlan)
	check("no answer in time", func(*milp) milpResult { return milpResult{stoppedOnTime: true} }, OutcomeTimeLimitBFD, bfdPlan)
	// Garbled answer (wrong total): the bfd plan.
	check("garbled", func(m *milp) milpResult {
		return milpResult{x: make([]float64, len(m.colLo)), provenOptimal: true}
	}, OutcomeFallbackBFD, bfdPlan)
	// The MIP start handed back: stopped on the node bound, incumbent; on
	// the wall-clock safety net, time-limit; finished, optimal.
	startBack := func(res milpResult) func(m *milp) milpResult {
		return func(m *milp) milpResult {
			x := make([]float64, len(m.colLo))
			for i, c := range m.startIdx {
				x[c] = m.startVal[i]
			}
			res.x = x
			return res
		}
	}
	check("incumbent", startBack(milpResult{stoppedOnNodes: true}), OutcomeIncumbent, exactPlan)
	check("time-limit", startBack(milpResult{stoppedOnTime: true}), OutcomeTimeLimit, exactPlan)
	check("optimal", startBack(milpResult{provenOptimal: true}), OutcomeOptimal, exactPlan)
}

// TestILPConcurrent runs the ilp policy and raw CBC solves from 8
// goroutines at once and checks every answer (the race detector cannot see
// CBC's C++ globals).
func TestILPConcurrent(t *testing.T) {
	type inst struct {
		s    Snapshot
		d    Demand
		cost int64
	}
	var insts []inst
	for seed := uint64(0); len(insts) < 24; seed++ {
		r := rand.New(rand.NewPCG(seed, 1234))
		s, d := genSnapshot(r, 10+r.IntN(60)), genDemand(r, 50)
		pl, err := exactPolicy{}.Place(s, d)
		if err == nil {
			insts = append(insts, inst{s, d, pl.CostMicroUSDPerHour})
		}
	}
	rounds := 4
	if testing.Short() {
		rounds = 1
	}
	ilp := ilpWithin(t, time.Minute) // 8 solves at once: not the default 200 ms
	raw := ilpPolicy{timeLimit: 5e9, gap: 1e-9, noWarmStart: true}
	errc := make(chan error, 8*rounds*len(insts))
	done := make(chan struct{})
	for g := range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for k := range rounds * len(insts) {
				in := insts[(k+g*5)%len(insts)]
				pl, err := ilp.Place(in.s, in.d)
				if err == nil {
					err = Check(in.s, in.d, pl)
				}
				if err == nil && (pl.CostMicroUSDPerHour != in.cost || pl.Outcome == OutcomeFallbackBFD) {
					err = errorf("ilp: cost %d outcome %s, want cost %d", pl.CostMicroUSDPerHour, pl.Outcome, in.cost)
				}
				if err != nil {
					errc <- err
					continue
				}
				// Raw CBC (no warm start, no DP safety net).
				p, _ := prepare(in.s, in.d)
				items := p.pruned()
				m, _ := p.buildMILP(items, raw.timeLimit.Seconds(), raw.gap)
				res := cbcSolve(m)
				counts, ok := p.milpCounts(items, res.x)
				if !ok {
					errc <- errorf("raw CBC: invalid solution")
				} else if c := p.planKey(counts).cost; c != in.cost {
					errc <- errorf("raw CBC: cost %d, want %d", c, in.cost)
				}
			}
		}()
	}
	for range 8 {
		<-done
	}
	close(errc)
	for err := range errc {
		t.Error(err)
	}
}

// TestPruningKeepsOptimum checks that pruning the candidates never loses the
// optimum (or the tie-breaks), on clusters with many identical agents.
func TestPruningKeepsOptimum(t *testing.T) {
	seeds := 2000
	if testing.Short() {
		seeds = 200
	}
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 31))
		s := genSnapshot(r, 20+r.IntN(120))
		d := genDemand(r, 80)
		p, err := prepare(s, d)
		if err != nil {
			continue
		}
		_, full := p.solveExact(p.candidates())
		counts, pruned := p.solveExact(p.pruned())
		if full != pruned || p.planKey(counts) != full {
			t.Fatalf("seed %d: pruned key %+v (plan %+v), full key %+v", seed, pruned, p.planKey(counts), full)
		}
	}
}

func TestCheapestFirst(t *testing.T) {
	for seed := range 500 {
		r := rand.New(rand.NewPCG(uint64(seed), 77))
		n := 1 + r.IntN(60)
		s := Snapshot{Agents: make([]Agent, n)}
		ag := make([]int, n)
		for i := range s.Agents {
			s.Agents[i].PriceMicroUSDPerHour = int64(r.IntN(5))
			ag[i] = i
		}
		r.Shuffle(n, func(i, j int) { ag[i], ag[j] = ag[j], ag[i] })
		limit := 1 + r.IntN(n)
		p := &prep{s: s}
		want := slices.Clone(ag)
		slices.SortFunc(want, func(i, j int) int {
			if c := cmpInt64(s.Agents[i].PriceMicroUSDPerHour, s.Agents[j].PriceMicroUSDPerHour); c != 0 {
				return c
			}
			return i - j
		})
		p.cheapestFirst(ag, limit)
		if !slices.Equal(ag[:limit], want[:limit]) {
			t.Fatalf("seed %d: got %v, want %v", seed, ag[:limit], want[:limit])
		}
	}
}

// ilpWithin is the ilp policy with CBC's time limit set to limit.
func ilpWithin(t testing.TB, limit time.Duration) Policy {
	t.Helper()
	p, err := New("ilp", Options{ILPTimeLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	return p
}
