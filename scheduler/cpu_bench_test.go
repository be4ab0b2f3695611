package scheduler

import (
	"syscall"
	"testing"
	"time"
)

// processCPU is the cpu time the process used so far (user and system,
// all threads, the collector's included). On a machine shared with other
// work a benchmark's wall time says more about the others than about the
// code; its cpu time much less.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the cpu time per operation since c0 (cpu-ns/op).
func reportCPU(b *testing.B, c0 time.Duration) {
	b.ReportMetric(float64(processCPU(b)-c0)/float64(b.N), "cpu-ns/op")
}
