package simulate

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestPowerByHand: one agent of 2 cpus at $1/h, power off after 60 s
// idle, boot 30 s, no contention:
//
//	j0 at 0 s runs 100 s: 0-100.
//	idle from 100 s: deactivated and powered off at 160 s.
//	j1 at 400 s: fits only on the powered-off agent, which boots 400-430;
//	j1 runs 430-530 (its wait: 30 s).
//
// The run ends at 530 s. Bill: on 0-160 and 400-530 = 290 s ($0.080556);
// always on: 530 s ($0.147222). The core's meter counts the agent while
// a job holds it and it is in the cluster's view: 0-100 and 430-530 (not
// while it boots), 200 s.
func TestPowerByHand(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	wl := []workload.Job{wc("j0", 0, 100), wc("j1", 400, 100)}
	r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, Seed: 1,
		Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
		PowerOffAfter: 60 * time.Second, BootTime: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 2 || r.Unfinished != 0 {
		t.Fatalf("%+v", r)
	}
	near(t, "bill", r.BillUSD, 290.0/3600)
	near(t, "always on", r.AlwaysOnUSD, 530.0/3600)
	near(t, "meter", r.TotalCostUSD, 200.0/3600)
	near(t, "wait mean", r.WaitMeanS, 15)
	near(t, "jct mean", r.JCTMeanS, (100+130)/2.0)

	// Without power management the bill is the always-on bill, and j1
	// does not wait.
	r, err = Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, Seed: 1,
		Policy: PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"}})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "bill without power management", r.BillUSD, 500.0/3600)
	near(t, "always on", r.AlwaysOnUSD, 500.0/3600)
	near(t, "wait mean", r.WaitMeanS, 0)
}
