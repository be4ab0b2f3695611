package scheduler

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

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

// TestProtectSlotsDriverElsewhere: with the driver's room kept
// (Config.DriverRoom), a driver that no agent of the plan has room for
// left goes on the agent with the most free cpus (takeDriverRoom), which
// may be one the plan does not touch: the slots it takes there count too.
// x1 (2 executors of 3 cpus and 10000 MiB, past its team's guarantee)
// fills a1, the only agent with the memory; its 1-cpu driver goes on a2,
// whose 4 free cpus are the one slot left besides a1's for g1's 4-cpu
// executor (owed, within g's guarantee).
func TestProtectSlotsDriverElsewhere(t *testing.T) {
	agents := []placement.Agent{agent("a1", 8, 65536, 0.24), agent("a2", 8, 8192, 0.24), agent("a3", 8, 65536, 0.24), agent("a4", 8, 65536, 0.24)}
	dl := func(d time.Duration) jobOpt { return withDeadline(d) }
	bigMem := func(j *Job) { j.Spec.ExecutorMemoryMB = 10000 }
	for _, with := range []bool{true, false} {
		d := testDecider(t, Config{Policy: "bfd", DriverRoom: true})
		in := passInput{now: t0, snap: snapOf(agents, "a1=6", "a2=4", "a3=2", "a4=2"),
			deadline: entriesOf(mkJob("x1", 2, 3, inTeam("x"), dl(time.Hour), bigMem), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour))), full: true}
		in.deadlineQueued = len(in.deadline)
		want := []string{"start x1 on a1x2", "wait g1: does not fit now: no set of agents holds its executors"}
		if with {
			in.teams, in.deadlineAll = teamsOf(t, "g guaranteed-cpus=8"), in.deadline
			want = []string{"wait x1: team x past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team g (their executors would no longer fit)",
				"start g1 on a2x1"}
		}
		if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, want) {
			t.Errorf("teams %v:\n got  %q\n want %q", with, got, want)
		}
	}
}
