package simulate

// Tests of sim.go (the simulation loop and its summary) that kill mutants
// gremlins left alive (issue 33). Expected values are derived by hand in
// the comments.

import (
	"container/heap"
	"context"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestFinishHeapOrder: job ends pop earliest first, ends at the same
// instant in the order their runs started (seq).
func TestFinishHeapOrder(t *testing.T) {
	at := Epoch.Add(time.Minute)
	var h finishHeap
	for _, f := range []finish{{at: at, seq: 3}, {at: at.Add(-time.Second), seq: 4}, {at: at, seq: 1}, {at: at, seq: 2}, {at: at.Add(time.Second), seq: 0}} {
		heap.Push(&h, f)
	}
	var got []int
	for h.Len() > 0 {
		got = append(got, heap.Pop(&h).(finish).seq)
	}
	want := []int{4, 1, 2, 3, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("popped seqs %v, want %v", got, want)
		}
	}
}

func exactPolicy() PolicySpec {
	return PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"}
}

// TestSlackDefault: a slack of 0 (unset) is 1: the deadline is the
// reference run time. One WordCount of 40 s alone on an agent ends at
// 40 s, its deadline exactly: met.
func TestSlackDefault(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	r, err := Run(context.Background(), Options{Workload: []workload.Job{wc("j", 0, 40)}, Cluster: oneAgent(t), Model: &m, Seed: 1,
		Policy: exactPolicy(), DeadlineFraction: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 1 || r.DeadlineJobs != 1 || r.DeadlineMissed != 0 || r.Rejected != 0 {
		t.Errorf("%+v", r)
	}
}

// TestBootTimeDefault: with power management and no boot time, a boot
// takes 60 s. TestPowerByHand's jobs (j0 0-100, the agent off from 160 s,
// j1 at 400 s): j1 waits 60 s for the boot and ends at 560 s.
func TestBootTimeDefault(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	r, err := Run(context.Background(), Options{Workload: []workload.Job{wc("j0", 0, 100), wc("j1", 400, 100)}, Cluster: oneAgent(t), Model: &m,
		Seed: 1, Policy: exactPolicy(), PowerOffAfter: 60 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "wait mean", r.WaitMeanS, 30)
	near(t, "makespan", r.MakespanS, 560)
}

// TestRunNoiseByHand: with run noise sigma, a job runs its time times
// exp(sigma x N), N the first normal deviate of the run's noise generator
// (PCG seeded with the seed and 0x7a15e), to the millisecond; sigma
// must be in [0, 5]. An empty job (10 s) alone, sigma 0.5 and 5.
func TestRunNoiseByHand(t *testing.T) {
	m := workload.DefaultModel
	wl := []workload.Job{wc("j", 0, 10)}
	for _, sigma := range []float64{0.5, 5} {
		n := rand.New(rand.NewPCG(7, 0x7a15e)).NormFloat64()
		want := (time.Duration(float64(10*time.Second) * math.Exp(sigma*n))).Round(time.Millisecond).Seconds()
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, Seed: 7, Policy: exactPolicy(), RunNoise: sigma})
		if err != nil {
			t.Fatal(err)
		}
		near(t, "jct with noise", r.JCTMeanS, want)
	}
	for _, sigma := range []float64{-0.001, 5.001, math.NaN()} {
		if _, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, Seed: 7, Policy: exactPolicy(), RunNoise: sigma}); err == nil {
			t.Errorf("run noise %v accepted", sigma)
		}
	}
}

// TestEmptyRun: no job: no figure is 0/0 (utilisation, stretch, mean
// executors are 0).
func TestEmptyRun(t *testing.T) {
	r, err := Run(context.Background(), Options{Cluster: oneAgent(t), Seed: 1, Policy: exactPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs != 0 || r.UtilisationPct != 0 || r.Stretch != 0 || r.MeanExecutors != 0 || r.JCTMeanS != 0 {
		t.Errorf("%+v", r)
	}
}

// TestProgressByHand: Progress is called at the first event, then each
// time another 50 jobs have finished, and at the end. 60 empty jobs (one
// executor of 2 cpus, 10 s) at 0 s on one agent of 2 cpus run one after
// the other: calls with 0 done at 0 s, 50 done at 500 s, 60 at 600 s.
func TestProgressByHand(t *testing.T) {
	m := workload.DefaultModel
	var wl []workload.Job
	for i := range 60 {
		wl = append(wl, wc("j"+string(rune('A'+i)), 0, 10))
	}
	type call struct {
		at         time.Duration
		done, jobs int
	}
	var calls []call
	r, err := Run(context.Background(), Options{Workload: wl, Cluster: oneAgent(t), Model: &m, Seed: 1, Policy: exactPolicy(),
		Progress: func(at time.Duration, done, jobs int) { calls = append(calls, call{at, done, jobs}) }})
	if err != nil {
		t.Fatal(err)
	}
	want := []call{{0, 0, 60}, {500 * time.Second, 50, 60}, {600 * time.Second, 60, 60}}
	if r.Completed != 60 || len(calls) != len(want) {
		t.Fatalf("%d completed; calls %v, want %v", r.Completed, calls, want)
	}
	for i := range want {
		if calls[i] != want[i] {
			t.Fatalf("calls %v, want %v", calls, want)
		}
	}
}

// TestMeanExecutorsByHand: the mean executor count of the jobs run, and
// the stretch: WordCounts of 1 and 3 executors (2 cores each) alone on
// an agent of 8 cpus, one after the other, each as fast as its profile:
// mean 2, stretch 1. Scheduling delays are real time, in milliseconds:
// well below a minute each.
func TestMeanExecutorsByHand(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	a, b := wc("a", 0, 40), wc("b", 100, 40)
	b.Profile.Executors = 3
	r, err := Run(context.Background(), Options{Workload: []workload.Job{a, b}, Cluster: eightCPUs(t), Model: &m, Seed: 1, Policy: exactPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	near(t, "mean executors", r.MeanExecutors, 2)
	near(t, "stretch", r.Stretch, 1)
	if r.Placements != 2 || !(r.SchedDelayP99MS >= 0 && r.SchedDelayP99MS < 60000) {
		t.Errorf("%d placements, sched delay p99 %v ms", r.Placements, r.SchedDelayP99MS)
	}
}

// TestNoLeadKeepsSubmissions: notBefore rewriting happens only with a
// lead; without one a deadline job submitted before the window's start
// keeps its submission time. From 100 s; j0 (40 s, deadline 1.5 x 40 =
// 60 s after its submission) at 0 s waits for the window and runs
// 100-140 s (JCT 140 s, a wait of 100 s, its deadline missed); j1 at
// 150 s runs 150-190 s (JCT 40 s). Makespan 190 - 100 = 90 s.
func TestNoLeadKeepsSubmissions(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	r, err := Run(context.Background(), Options{Workload: []workload.Job{wc("j0", 0, 40), wc("j1", 150, 40)}, From: 100 * time.Second,
		Cluster: oneAgent(t), Model: &m, Seed: 1, Policy: exactPolicy(), DeadlineFraction: 1, Slack: 1.5})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 2 || r.DeadlineMissed != 1 {
		t.Fatalf("%+v", r)
	}
	near(t, "jct mean", r.JCTMeanS, (140+40)/2.0)
	near(t, "wait mean", r.WaitMeanS, 50)
	near(t, "makespan", r.MakespanS, 90)
}
