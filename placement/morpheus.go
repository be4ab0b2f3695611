package placement

func init() { Register("morpheus", func(Options) Policy { return morpheusPolicy{} }) }

// morpheusPolicy is Morpheus-style low-cost packing: agents already paid for
// come first, idle agents cheapest first, and within each group the agent
// that would be the most loaded after taking one executor,
// max((cpu_load+cpu_job)/cpu_total, (mem_load+mem_job)/mem_total), is filled
// first (tight packing leaves whole agents free to be switched off).
type morpheusPolicy struct{}

func (morpheusPolicy) Name() string { return "morpheus" }

func (morpheusPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	idx := p.candidates()
	load := make([]float64, len(p.caps))
	for _, i := range idx {
		a := &p.s.Agents[i]
		var l float64
		if a.CPUs > 0 {
			l = (a.CPUs - a.FreeCPUs + d.CPUs) / a.CPUs
		}
		if a.MemMB > 0 {
			l = max(l, (a.MemMB-a.FreeMemMB+d.MemMB)/a.MemMB)
		}
		load[i] = l
	}
	sortStable(idx, func(i, j int) int {
		if c := cmpInt64(effectivePrice(&p.s.Agents[i]), effectivePrice(&p.s.Agents[j])); c != 0 {
			return c
		}
		switch {
		case load[i] > load[j]:
			return -1
		case load[i] < load[j]:
			return 1
		}
		return 0
	})
	return p.plan("morpheus", OutcomeHeuristic, p.fillInOrder(idx)), nil
}
