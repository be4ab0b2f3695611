package placement

func init() { Register("firstfit", func(Options) Policy { return firstFitPolicy{} }) }

// firstFitPolicy is First-Fit with agents ordered cheapest first by
// effective price (0 for agents that are already active), then snapshot
// order; each agent is filled before the next is used.
type firstFitPolicy struct{}

func (firstFitPolicy) Name() string { return "firstfit" }

func (firstFitPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	idx := p.candidates()
	sortStable(idx, func(i, j int) int {
		return cmpInt64(effectivePrice(&p.s.Agents[i]), effectivePrice(&p.s.Agents[j]))
	})
	return p.plan("firstfit", OutcomeHeuristic, p.fillInOrder(idx)), nil
}
