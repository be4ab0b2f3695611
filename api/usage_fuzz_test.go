package api

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

// FuzzParseUsageQuery: any query of GET /api/v1/usage is refused naming
// one of its fields, or gives a window of whole minutes, shorter than the
// maximum, cut in at most MaxUsagePeriods steps, that the answer can carry.
func FuzzParseUsageQuery(f *testing.F) {
	for _, s := range []string{"by=team", "by=label:env&step=1h", "from=2026-11-25T00:00:00Z&to=2026-11-26T00:00:00Z&step=15m",
		"from=9999-12-31T00:00:00Z&to=9999-12-31T23:59:30Z", "step=1e300", "step=NaN", "to=0001-01-01T00:00:30Z", "by=job&step=90", "step=153722867m"} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)
	f.Fuzz(func(t *testing.T, raw string) {
		v, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		q, field, err := ParseUsageQuery(v, now)
		if err != nil {
			switch field {
			case "by", "from", "to", "step":
			default:
				t.Fatalf("%q: error %v names %q", raw, err, field)
			}
			return
		}
		if !q.From.Before(q.To) || q.To.Sub(q.From) > MaxUsageWindow || q.From.Truncate(time.Minute) != q.From || q.To.Truncate(time.Minute) != q.To {
			t.Fatalf("%q: window %s to %s", raw, q.From, q.To)
		}
		if q.Step != 0 {
			// The periods, counted without overflow, and as the store
			// counts them.
			w := q.To.Sub(q.From)
			n := w / q.Step
			if w%q.Step != 0 {
				n++
			}
			if q.Step < time.Minute || q.Step%time.Minute != 0 || n > MaxUsagePeriods || (w+q.Step-1)/q.Step != n {
				t.Fatalf("%q: step %s", raw, q.Step)
			}
		}
		if _, err := json.Marshal(UsageView{From: q.From, To: q.To}); err != nil {
			t.Fatalf("%q: the answer cannot be encoded: %v", raw, err)
		}
	})
}
