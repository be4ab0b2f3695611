package store

import (
	"context"
	"math"
	"testing"
)

func TestCostTotal(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if v, err := s.CostTotal(ctx); err != nil || v != 0 {
		t.Fatalf("never saved: %v %v", v, err)
	}
	for _, v := range []float64{1.5, 2.25} {
		if err := s.SaveCostTotal(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	// A smaller total (a deposed leader's late save) does not lower it.
	if err := s.SaveCostTotal(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if v, err := s.CostTotal(ctx); err != nil || v != 2.25 {
		t.Fatalf("after saves: %v %v; want 2.25", v, err)
	}
	for _, bad := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := s.SaveCostTotal(ctx, bad); err == nil {
			t.Errorf("SaveCostTotal(%v) accepted", bad)
		}
	}
}
