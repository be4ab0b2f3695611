package placement

// FitIndex and Options checked by hand (issue 33).

import (
	"reflect"
	"testing"
)

// TestFitIndexFitsEmptyByHand: two 4-cpu agents, both fully used now,
// would hold 2 + 2 executors of 2 cpus when empty: 3 and 4 fit, 5 do not;
// executors of 5 cpus fit on neither.
func TestFitIndexFitsEmptyByHand(t *testing.T) {
	ix := NewFitIndex(Snapshot{Agents: []Agent{ag("a", 4, 0, true), ag("b", 4, 0, true)}})
	for _, tc := range []struct {
		e    int
		cpus float64
		want bool
	}{
		{1, 2, true}, {3, 2, true}, {4, 2, true}, {5, 2, false}, {1, 5, false},
	} {
		d := Demand{JobID: "j", Executors: tc.e, CPUs: tc.cpus, MemMB: 1024}
		if got := ix.FitsEmpty(d); got != tc.want {
			t.Errorf("%d x %g cpus: FitsEmpty = %v, want %v", tc.e, tc.cpus, got, tc.want)
		}
		if ix.Check(d) == nil {
			t.Errorf("%d x %g cpus: fits now on a full cluster", tc.e, tc.cpus)
		}
	}
}

// TestFitIndexNoFitPerDemand: consecutive demands of one executor size
// that do not fit get each its own reason. One agent of 4 cpus with 2 free,
// executors of 1 cpu: 3 of them are short of 1 cpu, 5 of 3 cpus; the
// cluster holds 2 (2 on the agent).
func TestFitIndexNoFitPerDemand(t *testing.T) {
	ix := NewFitIndex(Snapshot{Agents: []Agent{ag("a", 4, 2, true)}})
	want := map[int]NoFit{
		3: {Resource: "cpus", Short: 1, MaxPerAgent: 2, Placeable: 2},
		5: {Resource: "cpus", Short: 3, MaxPerAgent: 2, Placeable: 2},
	}
	for _, e := range []int{3, 5, 5, 3, 5} {
		nf := ix.Check(Demand{JobID: "j", Executors: e, CPUs: 1, MemMB: 1024})
		if nf == nil || !reflect.DeepEqual(*nf, want[e]) {
			t.Errorf("%d executors: %+v, want %+v", e, nf, want[e])
		}
	}
}

// TestOptionsSumTolerance: alpha + beta may miss 1 by float noise, up to
// 1e-9 either way included, not more. Each sum is built exactly: x - 0.5
// is exact for x in [0.25, 1] and over (Sterbenz), and (x - 0.5) + 0.5 = x.
func TestOptionsSumTolerance(t *testing.T) {
	lo, hi := 1-1e-9, 1+1e-9
	for _, tc := range []struct {
		sum float64
		ok  bool
	}{
		{lo, true}, {hi, true}, {1 - 2e-9, false}, {1 + 2e-9, false},
	} {
		o := Options{Alpha: tc.sum - 0.5, Beta: 0.5}
		if o.Alpha+o.Beta != tc.sum {
			t.Fatalf("the sum %v is not built exactly: %v", tc.sum, o.Alpha+o.Beta)
		}
		if _, err := New("bfd", o); (err == nil) != tc.ok {
			t.Errorf("alpha %v + beta 0.5 = %v: err %v, want accepted %v", o.Alpha, tc.sum, err, tc.ok)
		}
	}
	// A zero alpha with beta 1 is alpha 0, allowed.
	if _, err := New("bfd", Options{Alpha: 0, Beta: 1}); err != nil {
		t.Errorf("alpha 0, beta 1: %v", err)
	}
}
