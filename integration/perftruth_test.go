package integration

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLiveRunTimesFollowTheEmulatorsTruth: on the demo's emulator with a
// performance truth, a job runs for its signature's truth, not for the
// estimate sparkpack labels its driver with (the label would end it 20
// times sooner). Only a lower bound is checked: timers never fire early.
func TestLiveRunTimesFollowTheEmulatorsTruth(t *testing.T) {
	truth := filepath.Join(t.TempDir(), "truth.json")
	// 200 simulated seconds whatever the placement: 10 s of wall time at
	// --sim-speed 20.
	if err := os.WriteFile(truth, []byte(`{"noise": 0, "signatures": [{"appResource": "local:///jobs/etl.jar", "mainClass": "com.example.ETL",
		"startupSeconds": 200, "serialSecondsPerGB": 0, "coreSecondsPerGB": 0, "shuffleRatio": 0}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDemo(t, "--sim-speed", "20", "--no-sample", "--perf-truth", truth)
	id := postJob(t, d.API, `{"name":"etl","app":{"appResource":"local:///jobs/etl.jar","mainClass":"com.example.ETL"},
		"executors":2,"executorCores":1,"executorMemoryMB":1024,"estimatedDurationSeconds":10}`)
	var v jobView
	waitUntil(t, 120*time.Second, "the job to finish", func() bool {
		var err error
		v, err = getJob(d.API, id)
		if err != nil {
			t.Fatal(err)
		}
		if v.State == "FAILED" || v.State == "KILLED" {
			t.Fatalf("job %s: %s", id, v.State)
		}
		return v.State == "FINISHED"
	})
	if v.StartedAt == nil || v.FinishedAt == nil {
		t.Fatalf("finished job without its times: %+v", v)
	}
	ran := v.FinishedAt.Sub(*v.StartedAt)
	t.Logf("ran %s of wall time (truth 200 simulated s = 10 s; estimate 10 simulated s = 0.5 s)", ran)
	if ran < 9900*time.Millisecond {
		t.Fatalf("the job ran %s: shorter than its truth's 10 s (the estimate's label said 0.5 s)", ran)
	}
}
