package placement

func init() {
	Register("bfd", func(o Options) Policy { return bfdPolicy{alpha: o.Alpha, beta: o.Beta} })
}

// bfdPolicy is thesis Algorithm 5 (Best-Fit-Decreasing with Resource
// Availability): active agents sorted by ascending RA are filled one after
// another with as many executors as fit; if executors remain, the cheapest
// idle agent that fits one executor (ties: smaller RA, then snapshot order)
// is activated and filled, and so on.
type bfdPolicy struct{ alpha, beta float64 }

func (bfdPolicy) Name() string { return "bfd" }

// Totals returns the cluster's total cpu and memory capacity.
func (s Snapshot) Totals() (cpus, memMB float64) {
	for _, a := range s.Agents {
		cpus += max(a.CPUs, 0)
		memMB += max(a.MemMB, 0)
	}
	return cpus, memMB
}

// ResourceAvailability is RA_j = alpha * cpu_free_j / CPU_total + beta *
// mem_free_j / MEM_total, with totals over the cluster's capacity.
func ResourceAvailability(a Agent, totalCPUs, totalMemMB, alpha, beta float64) float64 {
	var ra float64
	if totalCPUs > 0 {
		ra += alpha * a.FreeCPUs / totalCPUs
	}
	if totalMemMB > 0 {
		ra += beta * a.FreeMemMB / totalMemMB
	}
	return ra
}

// ResourceDemand is RD_job = E * (alpha * c / CPU_total + beta * m /
// MEM_total); the scheduler orders its regular queue by descending RD.
func ResourceDemand(d Demand, totalCPUs, totalMemMB, alpha, beta float64) float64 {
	var rd float64
	if totalCPUs > 0 {
		rd += alpha * d.CPUs / totalCPUs
	}
	if totalMemMB > 0 {
		rd += beta * d.MemMB / totalMemMB
	}
	return float64(d.Executors) * rd
}

func (b bfdPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	return p.plan("bfd", OutcomeHeuristic, p.bfdCounts(b.alpha, b.beta)), nil
}

func (p *prep) bfdCounts(alpha, beta float64) []int {
	tc, tm := p.s.Totals()
	ra := make([]float64, len(p.caps))
	var active, idle []int
	for i, k := range p.caps {
		if k == 0 {
			continue
		}
		ra[i] = ResourceAvailability(p.s.Agents[i], tc, tm, alpha, beta)
		if p.s.Agents[i].Active {
			active = append(active, i)
		} else {
			idle = append(idle, i)
		}
	}
	cmpRA := func(i, j int) int {
		switch {
		case ra[i] < ra[j]:
			return -1
		case ra[i] > ra[j]:
			return 1
		}
		return 0
	}
	sortByKey(active, ra, false)
	order := active
	if p.activeSum < p.d.Executors {
		sortStable(idle, func(i, j int) int {
			if c := cmpInt64(p.s.Agents[i].PriceMicroUSDPerHour, p.s.Agents[j].PriceMicroUSDPerHour); c != 0 {
				return c
			}
			return cmpRA(i, j)
		})
		order = append(order, idle...)
	}
	return p.fillInOrder(order)
}
