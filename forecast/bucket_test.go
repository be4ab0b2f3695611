package forecast

import (
	"testing"
	"time"
)

// A bucket that divides a day but is not a whole number of seconds
// (67.5 s: 1280 a day) is accepted by the options; Fit must not panic on
// a job in the day's last bucket (the slot index was computed with the
// bucket truncated to whole seconds, past the last slot).
func TestFitBucketNotWholeSeconds(t *testing.T) {
	now := time.Date(2026, 1, 20, 23, 59, 30, 0, time.UTC)
	var h []Job
	for i := 0; i < 500; i++ {
		h = append(h, Job{SubmittedAt: now.Add(-time.Duration(i) * 41 * time.Minute), CPUs: 1, MemMB: 1, RunSeconds: 1})
	}
	m := Fit(h, now, Options{Bucket: 67500 * time.Millisecond})
	if !m.OK || m.slots == nil {
		t.Fatalf("want a seasonal forecast, got OK=%v level %s (%s)", m.OK, m.Level, m.Reason)
	}
	if d := m.Expect(now, now.Add(time.Hour)); !(d.Jobs > 0) {
		t.Fatalf("want jobs expected in the next hour, got %g", d.Jobs)
	}
	last := time.Date(2026, 1, 20, 23, 59, 59, 0, time.UTC)
	if k, n := m.slotOf(last), len(m.slots); k >= n {
		t.Fatalf("slot %d of %d", k, n)
	}
}
