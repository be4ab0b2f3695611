package main

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/mesossim/perftruth"
)

// TestSampleDataMatchesItsRunTime: the input the demo gives a sample job
// makes the emulator's derived truth run it for the sample's run time on a
// quiet agent (the truth is not told the run time: it is inverted here).
func TestSampleDataMatchesItsRunTime(t *testing.T) {
	for i := 0; i < 200; i++ {
		res, class := "local:///opt/spark/examples/jars/spark-examples.jar", fmt.Sprintf("org.example.Job%d", i)
		e, c := 1+i%8, 1+i%3
		run := time.Duration(60+i%121) * time.Second
		body := withSimData(map[string]any{"app": map[string]any{"appResource": res, "mainClass": class}, "executors": e, "executorCores": c}, run)
		gb, err := strconv.ParseFloat(body["app"].(map[string]any)["sparkConf"].(map[string]any)[mesossim.SimInputGBConf].(string), 64)
		if err != nil {
			t.Fatal(err)
		}
		p := perftruth.Derive(perftruth.Signature(res, class))
		p.Noise = 0
		got := p.Seconds(perftruth.Run{InputGB: gb, Iterations: 1, Placement: perftruth.Placement{PerAgent: []int{e}, ExecutorCores: float64(c), BusiestLoad: 0.5}}).Total()
		if math.Abs(got-run.Seconds())/run.Seconds() > 0.01 {
			t.Fatalf("%s with %d x %d cores on %.3g GB: %.1f s, want %.0f s", class, e, c, gb, got, run.Seconds())
		}
	}
}
