package warmlive

import (
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestLargestValidJobIsNotCorrupt: a job at every maximum the API admits
// (scheduler.Validate: executors, cores, memory and its overhead, the
// driver, the estimate) is a valid history entry for the forecast, not a
// corrupt one (the forecast's bounds of 1e6 cpus and 1e10 MB dropped it:
// 10000 executors of 1024 cpus), and its forecast is finite.
func TestLargestValidJobIsNotCorrupt(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	var rows []store.Submission
	for i := 0; i < 20; i++ {
		rows = append(rows, store.Submission{SubmittedAt: now.Add(-time.Duration(i) * time.Minute), State: string(scheduler.Queued),
			Executors: scheduler.MaxExecutors, ExecutorCores: scheduler.MaxExecutorCores,
			ExecutorMemMB: 2 * scheduler.MaxMemoryMB, // executor memory and overhead
			DriverCores:   scheduler.MaxExecutorCores, DriverMemMB: 2 * scheduler.MaxMemoryMB,
			EstimatedSeconds: scheduler.MaxDurationSeconds})
	}
	m := forecast.Fit(Jobs(rows, 1), now, forecast.Options{})
	if !m.OK || m.Dropped != 0 {
		t.Fatalf("the largest valid jobs: OK %v, %d dropped (%s)", m.OK, m.Dropped, m.Reason)
	}
	d := m.Expect(now, now.Add(forecast.MaxHorizon))
	for _, x := range []float64{d.Jobs, d.CPUs, d.MemMB, d.CPUSeconds, d.CPUsP90, d.MemMBP90} {
		if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
			t.Fatalf("forecast %v: %+v", x, d)
		}
	}
}
