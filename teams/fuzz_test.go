package teams

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// FuzzParse: a teams file (from disk or PUT /api/v1/teams) never panics
// the parser, and a file it accepts holds finite, non-negative settings
// that GET /api/v1/teams can encode (JSON has no Inf or NaN).
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"analytics weight=2 guaranteed-cpus=16 guaranteed-memory=64g max-cpus=48 max-memory=192g\n",
		"ml max-waiting=200 max-deadline=10 budget=500/day budget-action=hold # note\n",
		"# comment\n\netl budget=$12000/month budget-action=reject\n",
		"a max-memory=1e308t\n",
		"a guaranteed-memory=1e300g\n",
		"a weight=1e-320\n",
		"a=b\n",
		"a budget=-0/day guaranteed-cpus=-0\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Parse(strings.NewReader(s))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "line ") {
				t.Fatalf("error without its line: %v", err)
			}
			return
		}
		for _, tm := range c.Teams {
			for name, v := range map[string]float64{"weight": tm.Weight, "guaranteed-cpus": tm.GuaranteedCPUs,
				"guaranteed-memory": tm.GuaranteedMemMB, "max-cpus": tm.MaxCPUs, "max-memory": tm.MaxMemMB} {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || math.Signbit(v) {
					t.Fatalf("team %s: %s = %v accepted", tm.Name, name, v)
				}
			}
			if tm.Weight < MinWeight || tm.Weight > MaxWeight {
				t.Fatalf("team %s: weight %v accepted", tm.Name, tm.Weight)
			}
			if tm.Budget != nil && (math.IsNaN(tm.Budget.USD) || math.IsInf(tm.Budget.USD, 0) || tm.Budget.USD < 0 || math.Signbit(tm.Budget.USD)) {
				t.Fatalf("team %s: budget %v accepted", tm.Name, tm.Budget.USD)
			}
			if c.Team(tm.Name).Name != tm.Name {
				t.Fatalf("team %s not found by its name", tm.Name)
			}
		}
		if _, err := json.Marshal(c.Teams); err != nil {
			t.Fatalf("accepted configuration cannot be encoded: %v", err)
		}
	})
}
