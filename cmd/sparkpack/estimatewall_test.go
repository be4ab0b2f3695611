package main

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// TestJobEstimateOnTheWallClock: under the demo's --sim-speed a job's
// estimate is simulated time; sparkpack job shows it on the wall clock
// of "ran" and "predicted run" (an estimated 60 s at x60 is 1 s), with
// the estimate as submitted beside it. Without a speed-up it shows the
// estimate as is.
func TestJobEstimateOnTheWallClock(t *testing.T) {
	dbURL := pgtest.URL(t)
	for _, c := range []struct {
		scale float64
		want  string
	}{
		{1.0 / 60, "1s (1m0s as submitted, in simulated time)"},
		{0, "1m0s"},
	} {
		server := startServeOn(t, dbURL, func(sc *serveConfig) { sc.mesos.durationScale = c.scale })
		code, out, errOut := runCmd(t, append(append([]string{"submit", "--server", server, "-o", "name"}, jobFlags...), "--executor-memory", "1g", "--estimated-duration", "60")...)
		if code != 0 {
			t.Fatalf("submit: %d %q %q", code, out, errOut)
		}
		code, out, errOut = runCmd(t, "job", strings.TrimSpace(out), "--server", server)
		if code != 0 {
			t.Fatalf("job: %d %q %q", code, out, errOut)
		}
		var line string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "estimated run") {
				line = strings.TrimSpace(strings.TrimPrefix(l, "estimated run"))
			}
		}
		if line != c.want {
			t.Errorf("scale %g: estimated run %q, want %q:\n%s", c.scale, line, c.want, out)
		}
	}
}
