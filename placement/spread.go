package placement

func init() { Register("spread", func(Options) Policy { return spreadPolicy{} }) }

// spreadPolicy is Spark's default (spark.deploy.spreadOut=true): agents are
// taken by free cpus descending and receive one executor per round,
// round-robin, until all executors are placed.
type spreadPolicy struct{}

func (spreadPolicy) Name() string { return "spread" }

func (spreadPolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	order := p.byFreeCPUsDesc()
	counts := make([]int, len(p.caps))
	left := d.Executors
	for left > 0 {
		next := order[:0]
		for _, i := range order {
			if left == 0 {
				break
			}
			counts[i]++
			left--
			if counts[i] < p.caps[i] {
				next = append(next, i)
			}
		}
		order = next
	}
	return p.plan("spread", OutcomeHeuristic, counts), nil
}

// byFreeCPUsDesc lists agents that fit one executor, most free cpus first
// (Spark sorts usable workers by free cores, descending).
func (p *prep) byFreeCPUsDesc() []int {
	idx := p.candidates()
	free := make([]float64, len(p.caps))
	for _, i := range idx {
		free[i] = p.s.Agents[i].FreeCPUs
	}
	sortByKey(idx, free, true)
	return idx
}
