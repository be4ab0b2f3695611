package simulate

// Tests of --sample's draw (sample.go; issue 33).

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// TestSampleArrivalsOrderByHand: the draw is in submission order, and
// jobs submitted at the same time keep the trace's order (ten jobs at two
// instants, listed out of order: 5 s, 5 s, 1 s, ...).
func TestSampleArrivalsOrderByHand(t *testing.T) {
	var arrivals []workload.TraceJob
	for i := 0; i < 10; i++ {
		at := 5 * time.Second
		if i%3 == 2 {
			at = time.Second
		}
		arrivals = append(arrivals, workload.TraceJob{ID: fmt.Sprintf("j%d", i), Submit: at})
	}
	for seed := uint64(1); seed <= 20; seed++ {
		got := SampleArrivals(arrivals, 7, seed)
		if len(got) != 7 {
			t.Fatalf("seed %d: %d jobs", seed, len(got))
		}
		// Expected: the drawn ids, those at 1 s first, each group in the
		// trace's order (j2 < j5 < j8; j0 < j1 < j3 ...).
		drawn := map[string]bool{}
		for _, j := range got {
			drawn[j.ID] = true
		}
		var want []string
		for _, at := range []time.Duration{time.Second, 5 * time.Second} {
			for _, a := range arrivals {
				if a.Submit == at && drawn[a.ID] {
					want = append(want, a.ID)
				}
			}
		}
		var ids []string
		for _, j := range got {
			ids = append(ids, j.ID)
		}
		if strings.Join(ids, ",") != strings.Join(want, ",") || len(drawn) != 7 {
			t.Errorf("seed %d: %v, want %v", seed, ids, want)
		}
	}
	if got := SampleArrivals(arrivals, 0, 1); len(got) != 0 {
		t.Errorf("n 0: %v", got)
	}
	if got := SampleArrivals(arrivals, -2, 1); len(got) != 0 {
		t.Errorf("n -2: %v", got)
	}
}
