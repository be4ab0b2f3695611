package workload

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"
)

// Job is one job of a workload: when it is submitted (from the start of the
// trace) and what it is.
type Job struct {
	Submit  time.Duration
	Profile Profile
}

// FromTrace sizes every trace job with m.Profile: the trace-sized workload
// of `sparkpack simulate --workload trace`.
func (m Model) FromTrace(trace []TraceJob) []Job {
	out := make([]Job, len(trace))
	for i, t := range trace {
		out[i] = Job{Submit: t.Submit, Profile: m.Profile(t)}
	}
	return out
}

// ThesisMix describes the thesis-like job mix (thesis section 4.6:
// BigDataBench WordCount, Sort and PageRank). Sizes are in GB of 1e9 bytes.
type ThesisMix struct {
	// InputGB is the range of WordCount and Sort inputs (uniform).
	MinInputGB, MaxInputGB float64
	// GraphGB is the range of PageRank graph sizes (uniform).
	MinGraphGB, MaxGraphGB float64
	// Iterations is the range of PageRank iterations (uniform, inclusive).
	MinIterations, MaxIterations int
	// WordCount shuffles and writes these fractions of its input (the
	// combiner leaves little to shuffle).
	WordCountShuffle, WordCountOutput float64
	// Sort shuffles and writes these fractions of its input.
	SortShuffle, SortOutput float64
	// PageRank shuffles this fraction of its graph in every iteration (the
	// rank contributions) and writes this fraction of it at the end.
	PageRankShufflePerIteration, PageRankOutput float64
}

// DefaultThesisMix is the mix of docs/simulation.md: WordCount and Sort on
// 1-20 GB, PageRank with 5-15 iterations on a 1-4 GB graph.
var DefaultThesisMix = ThesisMix{
	MinInputGB: 1, MaxInputGB: 20,
	MinGraphGB: 1, MaxGraphGB: 4,
	MinIterations: 5, MaxIterations: 15,
	WordCountShuffle: 0.05, WordCountOutput: 0.01,
	SortShuffle: 1, SortOutput: 1,
	PageRankShufflePerIteration: 0.5, PageRankOutput: 0.05,
}

// ThesisApps are the application types of the thesis-like mix, in the
// order the generator draws them from.
var ThesisApps = []AppType{WordCount, Sort, PageRank}

// Thesis builds the thesis-like workload: one job per arrival (its id and
// submission time are kept, its sizes are ignored), each an application
// type drawn uniformly from ThesisApps with sizes drawn uniformly from mix,
// all with a generator seeded by seed and the first arrival's id (the same
// seed and window give the same jobs; other windows get other jobs).
// The executor count follows the input (the graph for PageRank) as in
// Profile: one executor up to BytesPerExecutorStep, one more per doubling.
func (m Model) Thesis(arrivals []TraceJob, mix ThesisMix, seed uint64) []Job {
	// The stream also depends on the first arrival, so that different
	// windows of the trace get different jobs for the same seed.
	h := fnv.New64a()
	if len(arrivals) > 0 {
		h.Write([]byte(arrivals[0].ID))
	}
	rng := rand.New(rand.NewPCG(seed, 0x7e515^h.Sum64()))
	const gb = 1e9
	uniform := func(lo, hi float64) int64 {
		v := lo
		if hi > lo {
			v += rng.Float64() * (hi - lo)
		}
		// Whole megabytes, so that printed sizes are exact.
		return int64(math.Round(v*1000)) * 1_000_000
	}
	out := make([]Job, len(arrivals))
	for i, t := range arrivals {
		app := ThesisApps[rng.IntN(len(ThesisApps))]
		p := Profile{JobID: t.ID, App: app, ExecutorCores: max(1, m.ExecutorCores), ExecutorMemoryMB: m.Apps[app].ExecutorMemoryMB}
		frac := func(b int64, f float64) int64 { return int64(math.Round(float64(b) * f)) }
		switch app {
		case WordCount:
			p.InputBytes = uniform(mix.MinInputGB, mix.MaxInputGB)
			p.ShuffleBytes, p.OutputBytes = frac(p.InputBytes, mix.WordCountShuffle), frac(p.InputBytes, mix.WordCountOutput)
		case Sort:
			p.InputBytes = uniform(mix.MinInputGB, mix.MaxInputGB)
			p.ShuffleBytes, p.OutputBytes = frac(p.InputBytes, mix.SortShuffle), frac(p.InputBytes, mix.SortOutput)
		case PageRank:
			p.InputBytes = uniform(mix.MinGraphGB, mix.MaxGraphGB)
			lo, hi := max(1, mix.MinIterations), max(1, mix.MaxIterations)
			p.Iterations = lo
			if hi > lo {
				p.Iterations += rng.IntN(hi - lo + 1)
			}
			p.ShuffleBytes = frac(p.InputBytes, mix.PageRankShufflePerIteration*float64(p.Iterations))
			p.OutputBytes = frac(p.InputBytes, mix.PageRankOutput)
		}
		p.Executors = m.ExecutorsFor(p.InputBytes)
		out[i] = Job{Submit: t.Submit, Profile: p}
	}
	return out
}

// First returns the first n jobs of trace (all of them when n <= 0 or
// there are fewer).
func First(trace []TraceJob, n int) []TraceJob {
	if n <= 0 || n >= len(trace) {
		return trace
	}
	return trace[:n]
}
