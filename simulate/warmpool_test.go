package simulate

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestWarmPoolRecurringDeadlineJob: a deadline job (one 2-cpu executor,
// 40 s, deadline 1.5 x: 20 s of slack) arrives every 5 minutes on three
// 2-cpu agents at $1/h; idle agents power off after 60 s and boot in 30 s.
//
// Without the warm pool every job after the first arrives at a cluster
// that is off and waits 30 s for a boot: 7 of 8 miss, 7 boots. With it,
// from the second arrival on, the forecast (about 0.1 jobs in a boot
// time, all tight) keeps an agent warm (it saves $2 x 0.1 of expected
// misses for $1 x 30 s): only the second job misses. While the warm agent
// runs a job, the rule powers a second one on in case another job comes
// (worth it at $2 a miss; such an agent also serves the jobs that come
// late enough in its boot for their 20 s of slack to cover the rest of
// it, two thirds of them), so it boots about as often as without it (8
// times against 7), and the bill stays well below always-on.
func TestWarmPoolRecurringDeadlineJob(t *testing.T) {
	cl, err := clusterspec.ParseBytes([]byte(`{"name": "three", "agents": [
		{"id": "a1", "hostname": "a1", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a2", "hostname": "a2", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a3", "hostname": "a3", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := workload.DefaultModel
	m.Contention = 0
	var wl []workload.Job
	for k := 0; k < 8; k++ {
		wl = append(wl, wc("j"+string(rune('0'+k)), float64(300*k), 40))
	}
	run := func(warm bool) Result {
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: cl, Model: &m, Seed: 1, DeadlineFraction: 1, Slack: 1.5,
			Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
			PowerOffAfter: time.Minute, BootTime: 30 * time.Second, WarmPool: warm})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 8 || r.DeadlineJobs != 8 {
			t.Fatalf("%+v", r)
		}
		return r
	}
	plain, warm := run(false), run(true)
	if plain.DeadlineMissed != 7 || plain.Boots != 7 {
		t.Errorf("without the warm pool: %d misses, %d boots; want 7 and 7", plain.DeadlineMissed, plain.Boots)
	}
	if warm.DeadlineMissed != 1 || warm.Boots > plain.Boots+1 {
		t.Errorf("with the warm pool: %d misses, %d boots; want 1 and at most %d", warm.DeadlineMissed, warm.Boots, plain.Boots+1)
	}
	if warm.BillUSD > 0.7*warm.AlwaysOnUSD || plain.BillUSD > warm.BillUSD {
		t.Errorf("bill $%.4f with, $%.4f without, against $%.4f always on", warm.BillUSD, plain.BillUSD, warm.AlwaysOnUSD)
	}
	if warm.MeanOnCPUs >= 6 || plain.MeanOnCPUs > warm.MeanOnCPUs {
		t.Errorf("mean cpus on: %.2f with, %.2f without", warm.MeanOnCPUs, plain.MeanOnCPUs)
	}
}

// TestWarmPoolFlags: --warm-pool needs --power-off-after, --warm-history
// needs --warm-pool; --miss-cost must be a non-negative number.
func TestWarmPoolFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--warm-pool"}, "--warm-pool needs --power-off-after"},
		{[]string{"--warm-history", "--power-off-after", "2m"}, "--warm-history needs --warm-pool"},
		{[]string{"--warm-pool", "--power-off-after", "2m", "--miss-cost", "-1"}, "--miss-cost -1 must be >= 0"},
		{[]string{"--warm-pool", "--power-off-after", "2m", "--miss-cost", "NaN"}, "--miss-cost NaN must be >= 0"},
	} {
		_, _, err := runCommand(t, append([]string{"--quiet", "--hour", "0", "--jobs", "2"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestWarmPoolMeasuredSlack: jobs that run longer than their estimate.
// The recurring deadline job of TestWarmPoolRecurringDeadlineJob (40 s,
// deadline 1.5 x: 20 s of slack by its estimate) on agents it fills,
// where contention slows it down, boots in 15 s. By its estimate its slack
// absorbs a boot, so a rule that trusted the estimate kept nothing warm
// and every job after the first waited for a boot and missed. The history
// takes a finished job's measured run time: the second arrival still
// meets a cluster that is off (one job is no forecast) and misses; from
// the third on, the slack left (20 s minus the slowdown) cannot absorb a
// boot, an agent stays warm, and the jobs meet their deadlines (1 miss,
// at 40% of the always-on bill). Without the correction: 7 misses.
func TestWarmPoolMeasuredSlack(t *testing.T) {
	cl, err := clusterspec.ParseBytes([]byte(`{"name": "three", "agents": [
		{"id": "a1", "hostname": "a1", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a2", "hostname": "a2", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a3", "hostname": "a3", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := workload.DefaultModel
	m.Contention, m.ContentionFrom = 0.5, 0
	var wl []workload.Job
	for k := 0; k < 8; k++ {
		wl = append(wl, wc("j"+string(rune('0'+k)), float64(300*k), 40))
	}
	run := func(warm bool) Result {
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: cl, Model: &m, Seed: 1, DeadlineFraction: 1, Slack: 1.5,
			Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
			PowerOffAfter: time.Minute, BootTime: 15 * time.Second, WarmPool: warm})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 8 || r.DeadlineJobs != 8 {
			t.Fatalf("%+v", r)
		}
		return r
	}
	plain, warm := run(false), run(true)
	if plain.DeadlineMissed < 7 {
		t.Fatalf("without the warm pool: %d misses, want 7 (the boot and the slowdown exceed the slack)", plain.DeadlineMissed)
	}
	t.Logf("without: %d misses, %d boots; with: %d misses, %d boots, bill $%.4f of $%.4f", plain.DeadlineMissed, plain.Boots, warm.DeadlineMissed, warm.Boots, warm.BillUSD, warm.AlwaysOnUSD)
	if warm.DeadlineMissed > 1 || warm.BillUSD > 0.7*warm.AlwaysOnUSD {
		t.Errorf("with the warm pool: %d misses (want at most 1), bill $%.4f against $%.4f always on", warm.DeadlineMissed, warm.BillUSD, warm.AlwaysOnUSD)
	}
}

// TestWarmPoolHistory: the recurring job of TestWarmPoolRecurringDeadlineJob
// replayed from hour 1, with the hour before as the forecast's history
// (WarmHistory, `--warm-history`): the second arrival, which found a
// cluster that was off without a forecast (1 miss), now finds an agent
// kept warm: no miss. History jobs are not replayed (8 jobs run).
func TestWarmPoolHistory(t *testing.T) {
	cl, err := clusterspec.ParseBytes([]byte(`{"name": "three", "agents": [
		{"id": "a1", "hostname": "a1", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a2", "hostname": "a2", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a3", "hostname": "a3", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := workload.DefaultModel
	m.Contention = 0
	var wl, past []workload.Job
	for k := 0; k < 12; k++ {
		past = append(past, wc("p"+string(rune('a'+k)), float64(300*k), 40))
	}
	for k := 0; k < 8; k++ {
		wl = append(wl, wc("j"+string(rune('0'+k)), float64(3600+300*k), 40))
	}
	run := func(history []workload.Job) Result {
		r, err := Run(context.Background(), Options{Workload: wl, From: time.Hour, Cluster: cl, Model: &m, Seed: 1, DeadlineFraction: 1, Slack: 1.5,
			Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
			PowerOffAfter: time.Minute, BootTime: 30 * time.Second, WarmPool: true, WarmHistory: history})
		if err != nil {
			t.Fatal(err)
		}
		if r.Jobs != 8 || r.Completed != 8 || r.DeadlineJobs != 8 {
			t.Fatalf("%+v", r)
		}
		return r
	}
	cold, warm := run(nil), run(past)
	if cold.DeadlineMissed != 1 || warm.DeadlineMissed != 0 {
		t.Fatalf("misses: %d from the window's arrivals (want 1), %d from the hour before (want 0)", cold.DeadlineMissed, warm.DeadlineMissed)
	}
	if warm.BillUSD > 0.7*warm.AlwaysOnUSD {
		t.Errorf("bill $%.4f against $%.4f always on", warm.BillUSD, warm.AlwaysOnUSD)
	}
}
