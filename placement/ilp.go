package placement

import (
	"math"
	"time"
)

func init() {
	Register("ilp", func(o Options) Policy {
		return ilpPolicy{maxNodes: o.ILPMaxNodes, timeLimit: o.ILPTimeLimit, gap: o.ILPRatioGap, alpha: o.Alpha, beta: o.Beta}
	})
}

// ilpPolicy minimises the summed hourly price of newly activated agents with
// a MILP solved by CBC (ilp_cbc.go). The model is aggregated, because a
// job's executors are identical: per candidate agent j an integer n_j in
// [0, k_j] (k_j = executors that fit on j now) and, for idle agents, a
// binary y_j with n_j <= k_j * y_j; sum_j n_j = E; minimise sum_j P_j * y_j
// (active agents cost nothing). Candidates are pruned as for the exact DP
// (per capacity class only the ceil(E/k) cheapest agents can matter).
//
// The exact DP's plan is given to CBC as a MIP start. CBC's answer is
// accepted only if it is feasible and no dearer than the DP's; at equal cost
// the tie-breaks of exact (fewer agents, then more already-active agents)
// choose between the two, the DP's plan being labelled "optimal".
//
// CBC stops on a deterministic work bound: maxNodes branch-and-bound nodes
// (besides the ratio gap), single-threaded, so that the plan is a pure
// function of the snapshot and the demand, whatever the machine's load.
// The wall-clock limit is only a safety net; when it is hit (CBC says so,
// or the solve took at least the limit) the answer depends on the load and
// the outcome says so. Outcome is "optimal" when CBC finished (proven
// within the ratio gap), "incumbent" when it stopped on the node bound
// with a feasible answer, "fallback-bfd" when it returned nothing usable
// and the bfd plan is used instead, and "time-limit" or
// "time-limit-fallback-bfd" when the safety net stopped it.
type ilpPolicy struct {
	// maxNodes is CBC's node limit (the work bound); 0 means none (only the
	// measuring benchmark solves without one).
	maxNodes int
	// timeLimit is the wall-clock safety net.
	timeLimit   time.Duration
	gap         float64
	alpha, beta float64
	// solve is the solver; nil means CBC. Tests substitute it.
	solve func(*milp) milpResult
	// noWarmStart disables the MIP start (tests check the model alone).
	noWarmStart bool
}

func (ilpPolicy) Name() string { return "ilp" }

// milp is a MILP in column form: minimise obj.x subject to rowLo <= A x <=
// rowUp, colLo <= x <= colUp, all columns integer.
type milp struct {
	start        []int32 // CSC column starts, len ncols+1
	index        []int32 // row of each nonzero
	value        []float64
	colLo, colUp []float64
	obj          []float64
	rowLo, rowUp []float64
	// MIP start: column indices and values (may be empty).
	startIdx []int32
	startVal []float64
	// Solver parameters: the wall-clock safety net, the ratio gap and the
	// node limit (0: none).
	seconds  float64
	gap      float64
	maxNodes int
}

type milpResult struct {
	x             []float64 // nil when no feasible solution was found
	provenOptimal bool
	// stoppedOnNodes: CBC stopped on the node limit (deterministic).
	stoppedOnNodes bool
	// stoppedOnTime: the wall-clock safety net may have changed the answer
	// (CBC stopped on it, or the solve took at least the limit).
	stoppedOnTime bool
	nodes         int // branch-and-bound nodes CBC explored
}

func (pol ilpPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	items := p.pruned()
	dpCounts, dpk := p.solveExact(items)
	if dpk.cost == 0 || d.Executors == 1 {
		// Nothing for CBC to prove: no plan is cheaper than free, and with
		// one executor the DP's cheapest single agent is the optimum. CBC
		// 2.10.8 is not called on these degenerate models, on which it
		// once aborted the whole process (an assertion in
		// OsiClpSolverInterface::crunch) under load.
		return p.plan("ilp", OutcomeOptimal, dpCounts), nil
	}
	m, ncol := p.buildMILP(items, pol.timeLimit.Seconds(), pol.gap)
	m.maxNodes = pol.maxNodes
	if !pol.noWarmStart {
		for t, i := range items {
			if n := dpCounts[i]; n > 0 {
				m.startIdx = append(m.startIdx, int32(t))
				m.startVal = append(m.startVal, float64(n))
				if y := ncol[t]; y >= 0 {
					m.startIdx = append(m.startIdx, int32(y))
					m.startVal = append(m.startVal, 1)
				}
			}
		}
	}
	solve := pol.solve
	if solve == nil {
		solve = cbcSolve
	}
	res := solve(m)
	if counts, ok := p.milpCounts(items, res.x); ok {
		k := p.planKey(counts)
		if k.cost <= dpk.cost {
			switch {
			case res.stoppedOnTime:
				// Whichever plan wins, where CBC stopped was the load's
				// doing.
				if dpk.less(k) {
					counts = dpCounts
				}
				return p.plan("ilp", OutcomeTimeLimit, counts), nil
			case dpk.less(k):
				return p.plan("ilp", OutcomeOptimal, dpCounts), nil
			case res.stoppedOnNodes || !res.provenOptimal:
				return p.plan("ilp", OutcomeIncumbent, counts), nil
			}
			return p.plan("ilp", OutcomeOptimal, counts), nil
		}
	}
	if res.stoppedOnTime {
		return p.plan("ilp", OutcomeTimeLimitBFD, p.bfdCounts(pol.alpha, pol.beta)), nil
	}
	return p.plan("ilp", OutcomeFallbackBFD, p.bfdCounts(pol.alpha, pol.beta)), nil
}

// buildMILP builds the aggregated model over items. Column t < len(items) is
// n_t; yCol[t] is the column of y_t, or -1 for active agents.
func (p *prep) buildMILP(items []int, seconds, gap float64) (*milp, []int) {
	nItems := len(items)
	yCol := make([]int, nItems)
	nIdle := 0
	for t, i := range items {
		if p.s.Agents[i].Active {
			yCol[t] = -1
		} else {
			yCol[t] = nItems + nIdle
			nIdle++
		}
	}
	ncols := nItems + nIdle
	m := &milp{
		start:   make([]int32, 0, ncols+1),
		colLo:   make([]float64, ncols),
		colUp:   make([]float64, ncols),
		obj:     make([]float64, ncols),
		rowLo:   make([]float64, 1+nIdle),
		rowUp:   make([]float64, 1+nIdle),
		seconds: seconds,
		gap:     gap,
	}
	E := float64(p.d.Executors)
	m.rowLo[0], m.rowUp[0] = E, E // sum n = E
	for r := 1; r <= nIdle; r++ {
		m.rowLo[r], m.rowUp[r] = math.Inf(-1), 0 // n_t - k_t y_t <= 0
	}
	// n columns.
	for t, i := range items {
		m.start = append(m.start, int32(len(m.index)))
		m.colUp[t] = float64(p.caps[i])
		m.index = append(m.index, 0)
		m.value = append(m.value, 1)
		if y := yCol[t]; y >= 0 {
			m.index = append(m.index, int32(y-nItems+1))
			m.value = append(m.value, 1)
		}
	}
	// y columns.
	for t, i := range items {
		y := yCol[t]
		if y < 0 {
			continue
		}
		m.start = append(m.start, int32(len(m.index)))
		m.colUp[y] = 1
		m.obj[y] = float64(p.s.Agents[i].PriceMicroUSDPerHour) / 1e6
		m.index = append(m.index, int32(y-nItems+1))
		m.value = append(m.value, -float64(p.caps[i]))
	}
	m.start = append(m.start, int32(len(m.index)))
	return m, yCol
}

// milpCounts turns a MILP solution into per-agent counts and checks it.
func (p *prep) milpCounts(items []int, x []float64) ([]int, bool) {
	if len(x) < len(items) {
		return nil, false
	}
	counts := make([]int, len(p.caps))
	total := 0
	for t, i := range items {
		v := x[t]
		if math.IsNaN(v) {
			return nil, false
		}
		n := int(math.Round(v))
		if math.Abs(v-float64(n)) > 1e-6 || n < 0 || n > p.caps[i] {
			return nil, false
		}
		counts[i] = n
		total += n
	}
	return counts, total == p.d.Executors
}
