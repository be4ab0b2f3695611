package scheduler

// A test written from a mutant scripts/mutation.sh found alive in job.go
// (docs/testing.md, "Mutation testing").

import "testing"

// TestDeadlineUnmarshalBlank: a blank deadline (called directly: the JSON
// decoder never passes one) is an error, not a panic.
func TestDeadlineUnmarshalBlank(t *testing.T) {
	for _, b := range []string{"", "  "} {
		var d Deadline
		if err := d.UnmarshalJSON([]byte(b)); err == nil {
			t.Errorf("UnmarshalJSON(%q): no error", b)
		}
	}
}

// TestTruncateAndFormatSecondsByHand: truncate keeps a string of up to n
// bytes whole and cuts a longer one at n with "..."; formatSeconds drops a
// needless fraction and trailing zeros.
func TestTruncateAndFormatSecondsByHand(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"ab", 3, "ab"}, {"abcd", 3, "abc..."}} {
		if got := truncate(c.s, c.n); got != c.want {
			t.Errorf("truncate(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		f    float64
		want string
	}{{90, "90"}, {1.5, "1.5"}, {0.25, "0.25"}, {2.125, "2.125"}, {0, "0"}, {-3, "-3"},
		// a huge number is not echoed in its hundreds of digits, a tiny one
		// not as "0."
		{1e308, "1e+308"}, {-1e20, "-1e+20"}, {0.0001, "0.0001"}, {1.23456e-7, "1.235e-07"}} {
		if got := formatSeconds(c.f); got != c.want {
			t.Errorf("formatSeconds(%g) = %q, want %q", c.f, got, c.want)
		}
	}
}

// TestJavaClassLetterBounds: the letters' first and last of either case
// start a class name (isJavaClass matches [A-Za-z_$][A-Za-z0-9_$]*...).
func TestJavaClassLetterBounds(t *testing.T) {
	for _, s := range []string{"A", "Z", "a", "z", "x.A", "Az.zA"} {
		if !isJavaClass(s) {
			t.Errorf("isJavaClass(%q) = false", s)
		}
	}
	for _, s := range []string{"@", "[", "`", "{", "A.@"} {
		if isJavaClass(s) {
			t.Errorf("isJavaClass(%q) = true", s)
		}
	}
}
