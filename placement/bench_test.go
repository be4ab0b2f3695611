package placement

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// benchCase is one seeded cluster and a job that fits it.
type benchCase struct {
	s Snapshot
	d Demand
}

// benchCases builds k seeded random clusters of n agents with partial usage
// (genSnapshot: about half the agents active and partly used) and a job of e
// executors of 1 cpu / 2 GiB, shrunk on small clusters so that it takes
// about half of the free cpus and memory at most (e.g. 14 agents x 200
// executors).
func benchCases(n, e, k int) []benchCase {
	out := make([]benchCase, k)
	for i := range out {
		r := rand.New(rand.NewPCG(uint64(n*1000+e), uint64(i)))
		s := genSnapshot(r, n)
		var freeC, freeM float64
		for _, a := range s.Agents {
			freeC += a.FreeCPUs
			freeM += a.FreeMemMB
		}
		c := min(1.0, freeC/2/float64(e))
		c = max(0.05, float64(int(c*20))/20) // multiples of 0.05 cpus
		m := min(2048.0, freeM/2/float64(e))
		m = max(64, float64(int(m/64))*64)
		// A Sort with a deadline a little beyond its estimate: dap scores
		// its candidates and checks deadline mode (the other policies
		// ignore these fields).
		now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		out[i] = benchCase{s, Demand{JobID: "bench", Executors: e, CPUs: c, MemMB: m, EstimatedDuration: 20 * time.Minute,
			App: AppSort, Now: now, Deadline: now.Add(22 * time.Minute)}}
	}
	return out
}

// BenchmarkPlace measures one placement per op and reports the median and
// 99th percentile of the per-op wall times as p50-ns and p99-ns.
func BenchmarkPlace(b *testing.B) {
	for _, pol := range []string{"dap", "bfd", "ilp", "exact", "spread"} {
		for _, n := range []int{14, 100, 1000, 10000} {
			for _, e := range []int{10, 50, 200} {
				name := fmt.Sprintf("policy=%s/agents=%d/executors=%d", pol, n, e)
				b.Run(name, func(b *testing.B) {
					if pol == "ilp" && n == 10000 {
						b.Skip("ilp is not benchmarked at 10,000 agents")
					}
					p, ok := Get(pol)
					if !ok {
						b.Fatalf("no policy %q", pol)
					}
					cases := benchCases(n, e, 8)
					// One untimed warm-up pass over the cases (page faults,
					// first CBC load), then every op is timed.
					for i := range cases {
						if _, err := p.Place(cases[i].s, cases[i].d); err != nil {
							b.Fatalf("case %d: %v", i, err)
						}
					}
					outcomes := map[string]int{}
					durs := make([]time.Duration, 0, b.N)
					b.ReportAllocs()
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						c := &cases[i%len(cases)]
						t0 := time.Now()
						pl, err := p.Place(c.s, c.d)
						durs = append(durs, time.Since(t0))
						if err != nil {
							b.Fatalf("case %d: %v", i%len(cases), err)
						}
						outcomes[pl.Outcome]++
					}
					b.StopTimer()
					slices.Sort(durs)
					b.ReportMetric(float64(pct(durs, 50).Nanoseconds()), "p50-ns")
					b.ReportMetric(float64(pct(durs, 99).Nanoseconds()), "p99-ns")
					if pol == "ilp" {
						b.ReportMetric(float64(outcomes[OutcomeOptimal])/float64(b.N), "optimal/op")
						b.ReportMetric(float64(outcomes[OutcomeIncumbent])/float64(b.N), "incumbent/op")
						b.ReportMetric(float64(outcomes[OutcomeFallbackBFD])/float64(b.N), "fallback/op")
					}
				})
			}
		}
	}
}

// pct returns the q-th percentile (nearest rank) of sorted durations.
func pct(sorted []time.Duration, q int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*q + 99) / 100
	return sorted[max(i-1, 0)]
}
