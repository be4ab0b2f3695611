package warmpool

import (
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
)

// jobsOf is 0.5 deadline jobs in the boot time, every one cpus big, in
// executors of 2 cpus and 4 GB.
func jobsOf(cpus float64) forecast.Demand {
	d := forecast.Demand{OK: true, Jobs: 0.5, CPUs: 0.5 * cpus, MemMB: 0.5 * 2048 * cpus, DeadlineJobs: 0.5, Dispersion: 1,
		ExecCPUs: 2, ExecMemMB: 4096, JobCPUs: make([]float64, forecast.SizeSample)}
	for i := range d.JobCPUs {
		d.JobCPUs[i] = cpus
	}
	return d
}

// TestAgentsThatHoldAJobWholeFirst (issue 31, light hours: misses in
// bursts of jobs split over small agents): x (4 cpus, $0.24/h) and y
// (12 cpus, $0.72/h) cost the same per cpu; 0.5 jobs of 12 cpus are
// forecast in the 60 s boot time, miss cost $1. Poisson(0.5): the first
// arrival finds no room below 12 cpus (P(N >= 1) = 0.393469), and the
// k-th (k >= 2) none below 24, so the expected misses are 0.5 with 0 or
// 4 warm cpus and E[(N-1)+] = 0.5 - 0.393469 = 0.106531 with 12 or 16.
// y holds every job whole, x none: y comes first and is kept ($0.012 +
// $0.106531 < $0.5); x then saves nothing for its $0.004 and may go.
// Cheapest first (the order before) kept x too: x alone saves nothing,
// so the best prefix was x and y ($0.016 + $0.106531).
func TestAgentsThatHoldAJobWholeFirst(t *testing.T) {
	ag := []Agent{
		{ID: "x", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, State: On},
		{ID: "y", CPUs: 12, MemMB: 49152, PricePerHour: 0.72, State: On},
	}
	in := Input{Now: now, Agents: ag, Forecast: jobsOf(12), BootTime: time.Minute, MissCostUSD: 1}
	p := Decide(in)
	check(t, p, "y", "", "x")
	if math.Abs(p.ExpectedMisses-0.106531) > 1e-6 || math.Abs(p.IdleBillUSD-0.012) > 1e-12 || p.WarmCPUs != 12 {
		t.Fatalf("%+v", p)
	}
	if want := "not worth keeping: saves $0.0000 of expected misses for $0.0040 in 1m0s"; p.MayPowerOff[0].Reason != want {
		t.Fatalf("%q, want %q", p.MayPowerOff[0].Reason, want)
	}
	// Off, with the same jobs one boot time ahead (lead 60 s: a power-on
	// bills 120 s, x $0.008, y $0.024): y is powered on, x stays off.
	ag[0].State, ag[1].State = Off, Off
	in = Input{Now: now, Agents: ag, Forecast: jobsOf(12), Ahead: jobsOf(12), Lead: time.Minute, BootTime: time.Minute, MissCostUSD: 1}
	in.Forecast.Jobs, in.Forecast.CPUs, in.Forecast.MemMB, in.Forecast.DeadlineJobs = 0, 0, 0, 0
	check(t, Decide(in), "", "y", "")
	// Jobs of 4 cpus fit whole on either: the cheaper x comes first, as
	// before, and covers the first arrival; y (two jobs more) saves
	// E[(N-1)+] - E[(N-4)+] = 0.106531 - 0.00019 > $0.012: both kept.
	ag[0].State, ag[1].State = On, On
	in = Input{Now: now, Agents: ag, Forecast: jobsOf(4), BootTime: time.Minute, MissCostUSD: 1}
	check(t, Decide(in), "x,y", "", "")
}

// TestWholeShares: the share of the forecast jobs an agent holds whole,
// in whole executors of the forecast's shape (2 cpus, 4 GB): jobs of 4
// and 12 cpus, half each. A 12-cpu agent holds both; a 4-cpu one the
// 4-cpu jobs; a 12-cpu agent with 8 GB two executors (4 cpus): half;
// one of 3 cpus one executor (2 cpus): none. Without sizes every job
// asks for CPUs/Jobs (6); without a forecast there is no share.
func TestWholeShares(t *testing.T) {
	d := jobsOf(12)
	for i := range d.JobCPUs[:forecast.SizeSample/2] {
		d.JobCPUs[i] = 4
	}
	ag := []Agent{
		{ID: "big", CPUs: 12, MemMB: 49152},
		{ID: "small", CPUs: 4, MemMB: 16384},
		{ID: "lowmem", CPUs: 12, MemMB: 8192},
		{ID: "odd", CPUs: 3, MemMB: 16384},
	}
	got := wholeShares(ag, d)
	want := []float64{1, 0.5, 0.5, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s: %v, want %v (all %v)", ag[i].ID, got[i], want[i], got)
		}
	}
	d.JobCPUs = nil
	if got := wholeShares(ag, d); got[0] != 1 || got[1] != 0 {
		t.Fatalf("mean size 6: %v", got)
	}
	if got := wholeShares(ag, forecast.Demand{Reason: "none"}); got != nil {
		t.Fatalf("no forecast: %v", got)
	}
}
