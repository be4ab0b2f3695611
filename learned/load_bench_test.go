package learned

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// bigHistory is n synthetic finished runs spread over 200 signatures of 20
// teams (executors 2..9, 3% noise), IDs 1..n, oldest first: the shape of
// a large run history for BenchmarkLoad.
func bigHistory(n int) []scheduler.RunRecord {
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	out := make([]scheduler.RunRecord, n)
	for i := range out {
		s, e := i%200, 2+rng.IntN(8)
		secs := (float64(100+s)/float64(e) + 20) * math.Exp(0.03*rng.NormFloat64())
		out[i] = scheduler.RunRecord{ID: int64(i + 1), JobID: fmt.Sprintf("job-%d", i), Attempt: 1,
			Signature: fmt.Sprintf("local:///jobs/j%d.jar com.example.J%d", s, s), EstimateKey: fmt.Sprintf("team:t%d", s%20),
			Executors: e, StartedAt: t0, EndedAt: t0.Add(time.Duration(secs * float64(time.Second))), Seconds: secs,
			Outcome: scheduler.RunFinished, EstimateSeconds: 0.6 * secs}
	}
	return out
}

// BenchmarkLoad is the cost of (re)loading the model from a large run
// history (Model.Load, the CPU part of Reload): what a term start and a
// serve start paid before the scheduler could start.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		rs := bigHistory(n)
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := New().Load(rs); got != n {
					b.Fatalf("learned %d of %d", got, n)
				}
			}
		})
	}
}
