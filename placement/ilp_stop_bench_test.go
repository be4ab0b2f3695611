package placement

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// ilpCorpus draws k seeded instances of n agents on which the ilp policy
// calls CBC (the job needs an idle agent and has more than one executor):
// family "mixed" is genSnapshot (about half the agents active and partly
// used) with genDemand (up to 2n executors), "fresh" is genFresh (all
// agents idle, a few shapes with jittered prices).
func ilpCorpus(family string, n, k int) []benchCase {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var out []benchCase
	for len(out) < k {
		var s Snapshot
		var d Demand
		if family == "fresh" {
			s, d = genFresh(r, n)
		} else {
			s, d = genSnapshot(r, n), genDemand(r, max(4, 2*n))
		}
		if pl, err := (exactPolicy{}).Place(s, d); err == nil && pl.CostMicroUSDPerHour > 0 && d.Executors > 1 {
			out = append(out, benchCase{s, d})
		}
	}
	return out
}

// busy spins n goroutines until stop is closed: CPU load from inside the
// process, on top of whatever else the machine runs.
func busy(n int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := 0
			for {
				select {
				case <-done:
					return
				default:
				}
				for i := range 100000 {
					x += i
				}
			}
		}()
	}
	return func() { close(done); wg.Wait() }
}

// BenchmarkILPStop compares how CBC is stopped: the 200 ms wall-clock
// limit alone (stop=time-200ms, ilp until 2026-11-27) against a node limit
// with the default wall-clock safety net (stop=nodes-N), on 100 seeded
// instances per family (ilpCorpus) and cluster size, with and without 2
// busy goroutines. Every op is one Place; run it
// with -benchtime=200x so that each instance is solved twice. It reports
// the solve time distribution (ms), the share of each outcome, the share
// of ops whose plan differs from the first solve of the same instance
// (changed/op: the load's doing; moved/op counts only those whose
// executors moved, not only the outcome), the mean cost and agent count of the
// plans relative to exact's, and the most branch-and-bound nodes CBC used.
// Not part of the default test run (a benchmark): docs/placement.md,
// "How ilp stops".
func BenchmarkILPStop(b *testing.B) {
	type stop struct {
		name      string
		maxNodes  int
		timeLimit time.Duration
	}
	stops := []stop{
		{"time-200ms", 0, 200 * time.Millisecond},
		{"nodes-100", 100, DefaultILPTimeLimit},
		{"nodes-1000", 1000, DefaultILPTimeLimit},
	}
	for _, fam := range []string{"mixed", "fresh"} {
		for _, n := range []int{14, 100, 1000} {
			cases := ilpCorpus(fam, n, 100)
			exact := make([]Plan, len(cases))
			for i, c := range cases {
				exact[i], _ = exactPolicy{}.Place(c.s, c.d)
			}
			for _, load := range []int{0, 2} {
				for _, st := range stops {
					b.Run(fmt.Sprintf("family=%s/agents=%d/load=%d/stop=%s", fam, n, load, st.name), func(b *testing.B) {
						var maxNodes atomic.Int64
						pol := ilpPolicy{maxNodes: st.maxNodes, timeLimit: st.timeLimit, gap: DefaultILPRatioGap,
							alpha: DefaultAlpha, beta: DefaultBeta,
							solve: func(m *milp) milpResult {
								res := cbcSolve(m)
								if int64(res.nodes) > maxNodes.Load() {
									maxNodes.Store(int64(res.nodes))
								}
								return res
							}}
						first := make([]*Plan, len(cases))
						outcomes := map[string]int{}
						changed, moved := 0, 0
						var costRatio, agentRatio float64
						durs := make([]time.Duration, 0, b.N)
						stopLoad := busy(load)
						runtime.Gosched()
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							k := i % len(cases)
							c := &cases[k]
							t0 := time.Now()
							pl, err := pol.Place(c.s, c.d)
							durs = append(durs, time.Since(t0))
							if err != nil {
								b.Fatalf("case %d: %v", k, err)
							}
							outcomes[pl.Outcome]++
							if first[k] == nil {
								first[k] = &pl
							} else if !reflect.DeepEqual(*first[k], pl) {
								changed++
								if !reflect.DeepEqual(first[k].Assignments, pl.Assignments) {
									moved++
								}
							}
							costRatio += float64(pl.CostMicroUSDPerHour) / float64(exact[k].CostMicroUSDPerHour)
							agentRatio += float64(len(pl.Assignments)) / float64(len(exact[k].Assignments))
						}
						b.StopTimer()
						stopLoad()
						slices.Sort(durs)
						ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
						b.ReportMetric(ms(pct(durs, 50)), "p50-ms")
						b.ReportMetric(ms(pct(durs, 90)), "p90-ms")
						b.ReportMetric(ms(pct(durs, 99)), "p99-ms")
						b.ReportMetric(ms(durs[len(durs)-1]), "max-ms")
						N := float64(b.N)
						b.ReportMetric(float64(outcomes[OutcomeOptimal])/N, "optimal/op")
						b.ReportMetric(float64(outcomes[OutcomeIncumbent])/N, "incumbent/op")
						b.ReportMetric(float64(outcomes[OutcomeFallbackBFD])/N, "fallback/op")
						b.ReportMetric(float64(outcomes[OutcomeTimeLimit]+outcomes[OutcomeTimeLimitBFD])/N, "timelimit/op")
						b.ReportMetric(float64(changed)/N, "changed/op")
						b.ReportMetric(float64(moved)/N, "moved/op")
						b.ReportMetric(costRatio/N, "cost/exact")
						b.ReportMetric(agentRatio/N, "agents/exact")
						b.ReportMetric(float64(maxNodes.Load()), "max-nodes")
					})
				}
			}
		}
	}
}
