package store

import (
	"context"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants of framework.go that mutation testing
// found alive (scripts/mutation.sh store; docs/testing.md).

// TestReservationsInAnyState: without states Reservations lists every
// reservation, of one job or of all, whatever its state, ordered by job
// and agent.
func TestReservationsInAnyState(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var ids []string
	for range 2 {
		j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	put := []scheduler.Reservation{
		{JobID: ids[0], AgentID: "S2", Role: "r0", CPUs: 1, MemMB: 1024, State: scheduler.ResReleased},
		{JobID: ids[0], AgentID: "S1", Role: "r0", CPUs: 2, MemMB: 2048, State: scheduler.ResReserved},
		{JobID: ids[1], AgentID: "S1", Role: "r1", CPUs: 3, MemMB: 3072, State: scheduler.ResReserving},
	}
	for _, r := range put {
		if err := s.PutReservation(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.Reservations(ctx, "")
	if err != nil || len(all) != 3 {
		t.Fatalf("all reservations: %+v, %v; want 3", all, err)
	}
	mine, err := s.Reservations(ctx, ids[0])
	if err != nil || len(mine) != 2 || mine[0].AgentID != "S1" || mine[1].AgentID != "S2" || mine[1].State != scheduler.ResReleased {
		t.Fatalf("job 0's reservations: %+v, %v; want S1 (reserved) then S2 (released)", mine, err)
	}
}
