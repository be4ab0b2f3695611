package scheduler

import (
	"math"
	"testing"
)

// TestSizeHintsByHand: the spec's size hints win; a label counts only when
// the spec's field is 0 and the label is a number in (0, 1e6] GB or
// [1, 1,000,000] iterations (validated at submission; here an out-of-range
// or unparsable label is unknown: 0).
func TestSizeHintsByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		specGB float64
		specIt int
		labels map[string]string
		wantGB float64
		wantIt int
	}{
		{"no hints", 0, 0, nil, 0, 0},
		{"the spec's fields win over labels", 5, 3, map[string]string{InputSizeLabel: "7", IterationsLabel: "9"}, 5, 3},
		{"labels when the spec has none, spaces trimmed", 0, 0, map[string]string{InputSizeLabel: " 7.5 ", IterationsLabel: " 9 "}, 7.5, 9},
		{"labels of 0 are unknown", 0, 0, map[string]string{InputSizeLabel: "0", IterationsLabel: "0"}, 0, 0},
		{"negative labels are unknown", 0, 0, map[string]string{InputSizeLabel: "-3", IterationsLabel: "-2"}, 0, 0},
		{"the largest labels count", 0, 0, map[string]string{InputSizeLabel: "1000000", IterationsLabel: "1000000"}, 1e6, 1_000_000},
		{"past the largest: unknown", 0, 0, map[string]string{InputSizeLabel: "1000000.5", IterationsLabel: "1000001"}, 0, 0},
		{"unparsable: unknown", 0, 0, map[string]string{InputSizeLabel: "big", IterationsLabel: "2.5"}, 0, 0},
		{"the smallest counts", 0, 0, map[string]string{InputSizeLabel: "0.001", IterationsLabel: "1"}, 0.001, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := mkJob("j", 1, 1)
			j.InputSizeGB, j.Iterations, j.Labels = tc.specGB, tc.specIt, tc.labels
			gb, it := SizeHints(&j)
			if gb != tc.wantGB || it != tc.wantIt {
				t.Fatalf("SizeHints = %v GB, %d iterations; want %v, %d", gb, it, tc.wantGB, tc.wantIt)
			}
		})
	}
}

// TestModelSizeByHand: I = input GB (1 when unknown: 0, negative, NaN)
// times iterations (1 when unknown: 0 or less).
func TestModelSizeByHand(t *testing.T) {
	for _, tc := range []struct {
		gb   float64
		it   int
		want float64
	}{
		{0, 0, 1},
		{2.5, 0, 2.5},
		{0, 4, 4},
		{2.5, 4, 10},
		{-1, 3, 3},
		{math.NaN(), 2, 2},
		{0.5, -7, 0.5},
	} {
		if got := ModelSize(tc.gb, tc.it); got != tc.want {
			t.Errorf("ModelSize(%v, %d) = %v, want %v", tc.gb, tc.it, got, tc.want)
		}
	}
}
