package simulate

// Tests of the replayed window (window.go; issue 33).

import (
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// TestReplayedWindowByHand: without --hour, --hours or --from the window
// starts at the start of the hour of the first arrival (16:30 -> 16:00);
// an hour, --from, no arrivals, or a first arrival within the window's
// first hour keep the window.
func TestReplayedWindowByHand(t *testing.T) {
	end := time.Duration(math.MaxInt64)
	whole := window{Label: "[00:00:00, end)", Hour: -1, From: 0, To: end}
	at := func(d time.Duration) []workload.TraceJob {
		return []workload.TraceJob{{ID: "j", Submit: d}, {ID: "k", Submit: d + time.Hour}}
	}
	for _, c := range []struct {
		name     string
		w        window
		arrivals []workload.TraceJob
		set      map[string]bool
		want     window
	}{
		{"late trace", whole, at(16*time.Hour + 30*time.Minute), nil, window{Label: "[16:00:00, end)", Hour: -1, From: 16 * time.Hour, To: end}},
		{"late, exactly on the hour", whole, at(3 * time.Hour), nil, window{Label: "[03:00:00, end)", Hour: -1, From: 3 * time.Hour, To: end}},
		{"first hour", whole, at(30 * time.Minute), nil, whole},
		{"at 0", whole, at(0), nil, whole},
		{"no arrivals", whole, nil, nil, whole},
		{"--from", whole, at(5 * time.Hour), map[string]bool{"from": true}, whole},
		{"--hour", window{Label: "hour 0", Hour: 0, From: 0, To: time.Hour}, at(30 * time.Minute), nil, window{Label: "hour 0", Hour: 0, From: 0, To: time.Hour}},
		{"--to", window{Label: "[00:00:00, 20:00:00)", Hour: -1, To: 20 * time.Hour}, at(2*time.Hour + time.Second), nil,
			window{Label: "[02:00:00, 20:00:00)", Hour: -1, From: 2 * time.Hour, To: 20 * time.Hour}},
	} {
		if got := replayedWindow(c.w, c.arrivals, c.set); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}
