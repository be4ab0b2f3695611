package scheduler

import (
	"math/rand/v2"
	"testing"

	"github.com/sparkpack/sparkpack/placement"
)

// TestLostAtMost (property): taking (x, xm) from an agent's free room
// costs it at most lostAtMost executors of shape (c, m): protectSlots
// skips placing the job when even that many lost per executor leaves
// the owed jobs their slots.
func TestLostAtMost(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	r := func(max float64) float64 {
		if rng.IntN(3) == 0 {
			return float64(rng.IntN(int(max) + 1))
		}
		return max * rng.Float64()
	}
	for i := 0; i < 200000; i++ {
		fc, fm := r(64), r(262144)
		x, xm := r(16), r(65536)
		c, m := r(16), r(65536)
		if rng.IntN(5) == 0 {
			c = 0
		}
		if x > fc || xm > fm || (c <= 0 && m <= 0) {
			continue
		}
		lost := placement.FitCount(fc, fm, c, m) - placement.FitCount(fc-x, fm-xm, c, m)
		if bound := lostAtMost(x, xm, c, m); lost > bound {
			t.Fatalf("free %v cpus %v MiB, taking %v/%v: %d executors of %v/%v lost, bound %d", fc, fm, x, xm, lost, c, m, bound)
		}
	}
}
