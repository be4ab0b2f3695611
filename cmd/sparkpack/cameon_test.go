package main

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/sparkpack/sparkpack/power"
)

// TestCameOnAfterIsBounded: a machine that comes back under a new agent
// id at every power cycle adds an agent id each time; cameOnAfter keeps
// only what a view in use can need (the newest published view and the one
// before it), not every id ever turned on. For those two views it answers
// as if it kept everything (a reference that never drops an entry), over
// random runs of power changes, view builds and publications.
func TestCameOnAfterIsBounded(t *testing.T) {
	for seed := uint64(1); seed <= 50; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var c cameOnAfter
		ref := map[string]uint64{} // every agent's last change to on, never dropped
		var refSeq uint64
		var built []uint64 // views built (their counts), in order
		var pub []uint64   // views published
		ids := 0
		for step := 0; step < 2000; step++ {
			switch r := rng.IntN(10); {
			case r < 5: // a power change: often a new agent id turned on
				id := fmt.Sprintf("S%d", rng.IntN(ids+1))
				if rng.IntN(2) == 0 {
					ids++
					id = fmt.Sprintf("S%d", ids)
				}
				st := power.StateOn
				if rng.IntN(4) == 0 {
					st = power.StateOff
				}
				c.changed(power.Record{AgentID: id, State: st})
				refSeq++
				if st == power.StateOn {
					ref[id] = refSeq
				}
			case r < 8: // a build begins
				built = append(built, c.now())
			default: // the last build is published
				if len(built) > 0 {
					seq := built[len(built)-1]
					built = built[:0]
					if len(pub) > 0 && seq < pub[len(pub)-1] {
						t.Fatalf("seed %d: views published out of order", seed)
					}
					pub = append(pub, seq)
					c.published(seq)
				}
			}
			// The views a request may hold: the newest and the one before.
			for k := max(0, len(pub)-2); k < len(pub); k++ {
				for i := 0; i <= ids; i++ {
					id := fmt.Sprintf("S%d", i)
					if got, want := c.since(id, pub[k]), ref[id] > pub[k]; got != want {
						t.Fatalf("seed %d step %d: since(%s, %d) = %v, want %v", seed, step, id, pub[k], got, want)
					}
				}
			}
		}
		if len(pub) > 2 && len(c.on) > 0 {
			// Bounded by the agents turned on since the view before the
			// newest, not by every id ever turned on.
			n := 0
			for _, at := range ref {
				if at > pub[len(pub)-2] {
					n++
				}
			}
			if len(c.on) > n {
				t.Fatalf("seed %d: %d entries kept (%d ids turned on so far), want at most %d", seed, len(c.on), len(ref), n)
			}
		}
	}
}
