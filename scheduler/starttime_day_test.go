package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestStartTimeReasonNamesTheDay: a job whose start time is on another day
// says which ("waiting for its start time 10:10 UTC" read as ten minutes
// away for a job that starts tomorrow), in the pass and in the preview;
// one later today keeps the time of day alone.
func TestStartTimeReasonNamesTheDay(t *testing.T) {
	big := []placement.Agent{agent("a1", 16, 65536, 0.24)}
	for _, c := range []struct {
		after time.Duration
		want  string
	}{
		{10 * time.Minute, "waiting for its start time 10:10 UTC"},
		{13*time.Hour + 59*time.Minute, "waiting for its start time 23:59 UTC"},
		{14 * time.Hour, "waiting for its start time 2026-11-23 00:00 UTC"},
		{24*time.Hour + 10*time.Minute + 30*time.Second, "waiting for its start time 2026-11-23 10:10:30 UTC"},
	} {
		j := mkJob("later", 1, 2, withNotBefore(c.after))
		d := testDecider(t, Config{Policy: "bfd"})
		in := passInput{now: t0, snap: snapOf(big), full: true, regular: entriesOf(j)}
		if got, want := describe(d.decide(in).decisions, 0), []string{"wait later: " + c.want}; !slices.Equal(got, want) {
			t.Errorf("start time in %s: the pass says %q, want %q", c.after, got, want)
		}
		h := newHarness(t, Config{Policy: "bfd"}, big...)
		h.schedule()
		p, err := h.core.Preview(context.Background(), j, t0)
		if err != nil || p.WaitingReason != c.want {
			t.Errorf("start time in %s: the preview says %q (%v), want %q", c.after, p.WaitingReason, err, c.want)
		}
	}
}
