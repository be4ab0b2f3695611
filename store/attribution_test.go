package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestSaveCostLedger: the ledger and the meter's total are saved
// together; saving the same (cumulative) entries again changes nothing, a
// lower figure (a late save) never lowers a row, two writers (two terms)
// add up, and the per-job and idle sums equal the total.
func TestSaveCostLedger(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	b0 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	j1, j2 := uuid.NewString(), uuid.NewString()
	w1, w2 := uuid.NewString(), uuid.NewString()
	first := []scheduler.LedgerEntry{
		{Bucket: b0, JobID: j1, Usage: scheduler.Usage{CostUSD: 0.5, CPUSeconds: 120, MemMBSeconds: 1000}},
		{Bucket: b0, JobID: "", Usage: scheduler.Usage{CostUSD: 0.25}},
	}
	if err := s.SaveCost(ctx, w1, 0.75, first); err != nil {
		t.Fatal(err)
	}
	// The same meter later: the bucket grew, a new one began.
	later := []scheduler.LedgerEntry{
		{Bucket: b0, JobID: j1, Usage: scheduler.Usage{CostUSD: 0.75, CPUSeconds: 180, MemMBSeconds: 1500}},
		{Bucket: b0, JobID: "", Usage: scheduler.Usage{CostUSD: 0.25}},
		{Bucket: b0.Add(time.Minute), JobID: j2, Usage: scheduler.Usage{CostUSD: 1}},
	}
	for i := 0; i < 2; i++ { // sent twice: counted once
		if err := s.SaveCost(ctx, w1, 2, later); err != nil {
			t.Fatal(err)
		}
	}
	// A late save of the first figures lowers nothing.
	if err := s.SaveCost(ctx, w1, 0.75, first); err != nil {
		t.Fatal(err)
	}
	// The next term's meter (base 2) attributes more to j1, and idle.
	next := []scheduler.LedgerEntry{
		{Bucket: b0.Add(5 * time.Minute), JobID: j1, Usage: scheduler.Usage{CostUSD: 0.5}},
		{Bucket: b0.Add(5 * time.Minute), JobID: "", Usage: scheduler.Usage{CostUSD: 0.5}},
		{Bucket: b0.Add(5 * time.Minute), JobID: "not-a-uuid", Usage: scheduler.Usage{CostUSD: 0.125}},
	}
	if err := s.SaveCost(ctx, w2, 3.125, next); err != nil {
		t.Fatal(err)
	}
	if v, err := s.CostTotal(ctx); err != nil || v != 3.125 {
		t.Fatalf("meter total %v %v; want 3.125", v, err)
	}
	costs, err := s.JobCosts(ctx, []string{j1, j2, uuid.NewString(), "junk"}, w2)
	if err != nil {
		t.Fatal(err)
	}
	if len(costs) != 2 {
		t.Fatalf("costs for %d jobs, want 2: %+v", len(costs), costs)
	}
	if c := costs[j1]; c.All.CostUSD != 1.25 || c.Writer.CostUSD != 0.5 || c.All.CPUSeconds != 180 || c.All.MemMBSeconds != 1500 {
		t.Fatalf("j1 %+v; want $1.25 in all, $0.5 by the second writer, 180 cpu-s, 1500 MiB-s", c)
	}
	if c := costs[j2]; c.All.CostUSD != 1 || c.Writer.CostUSD != 0 {
		t.Fatalf("j2 %+v; want $1, none by the second writer", c)
	}
	tot, err := s.CostLedgerTotals(ctx, w2)
	if err != nil {
		t.Fatal(err)
	}
	// idle: 0.25 (w1) + 0.5 + 0.125 (the entry without a job id) (w2).
	if math.Abs(tot.IdleUSD-0.875) > 1e-12 || math.Abs(tot.JobsUSD-2.25) > 1e-12 ||
		math.Abs(tot.IdleOtherWritersUSD-0.25) > 1e-12 || math.Abs(tot.JobsOtherUSD-1.75) > 1e-12 {
		t.Fatalf("totals %+v", tot)
	}
	if got := tot.IdleUSD + tot.JobsUSD; math.Abs(got-3.125) > 1e-12 {
		t.Fatalf("ledger adds up to %v, the meter to 3.125", got)
	}
	for _, bad := range []float64{-1, math.NaN()} {
		if err := s.SaveCost(ctx, w1, bad, nil); err == nil {
			t.Errorf("SaveCost(total %v) accepted", bad)
		}
	}
	if err := s.SaveCost(ctx, "nope", 1, nil); err == nil {
		t.Error("a writer that is not a uuid was accepted")
	}
}
