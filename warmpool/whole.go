package warmpool

import (
	"math"

	"github.com/sparkpack/sparkpack/forecast"
)

// wholeShares is, for each agent, the share of the forecast jobs it can
// hold whole: whose cpus fit in the whole executors of the forecast's
// shape that the agent holds (the sizes of d.JobCPUs; without them every
// job asks for d.CPUs/d.Jobs). Decide takes agents of the same price per
// cpu in decreasing share: a job whose executors are split over agents
// shuffles over the network and runs longer (the simulator's workload
// model; Spark's remote shuffle reads), which eats a tight job's slack,
// and a burst that finds its room in small pieces splits every job.
// Without a forecast (or sizes) it is nil: the order is by price alone.
func wholeShares(agents []Agent, d forecast.Demand) []float64 {
	if !d.OK {
		return nil
	}
	sizes := d.JobCPUs
	if len(sizes) == 0 {
		if !(d.Jobs > 0) || !(d.CPUs > 0) {
			return nil
		}
		sizes = []float64{d.CPUs / d.Jobs}
	}
	out := make([]float64, len(agents))
	for i, a := range agents {
		c := math.Max(a.CPUs, 0)
		if ec, em := d.ExecCPUs, d.ExecMemMB; ec > 0 && em > 0 {
			c = ec * math.Min(math.Floor(c/ec+1e-9), math.Floor(math.Max(a.MemMB, 0)/em+1e-9))
		}
		n := 0
		for _, s := range sizes {
			if s <= c+1e-9 {
				n++
			}
		}
		out[i] = float64(n) / float64(len(sizes))
	}
	return out
}
