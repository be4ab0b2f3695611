package placement

import (
	"math"
	"slices"
)

func init() { Register("dap", func(Options) Policy { return dapPolicy{} }) }

// Experimental knobs (tuning phase).
var (
	DapLambda      = 1.0
	DapRemote      = 3.0
	DapContention  = 0.15
	DapShuffle     = map[string]float64{AppWordCount: 0.01, AppSort: 0.2, AppPageRank: 0.07, "": 0.15}
	DapCPU         = map[string]float64{AppWordCount: 1.0, AppSort: 0.3, AppPageRank: 0.7, "": 0.7}
	DapMode        = 0
	DapSingleLimit = 64
	DapOwn         = 1.0
	DapUseR        = false
	DapRWeight     = 1.0
	DapSpeed       = false
	DapSpeedMargin = 1.0
)

type dapPolicy struct{}

func (dapPolicy) Name() string { return "dap" }

type dapCand struct {
	counts []int
	t      float64 // estimated duration factor
	cost   float64
	key    dpKey
}

func (p *prep) factor(counts []int) float64 {
	d := p.d
	E := float64(d.Executors)
	var same, umax float64
	for i, n := range counts {
		if n <= 0 {
			continue
		}
		f := float64(n) / E
		same += f * f
		a := &p.s.Agents[i]
		if a.CPUs > 0 {
			u := (a.CPUs - a.FreeCPUs + float64(n)*d.CPUs) / a.CPUs
			umax = max(umax, u)
		}
	}
	r := 1 - same
	sh := DapShuffle[d.App]
	cpu := DapCPU[d.App]
	x := min(1, max(0, (umax-0.5)/0.5))
	return (1-sh)*(1+DapContention*cpu*x) + sh*(1+DapRemote*r)
}

func (p *prep) score(counts []int) dapCand {
	c := dapCand{counts: counts, t: p.factor(counts), key: p.planKey(counts)}
	var own, waste float64
	for i, n := range counts {
		if n <= 0 {
			continue
		}
		a := &p.s.Agents[i]
		share := 0.0
		if a.CPUs > 0 {
			share = float64(n) * p.d.CPUs / a.CPUs
		}
		if a.MemMB > 0 {
			share = max(share, float64(n)*p.d.MemMB/a.MemMB)
		}
		share = min(1, share)
		price := float64(a.PriceMicroUSDPerHour)
		own += share * price
		if !a.Active {
			waste += (1 - share) * price
		} else if DapUseR && a.RemainingActive > 0 && p.d.EstimatedDuration > 0 {
			T := c.t * p.d.EstimatedDuration.Seconds()
			ext := max(0, T-a.RemainingActive.Seconds()) / T
			waste += (1 - share) * price * ext * DapRWeight
		}
	}
	c.cost = c.t * (DapOwn*own + DapLambda*waste)
	return c
}

func (dapPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	E := d.Executors
	var cands []dapCand
	ex, _ := p.solveExact(p.pruned())
	cands = append(cands, p.score(ex))
	// Single-agent plans.
	single := 0
	for i, k := range p.caps {
		if k >= E && single < DapSingleLimit*4 {
			counts := make([]int, len(p.caps))
			counts[i] = E
			cands = append(cands, p.score(counts))
			single++
		}
	}
	// Fewest agents: largest capacity first (active first on ties), then cheaper.
	idx := p.candidates()
	sortStable(idx, func(i, j int) int {
		if c := p.caps[j] - p.caps[i]; c != 0 {
			return c
		}
		ai, aj := p.s.Agents[i].Active, p.s.Agents[j].Active
		if ai != aj {
			if ai {
				return -1
			}
			return 1
		}
		return cmpInt64(p.s.Agents[i].PriceMicroUSDPerHour, p.s.Agents[j].PriceMicroUSDPerHour)
	})
	cands = append(cands, p.score(p.fillInOrder(idx)))
	// Idle agents only, exact.
	idleSum := 0
	var idle []int
	for i, k := range p.caps {
		if k > 0 && !p.s.Agents[i].Active {
			idleSum += k
			idle = append(idle, i)
		}
	}
	if idleSum >= E {
		q := *p
		q.caps = slices.Clone(p.caps)
		for i := range q.caps {
			if p.s.Agents[i].Active {
				q.caps[i] = 0
			}
		}
		c, _ := q.solveExact(q.pruned())
		cands = append(cands, p.score(c))
	}
	better := func(a, b dapCand) bool {
		return a.cost < b.cost-1e-6 || math.Abs(a.cost-b.cost) <= 1e-6 && (a.t < b.t-1e-9 || math.Abs(a.t-b.t) <= 1e-9 && a.key.less(b.key))
	}
	best := 0
	for k := 1; k < len(cands); k++ {
		if better(cands[k], cands[best]) {
			best = k
		}
	}
	if DapSpeed && !d.Deadline.IsZero() && !d.Now.IsZero() && d.EstimatedDuration > 0 {
		left := d.Deadline.Sub(d.Now).Seconds()
		est := d.EstimatedDuration.Seconds() * DapSpeedMargin
		if cands[best].t*est > left {
			alt := -1
			for k := range cands {
				if cands[k].t*est <= left && (alt < 0 || better(cands[k], cands[alt])) {
					alt = k
				}
			}
			if alt >= 0 {
				best = alt
			}
		}
	}
	return p.plan("dap", OutcomeHeuristic, cands[best].counts), nil
}
