package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// queues.go (docs/testing.md, "Mutation testing").

import (
	"slices"
	"testing"
	"time"
)

func idsOf(es []*Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// TestQueueRemoveByHand: Remove drops the job with the id given and no
// other; RemoveEntry of an entry that is not in the queue (its key
// sorting anywhere, last included) reports false and changes nothing.
func TestQueueRemoveByHand(t *testing.T) {
	mk := func(id string, deadline time.Duration) *Entry {
		j := mkJob(id, 1, 1, withDeadline(deadline))
		return NewEntry(&j)
	}
	a, b, c := mk("a", time.Hour), mk("b", 2*time.Hour), mk("c", 3*time.Hour)
	dq := &DeadlineQueue{}
	dq.PushMany([]*Entry{c, a, b})
	if got := idsOf(dq.Entries()); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("queue %v", got)
	}
	for _, x := range []*Entry{mk("x", 4*time.Hour), mk("y", 90*time.Minute), mk("w", time.Minute)} {
		if dq.RemoveEntry(x) {
			t.Fatalf("RemoveEntry(%s), not queued, reported true", x.ID)
		}
	}
	if got := dq.Remove("b"); got != b {
		t.Fatalf("Remove(b) = %v", got)
	}
	if got := dq.Remove("zz"); got != nil {
		t.Fatalf("Remove(zz) = %v", got)
	}
	if got := idsOf(dq.Entries()); !slices.Equal(got, []string{"a", "c"}) {
		t.Fatalf("after removing b: %v", got)
	}
	jq := &JobQueue{FIFO: true}
	jq.PushMany([]*Entry{a, b, c})
	if got := jq.Remove("c"); got != c {
		t.Fatalf("JobQueue Remove(c) = %v", got)
	}
	if got := idsOf(jq.Entries()); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after removing c: %v", got)
	}
}
