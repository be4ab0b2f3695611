package placement

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestFitIndexAgreesWithPolicies: over random clusters and jobs, the index
// says "fits" exactly when every policy places the job, and otherwise gives
// the very NoFit the policies give. Each index is asked twice about each
// demand and about demands of the same executor size but another count, so
// that answers it remembers are checked too.
func TestFitIndexAgreesWithPolicies(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	var pols []Policy
	for _, name := range []string{"bfd", "exact", "spread", "consolidate", "firstfit"} {
		p, err := New(name, Options{})
		if err != nil {
			t.Fatal(err)
		}
		pols = append(pols, p)
	}
	fits, misses := 0, 0
	for iter := 0; iter < 2000; iter++ {
		s := genSnapshot(r, 1+r.IntN(40))
		ix := NewFitIndex(s)
		var ds []Demand
		for k := 0; k < 5; k++ {
			d := genDemand(r, 60)
			other := d
			other.Executors = 1 + r.IntN(60)
			ds = append(ds, d, other)
		}
		for _, d := range append(ds, ds...) {
			nf := ix.Check(d)
			if nf == nil {
				fits++
			} else {
				misses++
			}
			for _, p := range pols {
				_, err := p.Place(s, d)
				var pnf *NoFit
				errors.As(err, &pnf)
				if (nf == nil) != (err == nil) {
					t.Fatalf("iter %d %s: index says fit=%v, policy err=%v", iter, p.Name(), nf == nil, err)
				}
				if nf != nil && !reflect.DeepEqual(nf, pnf) {
					t.Fatalf("iter %d %s: index reason %+v, policy reason %+v", iter, p.Name(), nf, pnf)
				}
			}
		}
	}
	if fits == 0 || misses == 0 {
		t.Fatalf("generator covered only one side: %d fit, %d did not", fits, misses)
	}
}

// TestFitIndexEmptyCluster: with no agents nothing fits, and the reason is
// not "never" (a restart may not have seen the agents yet).
func TestFitIndexEmptyCluster(t *testing.T) {
	nf := NewFitIndex(Snapshot{}).Check(Demand{Executors: 1, CPUs: 1, MemMB: 1})
	if nf == nil || nf.Never {
		t.Fatalf("empty cluster: got %+v, want a NoFit that is not Never", nf)
	}
}

func BenchmarkFitIndexCheck(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	s := genSnapshot(r, 1000)
	ds := make([]Demand, 64)
	for i := range ds {
		ds[i] = genDemand(r, 200)
	}
	ix := NewFitIndex(s)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ix.Check(ds[i%len(ds)])
	}
}
