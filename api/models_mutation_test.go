package api

import (
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestEstimatedWallSeconds: the job view's estimatedWallSeconds is the
// estimate times Config.EstimateScale, set only when the scale is > 0 and
// not 1 and the job has an estimate (> 0). The expected values are the
// products worked by hand.
func TestEstimatedWallSeconds(t *testing.T) {
	for _, tc := range []struct {
		name     string
		scale    float64
		estimate float64
		want     float64 // < 0: no field
	}{
		{"a quarter", 0.25, 240, 60},    // 240 s simulated at --sim-speed 4: 60 s of wall time
		{"twice", 2, 30, 60},            // 30 x 2
		{"scale 1", 1, 600, -1},         // wall time already
		{"no scale", 0, 600, -1},        // unset
		{"negative scale", -2, 600, -1}, // nonsense: ignored
		{"no estimate", 0.25, 0, -1},    // nothing to scale
		{"negative estimate", 0.25, -5, -1},
	} {
		s := &Server{cfg: Config{EstimateScale: tc.scale}}
		v := JobView{Job: scheduler.Job{Spec: scheduler.Spec{EstimatedDurationSeconds: tc.estimate}}}
		s.predictionFields(&v, nil)
		switch {
		case tc.want < 0 && v.EstimatedWallSeconds != nil:
			t.Errorf("%s: estimatedWallSeconds = %v, want none", tc.name, *v.EstimatedWallSeconds)
		case tc.want >= 0 && v.EstimatedWallSeconds == nil:
			t.Errorf("%s: no estimatedWallSeconds, want %v", tc.name, tc.want)
		case tc.want >= 0 && *v.EstimatedWallSeconds != tc.want:
			t.Errorf("%s: estimatedWallSeconds = %v, want %v", tc.name, *v.EstimatedWallSeconds, tc.want)
		}
	}
}
