package placement

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Outcome values recorded in Plan.Outcome.
const (
	OutcomeOptimal     = "optimal"
	OutcomeHeuristic   = "heuristic"
	OutcomeIncumbent   = "incumbent"
	OutcomeFallbackBFD = "fallback-bfd"
	// OutcomeTimeLimit and OutcomeTimeLimitBFD: ilp's solver was stopped
	// by its wall-clock safety net (ILPTimeLimit), so the plan (CBC's or
	// the DP's, or bfd's for the second) depends on the machine's load.
	// Every other outcome is a pure function of the snapshot and demand.
	OutcomeTimeLimit    = "time-limit"
	OutcomeTimeLimitBFD = "time-limit-fallback-bfd"
)

// ErrBadDemand is returned (wrapped) for a Demand that cannot be placed by
// construction: fewer than one executor, or negative / NaN sizes.
var ErrBadDemand = errors.New("placement: invalid demand")

// eps absorbs float noise when dividing free amounts by executor sizes
// (e.g. 0.1+0.2 cpus).
const eps = 1e-9

// fitCount returns how many executors of size (c, m) fit into (freeC,
// freeM), capped at limit. A zero size does not constrain that dimension.
func fitCount(freeC, freeM, c, m float64, limit int) int {
	n := limit
	if c > 0 {
		if freeC < 0 || math.IsNaN(freeC) {
			return 0
		}
		if k := math.Floor(freeC/c + eps); k < float64(n) {
			n = int(k)
		}
	}
	if m > 0 {
		if freeM < 0 || math.IsNaN(freeM) {
			return 0
		}
		if k := math.Floor(freeM/m + eps); k < float64(n) {
			n = int(k)
		}
	}
	if n < 0 {
		n = 0
	}
	return n
}

// FitsOn reports how many executors of d fit on a right now (capped at
// d.Executors).
func FitsOn(a Agent, d Demand) int {
	return fitCount(a.FreeCPUs, a.FreeMemMB, d.CPUs, d.MemMB, d.Executors)
}

func validate(d Demand) error {
	switch {
	case d.Executors < 1:
		return fmt.Errorf("%w: executors = %d, want >= 1", ErrBadDemand, d.Executors)
	case d.CPUs < 0 || math.IsNaN(d.CPUs) || math.IsInf(d.CPUs, 0):
		return fmt.Errorf("%w: cpus per executor = %v", ErrBadDemand, d.CPUs)
	case d.MemMB < 0 || math.IsNaN(d.MemMB) || math.IsInf(d.MemMB, 0):
		return fmt.Errorf("%w: mem per executor = %v", ErrBadDemand, d.MemMB)
	}
	return nil
}

// prep is what every policy needs first: per-agent capacity for this job and
// the fit check.
type prep struct {
	s    Snapshot
	d    Demand
	caps []int // executors of d each agent can take now, capped at E
	sum  int   // sum of caps (each capped at E), may exceed E
	// activeSum is the sum of caps over active agents.
	activeSum int
}

// prepare validates d, computes capacities, and returns a *NoFit when the
// cluster cannot hold the job now.
func prepare(s Snapshot, d Demand) (*prep, error) {
	if err := validate(d); err != nil {
		return nil, err
	}
	p := &prep{s: s, d: d, caps: make([]int, len(s.Agents))}
	for i := range s.Agents {
		k := FitsOn(s.Agents[i], d)
		p.caps[i] = k
		p.sum += k
		if s.Agents[i].Active {
			p.activeSum += k
		}
	}
	if p.sum >= d.Executors {
		return p, nil
	}
	return p, p.noFit()
}

// noFit builds the structured reason for a job that does not fit now.
func (p *prep) noFit() *NoFit {
	var freeC, freeM float64
	maxPer := 0
	never := len(p.s.Agents) > 0
	for i, a := range p.s.Agents {
		maxPer = max(maxPer, p.caps[i])
		freeC += max(a.FreeCPUs, 0)
		freeM += max(a.FreeMemMB, 0)
		if fitCount(a.CPUs, a.MemMB, p.d.CPUs, p.d.MemMB, 1) >= 1 {
			never = false
		}
	}
	return p.noFitFrom(p.sum, maxPer, never, freeC, freeM)
}

// noFitFrom builds the reason from cluster-wide figures: how many
// executors fit in all, the most on one agent, whether one could fit on
// an empty agent, and the summed free cpus and memory.
func (p *prep) noFitFrom(placeable, maxPerAgent int, never bool, freeC, freeM float64) *NoFit {
	d := p.d
	nf := &NoFit{Placeable: min(placeable, d.Executors), MaxPerAgent: min(maxPerAgent, d.Executors), Never: never}
	nf.Resource, nf.Short = shortage(d, freeC, freeM)
	if nf.Resource == "" {
		nf.Resource = "agent"
	}
	return nf
}

// shortage names the resource the summed free cpus and memory are short
// of for d ("cpus" or "mem", by the larger relative shortage) and by how
// much; "" when the sums would hold it.
func shortage(d Demand, freeC, freeM float64) (string, float64) {
	needC := float64(d.Executors) * d.CPUs
	needM := float64(d.Executors) * d.MemMB
	shortC, shortM := needC-freeC, needM-freeM
	// Relative shortage decides which resource to name when both are short.
	relC, relM := 0.0, 0.0
	if shortC > eps && needC > 0 {
		relC = shortC / needC
	}
	if shortM > eps && needM > 0 {
		relM = shortM / needM
	}
	switch {
	case relC > 0 && relC >= relM:
		return "cpus", shortC
	case relM > 0:
		return "mem", shortM
	}
	return "", 0
}

// ShortOf is the resource a job cannot fit for, judged from the cluster's
// summed free cpus and memory alone: "cpus" or "mem" when the sums cannot
// hold its executors (then no policy places it, and its NoFit names that
// resource), "" when they could (whether it fits then depends on how the
// free room is split among agents) or the demand is invalid.
func ShortOf(d Demand, freeCPUs, freeMemMB float64) string {
	if validate(d) != nil {
		return ""
	}
	r, _ := shortage(d, max(freeCPUs, 0), max(freeMemMB, 0))
	return r
}

// plan turns per-agent counts (indexed like s.Agents) into a Plan.
func (p *prep) plan(policy, outcome string, counts []int) Plan {
	pl := Plan{Policy: policy, Outcome: outcome}
	for i, n := range counts {
		if n <= 0 {
			continue
		}
		a := &p.s.Agents[i]
		pl.Assignments = append(pl.Assignments, Assignment{AgentID: a.ID, Hostname: a.Hostname, Executors: n})
		if !a.Active {
			pl.Activated = append(pl.Activated, a.ID)
			pl.CostMicroUSDPerHour += a.PriceMicroUSDPerHour
		}
	}
	return pl
}

// fillInOrder places E executors on agents in the given order, each agent
// taking as many as fit before the next is used.
func (p *prep) fillInOrder(order []int) []int {
	counts := make([]int, len(p.caps))
	left := p.d.Executors
	for _, i := range order {
		if left == 0 {
			break
		}
		n := min(p.caps[i], left)
		counts[i] = n
		left -= n
	}
	return counts
}

// candidates returns the indices of agents that can take at least one
// executor.
func (p *prep) candidates() []int {
	idx := make([]int, 0, len(p.caps))
	for i, k := range p.caps {
		if k > 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// effectivePrice is what using the agent adds to the bill: 0 when active.
func effectivePrice(a *Agent) int64 {
	if a.Active {
		return 0
	}
	return a.PriceMicroUSDPerHour
}

// sortStable sorts idx with cmp, breaking ties by snapshot index.
func sortStable(idx []int, cmp func(i, j int) int) {
	slices.SortFunc(idx, func(i, j int) int {
		if c := cmp(i, j); c != 0 {
			return c
		}
		return i - j
	})
}

// Check verifies that pl is a valid placement of d on s: exactly
// d.Executors executors, on known agents, within free cpus and memory, with
// Activated and CostMicroUSDPerHour consistent. It is meant for tests and
// for callers that want to double-check a plan before applying it.
func Check(s Snapshot, d Demand, pl Plan) error {
	byID := make(map[string]int, len(s.Agents))
	for i, a := range s.Agents {
		byID[a.ID] = i
	}
	total := 0
	var cost int64
	var activated []string
	seen := map[string]bool{}
	for _, as := range pl.Assignments {
		i, ok := byID[as.AgentID]
		if !ok {
			return fmt.Errorf("unknown agent %q", as.AgentID)
		}
		if seen[as.AgentID] {
			return fmt.Errorf("agent %q assigned twice", as.AgentID)
		}
		seen[as.AgentID] = true
		if as.Executors < 1 {
			return fmt.Errorf("agent %q gets %d executors", as.AgentID, as.Executors)
		}
		a := s.Agents[i]
		if fitCount(a.FreeCPUs, a.FreeMemMB, d.CPUs, d.MemMB, as.Executors) < as.Executors {
			return fmt.Errorf("agent %q over-committed: %d executors of (%g cpus, %g MiB) on free (%g, %g)",
				a.ID, as.Executors, d.CPUs, d.MemMB, a.FreeCPUs, a.FreeMemMB)
		}
		total += as.Executors
		if !a.Active {
			cost += a.PriceMicroUSDPerHour
			activated = append(activated, a.ID)
		}
	}
	if total != d.Executors {
		return fmt.Errorf("plan places %d executors, want %d", total, d.Executors)
	}
	if cost != pl.CostMicroUSDPerHour {
		return fmt.Errorf("plan cost %d, recomputed %d", pl.CostMicroUSDPerHour, cost)
	}
	if !slices.Equal(slices.Sorted(slices.Values(activated)), slices.Sorted(slices.Values(pl.Activated))) {
		return fmt.Errorf("plan activates %v, recomputed %v", pl.Activated, activated)
	}
	return nil
}

// sortByKey sorts idx by key[i] (ascending, or descending if desc), ties by
// snapshot index. It copies the keys next to the indices so that the sort
// does not chase pointers.
func sortByKey(idx []int, key []float64, desc bool) {
	type kv struct {
		k float64
		i int
	}
	tmp := make([]kv, len(idx))
	for n, i := range idx {
		k := key[i]
		if desc {
			k = -k
		}
		tmp[n] = kv{k, i}
	}
	slices.SortFunc(tmp, func(a, b kv) int {
		switch {
		case a.k < b.k:
			return -1
		case a.k > b.k:
			return 1
		}
		return a.i - b.i
	})
	for n := range tmp {
		idx[n] = tmp[n].i
	}
}
