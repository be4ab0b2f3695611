package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// pass.go (docs/testing.md, "Mutation testing"); expected figures by hand.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/placement"
)

// passStats keeps the PassStat of every pass.
type passStats struct {
	NopObserver
	got *[]PassStat
}

func (o passStats) PassDone(s PassStat) { *o.got = append(*o.got, s) }

// TestPassStatWaiting: a pass's Waiting counts both queues. On one 4-cpu
// agent, four jobs of one 4-cpu executor: deadline d1 starts (earliest
// deadline), deadline d2 waits in the deadline queue, regular r1 and r2
// wait behind it in the job queue: 1 + 2 = 3 waiting, 1 started.
func TestPassStatWaiting(t *testing.T) {
	var stats []PassStat
	h := newHarness(t, Config{Observer: passStats{got: &stats}}, agent("a1", 4, 16384, 0.24))
	h.submit(mkJob("d1", 1, 4, withDeadline(time.Hour)), mkJob("d2", 1, 4, withDeadline(2*time.Hour)),
		mkJob("r1", 1, 4), mkJob("r2", 1, 4, submittedAt(time.Second)))
	h.schedule()
	if len(stats) != 1 {
		t.Fatalf("%d pass stats, want 1", len(stats))
	}
	if s := stats[0]; s.Waiting != 3 || s.Started != 1 {
		t.Fatalf("pass stat %+v, want 3 waiting, 1 started", s)
	}
}

// TestPassRemembersForTenMinutes: a full pass forgets a cancelled job and
// a job it placed (which has ended since) once more than 10 minutes
// (pass.go's comment: "how long the pass remembers a cancelled job") have
// gone since: Unknown does not name them before, and names them after.
// "c" is cancelled and "p" placed by the passes at t0; "p" then ends.
func TestPassRemembersForTenMinutes(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		want  []string
	}{
		{time.Minute, nil},
		{10 * time.Minute, nil},
		{10*time.Minute + time.Nanosecond, []string{"c", "p"}},
	} {
		t.Run(c.after.String(), func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
			h.submit(mkJob("p", 1, 4), mkJob("c", 1, 4, submittedAt(time.Second)))
			h.schedule() // p placed at t0, c waits
			h.cancel("c", "no longer needed")
			h.schedule() // the pass at t0 forgets c from its queue
			if err := h.finish("p"); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(c.after)
			h.core.ClusterChanged() // a full pass
			h.schedule()
			if got := h.core.Unknown([]string{"c", "p"}); !slices.Equal(got, c.want) {
				t.Fatalf("%s later: Unknown = %v, want %v", c.after, got, c.want)
			}
		})
	}
}

// TestQueueResortedOnEitherTotal: the job queue's order (descending RD =
// E x (alpha c / CPU_total + beta m / MEM_total), alpha = beta = 0.5) is
// recomputed when either of the cluster's totals changes alone. A: 1 x 4
// cpus, 1024 + 384 MiB; B: 1 x 1 cpu, 8192 + 819 MiB (max(384, 8192/10)).
//   - 16 cpus, 16384 MiB: A 0.5(4/16) + 0.5(1408/16384) = 0.168, B
//     0.5(1/16) + 0.5(9011/16384) = 0.306: B, A. The agent shrinks to 4
//     cpus (memory the same): A 0.5 + 0.043 = 0.543, B 0.125 + 0.275 =
//     0.400: A, B.
//   - 8 cpus, 65536 MiB: A 0.25 + 0.011 = 0.261, B 0.0625 + 0.069 = 0.131:
//     A, B. The agent shrinks to 16384 MiB (cpus the same): A 0.25 + 0.043
//     = 0.293, B 0.0625 + 0.275 = 0.338: B, A.
func TestQueueResortedOnEitherTotal(t *testing.T) {
	for _, c := range []struct {
		name          string
		cpus, mem     float64
		toCPUs, toMem float64
		before, after []string
	}{
		{"cpus only", 16, 16384, 4, 16384, []string{"B", "A"}, []string{"A", "B"}},
		{"memory only", 8, 65536, 8, 16384, []string{"A", "B"}, []string{"B", "A"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{PolicyOptions: placement.Options{Alpha: 0.5, Beta: 0.5}}, agent("a1", c.cpus, c.mem, 0.24))
			h.cluster.agents[0].FreeCPUs, h.cluster.agents[0].FreeMemMB = 0, 0 // nothing starts
			h.schedule()
			h.submit(mkJob("A", 1, 4), mkJob("B", 1, 1, withExecMemory(8192), submittedAt(time.Second)))
			h.schedule()
			order := func() []string {
				var ids []string
				for _, q := range h.core.Queues().Regular {
					ids = append(ids, q.ID)
				}
				return ids
			}
			if got := order(); !slices.Equal(got, c.before) {
				t.Fatalf("queue %v, want %v", got, c.before)
			}
			h.cluster.mu.Lock()
			h.cluster.agents[0].CPUs, h.cluster.agents[0].MemMB = c.toCPUs, c.toMem
			h.cluster.mu.Unlock()
			h.schedule()
			if got := order(); !slices.Equal(got, c.after) {
				t.Fatalf("after the agent's change: queue %v, want %v", got, c.after)
			}
		})
	}
}

// TestRegularJobsWaitForANewDeadlineJob: when a deadline job comes to a
// pass that had none waiting, the regular jobs that waited already are
// told they wait for it ("deadline jobs first"), although the pass is not
// a full one (nothing was freed): the last pass did not block them. On a
// full 4-cpu agent, "old" waits short of cpus; then d arrives.
func TestRegularJobsWaitForANewDeadlineJob(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.cluster.agents[0].FreeCPUs = 0
	h.schedule()
	h.submit(mkJob("old", 1, 4))
	h.schedule()
	if r := h.store.get("old").WaitingReason; r != "does not fit now: short of cpus" {
		t.Fatalf("old waits: %q", r)
	}
	h.submit(mkJob("d", 1, 4, withDeadline(time.Hour)))
	h.schedule()
	if r := h.store.get("old").WaitingReason; r != "deadline jobs first" {
		t.Fatalf("old waits: %q, want %q", r, "deadline jobs first")
	}
}

// TestRunningJobsSortedByID: the pass sees the jobs holding resources in
// the order of their ids, whatever the map's order (eight jobs: a map
// order that happens to be sorted has a chance of 1 in 40,320).
func TestRunningJobsSortedByID(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 16, 65536, 0.24))
	h.schedule()
	ids := []string{"j5", "j2", "j7", "j0", "j4", "j6", "j1", "j3"}
	for i, id := range ids {
		h.submit(mkJob(id, 1, 1, submittedAt(time.Duration(i)*time.Second)))
	}
	if n := h.schedule(); n != len(ids) {
		t.Fatalf("started %d, want %d", n, len(ids))
	}
	var got []string
	for _, r := range h.core.runningJobs() {
		got = append(got, r.id)
	}
	want := []string{"j0", "j1", "j2", "j3", "j4", "j5", "j6", "j7"}
	if !slices.Equal(got, want) {
		t.Fatalf("running jobs in the order %v, want %v", got, want)
	}
}

// TestDecisionBufferKeptUpTo4096: the core keeps its decisions buffer for
// the next pass when it holds at most 4096 decisions (decide.go,
// maxKeptDecisions), and drops a larger one.
func TestDecisionBufferKeptUpTo4096(t *testing.T) {
	for _, c := range []struct {
		cap  int
		kept bool
	}{{64, true}, {4096, true}, {4097, false}} {
		h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
		h.core.decBuf = make([]decision, 0, c.cap)
		h.submit(mkJob("r", 1, 2))
		h.schedule()
		if got := h.core.decBuf != nil && cap(h.core.decBuf) == c.cap; got != c.kept {
			t.Errorf("a buffer of %d: kept %v (cap now %d), want %v", c.cap, got, cap(h.core.decBuf), c.kept)
		}
	}
}

// TestDescribePlanByHand: the reason a start writes (ReservingReason, the
// "started" event): 2 + 1 executors on two agents, one of them powered on
// at 480,000 micro-USD an hour, i.e. $0.48/h.
func TestDescribePlanByHand(t *testing.T) {
	p := placement.Plan{Policy: "bfd", Outcome: "heuristic", Activated: []string{"a2"}, CostMicroUSDPerHour: 480000,
		Assignments: []placement.Assignment{{AgentID: "a1", Executors: 2}, {AgentID: "a2", Executors: 1}}}
	want := "plan (bfd, heuristic): 3 executors on 2 agents, 1 activated (+$0.4800/h)"
	if got := describePlan(p); got != want {
		t.Fatalf("describePlan = %q, want %q", got, want)
	}
	// One of each is said in the singular (it was "1 executors on 1 agents").
	one := placement.Plan{Policy: "dap", Outcome: "heuristic", Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}}
	if got, want := describePlan(one), "plan (dap, heuristic): 1 executor on 1 agent, 0 activated (+$0.0000/h)"; got != want {
		t.Fatalf("describePlan = %q, want %q", got, want)
	}
}

// killFails is the test cluster with a Kill that fails when fail is set.
type killFails struct {
	*testCluster
	fail bool
}

func (k *killFails) Kill(ctx context.Context, id string) error {
	if k.fail {
		return errors.New("injected failure: the master is away")
	}
	return k.testCluster.Kill(ctx, id)
}

// TestFailedKillIsLogged: a kill asked for a job that holds resources is
// sent to the cluster by the next pass; when the cluster refuses it, the
// pass says so in a warning naming the job, and says nothing when it
// went through.
func TestFailedKillIsLogged(t *testing.T) {
	for _, fail := range []bool{false, true} {
		log, hook := logtest.NewNullLogger()
		cl := &killFails{testCluster: newTestCluster(agent("a1", 4, 16384, 0.24)), fail: fail}
		h := &harness{t: t, store: newTestStore(), cluster: cl.testCluster, clock: newManualClock(t0)}
		c, err := New(Config{Log: log}, cl, h.store, h.clock)
		if err != nil {
			t.Fatal(err)
		}
		h.core = c
		h.schedule()
		h.submit(mkJob("j", 1, 4))
		h.schedule()
		h.cancel("j", "no longer needed") // it holds resources: a kill
		hook.Reset()
		h.schedule()
		var warned []string
		for _, e := range hook.AllEntries() {
			if strings.HasPrefix(e.Message, "kill failed;") {
				warned = append(warned, e.Data["job"].(string))
			}
		}
		if want := map[bool][]string{false: nil, true: {"j"}}[fail]; !slices.Equal(warned, want) {
			t.Errorf("kill failing %v: warnings for %v, want %v", fail, warned, want)
		}
	}
}
