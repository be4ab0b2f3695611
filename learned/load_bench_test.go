package learned

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// bigHistory is n synthetic finished runs spread over 200 signatures of 20
// teams (executors 2..9, 3% noise), IDs 1..n, oldest first: the shape of
// a large run history for BenchmarkLoad. Without sized runs, every run has
// no size hint and one uncontended agent (the model fits the size-free
// curve only); with them, as the simulator's and a sized workload's runs:
// inputs of 1-20 GB, 60% of the runs spread across agents, busiest loads
// from 0 to 1, and a placement slowdown (the model fits every form).
func bigHistory(n int, sized bool) []scheduler.RunRecord {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	out := make([]scheduler.RunRecord, n)
	for i := range out {
		s, e := i%200, 2+rng.IntN(8)
		secs := float64(100+s)/float64(e) + 20
		var gb, cross, load float64
		if sized {
			gb, load = 1+19*rng.Float64(), rng.Float64()
			if rng.Float64() < 0.6 {
				cross = 0.8 * rng.Float64()
			}
			pl := perfmodel.Placement{CrossShare: cross, BusiestLoad: load}
			secs = (float64(100+s)/10*math.Pow(gb, 0.9)*math.Pow(float64(e), -0.9) + 20 + gb) * (1 + 0.5*pl.CrossShare) * (1 + 0.1*pl.Contention())
		}
		secs *= math.Exp(0.03 * rng.NormFloat64())
		out[i] = scheduler.RunRecord{ID: int64(i + 1), JobID: fmt.Sprintf("job-%d", i), Attempt: 1,
			Signature: fmt.Sprintf("local:///jobs/j%d.jar com.example.J%d", s, s), EstimateKey: fmt.Sprintf("team:t%d", s%20),
			Executors: e, InputSizeGB: gb, RunShape: scheduler.RunShape{CrossShare: cross, BusiestLoad: load},
			StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs,
			Outcome: scheduler.RunFinished, EstimateSeconds: 0.6 * secs}
	}
	return out
}

// BenchmarkLoad is the cost of (re)loading the model from a large run
// history (Model.Load, the CPU part of Reload): what a term start and a
// serve start paid before the scheduler could start. runs=N are runs
// without sizes or placements; sized-runs=N runs with both.
func BenchmarkLoad(b *testing.B) {
	for _, c := range []struct {
		n     int
		sized bool
	}{{10_000, false}, {50_000, false}, {10_000, true}, {50_000, true}} {
		n, name := c.n, "runs"
		if c.sized {
			name = "sized-runs"
		}
		b.Run(fmt.Sprintf("%s=%d", name, n), func(b *testing.B) {
			rs := bigHistory(n, c.sized)
			b.ReportAllocs()
			for b.Loop() {
				if got := New().Load(rs); got != n {
					b.Fatalf("learned %d of %d", got, n)
				}
			}
		})
	}
}
