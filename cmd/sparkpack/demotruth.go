package main

import (
	"math"
	"strconv"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/mesossim/perftruth"
)

// The demo's emulator times Spark applications by its performance truth
// (demo --perf-truth, default derived: docs/simulation.md), not by the
// estimate sparkpack labels the driver with. So that a sample job still
// runs about as long as the sample intends, the sample gives it the data
// (spark.sparkpack.sim.inputGB) on which the derived truth of its
// signature takes that long on a quiet single agent; where sparkpack
// actually places it, and the run's noise, decide the rest.

// withSimData adds the input size to a sample job's body.
func withSimData(body map[string]any, run time.Duration) map[string]any {
	app, _ := body["app"].(map[string]any)
	res, _ := app["appResource"].(string)
	class, _ := app["mainClass"].(string)
	e, _ := body["executors"].(int)
	c, _ := body["executorCores"].(int)
	gb := simInputGB(perftruth.Derive(perftruth.Signature(res, class)), max(1, e), max(1, c), run.Seconds())
	conf := map[string]any{}
	if old, ok := app["sparkConf"].(map[string]any); ok {
		for k, v := range old {
			conf[k] = v
		}
	}
	conf[mesossim.SimInputGBConf] = strconv.FormatFloat(gb, 'g', 4, 64)
	a := make(map[string]any, len(app)+1)
	for k, v := range app {
		a[k] = v
	}
	a["sparkConf"] = conf
	body["app"] = a
	// sparkpack is told the size as a user would tell it (the hint its
	// learned model scales with), never the truth's parameters.
	body["inputSizeGB"] = math.Round(gb*1000) / 1000
	return body
}

// simInputGB is the input on which p takes about seconds with e executors
// of c cores on one half-loaded agent (bisection on the log of the size:
// the truth grows with it), within [0.001, 10000] GB.
func simInputGB(p perftruth.Params, e, c int, seconds float64) float64 {
	p.Noise = 0
	at := func(gb float64) float64 {
		return p.Seconds(perftruth.Run{InputGB: gb, Iterations: 1,
			Placement: perftruth.Placement{PerAgent: []int{e}, ExecutorCores: float64(c), BusiestLoad: 0.5}}).Total()
	}
	lo, hi := math.Log(0.001), math.Log(10000)
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if at(math.Exp(mid)) < seconds {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Exp((lo + hi) / 2)
}
