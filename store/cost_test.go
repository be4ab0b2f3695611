package store

import (
	"context"
	"math"
	"testing"
	"time"
)

func TestCostTotal(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if v, err := s.CostTotal(ctx); err != nil || v != 0 {
		t.Fatalf("never saved: %v %v", v, err)
	}
	if v, at, err := s.CostSaved(ctx); err != nil || v != 0 || !at.IsZero() {
		t.Fatalf("never saved: %v %v %v", v, at, err)
	}
	for _, v := range []float64{1.5, 2.25} {
		if err := s.SaveCostTotal(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	_, savedAt, err := s.CostSaved(ctx)
	if err != nil || savedAt.IsZero() {
		t.Fatalf("saved at %v, %v", savedAt, err)
	}
	time.Sleep(2 * time.Millisecond) // the store's clock must move for the check below to mean anything
	// A smaller total (a deposed leader's late save) does not lower it,
	// nor move the checkpoint's time (the cost of the time after it would
	// be lost at the next start).
	if err := s.SaveCostTotal(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if v, at, err := s.CostSaved(ctx); err != nil || v != 2.25 || !at.Equal(savedAt) {
		t.Fatalf("after saves: %v at %v, %v; want 2.25 at %v", v, at, err, savedAt)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := s.SaveCostTotal(ctx, bad); err == nil {
			t.Errorf("SaveCostTotal(%v) accepted", bad)
		}
	}
}
