package scheduler

import (
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestProtectSlotsEdges: protectSlots' edge cases, one a line, each with
// its slots counted by hand (4-cpu shapes for a team guaranteed cpus only;
// the default driver is 1 cpu and 1024 MiB). x1 is team x's (no
// guarantee) deadline job, due first; g1 and h1 are owed (within their
// teams' guarantee).
func TestProtectSlotsEdges(t *testing.T) {
	dl := func(d time.Duration) jobOpt { return withDeadline(d) }
	// execMem: an executor of total MiB (memory and overhead).
	execMem := func(total int) jobOpt {
		return func(j *Job) { j.Spec.ExecutorMemoryMB, j.Spec.MemoryOverheadMB = total-100, 100 }
	}
	driver := func(cores float64, memMB int) jobOpt {
		return func(j *Job) { j.Spec.Driver = &Driver{Cores: cores, MemoryMB: memMB} }
	}
	a8 := func(id string, memMB float64) placement.Agent { return agent(id, 8, memMB, 0.24) }
	waitX := "wait x1: team x past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team g (their executors would no longer fit)"
	for _, c := range []struct {
		name       string
		agents     []placement.Agent
		free       []string
		teams      string
		driverRoom bool
		jobs       []Job
		want       []string
	}{{
		// a1 and a2 hold one 4-cpu slot each, g1 and h1 ask for one each
		// (2, of one shape, together). x1's 5-cpu executor takes a1's:
		// 1 slot left for 2.
		name:   "two teams owed executors of one shape: their slots count together",
		agents: []placement.Agent{a8("a1", 65536), a8("a2", 65536), a8("a3", 65536), a8("a4", 65536), a8("a5", 65536)},
		free:   []string{"a1=5", "a2=5", "a3=3", "a4=3", "a5=3"},
		teams:  "g guaranteed-cpus=8\nh guaranteed-cpus=8",
		jobs:   []Job{mkJob("x1", 1, 5, inTeam("x"), dl(time.Hour)), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour)), mkJob("h1", 1, 4, inTeam("h"), dl(3*time.Hour))},
		want: []string{"wait x1: team x past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team g, team h (their executors would no longer fit)",
			"start g1 on a1x1", "start h1 on a2x1"},
	}, {
		// g is owed cpus alone: the memory x1's executor takes from a1
		// (64600 of 65536 MiB) does not count, a1's 4 cpus left are
		// still a slot of g's (4 cpus) shape. (g1 then does not fit for
		// memory: memory is not what g is guaranteed.)
		name:   "a team guaranteed cpus only: its slots count cpus, not the memory left",
		agents: []placement.Agent{a8("a1", 65536), a8("a2", 65536), a8("a3", 2048)},
		free:   []string{"a1=5", "a2=5", "a3=3"},
		teams:  "g guaranteed-cpus=16",
		jobs:   []Job{mkJob("x1", 1, 1, inTeam("x"), dl(time.Hour), execMem(64600)), mkJob("g1", 2, 4, inTeam("g"), dl(2*time.Hour))},
		want:   []string{"start x1 on a1x1", "wait g1: does not fit now: no set of agents holds its executors"},
	}, {
		// g is guaranteed memory too: its shape is 2 cpus and 10000 MiB,
		// one slot on each of a1 and a2 (12000 MiB); a3-a5 hold none.
		// x1's 4000-MiB executor on a1 leaves it 8000: 1 slot for 2.
		name:   "a team guaranteed memory: the memory an executor takes costs its slots",
		agents: []placement.Agent{a8("a1", 12000), a8("a2", 12000), a8("a3", 3000), a8("a4", 3000), a8("a5", 3000)},
		free:   []string{"a1=8", "a2=8", "a3=8", "a4=8", "a5=8"},
		teams:  "g guaranteed-cpus=16 guaranteed-memory=32g",
		jobs:   []Job{mkJob("x1", 1, 1, inTeam("x"), dl(time.Hour), execMem(4000)), mkJob("g1", 2, 2, inTeam("g"), dl(2*time.Hour), execMem(10000))},
		want:   []string{waitX, "start g1 on a1x1,a2x1"},
	}, {
		// Only a1 holds x1's 10000-MiB executor; a1 keeps its 4-cpu
		// slot with it (5-1 cpus) but not with its driver too (on a1,
		// the plan's first agent that holds it): 0 slots for g1's 1.
		name:       "the driver kept on the plan's first agent costs a slot",
		agents:     []placement.Agent{a8("a1", 65536), a8("a2", 8192)},
		free:       []string{"a1=5", "a2=3"},
		teams:      "g guaranteed-cpus=8",
		driverRoom: true,
		jobs:       []Job{mkJob("x1", 1, 1, inTeam("x"), dl(time.Hour), execMem(10000)), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour))},
		want:       []string{waitX, "start g1 on a1x1"},
	}, {
		// As above, with a3 (9 free cpus, 2 slots) the agent with the
		// most free cpus: the driver still goes on a1, the plan's agent
		// that holds it (on a3 it would cost no slot). 2 slots for 3.
		name:       "the driver goes on the plan's agent, not on the one with the most free cpus",
		agents:     []placement.Agent{a8("a1", 65536), a8("a2", 8192), agent("a3", 16, 8192, 0.24)},
		free:       []string{"a1=5", "a2=3", "a3=9"},
		teams:      "g guaranteed-cpus=16",
		driverRoom: true,
		jobs:       []Job{mkJob("x1", 1, 1, inTeam("x"), dl(time.Hour), execMem(10000)), mkJob("g1", 3, 4, inTeam("g"), dl(2*time.Hour))},
		want:       []string{waitX, "start g1 on a1x1,a3x2"},
	}, {
		// x1's 2-cpu executor fills a3; the driver goes on the agent with
		// the most free cpus, a1 (the first one), which loses its slot,
		// g1's only one (a2 holds 3 cpus).
		name:       "the driver on an agent the plan does not touch, the first one",
		agents:     []placement.Agent{a8("a1", 65536), a8("a2", 65536), a8("a3", 65536)},
		free:       []string{"a1=4", "a2=3", "a3=2"},
		teams:      "g guaranteed-cpus=8",
		driverRoom: true,
		jobs:       []Job{mkJob("x1", 1, 2, inTeam("x"), dl(time.Hour)), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour))},
		want:       []string{waitX, "start g1 on a1x1"},
	}, {
		// g's shape is 4 cpus and 10000 MiB. x1 fills a3; a1 and a2 have
		// 6 free cpus each: the driver goes on the first, a1, where it
		// costs no slot (5 cpus, 64512 MiB left); on a2 (10500 MiB) it
		// would cost a2's. 2 slots for 2.
		name:       "agents with as many free cpus: the driver goes on the first",
		agents:     []placement.Agent{a8("a1", 65536), a8("a2", 10500), a8("a3", 65536)},
		free:       []string{"a1=6", "a2=6", "a3=2"},
		teams:      "g guaranteed-cpus=16 guaranteed-memory=64g",
		driverRoom: true,
		jobs:       []Job{mkJob("x1", 1, 2, inTeam("x"), dl(time.Hour)), mkJob("g1", 2, 4, inTeam("g"), dl(2*time.Hour), execMem(10000))},
		want:       []string{"start x1 on a3x1", "start g1 on a1x1,a2x1"},
	}, {
		// No agent holds x1's 70000-MiB driver: it takes no slot. x1's
		// executor costs a1's: 2 slots left for 2.
		name:       "no agent holds the driver: it takes no slot",
		agents:     []placement.Agent{a8("a1", 65536), a8("a2", 65536), a8("a3", 65536)},
		free:       []string{"a1=4", "a2=4", "a3=4"},
		teams:      "g guaranteed-cpus=16",
		driverRoom: true,
		jobs:       []Job{mkJob("x1", 1, 1, inTeam("x"), dl(time.Hour), driver(1, 70000)), mkJob("g1", 2, 4, inTeam("g"), dl(2*time.Hour))},
		want:       []string{"start x1 on a1x1", "start g1 on a2x1,a3x1"},
	}, {
		// x1's executor leaves a1 1 cpu and 1024 MiB, exactly its
		// driver: it goes there (a1 held no slot), not on a2 (4 free
		// cpus, g1's only slot).
		name:       "the driver fits exactly what the executor leaves on the plan's agent",
		agents:     []placement.Agent{a8("a1", 3072), a8("a2", 65536), a8("a3", 65536), a8("a4", 65536)},
		free:       []string{"a1=3", "a2=4", "a3=1", "a4=1"},
		teams:      "g guaranteed-cpus=8",
		driverRoom: true,
		jobs:       []Job{mkJob("x1", 1, 2, inTeam("x"), dl(time.Hour), execMem(2048)), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour))},
		want:       []string{"start x1 on a1x1", "start g1 on a2x1"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd", DriverRoom: c.driverRoom})
			in := passInput{now: t0, snap: snapOf(c.agents, c.free...), deadline: entriesOf(c.jobs...), full: true}
			in.deadlineQueued = len(in.deadline)
			in.teams, in.deadlineAll = teamsOf(t, c.teams), in.deadline
			if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, c.want) {
				t.Errorf("\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

// TestLostAtMostValues: lostAtMost's values, by hand (TestLostAtMost only
// checks that it bounds what is lost): the ceiling of the ratio on each
// resource the shape asks for, plus one; 0 when nothing is taken; capped
// at 1<<20 (so that executors x the bound cannot overflow).
func TestLostAtMostValues(t *testing.T) {
	for _, c := range []struct {
		x, xm, c, m float64
		want        int
	}{
		{0, 0, 4, 1024, 0},                  // nothing taken
		{1, 0, 4, 0, 2},                     // a cpu-only shape: ceil(1/4)+1
		{1, 1024, 0, 1024, 2},               // a memory-only shape: ceil(1024/1024)+1
		{1, 2048, 4, 1024, 3},               // max(ceil(1/4), ceil(2048/1024))+1
		{5, 0, 4, 1024, 3},                  // cpus alone taken: ceil(5/4)+1
		{0, 3000, 4, 1024, 4},               // memory alone taken: ceil(3000/1024)+1
		{1 << 20, 0, 1, 0, 1<<20 + 1},       // at the cap: not capped
		{1<<20 + 1, 0, 1, 0, 1 << 20},       // past it: capped
		{1, 2048, 0.5, 1.0 / 1024, 1 << 20}, // past it on memory: 2048 MiB over 1/1024
	} {
		if got := lostAtMost(c.x, c.xm, c.c, c.m); got != c.want {
			t.Errorf("lostAtMost(%v, %v, %v, %v) = %d, want %d", c.x, c.xm, c.c, c.m, got, c.want)
		}
	}
}
