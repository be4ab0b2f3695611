package simulate

// Tests of power.go (power management in the simulator) that kill
// mutants gremlins left alive (issue 33). Expected values are derived by
// hand in the comments.

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestPowerOnCheaperStandbyByHand: power management offers the
// powered-off agents to the plans at their prices. a1 costs $3/h (2 cpus,
// 16 GiB), a2 $1/h (2 cpus, 2 GiB), a3 $1.5/h (4 cpus, 4 GiB); power
// off after 60 s idle, boot 30 s, no contention.
//
//	j0 (an executor of 4 GiB: only a1 holds it) at 0 s runs 0-100 on a1.
//	a2 and a3 are idle from 0 s: powered off at 60 s.
//	j1 (2 executors of 2 cpus, 1 GiB) at 120 s fits no agent that is on
//	(a1 has 2 cpus): it may run on a1 and a2 ($3 + $1 an hour), a1 and
//	a3 ($4.5), a2 and a3 ($2.5) or a3 alone ($1.5): a3 is powered on
//	(120-150) and j1 runs 150-205 (10 s + 90 s / 2 executors; a wait of
//	30 s). a1 is off from 160 s, a2 stays off.
//
// The run ends at 205 s. Bill: a1 on 0-160 s at $3/h, a2 0-60 s at $1/h,
// a3 0-60 and 120-205 s at $1.5/h: (480 + 60 + 217.5) / 3600.
func TestPowerOnCheaperStandbyByHand(t *testing.T) {
	c, err := clusterspec.ParseBytes([]byte(`{"name": "three", "agents": [
		{"id": "a1", "hostname": "a1", "cpus": 2, "memMB": 16384, "pricePerHour": 3.0},
		{"id": "a2", "hostname": "a2", "cpus": 2, "memMB": 2048, "pricePerHour": 1.0},
		{"id": "a3", "hostname": "a3", "cpus": 4, "memMB": 4096, "pricePerHour": 1.5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := workload.DefaultModel
	m.Contention = 0
	big, two := wc("j0", 0, 100), wc("j1", 120, 100)
	big.Profile.ExecutorMemoryMB = 4096
	two.Profile.Executors = 2
	r, err := Run(context.Background(), Options{Workload: []workload.Job{big, two}, Cluster: c, Model: &m, Seed: 1,
		Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
		PowerOffAfter: 60 * time.Second, BootTime: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 2 {
		t.Fatalf("%+v", r)
	}
	near(t, "wait mean", r.WaitMeanS, 15)
	near(t, "makespan", r.MakespanS, 205)
	near(t, "bill", r.BillUSD, (480+60+217.5)/3600)
	if r.Boots != 1 {
		t.Errorf("%d boots, want 1", r.Boots)
	}
}

// TestPowerSlowBootByHand: the simulated cloud never gives a power-on up
// (a live power manager does after PowerOnTimeout, 5 minutes by default:
// the agent is then off, avoided, and no job waits for its boot any
// more), with boots B of 10 minutes and of 70 days. a1: 6 cpus at $1/h,
// a2: 2 cpus at $2/h; power off after 60 s idle; no contention; every job
// one executor of 2 cpus, 100 s.
//
//	j0 at 0 s runs 0-100 on the cheaper a1; a2 is off from 60 s, a1 from
//	160 s. j1 at 400 s: a1 is powered on (ready at 400+B). j2 at 340+B
//	and j3 at 370+B (after PowerOnTimeout, the manager has looked at the
//	booting agent at j2's arrival) share a1's boot (4 of its 6 cpus are
//	free): all three run 400+B to 500+B. One boot; waits 0, B, 60, 30 s.
//
// Bill: a1 on 0-160 s and 400 s to 500+B at $1/h, a2 on 0-60 s at $2/h.
func TestPowerSlowBootByHand(t *testing.T) {
	c, err := clusterspec.ParseBytes([]byte(`{"name": "two", "agents": [
		{"id": "a1", "hostname": "a1", "cpus": 6, "memMB": 16384, "pricePerHour": 1.0},
		{"id": "a2", "hostname": "a2", "cpus": 2, "memMB": 16384, "pricePerHour": 2.0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := workload.DefaultModel
	m.Contention = 0
	for _, boot := range []time.Duration{10 * time.Minute, 70 * 24 * time.Hour} {
		b := boot.Seconds()
		wl := []workload.Job{wc("j0", 0, 100), wc("j1", 400, 100), wc("j2", 340+b, 100), wc("j3", 370+b, 100)}
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: c, Model: &m, Seed: 1,
			Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
			PowerOffAfter: 60 * time.Second, BootTime: boot})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 4 || r.Boots != 1 {
			t.Fatalf("boot %s: %+v", boot, r)
		}
		near(t, "wait mean", r.WaitMeanS, (b+90)/4)
		near(t, "makespan", r.MakespanS, 500+b)
		near(t, "bill", r.BillUSD, (160+100+b)/3600+2*60.0/3600)
	}
}
