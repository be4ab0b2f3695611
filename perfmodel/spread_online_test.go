package perfmodel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestOnlineP90NotAboveEveryRun: a signature whose runs take 1 s or 20 s
// at random (no size hint tells them apart) has online log errors of about
// +-ln(20)/2. Their root mean square under a normal assumption put the p90
// at 56 s, far above every run ever seen; the p90 must cover the 20 s
// runs (half of them) and not exceed the slowest run seen by more than the
// small-sample inflation of the spread (sqrt(n / (n - parameters)), under
// 15% here).
func TestOnlineP90NotAboveEveryRun(t *testing.T) {
	b := NewBook()
	// A fixed pattern with no period a model could learn from the
	// (constant) query: 1 s or 20 s.
	pattern := []float64{1, 20, 20, 1, 20, 1, 1, 20, 1, 20, 20, 1, 1, 20, 20, 1, 20, 1, 20, 1, 1, 20, 1, 20}
	q := Query{Executors: 4, Size: 1}
	for _, s := range pattern {
		if err := b.Observe("jar:Bimodal", "", Run{Executors: q.Executors, Size: q.Size, Seconds: s}); err != nil {
			t.Fatal(err)
		}
	}
	p, err := b.Predict("jar:Bimodal", "", q)
	if err != nil || p.Level != LevelSignature {
		t.Fatalf("%+v %v", p, err)
	}
	if p.P90 > 20*1.15 || p.P90 < 20*0.95 {
		t.Errorf("p90 %.1f s (p50 %.1f s, sigma %.2f): want about 20 s, the longest run seen", p.P90, p.P50, p.Sigma)
	}
	if p.Sigma <= 0 || math.IsNaN(p.Sigma) {
		t.Errorf("sigma %v", p.Sigma)
	}
}

// TestP90CoverageLogNormal: on log-normal noise (where the normal
// assumption holds) the p90 predicted before each run covers about 90% of
// the runs after the first ten, for several noise levels: the bound on the
// online widening must not make the p90 over-confident.
func TestP90CoverageLogNormal(t *testing.T) {
	for _, noise := range []float64{0.05, 0.2, 0.5} {
		rng := rand.New(rand.NewPCG(7, uint64(100*noise)))
		var in, all int
		for trial := 0; trial < 25; trial++ {
			b := NewBook()
			for i, r := range synth(rng, randomTruth(rng), 40, noise) {
				if i >= 10 {
					p, err := b.Predict("s", "", Query{Executors: r.Executors, Size: r.Size, Placement: r.Placement})
					if err != nil {
						t.Fatal(err)
					}
					all++
					if r.Seconds <= p.P90 {
						in++
					}
				}
				if err := b.Observe("s", "", r); err != nil {
					t.Fatal(err)
				}
			}
		}
		if c := float64(in) / float64(all); c < 0.85 {
			t.Errorf("noise %.2f: the p90 covers %.1f%% of %d runs, want about 90%%", noise, 100*c, all)
		} else {
			t.Logf("noise %.2f: the p90 covers %.1f%% of %d runs", noise, 100*c, all)
		}
	}
}
