package placement

import (
	"math"
	"slices"
)

func init() { Register("exact", func(Options) Policy { return exactPolicy{} }) }

// exactPolicy solves the single-job model exactly: choose the set of agents
// that holds all E executors at the least added hourly price. Because a
// job's executors are identical this is a min-cost covering knapsack over
// the agents' capacities (in executors), solved by dynamic programming.
//
// Ties are broken deterministically: cheaper, then fewer agents, then more
// already-active agents, then earlier in the snapshot.
type exactPolicy struct{}

func (exactPolicy) Name() string { return "exact" }

func (exactPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	counts, _ := p.solveExact(p.pruned())
	return p.plan("exact", OutcomeOptimal, counts), nil
}

// dpKey orders partial solutions: cost, then agents used, then idle agents
// used (fewer idle at equal count = more already-active agents).
type dpKey struct {
	cost int64
	n    int32
	idle int32
}

var dpInf = dpKey{cost: math.MaxInt64}

func (a dpKey) less(b dpKey) bool {
	if a.cost != b.cost {
		return a.cost < b.cost
	}
	if a.n != b.n {
		return a.n < b.n
	}
	return a.idle < b.idle
}

// planKey computes the tie-break key of per-agent counts.
func (p *prep) planKey(counts []int) dpKey {
	var k dpKey
	for i, n := range counts {
		if n <= 0 {
			continue
		}
		k.n++
		if a := &p.s.Agents[i]; !a.Active {
			k.idle++
			k.cost += a.PriceMicroUSDPerHour
		}
	}
	return k
}

// pruned returns the agents worth considering for an optimal plan: for
// every (capacity k, active?) class, an inclusion-minimal optimal set uses
// at most ceil(E/k) of its agents, and the cheapest ones (ties: earlier in
// the snapshot) can always be used instead of dearer ones. The result is
// ordered active first, then by capacity descending; within a class by
// snapshot order, or by price then snapshot order where agents were cut.
func (p *prep) pruned() []int {
	E := p.d.Executors
	nb := 2 * (E + 1)
	bucket := func(i int) int {
		b := p.caps[i]
		if !p.s.Agents[i].Active {
			b += E + 1
		}
		return b
	}
	count := make([]int, nb+1)
	for i, k := range p.caps {
		if k > 0 {
			count[bucket(i)+1]++
		}
	}
	for b := 1; b <= nb; b++ {
		count[b] += count[b-1]
	}
	start := slices.Clone(count)
	flat := make([]int, count[nb])
	for i, k := range p.caps {
		if k > 0 {
			b := bucket(i)
			flat[count[b]] = i
			count[b]++
		}
	}
	out := make([]int, 0, len(flat))
	// Buckets in order: active k=E..1, then idle k=E..1.
	for _, active := range []bool{true, false} {
		for k := E; k >= 1; k-- {
			b := k
			if !active {
				b += E + 1
			}
			ag := flat[start[b]:start[b+1]]
			limit := (E + k - 1) / k
			if len(ag) > limit {
				if !active {
					p.cheapestFirst(ag, limit)
				}
				ag = ag[:limit]
			}
			out = append(out, ag...)
		}
	}
	return out
}

// cheapestFirst moves the limit cheapest agents of ag (ties: snapshot
// order) to its front, in that order.
func (p *prep) cheapestFirst(ag []int, limit int) {
	type pi struct {
		price int64
		i     int
	}
	tmp := make([]pi, len(ag))
	for n, i := range ag {
		tmp[n] = pi{p.s.Agents[i].PriceMicroUSDPerHour, i}
	}
	less := func(a, b pi) bool { return a.price < b.price || a.price == b.price && a.i < b.i }
	// Quickselect the limit smallest (keys are unique, so the set is
	// well defined), then sort just those.
	lo, hi := 0, len(tmp)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		// Median of three as pivot, moved to hi.
		if less(tmp[mid], tmp[lo]) {
			tmp[mid], tmp[lo] = tmp[lo], tmp[mid]
		}
		if less(tmp[hi], tmp[lo]) {
			tmp[hi], tmp[lo] = tmp[lo], tmp[hi]
		}
		if less(tmp[mid], tmp[hi]) {
			tmp[mid], tmp[hi] = tmp[hi], tmp[mid]
		}
		pivot := tmp[hi]
		store := lo
		for n := lo; n < hi; n++ {
			if less(tmp[n], pivot) {
				tmp[n], tmp[store] = tmp[store], tmp[n]
				store++
			}
		}
		tmp[store], tmp[hi] = tmp[hi], tmp[store]
		switch {
		case store == limit-1 || store == limit:
			lo, hi = 0, 0
		case store < limit:
			lo = store + 1
		default:
			hi = store - 1
		}
	}
	head := tmp[:limit]
	slices.SortFunc(head, func(a, b pi) int {
		if less(a, b) {
			return -1
		}
		return 1
	})
	for n := range head {
		ag[n] = head[n].i
	}
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// solveExact returns per-agent counts of an optimal plan over the given
// agents (indices into the snapshot) and its key. It assumes they can hold
// the job.
//
// Active agents all add (cost 0, one agent, no idle agent) to the key, so
// for any j the best j of them are the j with the largest capacities: their
// part is a greedy prefix. Only idle agents go through the covering-knapsack
// DP (dp[w] = best key of idle agents covering w executors, w = E meaning
// "E or more"); the answer is the best combination of a prefix of the
// active agents with an idle cover of the rest.
func (p *prep) solveExact(items []int) ([]int, dpKey) {
	counts, key, _ := p.solveExactIdle(items, false)
	return counts, key
}

// solveExactIdle is solveExact that can also return, from the same DP,
// the cheapest plan on the idle agents alone (nil when they cannot hold
// the job or wantIdle is false).
func (p *prep) solveExactIdle(items []int, wantIdle bool) ([]int, dpKey, []int) {
	E := p.d.Executors
	var active, idle []int
	for _, i := range items {
		if p.s.Agents[i].Active {
			active = append(active, i)
		} else {
			idle = append(idle, i)
		}
	}
	// Largest capacity first, then snapshot order (pruned() already
	// yields this order; sorting keeps solveExact correct for any input).
	sortStable(active, func(i, j int) int { return p.caps[j] - p.caps[i] })

	W := E + 1
	dp := make([]dpKey, W)
	for w := 1; w < W; w++ {
		dp[w] = dpInf
	}
	words := (W + 63) / 64
	take := make([]uint64, len(idle)*words)
	srcE := make([]int32, len(idle))
	for t, i := range idle {
		k := p.caps[i]
		cost := p.s.Agents[i].PriceMicroUSDPerHour
		row := take[t*words : (t+1)*words]
		for w := E; w >= 0; w-- {
			cur := dp[w]
			if cur.cost == math.MaxInt64 {
				continue
			}
			nw := min(w+k, E)
			cand := dpKey{cost: cur.cost + cost, n: cur.n + 1, idle: cur.idle + 1}
			if cand.less(dp[nw]) {
				dp[nw] = cand
				row[nw>>6] |= 1 << (nw & 63)
				if nw == E {
					srcE[t] = int32(w)
				}
			}
		}
	}
	// suf[r] = argmin over w >= r of dp[w] (an idle cover of at least r).
	suf := make([]int32, W)
	suf[E] = int32(E)
	for w := E - 1; w >= 0; w-- {
		suf[w] = suf[w+1]
		if dp[w].less(dp[suf[w+1]]) {
			suf[w] = int32(w)
		}
	}
	// Try every prefix of the active agents.
	best, bestJ, bestW := dpInf, -1, -1
	covered := 0
	for j := 0; j <= len(active); j++ {
		if j > 0 {
			covered += p.caps[active[j-1]]
		}
		w := int(suf[max(E-covered, 0)])
		k := dp[w]
		if k.cost == math.MaxInt64 {
			continue
		}
		k.n += int32(j)
		if k.less(best) {
			best, bestJ, bestW = k, j, w
		}
		if covered >= E {
			break
		}
	}
	if bestJ < 0 {
		return make([]int, len(p.caps)), dpInf, nil
	}
	// walk collects the idle agents of the DP's cover of w.
	walk := func(chosen []int, w int) []int {
		for t := len(idle) - 1; t >= 0 && w > 0; t-- {
			if take[t*words+w>>6]&(1<<(w&63)) == 0 {
				continue
			}
			i := idle[t]
			chosen = append(chosen, i)
			if w == E {
				w = int(srcE[t])
			} else {
				w -= p.caps[i]
			}
		}
		return chosen
	}
	var idleOnly []int
	if wantIdle && dp[E].cost != math.MaxInt64 {
		ch := walk(nil, E)
		sortStable(ch, func(i, j int) int { return p.caps[j] - p.caps[i] })
		idleOnly = p.fillInOrder(ch)
	}
	chosen := walk(slices.Clone(active[:bestJ]), bestW)
	// Fill the chosen agents: active first, then larger capacity first.
	sortStable(chosen, func(i, j int) int {
		ai, aj := p.s.Agents[i].Active, p.s.Agents[j].Active
		if ai != aj {
			if ai {
				return -1
			}
			return 1
		}
		return p.caps[j] - p.caps[i]
	})
	return p.fillInOrder(chosen), best, idleOnly
}
