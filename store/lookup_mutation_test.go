package store

import (
	"context"
	"sort"
	"testing"

	"github.com/google/uuid"
)

// Tests for the code of lookup.go that only other packages' tests ran
// (mutants "not covered" by this package's tests; docs/testing.md).

// TestJobsByID: the jobs that exist among the ids asked for, none for no
// ids.
func TestJobsByID(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var ids []string
	for range 3 {
		j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	if got, err := s.JobsByID(ctx, nil); err != nil || got != nil {
		t.Fatalf("no ids: %+v, %v; want nothing", got, err)
	}
	got, err := s.JobsByID(ctx, []string{ids[2], uuid.NewString(), ids[0]})
	if err != nil || len(got) != 2 {
		t.Fatalf("two of three ids stored: %d jobs, %v; want 2", len(got), err)
	}
	gotIDs := []string{got[0].ID, got[1].ID}
	want := []string{ids[0], ids[2]}
	sort.Strings(gotIDs)
	sort.Strings(want)
	if gotIDs[0] != want[0] || gotIDs[1] != want[1] || got[0].Executors != 2 {
		t.Fatalf("jobs %v (executors %d); want %v with their specs", gotIDs, got[0].Executors, want)
	}
}
