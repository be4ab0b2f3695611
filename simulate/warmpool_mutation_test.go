package simulate

// Tests of warmpool.go (the warm pool in the simulator) that kill mutants
// gremlins left alive (issue 33). Expected values are derived by hand in
// the comments.

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
)

// wpJob is a job of 2 executors of 2 cpus and 1024 + 476 MiB, estimated
// at 50 s, submitted at sub seconds.
func wpJob(id string, sub float64) scheduler.Job {
	return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: 2, ExecutorCores: 2, ExecutorMemoryMB: 1024, MemoryOverheadMB: 476,
		EstimatedDurationSeconds: 50}, SubmittedAt: Epoch.Add(time.Duration(sub * float64(time.Second)))}
}

// TestWarmPoolQueueDelayByHand: the queue delay is the mean wait beyond a
// boot (30 s here) of the last 10 jobs started. Nothing started: 0.
// Twelve jobs waiting 30 s + k, k = 1..12: the last ten, 3..12, give 7.5 s.
// A thirteenth started 10 s after its submission (before a boot could
// end) waited 0 beyond one: 4..12 and 0, 7.2 s. A started job runs until
// now + its estimate, with 2 x 2 cpus and 2 x 1500 MiB.
func TestWarmPoolQueueDelayByHand(t *testing.T) {
	w := newSimWarmPool(nil, nil, 30*time.Second, 0, 0, Epoch)
	if d := w.queueDelay(); d != 0 {
		t.Fatalf("queue delay with no start: %v", d)
	}
	for k := 1; k <= 12; k++ {
		j := wpJob("j"+string(rune('a'+k)), float64(100*k))
		w.started(j, j.SubmittedAt.Add(time.Duration(30+k)*time.Second))
	}
	if d := w.queueDelay(); d != 7500*time.Millisecond {
		t.Errorf("queue delay %v, want 7.5s", d)
	}
	j := wpJob("late", 2000)
	now := j.SubmittedAt.Add(10 * time.Second)
	w.started(j, now)
	if d := w.queueDelay(); d != 7200*time.Millisecond {
		t.Errorf("queue delay %v, want 7.2s", d)
	}
	r := w.running["late"]
	if r.CPUs != 4 || r.MemMB != 3000 || !r.EndsAt.Equal(now.Add(50*time.Second)) {
		t.Errorf("running %+v, want 4 cpus, 3000 MiB, ending 50 s after its start", r)
	}
}

// TestWarmPoolHistoryByHand: what the forecast learns of an arrival: the
// job's cpus and memory (2 x 2 cpus, 2 x 1500 MiB), one executor's, its
// estimate, and with a deadline 120 s after its submission a slack of
// 120 - 50 = 70 s. It is waiting until it starts.
func TestWarmPoolHistoryByHand(t *testing.T) {
	w := newSimWarmPool(nil, nil, 30*time.Second, 0, 0, Epoch)
	j := wpJob("d", 10)
	dl := j.SubmittedAt.Add(120 * time.Second)
	j.DeadlineAt = &dl
	w.submitted(j)
	if len(w.history) != 1 {
		t.Fatalf("%+v", w.history)
	}
	h := w.history[0]
	if h.CPUs != 4 || h.MemMB != 3000 || h.ExecutorCPUs != 2 || h.ExecutorMemMB != 1500 || h.RunSeconds != 50 || !h.Deadline || h.SlackSeconds != 70 {
		t.Errorf("history %+v", h)
	}
	if p := w.pending["d"]; p != [2]float64{4, 3000} {
		t.Errorf("pending %v, want 4 cpus and 3000 MiB", p)
	}
}

// TestWarmPoolBootDefault: the warm pool's boot time is the cluster's,
// 60 s when none is given.
func TestWarmPoolBootDefault(t *testing.T) {
	for _, tc := range []struct{ in, want time.Duration }{{0, 60 * time.Second}, {-time.Second, 60 * time.Second}, {30 * time.Second, 30 * time.Second}} {
		if w := newSimWarmPool(nil, nil, tc.in, 0, 0, Epoch); w.boot != tc.want {
			t.Errorf("boot %v: %v, want %v", tc.in, w.boot, tc.want)
		}
	}
}

// TestWarmPoolDropRejected: waiting jobs the core rejected leave the
// waiting demand; the others (and one the store does not know) stay.
func TestWarmPoolDropRejected(t *testing.T) {
	clock := NewVirtualClock(Epoch)
	store := NewMemStore(clock)
	w := newSimWarmPool(nil, nil, 30*time.Second, 0, 0, Epoch)
	for _, id := range []string{"queued", "rejected", "unknown"} {
		j := wpJob(id, 0)
		j.State = scheduler.Submitted
		if id != "unknown" {
			if _, err := store.Create(j); err != nil {
				t.Fatal(err)
			}
		}
		w.submitted(j)
	}
	if _, err := store.Transition(context.Background(), "rejected", scheduler.Submitted, scheduler.Rejected, "too big", nil); err != nil {
		t.Fatal(err)
	}
	w.dropRejected(store)
	if _, ok := w.pending["rejected"]; ok || len(w.pending) != 2 {
		t.Errorf("pending %v, want queued and unknown", w.pending)
	}
}

// TestMemPowerStoreOrder: the power records come back by agent id.
func TestMemPowerStoreOrder(t *testing.T) {
	s := &memPowerStore{recs: map[string]power.Record{}}
	for _, id := range []string{"b", "c", "a"} {
		if err := s.PutPowerRecord(context.Background(), power.Record{AgentID: id}); err != nil {
			t.Fatal(err)
		}
	}
	recs, err := s.PowerRecords(context.Background())
	if err != nil || len(recs) != 3 || recs[0].AgentID != "a" || recs[1].AgentID != "b" || recs[2].AgentID != "c" {
		t.Errorf("%+v %v", recs, err)
	}
}
