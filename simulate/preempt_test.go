package simulate

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestEvictionByHand: one agent of 2 cpus; a long job (one executor of 2
// cpus, a far deadline) starts at 0 s; a short deadline job of the same
// size arrives at 100 s with a deadline it can only meet by starting at
// once. Without preemption the short job waits for the long one and
// misses; with every eviction policy the long job is evicted at 100 s
// (losing 100 s of work), the short job runs and meets its deadline, and
// the long job runs again from scratch and still meets its own.
func TestEvictionByHand(t *testing.T) {
	m := workload.DefaultModel
	long := workload.Profile{JobID: "long", App: workload.WordCount, InputBytes: 200 << 30, Executors: 1, ExecutorCores: 2, ExecutorMemoryMB: 2048}
	short := workload.Profile{JobID: "short", App: workload.WordCount, InputBytes: 1 << 20, Executors: 1, ExecutorCores: 2, ExecutorMemoryMB: 2048}
	refLong, refShort := m.Reference(long).Seconds(), m.Reference(short).Seconds()
	const arrive = 100.0
	const slack = 1.5
	// The scenario holds only if the short job cannot wait for the long
	// one, the long one is not protected (far from its end) and the swap
	// keeps the long job's deadline.
	if refLong < 10*arrive || arrive+refShort*slack > refLong || arrive+refShort+refLong > refLong*slack {
		t.Fatalf("model changed: reference durations long %.0f s, short %.0f s do not make the scenario", refLong, refShort)
	}
	wl := []workload.Job{{Submit: 0, Profile: long}, {Submit: time.Duration(arrive * float64(time.Second)), Profile: short}}
	dap, err := LookupPolicy("dap")
	if err != nil {
		t.Fatal(err)
	}
	run := func(pre scheduler.PreemptionPolicy) Result {
		t.Helper()
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Policy: dap.WithPreemption(pre), DeadlineFraction: 1, Slack: slack, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Completed != 2 || r.Unfinished != 0 || r.Rejected != 0 {
			t.Fatalf("%s: %+v", pre, r)
		}
		return r
	}
	none := run(scheduler.PreemptNone)
	if none.DeadlineMissed != 1 || none.Preemptions != 0 || none.LostWorkS != 0 {
		t.Fatalf("without preemption: missed %d, preemptions %d, lost %.0f s; want 1, 0, 0", none.DeadlineMissed, none.Preemptions, none.LostWorkS)
	}
	for _, pre := range []scheduler.PreemptionPolicy{scheduler.PreemptMDF, scheduler.PreemptMLF, scheduler.PreemptSRT} {
		t.Run(string(pre), func(t *testing.T) {
			r := run(pre)
			if r.Policy != "dap+"+string(pre) {
				t.Errorf("policy named %q", r.Policy)
			}
			if r.DeadlineMissed != 0 || r.Preemptions != 1 {
				t.Fatalf("missed %d, preemptions %d; want 0, 1", r.DeadlineMissed, r.Preemptions)
			}
			// The long job ran 0-100 s before its eviction: 100 s of
			// work (200 cpu-seconds) lost.
			if math.Abs(r.LostWorkS-arrive) > 1 || math.Abs(r.LostCPUS-2*arrive) > 2 {
				t.Errorf("lost %.1f s / %.1f cpu-s, want %.0f / %.0f", r.LostWorkS, r.LostCPUS, arrive, 2*arrive)
			}
			// The agent is paid for the lost work: the run costs more
			// than without eviction, by about the lost time.
			if r.TotalCostUSD <= none.TotalCostUSD {
				t.Errorf("cost %.4f with eviction <= %.4f without", r.TotalCostUSD, none.TotalCostUSD)
			}
			again := run(pre)
			if again.TotalCostUSD != r.TotalCostUSD || again.LostWorkS != r.LostWorkS || again.MakespanS != r.MakespanS {
				t.Errorf("not deterministic: %+v then %+v", r, again)
			}
		})
	}
}
