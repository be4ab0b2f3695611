package workload

import (
	"fmt"
	"math"
	"time"
)

// AppType is the kind of Spark application a trace job stands for.
type AppType string

const (
	// WordCount: map-heavy and CPU-bound; the combiner leaves little to
	// shuffle (shuffle < 10% of the input).
	WordCount AppType = "wordcount"
	// Sort: shuffles about as much as it reads (10% to 200% of the input).
	Sort AppType = "sort"
	// PageRank: iterative; shuffles much more than it reads (> 200% of the
	// input, or shuffle with no input at all).
	PageRank AppType = "pagerank"
)

// Classify names the application type from the shuffle/input ratio.
func Classify(inputBytes, shuffleBytes int64) AppType {
	if inputBytes <= 0 {
		if shuffleBytes > 0 {
			return PageRank
		}
		return WordCount
	}
	r := float64(shuffleBytes) / float64(inputBytes)
	switch {
	case r < 0.1:
		return WordCount
	case r <= 2:
		return Sort
	}
	return PageRank
}

// Profile is a job as the scheduler and the performance model see it.
type Profile struct {
	JobID        string
	App          AppType
	InputBytes   int64
	ShuffleBytes int64
	OutputBytes  int64
	// Iterations is how often an iterative job (PageRank) goes over its
	// input; 0 or 1 means one pass (every trace job). ShuffleBytes is the
	// total over all iterations.
	Iterations int
	// Executors of ExecutorCores cpus and ExecutorMemoryMB MiB (Spark's
	// memory overhead comes on top, as the scheduler adds it).
	Executors        int
	ExecutorCores    int
	ExecutorMemoryMB int
	// Kind is the job's kind in an operator's mix (FromMix), "" otherwise:
	// jobs of one kind share a signature.
	Kind string
	// Perf, if set, replaces the application type's performance figures
	// for this job (a mix kind's own): the truth the scheduler is not told.
	Perf *AppParams
}

// MainClass is the Spark example class a profile stands for (for demos).
func (p Profile) MainClass() string {
	switch p.App {
	case Sort:
		return "org.apache.spark.examples.SortByKey"
	case PageRank:
		return "org.apache.spark.examples.SparkPageRank"
	}
	return "org.apache.spark.examples.JavaWordCount"
}

// AppParams are the performance figures of one application type.
type AppParams struct {
	// ComputeMBps is how fast one core processes input (MB/s, 1 MB = 1e6 bytes).
	ComputeMBps float64
	// CPUBound in [0, 1] scales the contention penalty: 1 for a job that
	// only computes, 0 for one that only waits on I/O.
	CPUBound float64
	// ExecutorMemoryMB is the executor heap for this type.
	ExecutorMemoryMB int
}

// Model holds the job-sizing and performance parameters. DefaultModel is
// what the simulator and the emulator use; docs/simulation.md explains it.
type Model struct {
	Apps map[AppType]AppParams
	// ExecutorCores per executor (all types).
	ExecutorCores int
	// BytesPerExecutorStep: a job whose largest data volume (input, shuffle
	// or output) is at most this has one executor; every doubling beyond it
	// adds one, up to MaxExecutors.
	BytesPerExecutorStep int64
	MaxExecutors         int
	// Startup is the fixed cost of a Spark application (driver, executors).
	Startup time.Duration
	// WriteMBps is the per-core output write rate.
	WriteMBps float64
	// LocalShuffleMBps and RemoteShuffleMBps are per-core shuffle rates for
	// blocks fetched from the same agent and over the network.
	LocalShuffleMBps  float64
	RemoteShuffleMBps float64
	// Contention is the slowdown of CPU-bound work on a fully used agent;
	// it grows linearly from 0 at ContentionFrom utilisation to Contention
	// at 100%.
	Contention     float64
	ContentionFrom float64
}

// DefaultModel is the model of docs/simulation.md.
var DefaultModel = Model{
	Apps: map[AppType]AppParams{
		WordCount: {ComputeMBps: 20, CPUBound: 1.0, ExecutorMemoryMB: 2048},
		Sort:      {ComputeMBps: 50, CPUBound: 0.3, ExecutorMemoryMB: 4096},
		PageRank:  {ComputeMBps: 15, CPUBound: 0.7, ExecutorMemoryMB: 6144},
	},
	ExecutorCores:        2,
	BytesPerExecutorStep: 256 << 20,
	MaxExecutors:         16,
	Startup:              10 * time.Second,
	WriteMBps:            60,
	LocalShuffleMBps:     100,
	RemoteShuffleMBps:    25,
	Contention:           0.15,
	ContentionFrom:       0.5,
}

// Profile sizes a trace job: its application type from the shuffle/input
// ratio, its executor count from its largest data volume (1 executor up to
// BytesPerExecutorStep, one more per doubling, at most MaxExecutors) and
// its executor size from its type.
func (m Model) Profile(t TraceJob) Profile {
	app := Classify(t.InputBytes, t.ShuffleBytes)
	return Profile{
		JobID: t.ID, App: app,
		InputBytes: t.InputBytes, ShuffleBytes: t.ShuffleBytes, OutputBytes: t.OutputBytes,
		Executors: m.ExecutorsFor(max(t.InputBytes, t.ShuffleBytes, t.OutputBytes)), ExecutorCores: max(1, m.ExecutorCores),
		ExecutorMemoryMB: m.Apps[app].ExecutorMemoryMB,
	}
}

// ExecutorsFor is the executor count for a data volume: one executor up to
// BytesPerExecutorStep, one more per doubling beyond, at most MaxExecutors.
func (m Model) ExecutorsFor(size int64) int {
	e := 1
	if step := m.BytesPerExecutorStep; step > 0 && size > step {
		e = 1 + int(math.Ceil(math.Log2(float64(size)/float64(step))))
	}
	if m.MaxExecutors > 0 && e > m.MaxExecutors {
		e = m.MaxExecutors
	}
	return e
}

// AgentShare is the part of a placement on one agent.
type AgentShare struct {
	// Executors of this job on the agent.
	Executors int
	// CPUs is the agent's capacity; UsedCPUs the cpus in use on it once
	// this job's executors are there (its own included). CPUs <= 0 means
	// "no contention" (an agent of unknown size).
	CPUs     float64
	UsedCPUs float64
}

// Breakdown is how Duration arrived at its answer.
type Breakdown struct {
	Startup, Compute, Shuffle time.Duration
	// RemoteFraction is the share of shuffle blocks fetched over the network.
	RemoteFraction float64
	// Slowdown is the contention factor applied to the compute phase.
	Slowdown float64
}

// Total is the job's run time.
func (b Breakdown) Total() time.Duration { return b.Startup + b.Compute + b.Shuffle }

// Duration is the run time of job p when its executors are placed as
// shares. It is a pure function.
//
//	compute  = (input x iterations / ComputeMBps + output / WriteMBps) / (E x cores) x slowdown
//	slowdown = 1 + Contention x CPUBound x clamp((u - ContentionFrom) / (1 - ContentionFrom), 0, 1)
//	           with u the highest utilisation of an agent holding the job (stragglers decide)
//	shuffle  = shuffle / (E x cores) x ((1 - r) / LocalShuffleMBps + r / RemoteShuffleMBps)
//	           with r = 1 - sum_i (n_i / E)^2 the share of all-to-all blocks crossing agents
//	duration = Startup + compute + shuffle
//
// Shares with zero executors are ignored; if no share holds an executor the
// job is taken to run on one uncontended agent.
func (m Model) Duration(p Profile, shares []AgentShare) Breakdown {
	ap, ok := m.Apps[p.App]
	if p.Perf != nil {
		ap, ok = *p.Perf, true
	}
	if !ok || ap.ComputeMBps <= 0 {
		ap = AppParams{ComputeMBps: 20, CPUBound: 1}
	}
	e := 0
	for _, s := range shares {
		if s.Executors > 0 {
			e += s.Executors
		}
	}
	if e == 0 {
		shares = []AgentShare{{Executors: max(1, p.Executors)}}
		e = max(1, p.Executors)
	}
	cores := float64(e * max(1, p.ExecutorCores))
	var same, util float64
	for _, s := range shares {
		if s.Executors <= 0 {
			continue
		}
		f := float64(s.Executors) / float64(e)
		same += f * f
		if s.CPUs > 0 {
			util = max(util, s.UsedCPUs/s.CPUs)
		}
	}
	remote := max(0, 1-same)
	slow := 1.0
	if m.Contention > 0 && m.ContentionFrom < 1 {
		x := (util - m.ContentionFrom) / (1 - m.ContentionFrom)
		slow += m.Contention * ap.CPUBound * min(1, max(0, x))
	}
	const mb = 1e6
	passes := float64(max(1, p.Iterations))
	compute := (float64(p.InputBytes)*passes/mb/ap.ComputeMBps + rate(float64(p.OutputBytes)/mb, m.WriteMBps)) / cores * slow
	perByte := 0.0
	if m.LocalShuffleMBps > 0 {
		perByte += (1 - remote) / m.LocalShuffleMBps
	}
	if m.RemoteShuffleMBps > 0 {
		perByte += remote / m.RemoteShuffleMBps
	}
	shuffle := float64(p.ShuffleBytes) / mb * perByte / cores
	return Breakdown{
		Startup: m.Startup, Compute: seconds(compute), Shuffle: seconds(shuffle),
		RemoteFraction: remote, Slowdown: slow,
	}
}

func rate(mb, mbps float64) float64 {
	if mbps <= 0 {
		return 0
	}
	return mb / mbps
}

// seconds is s seconds as a Duration, saturating at MaxTraceSeconds:
// Duration's Total sums three parts (and a simulator adds a submission
// time), so one saturated at the largest Duration would overflow the sum
// to a negative run time (a mix whose computeMBps is 1e-300).
func seconds(s float64) time.Duration {
	if s <= 0 || math.IsNaN(s) {
		return 0
	}
	if s > MaxTraceSeconds {
		return MaxTraceSeconds * time.Second
	}
	return time.Duration(s * float64(time.Second)).Round(time.Millisecond)
}

// Reference is the profiled run time: all executors on one uncontended
// agent (no network shuffle, no contention) — what a profiling run on a
// dedicated large machine measures. Deadlines are set from it.
func (m Model) Reference(p Profile) time.Duration {
	return m.Duration(p, []AgentShare{{Executors: max(1, p.Executors)}}).Total()
}

func (p Profile) String() string {
	it := ""
	if p.Iterations > 1 {
		it = fmt.Sprintf(", %d iterations", p.Iterations)
	}
	return fmt.Sprintf("%s %s: %d x %d cpus / %d MiB, in %d B, shuffle %d B, out %d B%s",
		p.JobID, p.App, p.Executors, p.ExecutorCores, p.ExecutorMemoryMB, p.InputBytes, p.ShuffleBytes, p.OutputBytes, it)
}
