package simulate

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/sparkpack/sparkpack/workload"
)

// SampleArrivals returns n of a window's arrivals drawn uniformly without
// replacement with the seed (`simulate --sample N`), in submission order,
// each with its submission time as the trace states it: the replayed
// window keeps the arrival pattern of the whole window at n jobs in it,
// where --jobs N keeps its first N (which can arrive within minutes of
// its start). n >= len(arrivals) takes them all, in the trace's order (a
// parsed trace's is its submission order). The same seed and window
// give the same jobs; the stream also depends on the window's first
// arrival, so that two hours with as many jobs do not get the same draw.
func SampleArrivals(arrivals []workload.TraceJob, n int, seed uint64) []workload.TraceJob {
	if n >= len(arrivals) {
		return slices.Clone(arrivals)
	}
	if n <= 0 {
		return nil
	}
	h := fnv.New64a()
	h.Write([]byte(arrivals[0].ID))
	rng := rand.New(rand.NewPCG(seed, 0x5a3917e^h.Sum64()))
	// A partial Fisher-Yates shuffle of the indices: the first n are a
	// uniform draw without replacement.
	idx := make([]int, len(arrivals))
	for i := range idx {
		idx[i] = i
	}
	for i := 0; i < n; i++ {
		j := i + rng.IntN(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	picked := idx[:n]
	slices.Sort(picked)
	out := make([]workload.TraceJob, n)
	for k, i := range picked {
		out[k] = arrivals[i]
	}
	// In submission order even if the trace's lines are not (ties keep
	// the trace's order).
	slices.SortStableFunc(out, func(a, b workload.TraceJob) int {
		switch {
		case a.Submit < b.Submit:
			return -1
		case a.Submit > b.Submit:
			return 1
		}
		return 0
	})
	return out
}

// checkSample validates --sample against --jobs: N of the window's
// arrivals drawn with the seed, or its first N, not both.
func checkSample(sample, jobs int, set map[string]bool) error {
	if !set["sample"] {
		return nil
	}
	if sample < 1 {
		return fmt.Errorf("--sample %d must be >= 1 (the jobs drawn from each window)", sample)
	}
	if set["jobs"] && jobs != 0 {
		return fmt.Errorf("use --jobs %d (the first jobs of each window) or --sample %d (jobs drawn across the window), not both", jobs, sample)
	}
	return nil
}

// arrivalsOf is a window's replayed arrivals: all of them, the first
// --jobs, or --sample of them drawn with the seed.
func (f *flags) arrivalsOf(window []workload.TraceJob, seed uint64) []workload.TraceJob {
	if f.sample > 0 {
		return SampleArrivals(window, f.sample, seed)
	}
	return workload.First(window, f.jobs)
}
