package perfmodel

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// curvePred is T(E) = a E^b + c with p90 = k x p50.
func curvePred(a, b, c, k float64) Predictor {
	return func(e int) (Prediction, error) {
		t := a*math.Pow(float64(e), b) + c
		return Prediction{P50: t, P90: k * t}, nil
	}
}

// TestRightSizeHandCases: hand-computed right-sizing.
func TestRightSizeHandCases(t *testing.T) {
	for _, c := range []struct {
		name   string
		pred   Predictor
		req    SizeRequest
		want   int
		meets  bool
		reason string
	}{
		// T = 100/E + 10, p90 = 1.2 x p50; cost E x T = 100 + 10E grows with
		// E, so the cheapest that meets 40 s: 1.2 (100/E + 10) <= 40 <=> E >=
		// 4.29: E = 5 (p90 36 s).
		{"deadline", curvePred(100, -1, 10, 1.2), SizeRequest{Min: 1, Max: 16, PricePerExecutorSecond: 1e-4, TimeToDeadline: 40}, 5, true, "cheapest"},
		// The same with a bound below: 5 is still the answer; with Min 7, 7.
		{"deadline min", curvePred(100, -1, 10, 1.2), SizeRequest{Min: 7, Max: 16, TimeToDeadline: 40}, 7, true, "cheapest"},
		// p90 exactly the time left counts as meeting it: E = 5 gives 36.
		{"deadline exact", curvePred(100, -1, 10, 1.2), SizeRequest{Min: 1, Max: 16, TimeToDeadline: 36}, 5, true, "cheapest"},
		// No count meets 10 s (p90 >= 12 s): the fastest, Max.
		{"unreachable", curvePred(100, -1, 10, 1.2), SizeRequest{Min: 1, Max: 16, TimeToDeadline: 10}, 16, false, "no count"},
		// T = 1000 E^-1.5 + 5: cost 1000/sqrt(E) + 5E falls until E = 21.5,
		// so within [1, 10] the largest count is the cheapest.
		{"superlinear", curvePred(1000, -1.5, 5, 1.1), SizeRequest{Min: 1, Max: 10, PricePerExecutorSecond: 2, TimeToDeadline: 1000}, 10, true, "cheapest"},
		// Knee of 100/E + 10: the saving from E to E+1 is 10 / ((E+1)(E+10));
		// E = 5: 10/90 = 11.1%, E = 6: 10/112 = 8.9% < 10%: 6.
		{"knee", curvePred(100, -1, 10, 1.2), SizeRequest{Min: 1, Max: 16}, 6, false, "knee"},
		// The knee above Max: Max.
		{"knee at max", curvePred(100, -1, 10, 1.2), SizeRequest{Min: 1, Max: 4}, 4, false, "every executor"},
		// A flat curve: the minimum.
		{"flat", curvePred(0, -1, 60, 1.2), SizeRequest{Min: 2, Max: 8}, 2, false, "knee"},
	} {
		got, err := RightSize(c.pred, c.req)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.Executors != c.want || got.MeetsDeadline != c.meets || !strings.Contains(got.Reason, c.reason) {
			t.Errorf("%s: %+v, want %d executors, meets %v, reason with %q", c.name, got, c.want, c.meets, c.reason)
		}
	}
}

func TestRightSizeBadInput(t *testing.T) {
	p := curvePred(100, -1, 10, 1.2)
	for _, c := range []struct {
		field string
		req   SizeRequest
	}{
		{"executors", SizeRequest{Min: 0, Max: 4}},
		{"executors", SizeRequest{Min: 5, Max: 4}},
		{"executors", SizeRequest{Min: 1, Max: MaxExecutors + 1}},
		{"price", SizeRequest{Min: 1, Max: 4, PricePerExecutorSecond: math.NaN()}},
		{"price", SizeRequest{Min: 1, Max: 4, PricePerExecutorSecond: -1}},
		{"timeToDeadline", SizeRequest{Min: 1, Max: 4, TimeToDeadline: math.Inf(1)}},
		{"timeToDeadline", SizeRequest{Min: 1, Max: 4, TimeToDeadline: -3}},
	} {
		var ie *InputError
		if _, err := RightSize(p, c.req); !errors.As(err, &ie) || ie.Field != c.field {
			t.Errorf("%+v: %v, want field %s", c.req, err, c.field)
		}
	}
	// A predictor returning nonsense is an error, not a choice.
	nan := func(int) (Prediction, error) { return Prediction{P50: math.NaN(), P90: 1}, nil }
	if _, err := RightSize(nan, SizeRequest{Min: 1, Max: 3}); !errors.Is(err, ErrNoModel) {
		t.Errorf("NaN prediction: %v", err)
	}
	failing := func(int) (Prediction, error) { return Prediction{}, ErrNoModel }
	if _, err := RightSize(failing, SizeRequest{Min: 1, Max: 3, TimeToDeadline: 5}); !errors.Is(err, ErrNoModel) {
		t.Errorf("failing predictor: %v", err)
	}
}

// TestRightSizeFromBook: right-sizing from a book's learned model of a
// job T = 25 I / E + 10 (I = 8): the knee as by hand, 200 / (E (E+1)) /
// (200 / E + 10) = 20 / ((E+1)(E+20)) < 0.1 <=> (E+1)(E+20) > 200: E = 7
// (6: 182; 7: 216).
func TestRightSizeFromBook(t *testing.T) {
	b := NewBook()
	for e := 1; e <= 16; e++ {
		for _, i := range []float64{2, 4, 8, 16} {
			if err := b.Observe("s", "", Run{Executors: e, Size: i, Seconds: 25*i/float64(e) + 10}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, err := RightSize(b.Predictor("s", "", 8, Placement{}, 0), SizeRequest{Min: 1, Max: 16})
	if err != nil || got.Executors != 7 {
		t.Fatalf("%+v %v", got, err)
	}
}

// FuzzRightSize: any bounds, price and deadline give a count within the
// bounds or an error, never a panic.
func FuzzRightSize(f *testing.F) {
	f.Add(1, 16, 1e-4, 40.0, 100.0, -1.0, 10.0)
	f.Add(0, -3, math.NaN(), math.Inf(1), math.NaN(), 5.0, -1.0)
	f.Fuzz(func(t *testing.T, lo, hi int, price, ttd, a, b, c float64) {
		if hi-lo > 200 {
			hi = lo + 200
		}
		got, err := RightSize(curvePred(a, b, c, 1.2), SizeRequest{Min: lo, Max: hi, PricePerExecutorSecond: price, TimeToDeadline: ttd})
		if err == nil && (got.Executors < lo || got.Executors > hi) {
			t.Fatalf("%d not in [%d, %d]", got.Executors, lo, hi)
		}
	})
}
