package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/teams"
)

// TestBudgetHeldAtMaxCountsOnce: a deadline job whose team is both held
// for its budget and at its maximum is left out of the deadline jobs that
// regular jobs wait behind once, not twice: counted twice, another team's
// deadline job that waits for room no longer held the regular queue back,
// and a regular job took the room it waits for.
func TestBudgetHeldAtMaxCountsOnce(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "a max-cpus=6"))
	holds := &fakeHolds{}
	h := newHarness(t, Config{Policy: "bfd", Teams: holder, Budgets: holds}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("ra", 2, 2, inTeam("a"))) // team a holds 5 cpus of its 6
	if n := h.schedule(); n != 1 {
		t.Fatalf("started %d, want ra", n)
	}
	holds.set(map[string]string{"a": "team a over its daily budget $5.00"})
	h.submit(
		mkJob("d-a", 2, 2, inTeam("a"), withDeadline(time.Hour), submittedAt(time.Second)),   // at its maximum and its budget
		mkJob("d-b", 4, 4, inTeam("b"), withDeadline(time.Hour), submittedAt(2*time.Second)), // 16 cpus: waits for room
		mkJob("r-c", 2, 2, inTeam("c"), submittedAt(3*time.Second)),                          // fits now
	)
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"ra"}) {
		t.Fatalf("started %v, want only ra: r-c must wait behind deadline job d-b", got)
	}
	if j := h.store.get("r-c"); j.State != Queued || !strings.Contains(j.WaitingReason, "deadline") {
		t.Errorf("r-c: %s %q, want it waiting behind the deadline jobs", j.State, j.WaitingReason)
	}
}
