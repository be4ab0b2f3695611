package store

import (
	"context"
	"testing"
)

// Tests written for the mutants of cost.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md).

// TestSaveCostTotalOfNothing: a meter total of $0 (a new meter on an idle
// cluster) is an amount, saved like any other.
func TestSaveCostTotalOfNothing(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.SaveCostTotal(ctx, 0); err != nil {
		t.Fatalf("SaveCostTotal(0): %v", err)
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM cost_meter WHERE id = 1 AND total_usd = 0`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d meter rows of $0, %v; want 1", n, err)
	}
}
