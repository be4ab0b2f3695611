package placement

import "slices"

func init() {
	Register("dap", func(Options) Policy { return dapPolicy{} })
}

// DAP is the default policy: deadline-aware packing (docs/placement.md).
// It chooses among a few candidate plans — the cheapest one (the exact
// DP's), the cheapest one on idle agents only, the one on the fewest
// agents (and the same with the rest of its executors on the best agent
// that holds them), and the best single agent that holds the whole job — the plan
// with the least estimated dollar cost of the job, where the estimate
// accounts for how the plan changes the job's run time (shuffle across
// agents, contention on busy agents, from the job's application type) and
// for the spare capacity the plan leaves paid for but unused; it prices
// with Demand.EstimatedDuration (the p50). A deadline job whose cheapest
// plan would end after its deadline on Demand.DeadlineDuration (the p90)
// gets the cheapest plan that ends in time on it; if none does, the
// cheapest. No plan adds more than DAPPriceBound job-prices per hour to
// exact's plan.
const (
	// DAPSpareWeight is the share of the spare capacity a plan pays for
	// (the rest of a newly activated agent, or an active agent kept active
	// longer) that is expected to stay unused: it is charged at this weight.
	DAPSpareWeight = 0.25
	// DAPExtensionWeight weighs the spare capacity of an active agent that
	// the plan keeps active longer than its RemainingActive (in proportion
	// to the extension). It is a quarter of DAPSpareWeight: other jobs often
	// keep such an agent active anyway, and RemainingActive, from estimates,
	// tends to be short.
	DAPExtensionWeight = DAPSpareWeight / 4
	// DAPPriceBound caps every plan's added hourly price at exact's plus
	// this many times the job's own price, E x c x the dearest price per
	// cpu among the agents that can take an executor.
	DAPPriceBound = 2.0
	// DAPRemoteShufflePenalty: a shuffle block fetched from another agent
	// takes 1 + this as long as a local one.
	DAPRemoteShufflePenalty = 3.0
	// DAPContention is the slowdown of purely CPU-bound work on a fully
	// used agent; it grows linearly from half load.
	DAPContention = 0.15
)

// AppTraits is what placement assumes about an application type: the
// share of its run time spent shuffling (when all local) and how CPU-bound
// the rest is (0 to 1).
type AppTraits struct {
	ShuffleShare float64
	CPUBound     float64
}

// DAPTraits are the assumed traits per Demand.App; "" (unknown) is a
// middle-of-the-road guess that still values locality.
var DAPTraits = map[string]AppTraits{
	AppWordCount: {ShuffleShare: 0.01, CPUBound: 1.0},
	AppSort:      {ShuffleShare: 0.20, CPUBound: 0.3},
	AppPageRank:  {ShuffleShare: 0.07, CPUBound: 0.7},
	"":           {ShuffleShare: 0.15, CPUBound: 0.7},
}

func traitsOf(app string) AppTraits {
	if t, ok := DAPTraits[app]; ok {
		return t
	}
	return DAPTraits[""]
}

// demandTraits are the traits dap assumes for d: its learned Traits when
// set and valid, else DAPTraits of its application type.
func demandTraits(d Demand) AppTraits {
	if t := d.Traits; t != nil && t.ShuffleShare >= 0 && t.ShuffleShare <= 1 && t.CPUBound >= 0 && t.CPUBound <= 1 {
		return *t
	}
	return traitsOf(d.App)
}

type dapPolicy struct{}

func (dapPolicy) Name() string { return "dap" }

// alloc is n executors on agent i (snapshot index).
type alloc struct{ i, n int }

// dapCand is a candidate plan with its estimates.
type dapCand struct {
	allocs []alloc
	// factor is the estimated run time relative to the job's estimate.
	factor float64
	// score is the estimated cost (arbitrary units: price x time).
	score float64
	key   dpKey
}

// dapEval holds what every candidate's evaluation needs.
type dapEval struct {
	p      *prep
	tr     AppTraits
	est    float64 // estimated duration in seconds; 1 when unknown
	estSet bool
}

func sparse(counts []int) []alloc {
	var out []alloc
	for i, n := range counts {
		if n > 0 {
			out = append(out, alloc{i, n})
		}
	}
	return out
}

// share is the fraction of agent a that n executors of d take.
func share(a *Agent, d Demand, n int) float64 {
	s := 0.0
	if a.CPUs > 0 {
		s = float64(n) * d.CPUs / a.CPUs
	}
	if a.MemMB > 0 {
		s = max(s, float64(n)*d.MemMB/a.MemMB)
	}
	return min(1, s)
}

// factor estimates the run time of the job on allocs relative to its
// estimate (all executors on one uncontended agent):
//
//	(1 - s) x (1 + DAPContention x cpuBound x clamp((u - 0.5) / 0.5, 0, 1)) + s x (1 + DAPRemoteShufflePenalty x r)
//
// with s the shuffle share, u the highest cpu load of an agent holding the
// job once it is there, and r = 1 - sum (n_i / E)^2 the share of shuffle
// blocks that cross agents.
func (ev *dapEval) factor(allocs []alloc) float64 {
	d := ev.p.d
	E := float64(d.Executors)
	var same, umax float64
	for _, x := range allocs {
		f := float64(x.n) / E
		same += f * f
		a := &ev.p.s.Agents[x.i]
		if a.CPUs > 0 {
			umax = max(umax, (a.CPUs-a.FreeCPUs+float64(x.n)*d.CPUs)/a.CPUs)
		}
	}
	r := max(0, 1-same)
	load := min(1, max(0, (umax-0.5)/0.5))
	s := ev.tr.ShuffleShare
	return (1-s)*(1+DAPContention*ev.tr.CPUBound*load) + s*(1+DAPRemoteShufflePenalty*r)
}

// eval scores allocs: factor x (the job's own share of the prices of its
// agents + DAPSpareWeight x the rest of every agent it activates +
// DAPExtensionWeight x the rest of every active agent whose remaining
// active time it extends, in proportion to the extension).
func (ev *dapEval) eval(allocs []alloc) dapCand {
	c := dapCand{allocs: allocs, factor: ev.factor(allocs)}
	t := c.factor * ev.est
	var own, spare float64
	for _, x := range allocs {
		a := &ev.p.s.Agents[x.i]
		sh := share(a, ev.p.d, x.n)
		price := float64(a.PriceMicroUSDPerHour)
		own += sh * price
		c.key.n++
		switch {
		case !a.Active:
			c.key.idle++
			c.key.cost += a.PriceMicroUSDPerHour
			spare += DAPSpareWeight * (1 - sh) * price
		case ev.estSet && a.RemainingActive > 0:
			ext := max(0, t-a.RemainingActive.Seconds()) / t
			spare += DAPExtensionWeight * (1 - sh) * price * ext
		}
	}
	c.score = c.factor * (own + spare)
	return c
}

// better orders candidates: lower score, then faster, then exact's key.
func (a dapCand) better(b dapCand) bool {
	const tol = 1e-9
	switch {
	case a.score < b.score*(1-tol):
		return true
	case b.score < a.score*(1-tol):
		return false
	case a.factor < b.factor-tol:
		return true
	case b.factor < a.factor-tol:
		return false
	}
	return a.key.less(b.key)
}

func (dapPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	ev := &dapEval{p: p, tr: demandTraits(d), est: 1}
	if d.EstimatedDuration > 0 {
		ev.est, ev.estSet = d.EstimatedDuration.Seconds(), true
	}
	E := d.Executors

	// Every multi-agent candidate is built from exact's pruned agents: per
	// (capacity, active) class the ceil(E/k) that can matter (the cheapest
	// idle ones, the first active ones), which is all a plan covering E
	// needs from a class.
	pruned := p.pruned()
	exact, exactKey, idleOnly := p.solveExactIdle(pruned, true)
	cands := []dapCand{ev.eval(sparse(exact))}

	// The cheapest plan on idle agents only, from the same DP: the job gets
	// fresh agents instead of the leftovers of busy ones (exact's plan when
	// it uses no active agent).
	if idleOnly != nil && exactKey.idle < exactKey.n {
		cands = append(cands, ev.eval(sparse(idleOnly)))
	}

	// The fewest agents: largest capacity first, active before idle, idle
	// ones cheaper first, then snapshot order.
	order := slices.Clone(pruned)
	slices.SortFunc(order, func(i, j int) int {
		if c := p.caps[j] - p.caps[i]; c != 0 {
			return c
		}
		ai, aj := &p.s.Agents[i], &p.s.Agents[j]
		if ai.Active != aj.Active {
			if ai.Active {
				return -1
			}
			return 1
		}
		if !ai.Active {
			if c := cmpInt64(ai.PriceMicroUSDPerHour, aj.PriceMicroUSDPerHour); c != 0 {
				return c
			}
		}
		return i - j
	})
	var fewest []alloc
	left := E
	for _, i := range order {
		if left == 0 {
			break
		}
		n := min(p.caps[i], left)
		fewest = append(fewest, alloc{i, n})
		left -= n
	}
	cands = append(cands, ev.eval(fewest))
	if c, ok := ev.fewestRest(pruned, fewest); ok {
		cands = append(cands, c)
	}

	// Single agents that hold the whole job: the best-scoring one and the
	// fastest one.
	// (eval keeps its argument: the scratch slice is copied for the two
	// kept candidates.)
	var bestOne, fastOne dapCand
	var bestAt, fastAt alloc
	haveOne := false
	one := make([]alloc, 1)
	for i, k := range p.caps {
		if k < E {
			continue
		}
		one[0] = alloc{i, E}
		c := ev.eval(one)
		if !haveOne || c.better(bestOne) {
			bestOne, bestAt = c, one[0]
		}
		if !haveOne || c.factor < fastOne.factor || c.factor == fastOne.factor && c.better(fastOne) {
			fastOne, fastAt = c, one[0]
		}
		haveOne = true
	}
	if haveOne {
		bestOne.allocs = []alloc{bestAt}
		fastOne.allocs = []alloc{fastAt}
		cands = append(cands, bestOne, fastOne)
	}

	// The price bound against exact.
	limit := float64(exactKey.cost) + DAPPriceBound*float64(E)*d.CPUs*p.maxPricePerCPU()
	kept := cands[:0]
	for _, c := range cands {
		if float64(c.key.cost) <= limit {
			kept = append(kept, c)
		}
	}
	cands = kept // exact's own plan is always kept

	best := 0
	for k := 1; k < len(cands); k++ {
		if cands[k].better(cands[best]) {
			best = k
		}
	}
	if late := dapDeadlineLeft(d); late > 0 {
		// Deadline mode: the cheapest plan that ends in time on the p90,
		// if any.
		if est := dapDeadlineEstimate(d); est > 0 && cands[best].factor*est > late {
			alt := -1
			for k := range cands {
				if cands[k].factor*est <= late && (alt < 0 || cands[k].better(cands[alt])) {
					alt = k
				}
			}
			if alt >= 0 {
				best = alt
			}
		}
	}
	// The plan in snapshot order, as p.plan makes it, without a dense
	// count slice.
	allocs := slices.Clone(cands[best].allocs)
	slices.SortFunc(allocs, func(a, b alloc) int { return a.i - b.i })
	pl := Plan{Policy: "dap", Outcome: OutcomeHeuristic}
	for _, x := range allocs {
		a := &p.s.Agents[x.i]
		pl.Assignments = append(pl.Assignments, Assignment{AgentID: a.ID, Hostname: a.Hostname, Executors: x.n})
		if !a.Active {
			pl.Activated = append(pl.Activated, a.ID)
			pl.CostMicroUSDPerHour += a.PriceMicroUSDPerHour
		}
	}
	return pl, nil
}

// fewestRest is the fewest-agents plan with its last agent, which holds the
// rest of the executors, swapped for the best-scoring agent that can hold
// that rest: the same executors per agent (so the same share of shuffle
// crossing agents), on a cheaper or less loaded agent than the next largest
// one. ok is false when fewest has one agent or no other agent holds the
// rest.
func (ev *dapEval) fewestRest(pruned []int, fewest []alloc) (dapCand, bool) {
	if len(fewest) < 2 {
		return dapCand{}, false
	}
	head, last := fewest[:len(fewest)-1], fewest[len(fewest)-1]
	used := make(map[int]bool, len(head))
	for _, x := range head {
		used[x.i] = true
	}
	try := append(slices.Clone(head), alloc{})
	var best dapCand
	var bestAt alloc
	found := false
	for _, i := range pruned {
		if used[i] || i == last.i || ev.p.caps[i] < last.n {
			continue
		}
		try[len(try)-1] = alloc{i, last.n}
		if c := ev.eval(try); !found || c.better(best) {
			best, bestAt, found = c, try[len(try)-1], true
		}
	}
	if !found {
		return dapCand{}, false
	}
	best.allocs = append(slices.Clone(head), bestAt)
	return best, true
}

// dapDeadlineLeft is the time left to the deadline in seconds, 0 when the
// job has no deadline, the decision time is unknown, or it has passed.
func dapDeadlineLeft(d Demand) float64 {
	if d.Deadline.IsZero() || d.Now.IsZero() {
		return 0
	}
	left := d.Deadline.Sub(d.Now)
	if left <= 0 {
		return 0
	}
	return left.Seconds()
}

// dapDeadlineEstimate is the run time, in seconds, a deadline is tested
// with: DeadlineDuration (the p90), else EstimatedDuration; 0 when the job
// has no estimate. (A fallback to the p50 when no plan meets the p90 was
// tried on the tuning set: it cost up to 0.4 point for about one miss
// saved in 15 runs, and was dropped: docs/simulation.md, "dap's deadline
// on the p90, its price on the p50".)
func dapDeadlineEstimate(d Demand) float64 {
	if d.DeadlineDuration > 0 {
		return d.DeadlineDuration.Seconds()
	}
	return d.EstimatedDuration.Seconds()
}

// maxPricePerCPU is the dearest hourly price per cpu among the agents that
// can take an executor of the job.
func (p *prep) maxPricePerCPU() float64 {
	var m float64
	for i, k := range p.caps {
		if a := &p.s.Agents[i]; k > 0 && a.CPUs > 0 {
			m = max(m, float64(a.PriceMicroUSDPerHour)/a.CPUs)
		}
	}
	return m
}

// DAPPriceLimit is the most added hourly price (micro-dollars) a dap plan
// may have on s for d: exact's plus DAPPriceBound times the job's own
// price. It is exported for tests and tools; ok is false when d does not fit.
func DAPPriceLimit(s Snapshot, d Demand) (limit float64, ok bool) {
	p, err := prepare(s, d)
	if err != nil {
		return 0, false
	}
	_, key := p.solveExact(p.pruned())
	return float64(key.cost) + DAPPriceBound*float64(d.Executors)*d.CPUs*p.maxPricePerCPU(), true
}
