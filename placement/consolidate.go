package placement

func init() { Register("consolidate", func(Options) Policy { return consolidatePolicy{} }) }

// consolidatePolicy is Spark's spark.deploy.spreadOut=false: agents taken by
// free cpus descending, each filled with as many executors as fit before the
// next is used.
type consolidatePolicy struct{}

func (consolidatePolicy) Name() string { return "consolidate" }

func (consolidatePolicy) Place(s Snapshot, d Demand) (Plan, error) {
	p, err := prepare(s, d)
	if err != nil {
		return Plan{}, err
	}
	return p.plan("consolidate", OutcomeHeuristic, p.fillInOrder(p.byFreeCPUsDesc())), nil
}
