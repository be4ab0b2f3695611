package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// decide_preempt.go (docs/testing.md, "Mutation testing"); expected
// figures by hand in the comments.

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// onA1 is a job running on agent a1 since a minute before t0 with one
// executor of 4 cpus, expected to end at t0 + end (no estimate: end 0).
func onA1(id string, end time.Duration) runningJob {
	r := runningJob{id: id, state: Running, startedAt: ptr(t0.Add(-time.Minute)),
		plan:   &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}},
		demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}
	if end > 0 {
		r.estimate = end + time.Minute
	}
	return r
}

// TestRoomExpectedByHand: when the room for a waiting deadline job is
// expected, from the running jobs' ends. a1 (8 cpus) is held by two jobs
// of 4 cpus; the deadline job needs 4 cpus, for 10 m, by t0 + 15 m: its
// latest start is t0 + 4 m 50 s, so any room after that is a miss, and
// with preemption off the view shows when the room comes:
//   - b ends at +10 m, a at +40 m: +10 m (the earliest end, whatever the
//     ids' order);
//   - a ends at +40 m, z has no estimate: its end is unknown, so the room
//     comes when a ends, +40 m (not "now").
func TestRoomExpectedByHand(t *testing.T) {
	for _, c := range []struct {
		name    string
		running []runningJob
		want    time.Duration
	}{
		{"the earliest end", []runningJob{onA1("a", 40*time.Minute), onA1("b", 10*time.Minute)}, 10 * time.Minute},
		{"no estimate: unknown, not now", []runningJob{onA1("a", 40*time.Minute), onA1("z", 0)}, 40 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd"})
			dq := entriesOf(mkJob("d", 1, 4, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
			snap := snapOf([]placement.Agent{agent("a1", 8, 32768, 0.48)}, "a1=0")
			out := d.decide(passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: 1, full: true, running: c.running})
			if len(out.decisions) != 1 {
				t.Fatalf("decisions %v", describe(out.decisions, 0))
			}
			pv := out.decisions[0].wait.pre
			if pv == nil || !pv.WillMiss || pv.RoomExpectedAt == nil || !pv.RoomExpectedAt.Equal(t0.Add(c.want)) {
				t.Fatalf("view %+v, want a miss with the room at +%s", pv, c.want)
			}
			if want := t0.Add(4*time.Minute + 50*time.Second); !pv.LatestStart.Equal(want) {
				t.Fatalf("latest start %s, want %s", pv.LatestStart.Format(time.TimeOnly), want.Format(time.TimeOnly))
			}
		})
	}
}

// TestPreemptionScanLimit: a pass looks at the first 256 waiting deadline
// jobs for preemption (preempt.go's documented bound), in EDF order: with
// 257 waiting, each of which will miss its deadline waiting (a1's 4 cpus
// are held until +40 m; each needs them for 10 m by +15 m + i s), the
// first 256 get a preemption view, the 257th none.
func TestPreemptionScanLimit(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	var jobs []Job
	for i := range 257 {
		jobs = append(jobs, mkJob(fmt.Sprintf("d%03d", i), 1, 4, withDeadline(15*time.Minute+time.Duration(i)*time.Second), withEstimate(10*time.Minute)))
	}
	dq := entriesOf(jobs...)
	snap := snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)}, "a1=0")
	out := d.decide(passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: len(dq), full: true,
		running: []runningJob{onA1("r", 40*time.Minute)}})
	if len(out.decisions) != 257 {
		t.Fatalf("%d decisions, want 257", len(out.decisions))
	}
	for i, dc := range out.decisions {
		if want := fmt.Sprintf("d%03d", i); dc.entry.ID != want {
			t.Fatalf("decision %d is about %s, want %s", i, dc.entry.ID, want)
		}
		if got, want := dc.wait.pre != nil && dc.wait.pre.WillMiss, i < 256; got != want {
			t.Fatalf("%s (number %d): a miss in its view: %v, want %v", dc.entry.ID, i+1, got, want)
		}
	}
}

// TestTwoDeadlineJobsEvictTwoJobs: a job evicted for one deadline job is
// not evicted again for the next one in the same pass. a1 (8 cpus) is
// held until +40 m by r1 and r2 (4 cpus each); d1 and d2 (4 cpus for
// 10 m, by +15 m and +16 m) will both miss their deadlines waiting; with
// up to all the running cpus evictable a minute, each evicts one of them,
// not both the same.
func TestTwoDeadlineJobsEvictTwoJobs(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd", Preemption: PreemptMDF, PreemptMaxShare: 1})
	dq := entriesOf(mkJob("d1", 1, 4, withDeadline(15*time.Minute), withEstimate(10*time.Minute)),
		mkJob("d2", 1, 4, withDeadline(16*time.Minute), withEstimate(10*time.Minute)))
	snap := snapOf([]placement.Agent{agent("a1", 8, 32768, 0.48)}, "a1=0")
	out := d.decide(passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: 2, full: true,
		running: []runningJob{onA1("r1", 40*time.Minute), onA1("r2", 40*time.Minute)}})
	got := describe(out.decisions, 0)
	one := []string{"evict r1 for d1", "evict r2 for d2"}
	other := []string{"evict r2 for d1", "evict r1 for d2"}
	if !slices.Equal(got, one) && !slices.Equal(got, other) {
		t.Fatalf("decisions %q, want %q or %q", got, one, other)
	}
}

// TestEvictingListFollowsTheVictims: a deadline job's list of jobs being
// evicted for it drops those that ended (v2 here), and a pass where none
// ended decides nothing about it. a1 (8 cpus) is held by v1 (being
// evicted for d) and r2; d needs 4 cpus for 10 m by +15 m.
func TestEvictingListFollowsTheVictims(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd", Preemption: PreemptMDF})
	v1 := onA1("v1", 40*time.Minute)
	v1.preempting = true
	running := []runningJob{v1, onA1("r2", 40*time.Minute)}
	dq := entriesOf(mkJob("d", 1, 4, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
	dq[0].evicting = []string{"v1", "v2"}
	snap := snapOf([]placement.Agent{agent("a1", 8, 32768, 0.48)}, "a1=0")
	in := passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: 1, full: true, running: running}
	out := d.decide(in)
	if len(out.decisions) != 1 {
		t.Fatalf("first pass: %v", describe(out.decisions, 0))
	}
	dc := out.decisions[0]
	if dc.kind != decWait || dc.decisionExtra == nil || !dc.setEvicting || !slices.Equal(dc.evicting, []string{"v1"}) {
		t.Fatalf("first pass: %v, want a wait that sets the evicting list to [v1]", describe(out.decisions, 0))
	}
	if pv := dc.wait.pre; pv == nil || !pv.WillMiss || !slices.Equal(pv.Evicting, []string{"v1"}) {
		t.Fatalf("first pass: view %+v, want evicting [v1]", pv)
	}
	// What apply does with it; then the same pass again: nothing changed.
	dq[0].evicting, dq[0].wait = dc.evicting, dc.wait
	in.now = t0.Add(time.Second)
	if out := d.decide(in); len(out.decisions) != 0 {
		t.Fatalf("second pass: %v, want no decision", describe(out.decisions, 0))
	}
}

// TestEvictionLimitWakesWhenTheOldestExpires: PreemptMaxShare (0.5 of the
// running jobs' cpus a minute): r1 and r2 hold a1's 8 cpus, so 4 may go
// a minute; evictions of 4 cpus at -50 s and -20 s (and of 8 at -2 m and
// at -60 s, out of the window [now - 1 m, now] open at its start) used 8
// already, so d (which would evict a 4-cpu job)
// is blocked until the oldest eviction in the window is a minute old:
// -50 s + 60 s = +10 s, the pass's wake time (d's own at-risk timer is
// later: +15 m - 10 m).
func TestEvictionLimitWakesWhenTheOldestExpires(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd", Preemption: PreemptMDF})
	dq := entriesOf(mkJob("d", 1, 4, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
	snap := snapOf([]placement.Agent{agent("a1", 8, 32768, 0.48)}, "a1=0")
	log := []evictRecord{{at: t0.Add(-2 * time.Minute), cpus: 8}, {at: t0.Add(-time.Minute), cpus: 8}, {at: t0.Add(-50 * time.Second), cpus: 4}, {at: t0.Add(-20 * time.Second), cpus: 4}}
	out := d.decide(passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: 1, full: true, evictLog: log,
		running: []runningJob{onA1("r1", 40*time.Minute), onA1("r2", 40*time.Minute)}})
	if len(out.decisions) != 1 || out.decisions[0].kind != decWait {
		t.Fatalf("decisions %v, want d to wait", describe(out.decisions, 0))
	}
	if pv := out.decisions[0].wait.pre; pv == nil || len(pv.WouldEvict) != 1 || pv.Blocked == "" {
		t.Fatalf("view %+v, want an eviction blocked by the limit", pv)
	}
	if want := t0.Add(10 * time.Second); !out.wakeAt.Equal(want) {
		t.Fatalf("wake at +%s, want +10s", out.wakeAt.Sub(t0))
	}
}

// TestEvictionLimitWithNoRecentEviction: with no eviction in the last
// minute a lone victim may go whatever its size, but two may not exceed
// the share: d needs a1's 8 cpus, held by r1 and r2 (4 each), and 0.5 x 8
// = 4 may go: blocked, and the pass looks again a minute from now (+1 m;
// d's at-risk timer, +15 m - 10 m, is later).
func TestEvictionLimitWithNoRecentEviction(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd", Preemption: PreemptMDF})
	dq := entriesOf(mkJob("d", 1, 8, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
	snap := snapOf([]placement.Agent{agent("a1", 8, 32768, 0.48)}, "a1=0")
	out := d.decide(passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: 1, full: true,
		running: []runningJob{onA1("r1", 40*time.Minute), onA1("r2", 40*time.Minute)}})
	if len(out.decisions) != 1 || out.decisions[0].kind != decWait {
		t.Fatalf("decisions %v, want d to wait", describe(out.decisions, 0))
	}
	if pv := out.decisions[0].wait.pre; pv == nil || len(pv.WouldEvict) != 2 || pv.Blocked == "" {
		t.Fatalf("view %+v, want an eviction of two jobs blocked by the limit", pv)
	}
	if want := t0.Add(time.Minute); !out.wakeAt.Equal(want) {
		t.Fatalf("wake at +%s, want +1m", out.wakeAt.Sub(t0))
	}
}
