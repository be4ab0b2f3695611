package scheduler

import (
	"errors"
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

// TestCheckSizeHintsBounds: the size hints' bounds, both ends, by hand:
// input size 0 to 1e6 GB, iterations 0 to 1,000,000 (fields and labels
// alike), min and max executors 0 to 10,000 and only with "auto", max at
// least min when set. want is the field named in the error ("" for none).
func TestCheckSizeHintsBounds(t *testing.T) {
	const inL, itL = "labels.sparkpack.io/input-size-gb", "labels.sparkpack.io/iterations"
	auto := func(min, max int) func(*Spec) {
		return func(s *Spec) { s.Sizing, s.MinExecutors, s.MaxExecutors = &Sizing{Auto: true}, min, max }
	}
	gb := func(v float64) func(*Spec) { return func(s *Spec) { s.InputSizeGB = v } }
	its := func(v int) func(*Spec) { return func(s *Spec) { s.Iterations = v } }
	label := func(k, v string) func(*Spec) { return func(s *Spec) { s.Labels = map[string]string{k: v} } }
	for _, tc := range []struct {
		name string
		set  func(*Spec)
		want string
	}{
		{"no hints", func(*Spec) {}, ""},
		{"input 1e6 GB", gb(1e6), ""},
		{"input 1e6 + 0.5 GB", gb(1e6 + 0.5), "inputSizeGB"},
		{"input -0.5 GB", gb(-0.5), "inputSizeGB"},
		{"1,000,000 iterations", its(1_000_000), ""},
		{"1,000,001 iterations", its(1_000_001), "iterations"},
		{"-1 iterations", its(-1), "iterations"},
		{"input label 1e6", label(InputSizeLabel, "1000000"), ""},
		{"input label 0", label(InputSizeLabel, " 0 "), ""},
		{"input label past 1e6", label(InputSizeLabel, "1000000.5"), inL},
		{"input label negative", label(InputSizeLabel, "-0.5"), inL},
		{"input label not a number", label(InputSizeLabel, "big"), inL},
		{"input label 7.5", label(InputSizeLabel, "7.5"), ""},
		{"iterations label 1,000,000", label(IterationsLabel, "1000000"), ""},
		{"iterations label 0", label(IterationsLabel, "0"), ""},
		{"iterations label 1,000,001", label(IterationsLabel, "1000001"), itL},
		{"iterations label -1", label(IterationsLabel, "-1"), itL},
		{"iterations label not whole", label(IterationsLabel, "2.5"), itL},
		{"iterations label 9", label(IterationsLabel, " 9 "), ""},
		{"min executors without auto", func(s *Spec) { s.MinExecutors = 2 }, "minExecutors"},
		{"max executors without auto", func(s *Spec) { s.MaxExecutors = 2 }, "minExecutors"},
		{"auto, no bounds", auto(0, 0), ""},
		{"auto, min 10,000", auto(10000, 0), ""},
		{"auto, min 10,001", auto(10001, 0), "minExecutors"},
		{"auto, min -1", auto(-1, 0), "minExecutors"},
		{"auto, max 10,000", auto(0, 10000), ""},
		{"auto, max 10,001", auto(0, 10001), "maxExecutors"},
		{"auto, max -1", auto(0, -1), "maxExecutors"},
		{"auto, min = max", auto(5, 5), ""},
		{"auto, min > max", auto(6, 5), "maxExecutors"},
		{"auto, min with no max", auto(6, 0), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Spec
			tc.set(&s)
			err := s.checkSizeHints()
			got := ""
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FieldError", err)
				}
				got = fe.Field
			}
			if got != tc.want {
				t.Fatalf("checkSizeHints: %v (field %q), want field %q", err, got, tc.want)
			}
		})
	}
}
