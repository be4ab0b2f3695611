package api

import (
	"net/url"
	"testing"
	"time"
)

// TestParseForecastQuery: defaults, durations, and every bad value names
// its field.
func TestParseForecastQuery(t *testing.T) {
	for _, tc := range []struct {
		q       string
		field   string
		horizon time.Duration
		step    time.Duration
	}{
		{"", "", 6 * time.Hour, 15 * time.Minute},
		{"horizon=2h&step=5m", "", 2 * time.Hour, 5 * time.Minute},
		{"horizon=soon", "horizon", 0, 0},
		{"horizon=-1h", "horizon", 0, 0},
		{"horizon=200h", "horizon", 0, 0},
		{"step=30s", "step", 0, 0},
		{"horizon=1h&step=2h", "step", 0, 0},
		{"horizon=168h&step=1m", "step", 0, 0},
		{"step=x", "step", 0, 0},
	} {
		v, _ := url.ParseQuery(tc.q)
		got, field, err := ParseForecastQuery(v)
		if field != tc.field || (err != nil) != (tc.field != "") {
			t.Errorf("%q: field %q err %v; want field %q", tc.q, field, err, tc.field)
			continue
		}
		if err == nil && (got.Horizon != tc.horizon || got.Step != tc.step) {
			t.Errorf("%q: %+v", tc.q, got)
		}
	}
}
