package scheduler

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

func at(d time.Duration) *time.Time { t := t0.Add(d); return &t }

// victim makes a running job of e executors of 1 cpu on agent a.
func victim(id string, deadline *time.Time, ranFor, estimate time.Duration, e int, agentID string) Victim {
	return Victim{ID: id, Deadline: deadline, RunningSince: t0.Add(-ranFor), Estimate: estimate,
		Plan:   placement.Plan{Assignments: []placement.Assignment{{AgentID: agentID, Executors: e}}},
		Demand: placement.Demand{Executors: e, CPUs: 1, MemMB: 1024}}
}

func ids(vs []Victim) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.ID
	}
	return out
}

// TestOrderVictims: each policy's order on hand-made running jobs (now is
// t0): regular jobs first, then the policy's key.
func TestOrderVictims(t *testing.T) {
	vs := []Victim{
		// deadline jobs: deadline, ran, estimate -> remaining, laxity
		victim("d-far", at(90*time.Minute), 10*time.Minute, 80*time.Minute, 1, "a"), // rem 70m, lax 20m
		victim("d-lax", at(60*time.Minute), 50*time.Minute, 55*time.Minute, 1, "a"), // rem 5m, lax 55m
		victim("d-long", at(70*time.Minute), 0, 65*time.Minute, 1, "a"),             // rem 65m, lax 5m
		victim("r-young", nil, 1*time.Minute, 30*time.Minute, 1, "a"),               // regular, rem 29m
		victim("r-old", nil, 20*time.Minute, 100*time.Minute, 1, "a"),               // regular, rem 80m
		victim("r-noest", nil, 5*time.Minute, 0, 1, "a"),                            // regular, remaining unknown
	}
	cases := []struct {
		p    PreemptionPolicy
		want []string
	}{
		// Regular jobs tie under MDF and MLF (infinitely far): the one that
		// ran the shortest first.
		{PreemptMDF, []string{"r-young", "r-noest", "r-old", "d-far", "d-long", "d-lax"}},
		{PreemptMLF, []string{"r-young", "r-noest", "r-old", "d-lax", "d-far", "d-long"}},
		// SRT: the longest remaining first; unknown counts as longest.
		{PreemptSRT, []string{"r-noest", "r-old", "r-young", "d-far", "d-long", "d-lax"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.p), func(t *testing.T) {
			got := slices.Clone(vs)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(got), func(i, j int) { got[i], got[j] = got[j], got[i] })
			OrderVictims(tc.p, got, t0)
			if !slices.Equal(ids(got), tc.want) {
				t.Fatalf("order %v, want %v", ids(got), tc.want)
			}
		})
	}
}

// TestEligible: who may be evicted for a deadline job due at t0+30m that
// needs 10m.
func TestEligible(t *testing.T) {
	rules := PreemptRules{Protect: time.Minute, MaxPreemptions: 3}
	forDeadline, forEst := t0.Add(30*time.Minute), 10*time.Minute
	cases := []struct {
		name string
		v    Victim
		ok   bool
	}{
		{"regular", victim("r", nil, time.Minute, 20*time.Minute, 1, "a"), true},
		{"regular without estimate", victim("r", nil, time.Minute, 0, 1, "a"), true},
		{"about to finish", victim("r", nil, 19*time.Minute+30*time.Second, 20*time.Minute, 1, "a"), false},
		{"evicted too often", func() Victim { v := victim("r", nil, 0, time.Hour, 1, "a"); v.Preemptions = 3; return v }(), false},
		// Later deadline, restart after the 10 m job and still make it: 10 + 20 <= 40.
		{"later deadline, safe", victim("d", at(40*time.Minute), time.Minute, 20*time.Minute, 1, "a"), true},
		// Later deadline but 10 + 20 > 29: it would miss its own.
		{"later deadline, unsafe", victim("d", at(29*time.Minute+59*time.Second), 0, 20*time.Minute, 1, "a"), false},
		{"earlier deadline", victim("d", at(25*time.Minute), 0, 5*time.Minute, 1, "a"), false},
		// Started 5 m ago with 20 m to run and due in 10 m: misses anyway.
		{"misses anyway", victim("d", at(10*time.Minute), 5*time.Minute, 20*time.Minute, 1, "a"), true},
		{"deadline job without estimate", victim("d", at(time.Hour), 0, 0, 1, "a"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := rules.Eligible(&tc.v, forDeadline, forEst, t0)
			if ok != tc.ok {
				t.Fatalf("eligible %v (%s), want %v", ok, why, tc.ok)
			}
			if !ok && why == "" {
				t.Fatal("no reason given")
			}
		})
	}
}

// TestChooseVictimsJustEnough: victims are taken in order until the job
// fits, then those not needed are dropped.
func TestChooseVictimsJustEnough(t *testing.T) {
	snap := placement.Snapshot{Agents: []placement.Agent{
		{ID: "a", CPUs: 8, MemMB: 32768, FreeCPUs: 0, FreeMemMB: 0},
		{ID: "b", CPUs: 8, MemMB: 32768, FreeCPUs: 1, FreeMemMB: 8192},
	}}
	job := placement.Demand{Executors: 4, CPUs: 1, MemMB: 1024}
	small := victim("small", nil, 0, time.Hour, 2, "b")
	big := victim("big", nil, 0, time.Hour, 6, "a")
	other := victim("other", nil, 0, time.Hour, 2, "a")
	// In this order: small (b: 3 free, not enough), big (fits), then
	// small is dropped as not needed.
	got := ChooseVictims(snap, job, []Victim{small, big, other})
	if !slices.Equal(ids(got), []string{"big"}) {
		t.Fatalf("victims %v, want [big]", ids(got))
	}
	// Nothing frees enough: nil.
	if got := ChooseVictims(snap, placement.Demand{Executors: 20, CPUs: 1, MemMB: 1024}, []Victim{small, big, other}); got != nil {
		t.Fatalf("victims %v for a job that cannot fit", ids(got))
	}
	// Two small ones are needed together: both kept.
	got = ChooseVictims(snap, placement.Demand{Executors: 5, CPUs: 1, MemMB: 1024}, []Victim{small, other})
	if !slices.Equal(ids(got), []string{"small", "other"}) {
		t.Fatalf("victims %v, want [small other]", ids(got))
	}
}

// TestChooseVictimsProperty: on random clusters, the victims chosen let
// the job fit, and none of them can be left out.
func TestChooseVictimsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for it := 0; it < 500; it++ {
		var snap placement.Snapshot
		n := 1 + rng.IntN(6)
		for i := 0; i < n; i++ {
			c := float64(4 * (1 + rng.IntN(3)))
			snap.Agents = append(snap.Agents, placement.Agent{ID: fmt.Sprint("a", i), CPUs: c, MemMB: c * 4096, FreeCPUs: c, FreeMemMB: c * 4096})
		}
		var vs []Victim
		for k := 0; k < 1+rng.IntN(8); k++ {
			i := rng.IntN(n)
			a := &snap.Agents[i]
			e := rng.IntN(int(a.FreeCPUs) + 1)
			if e == 0 {
				continue
			}
			a.FreeCPUs -= float64(e)
			a.FreeMemMB -= float64(e) * 1024
			vs = append(vs, victim(fmt.Sprint("v", k), nil, 0, time.Hour, e, a.ID))
		}
		job := placement.Demand{Executors: 1 + rng.IntN(10), CPUs: 1, MemMB: 1024}
		fits := func(vs []Victim) bool { return placement.NewFitIndex(Free(snap, vs...)).Check(job) == nil }
		if fits(nil) {
			continue // the core asks only for jobs that do not fit
		}
		got := ChooseVictims(snap, job, vs)
		if got == nil {
			if fits(vs) {
				t.Fatalf("iteration %d: evicting all would let the job fit, but no victims were chosen", it)
			}
			continue
		}
		if !fits(got) {
			t.Fatalf("iteration %d: victims %v do not make room", it, ids(got))
		}
		for i := range got {
			if fits(slices.Delete(slices.Clone(got), i, i+1)) && len(got) > 1 {
				t.Fatalf("iteration %d: victim %s of %v is not needed", it, got[i].ID, ids(got))
			}
		}
	}
}

// preemptHarness: one agent of 8 cpus, preemption on.
func preemptHarness(t *testing.T, cfg Config) *harness {
	if cfg.Preemption == "" {
		cfg.Preemption = PreemptMDF
	}
	return newHarness(t, cfg, agent("a", 8, 65536, 0.48))
}

// run moves a started job to RUNNING.
func (h *harness) run(id string) {
	h.t.Helper()
	for _, st := range []State{Launching, Running} {
		if err := h.core.Report(context.Background(), id, st, ""); err != nil {
			h.t.Fatalf("report %s %s: %v", id, st, err)
		}
	}
}

// evictions reports the jobs the core evicted back to the queue (as the
// framework does once their drivers are gone) and returns their ids.
func (h *harness) evictions() []string {
	h.t.Helper()
	ids := h.cluster.takePreempted()
	for _, id := range ids {
		if err := h.core.Report(context.Background(), id, Queued, "preempted: driver killed"); err != nil {
			h.t.Fatalf("report %s back: %v", id, err)
		}
	}
	return ids
}

// TestDeadlineJobEvictsRegularJob: the cluster is held by two regular
// jobs; a deadline job that would miss its deadline waiting evicts one of
// them (just enough), starts in its room, and the regular job runs again
// afterwards, keeping its count and its lost work.
func TestDeadlineJobEvictsRegularJob(t *testing.T) {
	h := preemptHarness(t, Config{})
	h.submit(mkJob("r-old", 4, 1, submittedAt(-2*time.Hour), withEstimate(2*time.Hour)),
		mkJob("r-new", 4, 1, submittedAt(-time.Hour), withEstimate(2*time.Hour)))
	h.schedule()
	h.clock.Advance(10 * time.Minute)
	h.run("r-old")
	h.clock.Advance(10 * time.Minute)
	h.run("r-new")
	h.clock.Advance(time.Minute)
	// Due in 30 m, needs 10 m: the regular jobs end in 99 m and 109 m.
	h.submit(mkJob("d", 4, 1, submittedAt(21*time.Minute), withDeadline(30*time.Minute), withEstimate(10*time.Minute)))
	h.schedule()
	got := h.evictions()
	// MDF: regular jobs tie, the one that ran the shortest goes.
	if !slices.Equal(got, []string{"r-new"}) {
		t.Fatalf("evicted %v, want [r-new]", got)
	}
	j := h.store.get("r-new")
	if j.State != Queued || j.Preemptions != 1 || j.PreemptRequested != "" || !strings.HasPrefix(j.WaitingReason, "preempted: ") {
		t.Fatalf("victim after eviction: %s, %d preemptions, requested %q, reason %q", j.State, j.Preemptions, j.PreemptRequested, j.WaitingReason)
	}
	if j.LostWorkSeconds != 60 {
		t.Fatalf("lost work %gs, want 60 (it ran 1 minute)", j.LostWorkSeconds)
	}
	h.schedule()
	if st := h.store.get("d").State; st != Reserving {
		t.Fatalf("deadline job %s after the eviction, want it started", st)
	}
	if st := h.store.get("r-old").State; st != Running {
		t.Fatalf("r-old %s: only one victim was needed", st)
	}
	// The regular job waits behind the deadline job, then runs again.
	h.run("d")
	h.clock.Advance(10 * time.Minute)
	if err := h.core.Report(context.Background(), "d", Finished, ""); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	if st := h.store.get("r-new").State; st != Reserving {
		t.Fatalf("evicted job %s after the deadline job ended, want it started again", st)
	}
}

// TestNoEvictionWhenRoomComesInTime: the running job ends (by its
// estimate) before the deadline job's latest start: nothing is evicted.
func TestNoEvictionWhenRoomComesInTime(t *testing.T) {
	h := preemptHarness(t, Config{})
	h.submit(mkJob("r", 8, 1, submittedAt(-time.Hour), withEstimate(20*time.Minute)))
	h.schedule()
	h.run("r") // ends at t0+20m
	h.submit(mkJob("d", 4, 1, withDeadline(time.Hour), withEstimate(10*time.Minute)))
	h.schedule()
	if got := h.cluster.takePreempted(); len(got) != 0 {
		t.Fatalf("evicted %v though room comes at t0+20m, before the latest start t0+50m", got)
	}
	// The view does not claim a miss.
	q := h.core.Queues()
	if len(q.Deadline) != 1 || q.Deadline[0].Preemption != nil {
		t.Fatalf("deadline queue %+v", q.Deadline)
	}
}

// TestEvictionRules: protection window, max preemptions, the per-minute
// share, and the at-risk view of a job nothing may be evicted for.
func TestEvictionRules(t *testing.T) {
	deadlineJob := func(id string, after time.Duration) Job {
		return mkJob(id, 8, 1, submittedAt(after), withDeadline(30*time.Minute), withEstimate(10*time.Minute))
	}
	t.Run("protected", func(t *testing.T) {
		h := preemptHarness(t, Config{PreemptProtect: 5 * time.Minute})
		h.submit(mkJob("r", 8, 1, submittedAt(-time.Hour), withEstimate(10*time.Minute)))
		h.schedule()
		h.run("r")
		h.clock.Advance(6 * time.Minute) // 4 m left: protected
		h.submit(mkJob("d", 8, 1, submittedAt(6*time.Minute), withDeadline(11*time.Minute), withEstimate(10*time.Minute)))
		h.schedule()
		if got := h.cluster.takePreempted(); len(got) != 0 {
			t.Fatalf("evicted %v, a job 4 minutes from its end", got)
		}
		pv := h.core.Queues().Deadline[0].Preemption
		if pv == nil || !pv.WillMiss || pv.Blocked == "" || len(pv.WouldEvict) != 0 {
			t.Fatalf("view %+v, want a miss forecast with the reason nothing is evicted", pv)
		}
		if r := h.core.Queues().Deadline[0].WaitingReason; !strings.Contains(r, "will miss its deadline waiting") {
			t.Fatalf("reason %q", r)
		}
	})
	t.Run("max preemptions", func(t *testing.T) {
		h := preemptHarness(t, Config{MaxPreemptions: 1})
		h.submit(mkJob("r", 8, 1, submittedAt(-time.Hour), withEstimate(time.Hour)))
		h.schedule()
		h.run("r")
		h.submit(deadlineJob("d1", 0))
		h.schedule()
		if got := h.evictions(); !slices.Equal(got, []string{"r"}) {
			t.Fatalf("first eviction %v", got)
		}
		h.schedule()
		h.run("d1")
		if err := h.core.Report(context.Background(), "d1", Finished, ""); err != nil {
			t.Fatal(err)
		}
		h.schedule()
		h.run("r")
		h.clock.Advance(2 * time.Minute) // past the share window
		h.submit(deadlineJob("d2", 2*time.Minute))
		h.schedule()
		if got := h.cluster.takePreempted(); len(got) != 0 {
			t.Fatalf("evicted %v, a job evicted once already with max 1", got)
		}
	})
	t.Run("share per minute", func(t *testing.T) {
		h := newHarness(t, Config{Preemption: PreemptMDF, PreemptMaxShare: 0.5},
			agent("a", 8, 65536, 0.48), agent("b", 8, 65536, 0.48))
		h.submit(mkJob("r1", 8, 1, submittedAt(-time.Hour), withEstimate(time.Hour)),
			mkJob("r2", 8, 1, submittedAt(-time.Hour), withEstimate(time.Hour)))
		h.schedule()
		h.run("r1")
		h.run("r2")
		// Both due in 15 m with 10 m to run: neither can wait for the other.
		h.submit(mkJob("d1", 8, 1, withDeadline(15*time.Minute), withEstimate(10*time.Minute)),
			mkJob("d2", 8, 1, withDeadline(15*time.Minute), withEstimate(10*time.Minute)))
		h.schedule()
		// 8 of 16 running cpus may go per minute: one eviction.
		got := h.evictions()
		if len(got) != 1 {
			t.Fatalf("evicted %v, want one (half the running cpus)", got)
		}
		var blocked *PreemptionView
		for _, q := range h.core.Queues().Deadline {
			if q.Preemption != nil && len(q.Preemption.WouldEvict) > 0 {
				blocked = q.Preemption
			}
		}
		if blocked == nil || !strings.Contains(blocked.Blocked, "eviction limit") {
			t.Fatalf("no job shows the eviction limit: %+v", h.core.Queues().Deadline)
		}
		// A minute later the second may go.
		h.clock.Advance(time.Minute)
		h.schedule()
		if got := h.evictions(); len(got) != 1 {
			t.Fatalf("after a minute evicted %v, want one more", got)
		}
	})
	t.Run("none evicts nothing but says why", func(t *testing.T) {
		h := newHarness(t, Config{}, agent("a", 8, 65536, 0.48))
		h.submit(mkJob("r", 8, 1, submittedAt(-time.Hour), withEstimate(time.Hour)))
		h.schedule()
		h.run("r")
		h.submit(deadlineJob("d", 0))
		h.schedule()
		pv := h.core.Queues().Deadline[0].Preemption
		if pv == nil || !pv.WillMiss || pv.Policy != PreemptNone || pv.RoomExpectedAt == nil || !pv.RoomExpectedAt.Equal(t0.Add(time.Hour)) {
			t.Fatalf("view %+v, want a miss forecast with room at t0+1h", pv)
		}
		if h.cluster.takePreempted() != nil {
			t.Fatal("evicted with preemption off")
		}
	})
}

// TestPreemptionPolicyIsChecked: an unknown preemption policy is refused.
// (A cluster that evicts and a store that records it are required by the
// Cluster and Store interfaces.)
func TestPreemptionPolicyIsChecked(t *testing.T) {
	if _, err := New(Config{Preemption: "lifo"}, newTestCluster(), newTestStore(), nil); err == nil || !strings.Contains(err.Error(), "mdf") {
		t.Fatalf("New with an unknown policy: %v", err)
	}
}
