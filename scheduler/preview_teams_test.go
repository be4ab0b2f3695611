package scheduler

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/teams"
)

// TestPreviewTeamHolds: the preview names the hold the pass would apply
// to the job now, in the pass's order (its team's budget, its start time,
// its team's maximum or the room owed to another team's guarantee, then
// fit), and promises a start only when the pass keeps it: each case
// previews the job, then submits it and runs a pass, and the pass must
// decide what the preview said.
//
// The cluster is one agent of 16 cpus. Team a (max 8 cpus) runs ra,
// holding 5 (2 executors of 2 cpus and a 1-cpu driver); team b has spent
// its budget; team g is guaranteed 8 cpus and, in the guarantee cases,
// waits with a deadline job of 7 cpus while team h's hog holds 11.
func TestPreviewTeamHolds(t *testing.T) {
	const budget = "team b over its daily budget $5.00 (held until 2026-01-02 00:00 UTC)"
	nb := withNotBefore(10 * time.Minute)
	cases := []struct {
		name string
		// guarantee: team h's hog runs and team g's deadline job waits.
		guarantee bool
		job       Job
		want      string // the waiting reason; "" a start now
		// passSays is the pass's reason in the queue view when it is not
		// want word for word.
		passSays string
	}{{
		name: "within its team's maximum: starts now (control)",
		job:  mkJob("a-small", 1, 1, inTeam("a")), // 2 cpus: a holds 7 of 8
	}, {
		name: "past its team's maximum: the team's limit",
		job:  mkJob("a-big", 2, 2, inTeam("a")), // 5 cpus: a would hold 10 of 8
		want: "team a at its cpu limit",
	}, {
		name: "deadline job past its team's maximum: the team's limit",
		job:  mkJob("a-dl", 2, 2, inTeam("a"), withDeadline(time.Hour)),
		want: "team a at its cpu limit",
	}, {
		name: "past its team's maximum, start time ahead: its start time",
		job:  mkJob("a-later", 2, 2, inTeam("a"), nb),
		want: "waiting for its start time 10:10 UTC",
	}, {
		name: "past its team's maximum, start time passed: the team's limit",
		job:  mkJob("a-due", 2, 2, inTeam("a"), withNotBefore(-time.Minute)),
		want: "team a at its cpu limit",
	}, {
		name: "start time passed, within its team's maximum: starts now (control)",
		job:  mkJob("a-due-small", 1, 1, inTeam("a"), withNotBefore(-time.Minute)),
	}, {
		name: "budget spent: the budget",
		job:  mkJob("b-1", 1, 1, inTeam("b")),
		want: budget,
	}, {
		name: "budget spent, start time ahead: the budget",
		job:  mkJob("b-later", 1, 1, inTeam("b"), nb),
		want: budget,
	}, {
		name: "team without limits: starts now (control)",
		job:  mkJob("c-1", 2, 2, inTeam("c")),
	}, {
		name:      "deadline job past its team's guarantee: the room is kept for team g",
		guarantee: true,
		job:       mkJob("x-dl", 1, 1, inTeam("x"), withDeadline(time.Hour)), // 2 cpus of the 5 free; g is owed 7
		want:      "team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g",
	}, {
		name:      "regular job of another team while g's deadline job waits: deadline jobs first (control)",
		guarantee: true,
		job:       mkJob("x-r", 1, 1, inTeam("x")),
		want:      "deadline jobs first: 1 waiting",
		passSays:  "deadline jobs first", // the view does not count them
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			holder := &teams.Holder{}
			holder.Set(teamsOf(t, "a max-cpus=8\ng guaranteed-cpus=8\n"))
			holds := &fakeHolds{held: map[string]string{"b": budget}}
			h := newHarness(t, Config{Policy: "bfd", Teams: holder, Budgets: holds}, agent("a1", 16, 65536, 0.24))
			running := []string{"ra"}
			h.submit(mkJob("ra", 2, 2, inTeam("a")))
			if c.guarantee {
				h.submit(mkJob("hog", 5, 2, inTeam("h"))) // 11 cpus
				running = append(running, "hog")
			}
			h.schedule()
			if c.guarantee {
				h.submit(mkJob("g-dl", 3, 2, inTeam("g"), withDeadline(5*time.Hour))) // 7 cpus: does not fit
				h.schedule()
			}
			if got := h.cluster.appliedIDs(); !slices.Equal(got, running) {
				t.Fatalf("set-up started %v, want %v", got, running)
			}
			p, err := h.core.Preview(context.Background(), c.job, t0)
			if err != nil {
				t.Fatal(err)
			}
			if p.StartsNow != (c.want == "") || p.WaitingReason != c.want {
				t.Errorf("preview: startsNow %v, waiting %q; want startsNow %v, waiting %q", p.StartsNow, p.WaitingReason, c.want == "", c.want)
			}
			if p.StartsNow != (p.EstimatedStart != nil) {
				t.Errorf("preview: startsNow %v with estimated start %v", p.StartsNow, p.EstimatedStart)
			}
			// The pass keeps the preview's promise.
			h.submit(c.job)
			h.schedule()
			started := slices.Contains(h.cluster.appliedIDs(), c.job.ID)
			reason := ""
			v := h.core.Queues()
			for _, q := range append(v.Deadline, v.Regular...) {
				if q.ID == c.job.ID {
					reason = q.WaitingReason
				}
			}
			says := p.WaitingReason
			if c.passSays != "" {
				says = c.passSays
			}
			if started != p.StartsNow || reason != says {
				t.Errorf("the pass: started %v, waiting %q; the preview said startsNow %v, waiting %q",
					started, reason, p.StartsNow, p.WaitingReason)
			}
		})
	}
}

// TestPreviewTeamsReload: the preview answers under the teams
// configuration in force, not the one an earlier preview of the same
// published queue read (the deadline jobs owed room are rebuilt from the
// published queue once per queue and configuration): while only team k
// has a guarantee, x's deadline job starts now; once g is guaranteed 8
// cpus, the room is kept for g's waiting deadline job.
func TestPreviewTeamsReload(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "g weight=2\nk guaranteed-cpus=4\n"))
	h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("hog", 5, 2, inTeam("h"))) // 11 cpus
	h.schedule()
	h.submit(mkJob("g-dl", 4, 2, inTeam("g"), withDeadline(5*time.Hour))) // 8 executor cpus, 6 free: does not fit
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"hog"}) {
		t.Fatalf("set-up started %v, want only hog", got)
	}
	x := mkJob("x-dl", 1, 1, inTeam("x"), withDeadline(time.Hour))
	p, err := h.core.Preview(context.Background(), x, t0)
	if err != nil || !p.StartsNow {
		t.Fatalf("preview %+v (%v), want a start now: g has no guarantee", p, err)
	}
	holder.Set(teamsOf(t, "g guaranteed-cpus=8\nk guaranteed-cpus=4\n"))
	p, err = h.core.Preview(context.Background(), x, t0)
	if err != nil || p.StartsNow || !strings.HasPrefix(p.WaitingReason, "team x past its guarantee") {
		t.Fatalf("preview after the reload %+v (%v), want a wait for the room kept for team g", p, err)
	}
}
