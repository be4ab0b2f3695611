package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// preview.go's changed lines (tenth session; docs/testing.md, "Mutation
// testing"); the expected figures are derived by hand in the comments.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/teams"
)

// TestPreviewSlotHold: the preview names the executor-slot hold
// (slotReason, on the plan the job would start with) of a deadline job
// past its team's guarantee whose start would take the executor slots
// owed to another team, and the pass then holds it the same way; with a
// policy whose plan leaves those slots, both start it.
//
// Agents a1-a4 of 8 cpus, with 4, 3, 3 and 3 cpus free: 13. Team g
// (guaranteed 16 cpus) waits with g1, 2 executors of 4 cpus and a 1-cpu
// driver (9 cpus): a1 alone holds a 4-cpu executor now, so g1 does not fit,
// and g is owed one 4-cpu slot (what the agents hold now, less than the
// 2 g1 asks for). x1 (team x, no guarantee), a deadline job of 1 executor
// of 2 cpus and a 1-cpu driver (3 cpus), passes the aggregate check
// (13 - 3 = 10 >= 9). firstfit places it on a1 (2 cpus left: no 4-cpu
// slot remains), bfd on a2 (1 cpu left: a1 keeps its slot).
func TestPreviewSlotHold(t *testing.T) {
	const held = "team x past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team g (their executors would no longer fit)"
	for _, c := range []struct {
		policy string
		want   string // "" a start now
	}{
		{"firstfit", held},
		{"bfd", ""},
	} {
		t.Run(c.policy, func(t *testing.T) {
			holder := &teams.Holder{}
			holder.Set(teamsOf(t, "g guaranteed-cpus=16"))
			h := newHarness(t, Config{Policy: c.policy, Teams: holder},
				agent("a1", 8, 65536, 0.24), agent("a2", 8, 65536, 0.24), agent("a3", 8, 65536, 0.24), agent("a4", 8, 65536, 0.24))
			for i, free := range []float64{4, 3, 3, 3} { // the rest held outside the framework
				h.cluster.agents[i].FreeCPUs = free
			}
			h.submit(mkJob("g1", 2, 4, inTeam("g"), withDeadline(5*time.Hour)))
			if n := h.schedule(); n != 0 {
				t.Fatalf("set-up started %d, want g1 waiting", n)
			}
			x1 := mkJob("x1", 1, 2, inTeam("x"), withDeadline(time.Hour))
			p, err := h.core.Preview(context.Background(), x1, t0)
			if err != nil {
				t.Fatal(err)
			}
			if p.StartsNow != (c.want == "") || p.WaitingReason != c.want || p.Plan == nil {
				t.Fatalf("preview: startsNow %v, waiting %q, plan %v; want startsNow %v, waiting %q, a plan",
					p.StartsNow, p.WaitingReason, p.Plan, c.want == "", c.want)
			}
			h.submit(x1)
			h.schedule()
			started := slices.Contains(h.cluster.appliedIDs(), "x1")
			reason := ""
			for _, q := range h.core.Queues().Deadline {
				if q.ID == "x1" {
					reason = q.WaitingReason
				}
			}
			if started != p.StartsNow || reason != c.want {
				t.Errorf("the pass: started %v, waiting %q; the preview said startsNow %v, waiting %q", started, reason, p.StartsNow, p.WaitingReason)
			}
		})
	}
}

// TestPreviewOwedRoomCountsDrivers: the room a preview keeps for another
// team's waiting deadline jobs counts their drivers, as the pass does:
// the published queue's jobs carry their drivers' cpus and memory into
// the preview's team policy (QueuedJob.entry).
//
// Two agents of 8 cpus and 64 GiB, with 3 cpus free each (the rest held
// outside the framework). Team g's deadline job g1 (1 executor of 4 cpus
// and 1408 MiB, a driver of 1 cpu and 1024 MiB) does not fit: it waits,
// owed 5 cpus and 2432 MiB within g's guarantee. x1 (team x, no
// guarantee; 1 executor of 1 cpu and 1408 MiB, the same driver) takes 2
// cpus and 2432 MiB.
//   - g guaranteed 8 cpus: 6 - 2 = 4 cpus left, short of 5 (of 4 without
//     g1's driver: x1 would start).
//   - g guaranteed 4 GiB, 2000 MiB free on each agent: 4000 - 2432 =
//     1568 MiB left, short of 2432 (of 1408 without the driver).
func TestPreviewOwedRoomCountsDrivers(t *testing.T) {
	const held = "team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g"
	driver := func(j *Job) { j.Driver = &Driver{Cores: 1, MemoryMB: 1024} }
	for _, c := range []struct {
		name  string
		teams string
		memMB float64 // free on each agent
	}{
		{"cpus", "g guaranteed-cpus=8", 65536},
		{"memory", "g guaranteed-memory=4g", 2000},
	} {
		t.Run(c.name, func(t *testing.T) {
			holder := &teams.Holder{}
			holder.Set(teamsOf(t, c.teams))
			h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 8, 65536, 0.24), agent("a2", 8, 65536, 0.24))
			for i := range h.cluster.agents {
				h.cluster.agents[i].FreeCPUs, h.cluster.agents[i].FreeMemMB = 3, c.memMB
			}
			h.submit(mkJob("g1", 1, 4, inTeam("g"), withDeadline(5*time.Hour), driver))
			if n := h.schedule(); n != 0 || h.store.get("g1").State != Queued {
				t.Fatalf("set-up: started %d, g1 %s; want g1 waiting", n, h.store.get("g1").State)
			}
			x1 := mkJob("x1", 1, 1, inTeam("x"), withDeadline(time.Hour), driver)
			p, err := h.core.Preview(context.Background(), x1, t0)
			if err != nil {
				t.Fatal(err)
			}
			if p.StartsNow || p.WaitingReason != held {
				t.Fatalf("preview: startsNow %v, waiting %q; want %q", p.StartsNow, p.WaitingReason, held)
			}
			h.submit(x1)
			h.schedule()
			reason := ""
			for _, q := range h.core.Queues().Deadline {
				if q.ID == "x1" {
					reason = q.WaitingReason
				}
			}
			if slices.Contains(h.cluster.appliedIDs(), "x1") || reason != held {
				t.Errorf("the pass: started %v, waiting %q; want it held as the preview said", slices.Contains(h.cluster.appliedIDs(), "x1"), reason)
			}
		})
	}
}
