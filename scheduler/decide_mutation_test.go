package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// decide.go and pass.go (docs/testing.md, "Mutation testing"); the
// expected figures are derived by hand in the comments, never read from
// the code under test.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// fixedPlan is a test policy that returns the same plan for every job.
type fixedPlan struct{ plan placement.Plan }

func (fixedPlan) Name() string { return "fixed" }

func (f fixedPlan) Place(placement.Snapshot, placement.Demand) (placement.Plan, error) {
	return f.plan, nil
}

// TestMarkStartSkipsEmptyAssignments: a plan's assignment of no executors
// (outside Plan's contract, but markStart guards against it) takes nothing
// from its agent and does not make it active. The plan puts 1 executor of
// 2 cpus and 1408 MiB on a1 and 0 on a2 (both 4 cpus, 16384 MiB, idle): by
// hand a1 is left with 2 cpus and 14976 MiB, active for the job's hour; a2
// keeps all of it, idle, with no remaining time.
func TestMarkStartSkipsEmptyAssignments(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	d.policy = fixedPlan{placement.Plan{Policy: "fixed", Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}, {AgentID: "a2", Executors: 0}},
		Activated: []string{"a1"}}}
	snap := snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24)})
	out := d.decide(passInput{now: t0, snap: snap, regular: entriesOf(mkJob("r", 1, 2, withEstimate(time.Hour))), full: true})
	if len(out.decisions) != 1 || out.decisions[0].kind != decStart {
		t.Fatalf("decisions %v", describe(out.decisions, 0))
	}
	a1, a2 := out.snap.Agents[0], out.snap.Agents[1]
	if a1.FreeCPUs != 2 || a1.FreeMemMB != 14976 || !a1.Active || a1.RemainingActive != time.Hour {
		t.Errorf("a1 after the start: %+v", a1)
	}
	if a2.FreeCPUs != 4 || a2.FreeMemMB != 16384 || a2.Active || a2.RemainingActive != 0 {
		t.Errorf("a2 (0 executors) after the start: %+v", a2)
	}
}

// TestTakeDriverRoomByHand: where the room for a started job's driver is
// kept (offers.Cluster.Snapshot's rule): on the first of the plan's agents
// that has it, else on the agent with the most free cpus that has it,
// else nowhere. Every expected free figure is worked out by hand.
func TestTakeDriverRoomByHand(t *testing.T) {
	type free struct{ cpus, mem float64 }
	for _, c := range []struct {
		name        string
		agents      []free // a0, a1, a2 ... free before
		plan        []string
		cpus, memMB float64
		want        []free
	}{
		{"the plan's first agent with room, not a later one",
			[]free{{2, 4096}, {4, 8192}, {8, 8192}}, []string{"a0", "a1"}, 1, 1024,
			[]free{{1, 3072}, {4, 8192}, {8, 8192}}},
		{"an exact fit on the plan's agent (no tolerance needed)",
			[]free{{1, 1024}, {8, 8192}}, []string{"a0"}, 1, 1024,
			[]free{{0, 0}, {8, 8192}}},
		{"the plan's first agent is short of cpus: its second",
			[]free{{0.5, 8192}, {2, 2048}, {8, 8192}}, []string{"a0", "a1"}, 1, 1024,
			[]free{{0.5, 8192}, {1, 1024}, {8, 8192}}},
		{"the plan's first agent is short of memory: its second",
			[]free{{4, 512}, {2, 2048}, {8, 8192}}, []string{"a0", "a1"}, 1, 1024,
			[]free{{4, 512}, {1, 1024}, {8, 8192}}},
		{"no plan agent has room: the one with the most free cpus",
			[]free{{0, 0}, {3, 4096}, {6, 4096}, {5, 4096}}, []string{"a0"}, 1, 1024,
			[]free{{0, 0}, {3, 4096}, {5, 3072}, {5, 4096}}},
		{"the first agent has the most free cpus (off the plan)",
			[]free{{6, 4096}, {3, 4096}, {0, 0}}, []string{"a2"}, 1, 1024,
			[]free{{5, 3072}, {3, 4096}, {0, 0}}},
		{"the most free cpus, first of equals",
			[]free{{0, 0}, {6, 4096}, {6, 8192}}, []string{"a0"}, 1, 1024,
			[]free{{0, 0}, {5, 3072}, {6, 8192}}},
		{"the most free cpus among those with the memory",
			[]free{{0, 0}, {9, 512}, {6, 4096}, {2, 8192}}, []string{"a0"}, 1, 1024,
			[]free{{0, 0}, {9, 512}, {5, 3072}, {2, 8192}}},
		{"an exact fit off the plan",
			[]free{{0, 0}, {1, 1024}}, []string{"a0"}, 1, 1024,
			[]free{{0, 0}, {0, 0}}},
		{"the most free cpus first, a fitting one after it",
			[]free{{0, 0}, {7, 512}, {3, 4096}}, []string{"a0"}, 1, 1024,
			[]free{{0, 0}, {7, 512}, {2, 3072}}},
		{"nowhere",
			[]free{{0.5, 8192}, {8, 512}}, []string{"a0"}, 1, 1024,
			[]free{{0.5, 8192}, {8, 512}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			agents := make([]placement.Agent, len(c.agents))
			at := map[string]int{}
			for i, f := range c.agents {
				id := "a" + string(rune('0'+i))
				agents[i] = placement.Agent{ID: id, CPUs: 16, MemMB: 65536, FreeCPUs: f.cpus, FreeMemMB: f.mem}
				at[id] = i
			}
			var plan placement.Plan
			for _, id := range c.plan {
				plan.Assignments = append(plan.Assignments, placement.Assignment{AgentID: id, Executors: 1})
			}
			takeDriverRoom(agents, at, plan, c.cpus, c.memMB)
			for i, w := range c.want {
				if agents[i].FreeCPUs != w.cpus || agents[i].FreeMemMB != w.mem {
					t.Errorf("%s: %g cpus, %g MiB free; want %g, %g", agents[i].ID, agents[i].FreeCPUs, agents[i].FreeMemMB, w.cpus, w.mem)
				}
			}
		})
	}
}

// noFitPolicy is a test policy that answers every job with the same NoFit.
type noFitPolicy struct{ nf placement.NoFit }

func (noFitPolicy) Name() string { return "no-fit" }

func (n noFitPolicy) Place(placement.Snapshot, placement.Demand) (placement.Plan, error) {
	nf := n.nf
	return placement.Plan{}, &nf
}

// TestPolicyNeverFitsRejects: with no powered-off agents, the pass takes
// the policy's own "does not fit" answer as the verdict on the whole
// cluster: a policy that says the job can never fit (as for a constraint
// no agent meets) has it rejected with the policy's reason, although the
// fit index found room; one that says "not now" has it wait. With a
// powered-off agent the pass checks the whole cluster itself: the job fits
// there, so it is not rejected (and the policy places nothing there
// either: it waits).
func TestPolicyNeverFitsRejects(t *testing.T) {
	snap := snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)})
	never := placement.NoFit{Resource: "cpus", Never: true}
	notNow := placement.NoFit{Resource: "cpus", Short: 2, Placeable: 1, MaxPerAgent: 1}
	for _, c := range []struct {
		name    string
		nf      placement.NoFit
		standby []placement.Agent
		want    string
	}{
		{"never, no powered-off agent", never, nil, "reject r: does not fit: one executor is larger than every agent (short of cpus)"},
		{"not now, no powered-off agent", notNow, nil, "wait r: does not fit now: short of cpus [skipped]"},
		{"never, a powered-off agent", never, snapOf([]placement.Agent{agent("off1", 8, 32768, 0.48)}).Agents, "wait r: does not fit now: short of cpus [skipped]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd"})
			d.policy = noFitPolicy{c.nf}
			out := d.decide(passInput{now: t0, snap: snap, standby: c.standby, regular: entriesOf(mkJob("r", 1, 2)), full: true})
			if got := describe(out.decisions, 0); !slices.Equal(got, []string{c.want}) {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), c.want)
			}
		})
	}
}

// TestWakeTimesByHand: the pass's wake time (out.wakeAt) for one waiting
// job, worked out by hand from the rules of noteWake and the decisions:
//   - a deadline job with no estimate becomes at risk at its deadline
//     itself (atRisk: !now.Before(deadline)): wake then;
//   - one with an estimate of 10 m due at +30 m becomes at risk just after
//     +20 m: wake at +20 m + 1 ns;
//   - a regular job of a team below its guarantee that evicts a job of
//     another team for room is skipped now: due for promotion at now +
//     PromoteAfter (30 m);
//   - a deadline job (10 m, due at +10 m 30 s) that has an agent powered
//     on (boot 60 s) is at risk already (up at +60 s, done at +11 m): no
//     at-risk timer, only the boot's: wake at +60 s.
func TestWakeTimesByHand(t *testing.T) {
	a1 := agent("a1", 16, 65536, 0.24)
	off1 := fullAgent(agent("off1", 16, 65536, 0.24))
	for _, c := range []struct {
		name     string
		cfg      Config
		deadline []Job
		regular  []Job
		running  []runningJob
		teams    string
		standby  []placement.Agent
		boot     BootState
		want     string // the one decision
		wake     time.Duration
	}{
		{name: "no estimate: at its deadline", deadline: []Job{mkJob("d", 1, 4, withDeadline(30*time.Minute))},
			want: "wait d: does not fit: short of 4 cpus; the cluster can hold 0 executors now (at most 0 on one agent)", wake: 30 * time.Minute},
		{name: "an estimate: when it becomes at risk", deadline: []Job{mkJob("d", 1, 4, withDeadline(30*time.Minute), withEstimate(10*time.Minute))},
			want: "wait d: does not fit: short of 4 cpus; the cluster can hold 0 executors now (at most 0 on one agent)", wake: 20*time.Minute + time.Nanosecond},
		{name: "a reclaim: the promotion of the skipped job", cfg: Config{Preemption: PreemptMDF, PromoteAfter: 30 * time.Minute},
			teams: "g guaranteed-cpus=8\nx weight=1", regular: []Job{mkJob("g1", 1, 4, inTeam("g"))},
			running: []runningJob{placed("x1", "x", 8), placed("x2", "x", 8)},
			want:    "evict x1 for g1", wake: 30 * time.Minute},
		{name: "an agent powered on for a job at risk: the boot", deadline: []Job{mkJob("d", 1, 4, withDeadline(10*time.Minute+30*time.Second), withEstimate(10*time.Minute))},
			standby: []placement.Agent{off1}, boot: BootState{BootTime: time.Minute},
			want: "power on off1 for d: waiting for off1 to boot, ready by 10:01 UTC [at risk]", wake: time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Policy = "bfd"
			d := testDecider(t, c.cfg)
			dq := entriesOf(c.deadline...)
			in := passInput{now: t0, snap: snapOf([]placement.Agent{a1}, "a1=0"), deadline: dq, deadlineQueued: len(dq), regular: entriesOf(c.regular...),
				full: true, running: c.running, standby: c.standby, boot: c.boot}
			if c.teams != "" {
				in.teams, in.deadlineAll = teamsOf(t, c.teams), dq
			}
			out := d.decide(in)
			if got := describeBoot(out.decisions); !slices.Equal(got, []string{c.want}) {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), c.want)
			}
			if want := t0.Add(c.wake); !out.wakeAt.Equal(want) {
				t.Fatalf("wake at +%s, want +%s", out.wakeAt.Sub(t0), c.wake)
			}
		})
	}
}
