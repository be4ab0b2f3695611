package scheduler

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

type fakeHolds struct {
	mu   sync.Mutex
	held map[string]string
}

func (f *fakeHolds) HeldTeams() map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.held)
}

func (f *fakeHolds) set(m map[string]string) {
	f.mu.Lock()
	f.held = m
	f.mu.Unlock()
}

func ofTeam(team string) jobOpt { return func(j *Job) { j.Team = team } }

// TestBudgetHold: a team held for its budget has its waiting jobs (deadline
// ones too) wait with the reason, without holding other teams' regular
// jobs back; once released, they start.
func TestBudgetHold(t *testing.T) {
	holds := &fakeHolds{held: map[string]string{"a": "team a over its daily budget $5.00"}}
	h := newHarness(t, Config{Budgets: holds}, agent("n1", 8, 16384, 1))
	h.schedule()
	h.submit(
		mkJob("d-a", 1, 2, ofTeam("a"), withDeadline(time.Hour)),
		mkJob("r-a", 1, 2, ofTeam("a"), submittedAt(time.Second)),
		mkJob("r-b", 1, 2, ofTeam("b"), submittedAt(2*time.Second)),
	)
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"r-b"}) {
		t.Fatalf("started %v, want only team b's job", got)
	}
	for _, id := range []string{"d-a", "r-a"} {
		if j := h.store.get(id); j.State != Queued || !strings.Contains(j.WaitingReason, "over its daily budget $5.00") {
			t.Errorf("%s: %s %q, want it queued for the budget", id, j.State, j.WaitingReason)
		}
	}
	holds.set(nil)
	h.core.ClusterChanged()
	h.schedule()
	got := h.cluster.appliedIDs()
	slices.Sort(got)
	if !slices.Equal(got, []string{"d-a", "r-a", "r-b"}) {
		t.Fatalf("after the release started %v, want every job", got)
	}
}

// TestBudgetHoldPowersNothingOn: a held team's job whose start time is a
// boot away waits for the budget; it has no agent powered on for it (the
// start-time path used to run before the budget's).
func TestBudgetHoldPowersNothingOn(t *testing.T) {
	off1 := fullAgent(agent("off1", 8, 32768, 0.48))
	d := testDecider(t, Config{Policy: "bfd"})
	dq := entriesOf(mkJob("later", 1, 4, ofTeam("a"), withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour+40*time.Minute)))
	in := passInput{now: t0.Add(2*time.Hour + 39*time.Minute), snap: snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)}, "a1=0"),
		standby: []placement.Agent{off1}, boot: BootState{BootTime: time.Minute}, deadline: dq, full: true,
		budgetHeld: map[string]string{"a": "team a over its daily budget $5.00"}}
	got := describeBoot(d.decide(in).decisions)
	if want := []string{"wait later: team a over its daily budget $5.00"}; !slices.Equal(got, want) {
		t.Fatalf("decisions %q, want %q", got, want)
	}
}
