package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// TestTeamMaxHoldOrder: which reason a job at its team's maximum waits
// with when something else holds it too. A job not yet allowed to start
// (its team's budget spent, its start time ahead) says that, and a
// deadline one waiting for its start time waits by choice: it is counted
// once among the deadline jobs regular jobs do not wait behind, so that
// another team's deadline job that waits for room still holds the
// regular queue back. The team's maximum is the reason only when nothing
// else holds the job; and a job the team would hold at its start time has
// no agent powered on ahead for it.
//
// Team a (max 10 cpus) holds 6; each job of a needs 5 (2 executors of 2
// cpus and a 1-cpu driver). a1 has 10 cpus free.
func TestTeamMaxHoldOrder(t *testing.T) {
	big := []placement.Agent{agent("a1", 16, 65536, 0.24)}
	dl, nb := withDeadline(time.Hour), withNotBefore(10*time.Minute)
	budget := map[string]string{"a": "team a over its daily budget $5.00"}
	cases := []struct {
		name     string
		snap     placement.Snapshot
		standby  []placement.Agent
		boot     time.Duration
		budget   map[string]string
		deadline []Job
		regular  []Job
		want     []string
	}{{
		name:     "deadline job, start time ahead: its start time, by choice",
		deadline: []Job{mkJob("d1", 2, 2, inTeam("a"), dl, nb)},
		regular:  []Job{mkJob("r1", 1, 1, inTeam("c"))},
		want:     []string{"wait d1: waiting for its start time 10:10 UTC (by choice)", "start r1 on a1x1"},
	}, {
		name:     "deadline job, budget spent: the budget",
		budget:   budget,
		deadline: []Job{mkJob("d1", 2, 2, inTeam("a"), dl)},
		regular:  []Job{mkJob("r1", 1, 1, inTeam("c"))},
		want:     []string{"wait d1: team a over its daily budget $5.00", "start r1 on a1x1"},
	}, {
		name:     "deadline job, budget spent and start time ahead: the budget",
		budget:   budget,
		deadline: []Job{mkJob("d1", 2, 2, inTeam("a"), dl, nb)},
		want:     []string{"wait d1: team a over its daily budget $5.00"},
	}, {
		name:     "deadline job, start time passed: the team's maximum",
		deadline: []Job{mkJob("d1", 2, 2, inTeam("a"), dl, withNotBefore(-time.Minute))},
		regular:  []Job{mkJob("r1", 1, 1, inTeam("c"))},
		want:     []string{"wait d1: team a at its cpu limit", "start r1 on a1x1"},
	}, {
		name: "deadline job waiting for its start time counted once: another team's deadline job waiting for room holds regular jobs back",
		deadline: []Job{mkJob("d1", 2, 2, inTeam("a"), dl, nb),
			mkJob("d2", 4, 4, inTeam("b"), withDeadline(2*time.Hour))}, // 17 cpus: waits for room
		regular: []Job{mkJob("r1", 1, 1, inTeam("c"))},
		want: []string{"wait d1: waiting for its start time 10:10 UTC (by choice)", "wait d2: does not fit now: short of cpus",
			"wait r1: deadline jobs first [skipped]"},
	}, {
		name:    "regular job, start time ahead: its start time",
		regular: []Job{mkJob("r1", 2, 2, inTeam("a"), nb)},
		want:    []string{"wait r1: waiting for its start time 10:10 UTC (by choice)"},
	}, {
		name:    "regular job, budget spent: the budget",
		budget:  budget,
		regular: []Job{mkJob("r1", 2, 2, inTeam("a"))},
		want:    []string{"wait r1: team a over its daily budget $5.00"},
	}, {
		name: "start time within a boot: no agent powered on for a job its team would hold",
		snap: snapOf(big, "a1=0"), standby: []placement.Agent{fullAgent(agent("off1", 16, 65536, 0.24))}, boot: time.Hour,
		deadline: []Job{mkJob("d1", 2, 2, inTeam("a"), dl, nb)},
		want:     []string{"wait d1: waiting for its start time 10:10 UTC (by choice)"},
	}, {
		name: "start time within a boot, team within its maximum: the agent is powered on ahead (control)",
		snap: snapOf(big, "a1=0"), standby: []placement.Agent{fullAgent(agent("off1", 16, 65536, 0.24))}, boot: time.Hour,
		deadline: []Job{mkJob("d1", 1, 2, inTeam("a"), dl, nb)}, // 3 cpus: a holds 9 with it
		want:     []string{"power on off1 for d1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd"})
			snap := c.snap
			if snap.Agents == nil {
				snap = snapOf(big, "a1=10")
			}
			in := passInput{now: t0, snap: snap, standby: c.standby, boot: BootState{BootTime: c.boot}, full: true,
				deadline: entriesOf(c.deadline...), regular: entriesOf(c.regular...), budgetHeld: c.budget,
				running: []runningJob{holding("ra", "a", 6)}}
			in.teams, in.deadlineAll = teamsOf(t, "a max-cpus=10"), in.deadline
			in.deadlineQueued = len(in.deadline)
			for _, e := range in.deadline {
				if _, held := c.budget[e.Team]; held {
					in.deadlineQueued-- // Core.budgetInput
				}
			}
			var got []string
			for _, dc := range d.decide(in).decisions {
				s := describe([]decision{dc}, 0)
				switch {
				case dc.kind == decPowerOn:
					s = []string{"power on " + dc.powerOn[0] + " for " + dc.entry.ID}
				case dc.wait.byChoice:
					s[0] += " (by choice)"
				}
				got = append(got, s...)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

// TestStartTimeAtMaxAcrossPasses: the same through the core, over a full
// pass, an incremental one (a regular job submitted: the held deadline job
// is not looked at again) and the full pass at its start time. Team a
// (max 6 cpus) holds 5; d-a would take it to 10: it waits for its start
// time, then for its team. d-b (another team, 17 cpus) waits for room all
// along, so the regular jobs r-c and r-e wait behind it in every pass.
func TestStartTimeAtMaxAcrossPasses(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "a max-cpus=6"))
	h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("ra", 2, 2, inTeam("a")))
	if n := h.schedule(); n != 1 {
		t.Fatalf("started %d, want ra", n)
	}
	h.submit(
		mkJob("d-a", 2, 2, inTeam("a"), withDeadline(time.Hour), withNotBefore(10*time.Minute), submittedAt(time.Second)),
		mkJob("d-b", 4, 4, inTeam("b"), withDeadline(time.Hour), submittedAt(2*time.Second)),
		mkJob("r-c", 1, 1, inTeam("c"), submittedAt(3*time.Second)),
	)
	check := func(when string, want map[string]string) {
		t.Helper()
		if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"ra"}) {
			t.Fatalf("%s: started %v, want only ra", when, got)
		}
		for id, want := range want {
			if j := h.store.get(id); j.State != Queued || !strings.HasPrefix(j.WaitingReason, want) {
				t.Errorf("%s: %s %s %q, want it waiting with %q", when, id, j.State, j.WaitingReason, want)
			}
		}
	}
	h.schedule()
	check("full pass", map[string]string{"d-a": "waiting for its start time 10:10 UTC", "r-c": "deadline jobs first"})
	h.submit(mkJob("r-e", 1, 1, inTeam("c"), submittedAt(4*time.Second)))
	h.schedule()
	check("incremental pass", map[string]string{"d-a": "waiting for its start time 10:10 UTC", "r-e": "deadline jobs first"})
	h.clock.Advance(10 * time.Minute)
	h.schedule()
	check("at its start time", map[string]string{"d-a": "team a at its cpu limit", "r-c": "deadline jobs first", "r-e": "deadline jobs first"})
}
