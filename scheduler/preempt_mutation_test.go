package scheduler

// Preemption rules of docs/preemption.md that no other test pinned
// (issue 33), checked through the core's public calls (Submit, Schedule,
// Report, Queues) on the test cluster.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestEvictionAllowance: docs/preemption.md: a deadline job is helped when
// room is expected later than its latest start less a 10 s allowance for
// the eviction itself. On one 8-cpu agent a regular job holds every cpu;
// the deadline job (8 x 1 cpu) is due at t0+60m and needs 10m: latest
// start t0+50m. The regular job is expected to end at t0+50m-5s (inside
// the allowance: evicted) or at t0+50m-15s (before it: left alone).
func TestEvictionAllowance(t *testing.T) {
	for _, tc := range []struct {
		name    string
		endsAt  time.Duration // the regular job's expected end
		evicted bool
	}{
		{"room 5 s before the latest start", 50*time.Minute - 5*time.Second, true},
		{"room 15 s before the latest start", 50*time.Minute - 15*time.Second, false},
		{"room after the latest start", 50*time.Minute + time.Second, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := preemptHarness(t, Config{})
			h.submit(mkJob("r", 8, 1, submittedAt(-time.Hour), withEstimate(tc.endsAt)))
			h.schedule()
			h.run("r") // started at t0: expected end t0 + endsAt
			h.submit(mkJob("d", 8, 1, withDeadline(time.Hour), withEstimate(10*time.Minute)))
			h.schedule()
			got := h.cluster.takePreempted()
			if tc.evicted != (len(got) == 1) {
				t.Fatalf("evicted %v, want eviction: %v", got, tc.evicted)
			}
			pv := h.core.Queues().Deadline[0].Preemption
			if tc.evicted != (pv != nil && pv.WillMiss) {
				t.Fatalf("view %+v, want a miss forecast: %v", pv, tc.evicted)
			}
		})
	}
}

// TestNothingMoreEvictedWhileEvictionsAreUnderWay: docs/preemption.md:
// "while evictions for a job are under way, nothing more is evicted for
// it". Two regular jobs of 4 cpus hold the 8-cpu agent; a deadline job of
// 4 cpus evicts one of them. Two minutes later (past the eviction share's
// window) the victim's driver has not gone yet: the next full passes evict
// nothing more, and the view names the pending victim. Once it is back in
// the queue the deadline job starts and the other job still runs.
func TestNothingMoreEvictedWhileEvictionsAreUnderWay(t *testing.T) {
	h := preemptHarness(t, Config{})
	h.submit(mkJob("r-old", 4, 1, submittedAt(-2*time.Hour), withEstimate(2*time.Hour)),
		mkJob("r-new", 4, 1, submittedAt(-time.Hour), withEstimate(2*time.Hour)))
	h.schedule()
	h.run("r-old")
	h.clock.Advance(time.Minute)
	h.run("r-new")
	h.clock.Advance(time.Minute)
	h.submit(mkJob("d", 4, 1, submittedAt(2*time.Minute), withDeadline(30*time.Minute), withEstimate(10*time.Minute)))
	h.schedule()
	first := h.cluster.takePreempted()
	if len(first) != 1 {
		t.Fatalf("first pass evicted %v, want one job", first)
	}
	for range 3 {
		h.clock.Advance(time.Minute)
		h.core.ClusterChanged() // a full pass, as any cluster change brings
		h.schedule()
		if more := h.cluster.takePreempted(); len(more) != 0 {
			t.Fatalf("evicted %v while %v is still being evicted", more, first)
		}
		pv := h.core.Queues().Deadline[0].Preemption
		if pv == nil || !slices.Equal(pv.Evicting, first) {
			t.Fatalf("view %+v, want evicting %v", pv, first)
		}
	}
	// The victim's driver is gone: the deadline job starts in its room.
	h.evictionsOf(first)
	h.schedule()
	if st := h.store.get("d").State; st != Reserving {
		t.Fatalf("deadline job %s once the eviction ended", st)
	}
	other := "r-old"
	if first[0] == "r-old" {
		other = "r-new"
	}
	if st := h.store.get(other).State; st != Running {
		t.Fatalf("%s %s: only one job had to go", other, st)
	}
}

// evictionsOf reports the given evicted jobs back to their queue.
func (h *harness) evictionsOf(ids []string) {
	h.t.Helper()
	for _, id := range ids {
		if err := h.core.Report(h.t.Context(), id, Queued, "preempted: driver killed"); err != nil {
			h.t.Fatalf("report %s back: %v", id, err)
		}
	}
}

// TestVictimCPUs: the cpus a victim frees are its executors times their
// size: 3 executors of 2 cpus on two agents hold 6.
func TestVictimCPUs(t *testing.T) {
	v := Victim{ID: "v", Plan: placement.Plan{Assignments: []placement.Assignment{{AgentID: "a", Executors: 2}, {AgentID: "b", Executors: 1}}},
		Demand: placement.Demand{Executors: 3, CPUs: 2, MemMB: 1024}}
	if got := v.CPUs(); got != 6 {
		t.Fatalf("CPUs() = %v, want 6", got)
	}
}

// TestEligibleBoundaries: MaxPreemptions 0 sets no limit; a job expected
// to end exactly when the protection window does is not within it.
func TestEligibleBoundaries(t *testing.T) {
	forDeadline, forEst := t0.Add(30*time.Minute), 10*time.Minute
	often := victim("often", nil, time.Minute, time.Hour, 1, "a")
	often.Preemptions = 7
	if ok, why := (PreemptRules{Protect: time.Minute}).Eligible(&often, forDeadline, forEst, t0); !ok {
		t.Errorf("no limit (MaxPreemptions 0): a job evicted 7 times refused: %s", why)
	}
	// Ran 19 minutes of 20: exactly the 1-minute window left.
	edge := victim("edge", nil, 19*time.Minute, 20*time.Minute, 1, "a")
	if ok, why := (PreemptRules{Protect: time.Minute, MaxPreemptions: 3}).Eligible(&edge, forDeadline, forEst, t0); !ok {
		t.Errorf("a job with exactly the protection window left refused: %s", why)
	}
	edge = victim("edge", nil, 19*time.Minute+time.Second, 20*time.Minute, 1, "a")
	if ok, _ := (PreemptRules{Protect: time.Minute, MaxPreemptions: 3}).Eligible(&edge, forDeadline, forEst, t0); ok {
		t.Error("a job 59 s from its end is eligible with a 1-minute protection window")
	}
}

// TestFreeByHand: evicting a victim gives back executors x size on each
// of its agents, capped at the agent's capacity; unknown agents are
// skipped and the snapshot given is not changed.
func TestFreeByHand(t *testing.T) {
	s := placement.Snapshot{Agents: []placement.Agent{
		{ID: "a", CPUs: 8, MemMB: 16384, FreeCPUs: 1, FreeMemMB: 2048},
		{ID: "b", CPUs: 4, MemMB: 8192, FreeCPUs: 1, FreeMemMB: 1024},
	}}
	v := Victim{ID: "v", Plan: placement.Plan{Assignments: []placement.Assignment{{AgentID: "a", Executors: 2}, {AgentID: "b", Executors: 2}, {AgentID: "gone", Executors: 1}}},
		Demand: placement.Demand{Executors: 5, CPUs: 2, MemMB: 3072}}
	got := Free(s, v)
	// a: 1 + 2 x 2 = 5 cpus, 2048 + 2 x 3072 = 8192 MiB; b: 1 + 4 = 5 -> 4 cpus, 1024 + 6144 = 7168 MiB.
	want := []struct{ cpus, mem float64 }{{5, 8192}, {4, 7168}}
	for i, w := range want {
		if a := got.Agents[i]; a.FreeCPUs != w.cpus || a.FreeMemMB != w.mem {
			t.Errorf("%s free %v cpus, %v MiB; want %v, %v", a.ID, a.FreeCPUs, a.FreeMemMB, w.cpus, w.mem)
		}
	}
	if s.Agents[0].FreeCPUs != 1 || s.Agents[1].FreeMemMB != 1024 {
		t.Errorf("Free changed its input: %+v", s.Agents)
	}
}

// TestWakeBeforeTheLatestStart: a deadline job whose room is expected in
// time is looked at again no later than its latest start less the
// eviction allowance (t0+50m-10s here), in case the estimates were wrong.
func TestWakeBeforeTheLatestStart(t *testing.T) {
	h := preemptHarness(t, Config{})
	h.submit(mkJob("r", 8, 1, submittedAt(-time.Hour), withEstimate(50*time.Minute-15*time.Second)))
	h.schedule()
	h.run("r")
	h.submit(mkJob("d", 8, 1, withDeadline(time.Hour), withEstimate(10*time.Minute)))
	h.schedule()
	if got := h.cluster.takePreempted(); len(got) != 0 {
		t.Fatalf("evicted %v", got)
	}
	want := t0.Add(50*time.Minute - 10*time.Second)
	if at, ok := h.core.NextWake(); !ok || at.After(want) {
		t.Fatalf("next wake %v (%v), want by %v", at, ok, want)
	}
}

// TestEvictionShareCountsCPUs: the per-minute share counts cpus, not
// executors. Two regular jobs of 4 executors of 2 cpus hold two 8-cpu
// agents; a deadline job needs all 16 cpus. With a share of 1 both may go
// at once (16 of 16 running cpus); with 0.5 neither (the pair is more than
// half, and the one-job exception is for a single victim).
func TestEvictionShareCountsCPUs(t *testing.T) {
	for _, tc := range []struct {
		share   float64
		evicted int
	}{{1, 2}, {0.5, 0}} {
		h := newHarness(t, Config{Preemption: PreemptMDF, PreemptMaxShare: tc.share},
			agent("a", 8, 65536, 0.48), agent("b", 8, 65536, 0.48))
		h.submit(mkJob("r1", 4, 2, submittedAt(-time.Hour), withEstimate(time.Hour)),
			mkJob("r2", 4, 2, submittedAt(-time.Hour), withEstimate(time.Hour)))
		h.schedule()
		h.run("r1")
		h.run("r2")
		h.submit(mkJob("d", 8, 2, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
		h.schedule()
		if got := h.cluster.takePreempted(); len(got) != tc.evicted {
			t.Errorf("share %v: evicted %v, want %d jobs", tc.share, got, tc.evicted)
		}
	}
}

// TestPreemptionViewEqual: two views are equal only when every field is.
func TestPreemptionViewEqual(t *testing.T) {
	at1, at2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	base := func() *PreemptionView {
		return &PreemptionView{LatestStart: t0, RoomExpectedAt: &at1, WillMiss: true, Policy: PreemptMDF,
			Evicting: []string{"a"}, WouldEvict: []string{"b"}, Blocked: "x"}
	}
	if !base().equal(base()) || !(*PreemptionView)(nil).equal(nil) {
		t.Fatal("equal views differ")
	}
	if base().equal(nil) || (*PreemptionView)(nil).equal(base()) {
		t.Fatal("a view equals nil")
	}
	for name, change := range map[string]func(v *PreemptionView){
		"latest start": func(v *PreemptionView) { v.LatestStart = t0.Add(time.Second) },
		"room":         func(v *PreemptionView) { v.RoomExpectedAt = &at2 },
		"no room":      func(v *PreemptionView) { v.RoomExpectedAt = nil },
		"will miss":    func(v *PreemptionView) { v.WillMiss = false },
		"policy":       func(v *PreemptionView) { v.Policy = PreemptSRT },
		"evicting":     func(v *PreemptionView) { v.Evicting = []string{"c"} },
		"would evict":  func(v *PreemptionView) { v.WouldEvict = nil },
		"blocked":      func(v *PreemptionView) { v.Blocked = "y" },
	} {
		v := base()
		change(v)
		if v.equal(base()) || base().equal(v) {
			t.Errorf("views that differ in %s are equal", name)
		}
	}
}

// TestRoomAfterTheSecondEnd: the room is expected when enough running
// jobs have ended, not at the first end. On one 8-cpu agent r1 (4 cpus)
// ends at t0+10m and r2 (4 cpus) at t0+2h; a deadline job of 8 cpus due
// at t0+60m (10m long) has room only at t0+2h: it will miss waiting.
func TestRoomAfterTheSecondEnd(t *testing.T) {
	h := preemptHarness(t, Config{Preemption: PreemptNone})
	h.submit(mkJob("r1", 4, 1, submittedAt(-time.Hour), withEstimate(10*time.Minute)),
		mkJob("r2", 4, 1, submittedAt(-time.Hour), withEstimate(2*time.Hour)))
	h.schedule()
	h.run("r1")
	h.run("r2")
	h.submit(mkJob("d", 8, 1, withDeadline(time.Hour), withEstimate(10*time.Minute)))
	h.schedule()
	pv := h.core.Queues().Deadline[0].Preemption
	if pv == nil || !pv.WillMiss || pv.RoomExpectedAt == nil || !pv.RoomExpectedAt.Equal(t0.Add(2*time.Hour)) {
		t.Fatalf("view %+v, want a miss with room at t0+2h", pv)
	}
}

// TestEvictionViewAndLimitMessage: a view that evicts carries no blocked
// reason; the eviction limit's reason names the share in percent.
func TestEvictionViewAndLimitMessage(t *testing.T) {
	h := newHarness(t, Config{Preemption: PreemptMDF, PreemptMaxShare: 0.25},
		agent("a", 8, 65536, 0.48), agent("b", 8, 65536, 0.48))
	h.submit(mkJob("r1", 8, 1, submittedAt(-time.Hour), withEstimate(time.Hour)),
		mkJob("r2", 8, 1, submittedAt(-time.Hour), withEstimate(time.Hour)))
	h.schedule()
	h.run("r1")
	h.run("r2")
	h.submit(mkJob("d1", 8, 1, withDeadline(15*time.Minute), withEstimate(10*time.Minute)),
		mkJob("d2", 8, 1, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
	h.schedule()
	var evicting, blocked *PreemptionView
	for _, q := range h.core.Queues().Deadline {
		switch pv := q.Preemption; {
		case pv != nil && len(pv.Evicting) > 0:
			evicting = pv
		case pv != nil && len(pv.WouldEvict) > 0:
			blocked = pv
		}
	}
	if evicting == nil || evicting.Blocked != "" || len(evicting.WouldEvict) != 0 {
		t.Errorf("evicting view %+v, want no blocked reason", evicting)
	}
	if blocked == nil || !strings.Contains(blocked.Blocked, "(25% of the running jobs' cpus per minute)") {
		t.Errorf("blocked view %+v, want the limit of 25%%", blocked)
	}
}
