package store

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests for the code of drivers.go that only other packages' tests ran
// (mutants "not covered" by this package's tests; docs/testing.md).

// TestNoteAndPlan: Note appends an event that keeps the job's state (and
// refuses an unknown job); Plan gives the stored placement as a plan, and
// ErrNotFound for a job without one.
func TestNoteAndPlan(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Note(ctx, j.ID, "driver launched on S1"); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Events(ctx, j.ID)
	if err != nil || len(evs) != 2 {
		t.Fatalf("events %+v, %v; want the submission and the note", evs, err)
	}
	if e := evs[1]; e.Reason != "driver launched on S1" || e.From == nil || *e.From != scheduler.Submitted || e.To != scheduler.Submitted {
		t.Fatalf("note event %+v; want SUBMITTED -> SUBMITTED with the reason", e)
	}
	if err := s.Note(ctx, uuid.NewString(), "x"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("note on an unknown job: %v; want ErrNotFound", err)
	}

	if _, err := s.Plan(ctx, j.ID); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("plan of a job never placed: %v; want ErrNotFound", err)
	}
	want := placement.Plan{Policy: "bfd", Outcome: "heuristic", Assignments: []placement.Assignment{
		{AgentID: "S1", Hostname: "h1", Executors: 1}, {AgentID: "S2", Hostname: "h2", Executors: 2}}}
	if err := s.SavePlacement(ctx, j.ID, want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Plan(ctx, j.ID)
	if err != nil || got.Policy != "bfd" || got.Outcome != "heuristic" || len(got.Assignments) != 2 {
		t.Fatalf("plan %+v, %v; want bfd/heuristic with 2 assignments", got, err)
	}
	byAgent := map[string]placement.Assignment{}
	for _, a := range got.Assignments {
		byAgent[a.AgentID] = a
	}
	for _, a := range want.Assignments {
		if byAgent[a.AgentID] != a {
			t.Errorf("assignment on %s: %+v; want %+v", a.AgentID, byAgent[a.AgentID], a)
		}
	}
}
