package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// The tests below kill the mutants gremlins left alive in intake.go
// (docs/testing.md, "Mutation testing"). The expected verdicts are worked
// out by hand from the agents' sizes: an executor of mkJob(id, e, c) asks
// for c cpus and 1024 + 384 = 1408 MiB (Spark's minimum overhead).

// TestAdmitExecutorOfExactlyAnAgentsSize: an executor exactly the size of
// the largest agent fits it (and an agent short by float noise of at most
// 1e-9 counts as that size); one MiB or one cpu less does not.
func TestAdmitExecutorOfExactlyAnAgentsSize(t *testing.T) {
	noisy := 2.0
	noisy -= 1e-9 // 2 cpus as a sum of fractions may come out
	noisyMem := 1408.0
	noisyMem -= 1e-9
	for _, c := range []struct {
		name       string
		cpus, mem  float64
		wantReject string
	}{
		{"exactly the executor's size", 2, 1408, ""},
		{"2 cpus less 1e-9", noisy, 1408, ""},
		{"1408 MiB less 1e-9", 2, noisyMem, ""},
		{"one MiB short", 2, 1407, "larger than every agent"},
		{"one cpu short", 1, 1408, "larger than every agent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a", c.cpus, c.mem, 0.1))
			h.schedule() // the pass reads the agents' sizes
			j := mkJob("j", 1, 2)
			got := h.core.Admit(&j, t0)
			if (c.wantReject == "") != (got == "") || !strings.Contains(got, c.wantReject) {
				t.Fatalf("Admit = %q, want %q", got, c.wantReject)
			}
		})
	}
}

// TestNeverFitsCountsByMemory: on agents of 100 cpus and 2 x 1408 MiB,
// memory limits each agent to 2 executors of 1 cpu: 2 agents hold 4, not
// 5. An invalid demand (no cpus, or no memory) is left to the placement
// policy, which gives its own reason: admission does not reject it.
func TestNeverFitsCountsByMemory(t *testing.T) {
	for _, c := range []struct {
		name   string
		job    Job
		reject bool
	}{
		{"4 executors fill the memory of both agents", mkJob("j", 4, 1), false},
		{"5 executors need a third agent", mkJob("j", 5, 1), true},
		{"1000 executors of 0 cpus", mkJob("j", 1000, 0), false},
		{"1000 executors of 0 MiB in all", func() Job {
			j := mkJob("j", 1000, 1)
			j.ExecutorMemoryMB = -384 // with Spark's minimum overhead of 384 MiB: 0 in all
			return j
		}(), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a", 100, 2*1408, 0.1), agent("b", 100, 2*1408, 0.1))
			h.schedule()
			got := h.core.Admit(&c.job, t0)
			if c.reject != (got != "") || (c.reject && !strings.Contains(got, "does not fit even on the empty cluster")) {
				t.Fatalf("Admit = %q, want rejected %v (as not fitting the empty cluster)", got, c.reject)
			}
		})
	}
}

// TestJobSubmittedStates: the API's notice of a new job is taken when the
// job is SUBMITTED, QUEUED or has no state yet (the store's default), and
// ignored in any other state.
func TestJobSubmittedStates(t *testing.T) {
	for _, c := range []struct {
		notice State
		taken  bool
	}{
		{Submitted, true},
		{"", true},
		{Running, false},
		{Finished, false},
	} {
		t.Run(string(c.notice), func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a", 4, 16384, 0.1))
			h.schedule()
			j := h.store.add(mkJob("j", 1, 1))
			j.State = c.notice
			h.core.JobSubmitted(j)
			h.schedule()
			got := h.store.get("j").State
			if taken := got != Submitted; taken != c.taken {
				t.Fatalf("notice in state %q: the stored job is %s, want taken %v", c.notice, got, c.taken)
			}
		})
	}
}

// TestSameSizes: the frontier is computed again exactly when the agents'
// sizes (cpus, MiB), in order over the lists, differ from those it was
// computed from.
func TestSameSizes(t *testing.T) {
	a4 := agent("a", 4, 1024, 0.1)
	b2 := agent("b", 2, 512, 0.1)
	for _, c := range []struct {
		name   string
		prev   [][2]float64
		agents [][]placement.Agent
		want   bool
	}{
		{"none", nil, nil, true},
		{"the same agent", [][2]float64{{4, 1024}}, [][]placement.Agent{{a4}}, true},
		{"the same two, in two lists", [][2]float64{{4, 1024}, {2, 512}}, [][]placement.Agent{{a4}, {b2}}, true},
		{"an agent added", [][2]float64{{4, 1024}}, [][]placement.Agent{{a4, b2}}, false},
		{"an agent added in a second list", [][2]float64{{4, 1024}}, [][]placement.Agent{{a4}, {b2}}, false},
		{"an agent gone", [][2]float64{{4, 1024}, {2, 512}}, [][]placement.Agent{{a4}}, false},
		{"the same sizes in another order", [][2]float64{{2, 512}, {4, 1024}}, [][]placement.Agent{{a4, b2}}, false},
		{"memory changed", [][2]float64{{4, 2048}}, [][]placement.Agent{{a4}}, false},
		{"cpus changed", [][2]float64{{8, 1024}}, [][]placement.Agent{{a4}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := sameSizes(c.prev, c.agents...); got != c.want {
				t.Fatalf("sameSizes = %v, want %v", got, c.want)
			}
		})
	}
}

// TestSubmitReturnsTheStoredJob: Submit takes a job without a state as
// SUBMITTED, and returns the job as stored, QUEUED with the waiting reason
// "queued".
func TestSubmitReturnsTheStoredJob(t *testing.T) {
	for _, st := range []State{Submitted, ""} {
		t.Run(string(st), func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a", 4, 16384, 0.1))
			j := h.store.add(mkJob("j", 1, 1))
			j.State = st
			got, err := h.core.Submit(context.Background(), j)
			if err != nil {
				t.Fatalf("Submit: %v", err)
			}
			if got.State != Queued || got.WaitingReason != "queued" {
				t.Fatalf("Submit returned the job %s (%q), want QUEUED (\"queued\")", got.State, got.WaitingReason)
			}
			if s := h.store.get("j"); s.State != Queued {
				t.Fatalf("stored %s, want QUEUED", s.State)
			}
		})
	}
}

// TestSubmitAtRiskFlag: in accept-and-flag mode a job that cannot make its
// deadline (600 s of work, 300 s left) is queued at risk, with the reason;
// one that can (600 s left) is queued plainly.
func TestSubmitAtRiskFlag(t *testing.T) {
	for _, c := range []struct {
		name string
		left time.Duration
		risk bool
	}{
		{"600 s of work in 300 s", 300 * time.Second, true},
		{"600 s of work in 900 s", 900 * time.Second, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{Admission: AdmitFlag}, agent("a", 4, 16384, 0.1))
			dl := t0.Add(c.left)
			j := mkJob("j", 1, 1, func(j *Job) { j.DeadlineAt = &dl; j.EstimatedDurationSeconds = 600 })
			h.submit(j)
			s := h.store.get("j")
			if s.State != Queued || s.AtRisk != c.risk || strings.HasPrefix(s.WaitingReason, "at risk: cannot finish") != c.risk {
				t.Fatalf("stored %s, at risk %v (%q); want QUEUED, at risk %v", s.State, s.AtRisk, s.WaitingReason, c.risk)
			}
		})
	}
}
