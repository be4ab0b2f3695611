package placement

func init() { Register("gio", func(Options) Policy { return gioPolicy{} }) }

// gioPolicy is GIO for hybrid local/cloud clusters (thesis Algorithm 7): if
// the local agents alone can hold the job only they are used; otherwise all
// agents are used. Agents are ordered by the extra cost of running the job
// there, max(0, T_C - T_vm) * P_vm, where T_C is the job's estimated
// duration and T_vm how long the agent stays active anyway (0 when idle);
// ties: active first, local first, cheaper, snapshot order. Each agent is
// filled before the next is used.
type gioPolicy struct{}

func (gioPolicy) Name() string { return "gio" }

// ExtraCost is GIO's max(0, T_C - T_vm) * P_vm in micro-dollars, for a job
// of estimated duration d.EstimatedDuration on agent a.
func ExtraCost(a Agent, d Demand) float64 {
	var tvm float64
	if a.Active {
		tvm = a.RemainingActive.Hours()
	}
	return max(0, d.EstimatedDuration.Hours()-tvm) * float64(a.PriceMicroUSDPerHour)
}

func (gioPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	idx := p.candidates()
	localSum := 0
	for _, i := range idx {
		if p.s.Agents[i].Location == LocationLocal {
			localSum += p.caps[i]
		}
	}
	if localSum >= d.Executors {
		local := idx[:0]
		for _, i := range idx {
			if p.s.Agents[i].Location == LocationLocal {
				local = append(local, i)
			}
		}
		idx = local
	}
	extra := make([]float64, len(p.caps))
	for _, i := range idx {
		extra[i] = ExtraCost(p.s.Agents[i], d)
	}
	b2i := func(b bool) int {
		if b {
			return 0
		}
		return 1
	}
	sortStable(idx, func(i, j int) int {
		switch {
		case extra[i] < extra[j]:
			return -1
		case extra[i] > extra[j]:
			return 1
		}
		ai, aj := &p.s.Agents[i], &p.s.Agents[j]
		if c := b2i(ai.Active) - b2i(aj.Active); c != 0 {
			return c
		}
		if c := b2i(ai.Location == LocationLocal) - b2i(aj.Location == LocationLocal); c != 0 {
			return c
		}
		return cmpInt64(ai.PriceMicroUSDPerHour, aj.PriceMicroUSDPerHour)
	})
	return p.plan("gio", OutcomeHeuristic, p.fillInOrder(idx)), nil
}
