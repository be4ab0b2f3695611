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

// TestStartTimeDayInUTC: the day a start time is on is the UTC day, as
// its time of day is UTC: a start time given with an offset, or a clock
// in another zone (time.Now() is in the server's local zone), names the
// date only when the UTC dates differ (day, month or year). t0 is
// 2026-11-22 10:00 UTC.
func TestStartTimeDayInUTC(t *testing.T) {
	plus2, minus5, plus14 := time.FixedZone("+02", 2*3600), time.FixedZone("-05", -5*3600), time.FixedZone("+14", 14*3600)
	for _, c := range []struct {
		name string
		at   time.Time
		now  time.Time
		want string
	}{
		{"start given at +02:00, the next local day, the same UTC day", time.Date(2026, 11, 23, 0, 30, 0, 0, plus2), t0, "22:30 UTC"},
		{"start given at -05:00, the same local day, the next UTC day", time.Date(2026, 11, 22, 20, 0, 0, 0, minus5), t0, "2026-11-23 01:00 UTC"},
		{"clock at +14:00 (already 23 Nov there), start the same UTC day", t0.Add(time.Hour), t0.In(plus14), "11:00 UTC"},
		{"clock at -05:00, start the next UTC day", t0.Add(15 * time.Hour), t0.In(minus5), "2026-11-23 01:00 UTC"},
		{"a month later, the same day of the month", t0.AddDate(0, 1, 0), t0, "2026-12-22 10:00 UTC"},
		{"a year later, the same day and month", t0.AddDate(1, 0, 0), t0, "2027-11-22 10:00 UTC"},
	} {
		if got := dayClockTime(c.at, c.now); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
