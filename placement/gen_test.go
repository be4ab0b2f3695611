package placement

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// agentType is a VM shape with its hourly price in micro-dollars.
type agentType struct {
	cpus, memMB float64
	price       int64
}

// thesisTypes are the thesis' cluster shapes plus a small and a large one.
var thesisTypes = []agentType{
	{2, 8192, 120000},
	{4, 16384, 240000},
	{8, 32768, 480000},
	{12, 49152, 720000},
	{16, 65536, 960000},
}

// genSnapshot builds a random cluster of n agents: about half active with
// partial usage, idle agents empty. Prices follow the shape, sometimes with
// a jitter (so both ties and distinct prices occur), sometimes zero for local
// agents.
func genSnapshot(r *rand.Rand, n int) Snapshot {
	s := Snapshot{Agents: make([]Agent, n)}
	jitter := r.IntN(2) == 0
	for i := range s.Agents {
		t := thesisTypes[r.IntN(len(thesisTypes))]
		a := Agent{
			ID:                   fmt.Sprintf("agent-%05d", i),
			Hostname:             fmt.Sprintf("host-%05d", i),
			CPUs:                 t.cpus,
			MemMB:                t.memMB,
			FreeCPUs:             t.cpus,
			FreeMemMB:            t.memMB,
			PriceMicroUSDPerHour: t.price,
			Location:             LocationCloud,
		}
		if jitter {
			a.PriceMicroUSDPerHour += int64(r.IntN(5)) * 10000
		}
		if r.IntN(4) == 0 {
			a.Location = LocationLocal
			if r.IntN(2) == 0 {
				a.PriceMicroUSDPerHour = 0
			}
		}
		if r.IntN(2) == 0 {
			a.Active = true
			a.FreeCPUs = float64(r.IntN(int(t.cpus)*2+1)) / 2 // in half cpus
			a.FreeMemMB = float64(r.IntN(int(t.memMB/512)+1)) * 512
			a.RemainingActive = time.Duration(r.IntN(7200)) * time.Second
		}
		s.Agents[i] = a
	}
	return s
}

// genDemand draws a job sized for a cluster of about n agents.
func genDemand(r *rand.Rand, maxE int) Demand {
	cpus := []float64{0.5, 1, 1, 2, 2, 3, 4, 6}
	mems := []float64{512, 1024, 2048, 2048, 4096, 4506, 8192, 12288}
	return Demand{
		JobID:             "job",
		Executors:         1 + r.IntN(maxE),
		CPUs:              cpus[r.IntN(len(cpus))],
		MemMB:             mems[r.IntN(len(mems))],
		EstimatedDuration: time.Duration(r.IntN(7200)) * time.Second,
	}
}

// genFresh builds a fresh cluster of n agents, all idle and empty, of 2 to
// 5 of thesisTypes' shapes, each shape's price jittered by -12.5%..+12%
// (so that the price per cpu differs between shapes), and a job of 2 up
// to about half the cluster's cpus. Such covering problems are where CBC
// needs many branch-and-bound nodes to prove the DP's plan optimal (tens
// of thousands on a few percent of them).
func genFresh(r *rand.Rand, n int) (Snapshot, Demand) {
	shapes := r.Perm(len(thesisTypes))[:2+r.IntN(4)]
	price := map[int]int64{}
	for _, sh := range shapes {
		p := thesisTypes[sh].price
		price[sh] = p + p*int64(r.IntN(25))/100 - p/8
	}
	s := Snapshot{Agents: make([]Agent, n)}
	cpus := 0.0
	for i := range s.Agents {
		sh := shapes[r.IntN(len(shapes))]
		t := thesisTypes[sh]
		s.Agents[i] = Agent{
			ID:                   fmt.Sprintf("agent-%05d", i),
			Hostname:             fmt.Sprintf("host-%05d", i),
			CPUs:                 t.cpus,
			MemMB:                t.memMB,
			FreeCPUs:             t.cpus,
			FreeMemMB:            t.memMB,
			PriceMicroUSDPerHour: price[sh],
			Location:             LocationCloud,
		}
		cpus += t.cpus
	}
	c := []float64{1, 1, 2, 2, 3, 4}[r.IntN(6)]
	maxE := max(2, int(cpus/c/2))
	return s, Demand{JobID: "job", Executors: 2 + r.IntN(maxE-1), CPUs: c, MemMB: c * 2048}
}
