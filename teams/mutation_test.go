package teams

// Tests written from the mutants scripts/mutation.sh found alive
// (docs/testing.md, "Mutation testing").

import (
	"strings"
	"testing"
)

func mustParse(t *testing.T, s string) *Config {
	t.Helper()
	c, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return c
}

// TestEmpty: a configuration with a team is not empty; none, or one
// without teams, is.
func TestEmpty(t *testing.T) {
	if mustParse(t, "a weight=1").Empty() {
		t.Error("one team: empty")
	}
	if !(*Config)(nil).Empty() || !mustParse(t, "# no team\n").Empty() {
		t.Error("no team: not empty")
	}
}

// TestGuaranteeUpToTheMaximum: a guarantee equal to the team's maximum is
// allowed (only more is refused).
func TestGuaranteeUpToTheMaximum(t *testing.T) {
	mustParse(t, "a guaranteed-cpus=4 max-cpus=4")
	mustParse(t, "a guaranteed-memory=4g max-memory=4g")
	for _, s := range []string{"a guaranteed-cpus=5 max-cpus=4", "a guaranteed-memory=5g max-memory=4g"} {
		if _, err := Parse(strings.NewReader(s)); err == nil {
			t.Errorf("%q accepted", s)
		}
	}
}

// TestGuaranteeAsLargeAsTheCluster: one team may be guaranteed the whole
// cluster (8 cpus, 8 GiB).
func TestGuaranteeAsLargeAsTheCluster(t *testing.T) {
	if err := mustParse(t, "a guaranteed-cpus=8 guaranteed-memory=8g").CheckCapacity(8, 8192); err != nil {
		t.Fatal(err)
	}
}
