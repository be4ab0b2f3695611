package store

import (
	"context"
	"testing"

	"github.com/google/uuid"
)

// Tests written for the mutants that mutation testing found alive
// (scripts/mutation.sh store; docs/testing.md). Expected values are worked
// out by hand from the methods' contracts, not read from their output.

// TestSaveCostOfNothing: a meter that has cost nothing yet (a new term on
// an idle cluster) saves a total of $0: an amount, not an error.
func TestSaveCostOfNothing(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.SaveCost(ctx, uuid.NewString(), 0, nil); err != nil {
		t.Fatalf("SaveCost($0): %v", err)
	}
	if v, err := s.CostTotal(ctx); err != nil || v != 0 {
		t.Fatalf("meter total %v, %v; want 0", v, err)
	}
}
