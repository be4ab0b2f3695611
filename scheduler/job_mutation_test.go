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
