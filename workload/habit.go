package workload

import (
	"hash/fnv"
	"math/rand/v2"
)

// User executor-count models: how the simulated users choose a job's
// executor count (simulate --user-executors).
const (
	// UserExecutorsProportional: one executor up to BytesPerExecutorStep
	// of input, one more per doubling, at most MaxExecutors
	// (Model.ExecutorsFor): a user who sizes each submission by its input.
	// The generators' choice (Thesis, FromMix).
	UserExecutorsProportional = "proportional"
	// UserExecutorsHabit: every job of a signature runs with one count,
	// drawn once per signature (and seed) from HabitCounts, whatever its
	// input: a team that copies its submit script from run to run.
	UserExecutorsHabit = "habit"
)

// HabitCounts are the counts a habit is drawn from, equally likely: 2 is
// Spark's default spark.executor.instances with dynamic allocation off
// (running-on-yarn, Spark 3.x), the powers of two above it are the counts
// submit scripts and tutorials copy; 16 is also the proportional model's
// MaxExecutors, so both models choose from the same span. The equal
// weights are an assumption of ours: no published distribution of the
// counts users choose was at hand.
var HabitCounts = []int{2, 4, 8, 16}

// Habit sets every job's executor count to its signature's habit (the
// profile's Kind, else its App), drawn from HabitCounts with seed: jobs of
// one signature share a count, whatever their input. Deterministic for a
// seed and the signatures; jobs is changed in place and returned.
func Habit(jobs []Job, seed uint64) []Job {
	habit := map[string]int{}
	for i := range jobs {
		p := &jobs[i].Profile
		sig := p.Kind
		if sig == "" {
			sig = string(p.App)
		}
		n, ok := habit[sig]
		if !ok {
			h := fnv.New64a()
			h.Write([]byte(sig))
			n = HabitCounts[rand.New(rand.NewPCG(seed, 0x4ab1^h.Sum64())).IntN(len(HabitCounts))]
			habit[sig] = n
		}
		p.Executors = n
	}
	return jobs
}
