package perftruth

import (
	"math"
	"testing"
)

// FuzzParse: a truth file (--perf-truth) never panics the parser, and
// every signature it accepts gives a finite, non-negative run time.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"noise": 0.05, "signatures": [{"appResource": "local:///jobs/etl.jar", "mainClass": "com.example.ETL",
		"startupSeconds": 10, "serialSecondsPerGB": 1, "coreSecondsPerGB": 60, "scaling": 0.9, "shuffleRatio": 0.5,
		"cpuBound": 0.7, "crowding": 0.01}]}`), 10.0, 3, uint64(7))
	f.Add([]byte(`{"signatures": [{"mainClass": "x", "scaling": 0.05, "noise": 2, "coreSecondsPerGB": 1e7}]}`), 1e3, 100, uint64(1))
	f.Add([]byte(`{"signatures": [{"mainClass": "x"}, {"mainClass": "x"}]}`), 1.0, 1, uint64(0))
	f.Fuzz(func(t *testing.T, b []byte, inputGB float64, iterations int, seed uint64) {
		tr, err := Parse(b)
		if err != nil {
			return
		}
		if math.IsNaN(inputGB) || math.IsInf(inputGB, 0) || inputGB <= 0 || inputGB > 1e4 || iterations < 1 || iterations > 1000 {
			return
		}
		for sig, p := range tr.Signatures {
			if err := p.Validate(); err != nil {
				t.Fatalf("%s accepted with %v", sig, err)
			}
			for _, pl := range []Placement{{}, {PerAgent: []int{1}, ExecutorCores: 1}, {PerAgent: []int{8, 1, 3}, ExecutorCores: 4, BusiestLoad: 1}} {
				s := p.Seconds(Run{InputGB: inputGB, Iterations: iterations, Placement: pl, Seed: seed}).Total()
				if math.IsNaN(s) || math.IsInf(s, 0) || s < 0 {
					t.Fatalf("%s: %+v on %+v: %v seconds", sig, p, pl, s)
				}
			}
		}
	})
}
