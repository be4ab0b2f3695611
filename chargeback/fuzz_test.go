package chargeback

import (
	"math"
	"strings"
	"testing"
)

// FuzzParseStatic: --team-budgets never panics the parser; what it accepts
// is finite, non-negative, per day or month, hold or reject, and every
// error names the entry.
func FuzzParseStatic(f *testing.F) {
	for _, s := range []string{"analytics=50/day:reject,etl=1000/month", "(default)=$5/day", " a = 1 / day : hold ", "a=1/day,a=2/day",
		"a=1e400/day", "a=-1/day", "a=-0/day", "=1/day", "a=NaN/day", "a=1/week"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseStatic(s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "budget ") {
				t.Fatalf("ParseStatic(%q): error without its entry: %v", s, err)
			}
			return
		}
		for team, x := range b {
			if math.IsNaN(x.USD) || math.IsInf(x.USD, 0) || x.USD < 0 || math.Signbit(x.USD) {
				t.Fatalf("ParseStatic(%q): team %q budget %v", s, team, x.USD)
			}
			if x.Period != PerDay && x.Period != PerMonth {
				t.Fatalf("ParseStatic(%q): team %q period %q", s, team, x.Period)
			}
			if x.Action != Hold && x.Action != Reject {
				t.Fatalf("ParseStatic(%q): team %q action %q", s, team, x.Action)
			}
		}
	})
}
