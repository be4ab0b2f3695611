package scheduler

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// decided stores j as the API does with a core: decided at submission
// (QUEUED, with the predicted reason), then handed to the core.
func decided(h *harness, j Job) Job {
	d := h.core.Decide(&j, h.clock.Now())
	if !d.Queue {
		h.t.Fatalf("job %s not queued at submission: %+v", j.ID, d)
	}
	d.Apply(&j)
	j = h.store.add(j)
	h.core.JobSubmitted(j)
	return j
}

// A job queued at submission is stored with the reason its first pass
// gives it, when the last pass makes that clear, so that the pass writes
// nothing for it; when the prediction cannot be made or is wrong, the pass
// writes the right reason as before.
func TestDecidePredictsTheFirstWaitingReason(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, thesisAgents()...)
	h.t = t
	h.schedule()
	// Before any pass saw the cluster full: no prediction.
	free := mkJob("free", 1, 1)
	if d := h.core.Decide(&free, h.clock.Now()); d.Reason != "" {
		t.Fatalf("a job that fits the free cluster got the predicted reason %q", d.Reason)
	}
	for i, a := range thesisAgents() {
		h.submit(mkJob(fmt.Sprintf("hold-%02d", i), 1, int(a.CPUs), submittedAt(-time.Hour)))
	}
	h.schedule() // every cpu taken

	const n = 50
	for i := 0; i < n; i++ {
		j := decided(h, mkJob(fmt.Sprintf("r-%03d", i), 12, 2, submittedAt(time.Duration(i)*time.Millisecond)))
		if j.WaitingReason != "does not fit now: short of cpus" {
			t.Fatalf("%s stored with reason %q", j.ID, j.WaitingReason)
		}
	}
	before := h.store.callCount("SetWaitingMany")
	h.schedule()
	if d := h.store.callCount("SetWaitingMany") - before; d != 0 {
		t.Fatalf("the first pass over %d predicted jobs wrote reasons %d times, want 0", n, d)
	}
	if j := h.store.get("r-007"); j.State != Queued || j.WaitingReason != "does not fit now: short of cpus" {
		t.Fatalf("r-007 %s %q", j.State, j.WaitingReason)
	}

	// A deadline job waits: a regular job is predicted to wait behind it.
	dl := decided(h, mkJob("dl", 12, 2, withDeadline(time.Hour), withEstimate(time.Minute)))
	if dl.WaitingReason != "does not fit now: short of cpus" {
		t.Fatalf("deadline job stored with %q", dl.WaitingReason)
	}
	h.schedule()
	reg := decided(h, mkJob("after-dl", 12, 2))
	if reg.WaitingReason != ReasonDeadlineFirst {
		t.Fatalf("regular job behind a deadline job stored with %q, want %q", reg.WaitingReason, ReasonDeadlineFirst)
	}
	before = h.store.callCount("SetWaitingMany")
	h.schedule()
	if d := h.store.callCount("SetWaitingMany") - before; d != 0 {
		t.Fatalf("the pass after a predicted deadline-first job wrote reasons %d times, want 0", d)
	}

	// A wrong prediction is corrected by the pass: two 12-cpu agents are
	// freed, no pass has run since, so the hint still says deadline jobs
	// wait; the pass then starts the deadline job on them, and the regular
	// job waits for cpus, not behind deadline jobs.
	for _, id := range []string{"hold-12", "hold-13"} {
		if err := h.finish(id); err != nil {
			t.Fatal(err)
		}
	}
	wrong := decided(h, mkJob("wrong", 1, 2))
	if wrong.WaitingReason != ReasonDeadlineFirst {
		t.Fatalf("stale hint: %q", wrong.WaitingReason)
	}
	before = h.store.callCount("SetWaitingMany")
	h.schedule()
	if j := h.store.get("dl"); j.State != Reserving {
		t.Fatalf("deadline job %s after two agents were freed, want RESERVING", j.State)
	}
	if j := h.store.get("wrong"); j.State != Queued || j.WaitingReason != "does not fit now: short of cpus" {
		t.Fatalf("wrongly predicted job: %s %q, want QUEUED %q", j.State, j.WaitingReason, "does not fit now: short of cpus")
	}
	if d := h.store.callCount("SetWaitingMany") - before; d == 0 {
		t.Fatal("the pass did not write the corrected reason")
	}
}

// An executor fits one of the frontier's sizes exactly when it fits some
// agent; the frontier has no size another beats on both resources.
func TestSizeFrontier(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for round := 0; round < 300; round++ {
		var agents []placement.Agent
		for i := rng.Intn(40); i >= 0; i-- {
			agents = append(agents, placement.Agent{CPUs: float64(1 + rng.Intn(16)), MemMB: float64(1024 * (1 + rng.Intn(16)))})
		}
		var standby []placement.Agent
		if rng.Intn(2) == 0 {
			standby = append(standby, placement.Agent{CPUs: float64(1 + rng.Intn(32)), MemMB: float64(512 * (1 + rng.Intn(64)))})
		}
		front := sizeFrontier(agents, standby)
		for _, a := range front {
			for _, b := range front {
				if a != b && b[0] >= a[0] && b[1] >= a[1] {
					t.Fatalf("frontier %v holds %v, which %v beats", front, a, b)
				}
			}
		}
		all := append(slices.Clone(agents), standby...)
		for q := 0; q < 50; q++ {
			c, m := float64(1+rng.Intn(34)), float64(256*(1+rng.Intn(140)))
			want := false
			for _, a := range all {
				want = want || (a.CPUs >= c && a.MemMB >= m)
			}
			got := false
			for _, f := range front {
				got = got || (f[0] >= c && f[1] >= m)
			}
			if got != want {
				t.Fatalf("executor %gx%g: frontier %v says %v, the agents %v", c, m, front, got, want)
			}
		}
	}
}

// Admission at submission follows the agents' sizes exactly: when cpus
// move between two agents of equal memory (every sum stays the same), a
// job whose executors now fit the larger agent is queued, not rejected,
// and one that fit only before is rejected.
func TestDecideFollowsAgentSizesWithEqualSums(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, agent("a", 8, 16384, 0.1), agent("b", 8, 16384, 0.1))
	h.t = t
	h.schedule()
	big := mkJob("ten-cpus", 1, 10)
	if d := h.core.Decide(&big, h.clock.Now()); d.Reject == "" {
		t.Fatalf("a 10-cpu executor on two 8-cpu agents was admitted: %+v", d)
	}
	h.cluster.mu.Lock()
	h.cluster.agents = []placement.Agent{agent("a", 4, 16384, 0.1), agent("b", 12, 16384, 0.1)}
	for i := range h.cluster.agents {
		h.cluster.agents[i].FreeCPUs, h.cluster.agents[i].FreeMemMB = h.cluster.agents[i].CPUs, h.cluster.agents[i].MemMB
	}
	h.cluster.mu.Unlock()
	h.schedule()
	if d := h.core.Decide(&big, h.clock.Now()); d.Reject != "" || !d.Queue {
		t.Fatalf("a 10-cpu executor with a 12-cpu agent: %+v, want queued", d)
	}
}
