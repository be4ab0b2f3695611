package simulate

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestNotBeforeByHand: TestPowerByHand's cluster and jobs (one agent of 2
// cpus at $1/h, power off after 60 s idle, boot 30 s), both jobs deadline
// jobs (3x their run time), each submitted 200 s before its arrival with
// its notBefore at the arrival:
//
//	j0 at 0 s (its lead is cut at the window's start: no notBefore): 0-100.
//	idle from 100 s: powered off at 160 s.
//	j1 submitted at 200 s, held until 400 s; one boot time before, at
//	370 s, the pass powers the agent on (370-400); j1 runs 400-500 (its
//	wait, from its notBefore: 0 s).
//
// Bill: on 0-160 and 370-500 = 290 s; always on: 500 s. Without the lead
// (j1 arrives at 400 s and powers the agent on then) it waits its boot:
// 430-530, a wait of 30 s.
func TestNotBeforeByHand(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	wl := []workload.Job{wc("j0", 0, 100), wc("j1", 400, 100)}
	run := func(lead time.Duration) Result {
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, Seed: 1,
			Policy:           PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
			DeadlineFraction: 1, Slack: 3,
			PowerOffAfter: 60 * time.Second, BootTime: 30 * time.Second, NotBeforeLead: lead})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 2 || r.Unfinished != 0 || r.DeadlineMissed != 0 {
			t.Fatalf("%+v", r)
		}
		return r
	}
	r := run(200 * time.Second)
	near(t, "bill", r.BillUSD, 290.0/3600)
	near(t, "always on", r.AlwaysOnUSD, 500.0/3600)
	near(t, "wait mean", r.WaitMeanS, 0)
	near(t, "jct mean", r.JCTMeanS, 100)

	r = run(0)
	near(t, "bill without notBefore", r.BillUSD, 290.0/3600)
	near(t, "always on without notBefore", r.AlwaysOnUSD, 530.0/3600)
	near(t, "wait mean without notBefore", r.WaitMeanS, 15)
}
