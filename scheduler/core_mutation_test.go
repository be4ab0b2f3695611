package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// core.go (docs/testing.md, "Mutation testing"); expected figures by hand.

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestRecoveredStartTime: a job recovered after a restart counts its
// current run from LastStartedAt, or from StartedAt when it has no
// LastStartedAt, and only when it is RUNNING (a job launching again
// starts its run now). Seen through the policy's RemainingActive of the
// agent the job holds: estimate 60 min, so a run started 50 min ago
// leaves 10 min, one started 45 min ago 15 min, one not running yet the
// whole 60 min.
func TestRecoveredStartTime(t *testing.T) {
	ago := func(d time.Duration) *time.Time { x := t0.Add(-d); return &x }
	for _, c := range []struct {
		name          string
		state         State
		started, last *time.Time
		want          time.Duration
	}{
		{"running, last start", Running, ago(2 * time.Hour), ago(50 * time.Minute), 10 * time.Minute},
		{"running, first start only", Running, ago(45 * time.Minute), nil, 15 * time.Minute},
		{"launching after an earlier run", Launching, ago(2 * time.Hour), ago(50 * time.Minute), time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			pc := &capture{}
			h := newHarness(t, Config{Placer: pc}, agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24))
			r := mkJob("r", 1, 2, withEstimate(time.Hour))
			r.State, r.StartedAt, r.LastStartedAt = c.state, c.started, c.last
			h.store.add(r)
			plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}}
			if err := h.store.SavePlacement(context.Background(), "r", plan); err != nil {
				t.Fatal(err)
			}
			if err := h.cluster.Apply(context.Background(), r, plan); err != nil {
				t.Fatal(err)
			}
			if err := h.core.Recover(context.Background()); err != nil {
				t.Fatal(err)
			}
			h.submit(mkJob("new", 1, 1))
			h.schedule()
			if len(pc.snaps) == 0 {
				t.Fatal("the policy was not asked")
			}
			for _, a := range pc.snaps[0].Agents {
				if a.ID == "a1" && (!a.Active || a.RemainingActive != c.want) {
					t.Fatalf("a1: active %v, remaining %s, want %s", a.Active, a.RemainingActive, c.want)
				}
			}
		})
	}
}

// TestWaitingCountsEveryPlace: Waiting adds the deadline queue, the
// regular queue and the intake (jobs announced but not admitted yet, and
// jobs on their way back to a queue). One 4-cpu agent, jobs of one 4-cpu
// executor: d1 starts, d2 waits in the deadline queue, r1 and r2 in the
// regular queue; then three jobs are announced (n1-n3) and d1 goes back
// to the queue (a retry): 1 + 2 + (3 + 1) = 7.
func TestWaitingCountsEveryPlace(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.submit(mkJob("d1", 1, 4, withDeadline(time.Hour)), mkJob("d2", 1, 4, withDeadline(2*time.Hour)),
		mkJob("r1", 1, 4), mkJob("r2", 1, 4, submittedAt(time.Second)))
	h.schedule()
	for _, id := range []string{"n1", "n2", "n3"} {
		h.core.JobSubmitted(h.store.add(mkJob(id, 1, 4, submittedAt(time.Minute))))
	}
	ctx := context.Background()
	if err := h.core.Report(ctx, "d1", Launching, ""); err != nil {
		t.Fatal(err)
	}
	if err := h.core.Report(ctx, "d1", Queued, "executor lost"); err != nil {
		t.Fatal(err)
	}
	if l := h.core.Lengths(); l != (QueueLengths{Deadline: 1, Regular: 2, Intake: 4}) {
		t.Fatalf("lengths %+v, want 1 deadline, 2 regular, 4 in intake", l)
	}
	if n := h.core.Waiting(); n != 7 {
		t.Fatalf("Waiting() = %d, want 7", n)
	}
}

// TestRDWeights: the regular queue's key RD = E x (alpha c / CPU_total +
// beta m / MEM_total), where a weight left at 0 is 1 less the other, and
// both at 0 are placement's defaults (0.8, 0.2). One agent of 4 cpus and
// 16384 MiB (held by "hog"); "w" waits with 2 executors of 2 cpus and
// 1024 + 384 = 1408 MiB: c / CPU = 0.5, m / MEM = 0.0859375.
func TestRDWeights(t *testing.T) {
	for _, c := range []struct {
		alpha, beta, want float64
	}{
		{0, 0, 2 * (0.8*0.5 + 0.2*0.0859375)},      // 0.834375
		{0.25, 0, 2 * (0.25*0.5 + 0.75*0.0859375)}, // 0.37890625
		{0, 0.25, 2 * (0.75*0.5 + 0.25*0.0859375)}, // 0.79296875
		{0.5, 0.5, 2 * (0.5*0.5 + 0.5*0.0859375)},  // 0.5859375
	} {
		h := newHarness(t, Config{PolicyOptions: placement.Options{Alpha: c.alpha, Beta: c.beta}}, agent("a1", 4, 16384, 0.24))
		h.submit(mkJob("hog", 1, 4, submittedAt(-time.Hour)))
		h.schedule()
		h.submit(mkJob("w", 2, 2))
		h.schedule()
		q := h.core.Queues()
		if len(q.Regular) != 1 || math.Abs(q.Regular[0].ResourceDemand-c.want) > 1e-12 {
			t.Fatalf("alpha %g, beta %g: regular queue %+v, want w with RD %g", c.alpha, c.beta, q.Regular, c.want)
		}
	}
}
