package scheduler

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/placement"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

type jobOpt func(*Job)

func withDeadline(d time.Duration) jobOpt {
	return func(j *Job) { t := j.SubmittedAt.Add(d); j.DeadlineAt = &t }
}

func withEstimate(d time.Duration) jobOpt {
	return func(j *Job) { j.EstimatedDurationSeconds = d.Seconds() }
}

func submittedAt(d time.Duration) jobOpt { return func(j *Job) { j.SubmittedAt = t0.Add(d) } }

// mkJob makes a job of e executors with cores cpus and 1 GiB (+384 MiB
// overhead) each.
func mkJob(id string, e, cores int, opts ...jobOpt) Job {
	j := Job{Spec: Spec{ID: id, Executors: e, ExecutorCores: cores, ExecutorMemoryMB: 1024,
		App: App{AppResource: "local:///x.jar", MainClass: "X"}}, SubmittedAt: t0, State: Submitted}
	for _, o := range opts {
		o(&j)
	}
	return j
}

type harness struct {
	t       *testing.T
	store   *testStore
	cluster *testCluster
	clock   *manualClock
	core    *Core
}

func newHarness(t *testing.T, cfg Config, agents ...placement.Agent) *harness {
	t.Helper()
	h := &harness{t: t, store: newTestStore(), cluster: newTestCluster(agents...), clock: newManualClock(t0)}
	if cfg.Log == nil {
		cfg.Log = DiscardLogger()
	}
	c, err := New(cfg, h.cluster, h.store, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	h.core = c
	return h
}

func (h *harness) submit(jobs ...Job) {
	h.t.Helper()
	for _, j := range jobs {
		h.store.add(j)
		if _, err := h.core.Submit(context.Background(), j); err != nil {
			h.t.Fatalf("submit %s: %v", j.ID, err)
		}
	}
}

// finish reports the job launched, running and finished.
func (h *harness) finish(id string) error {
	ctx := context.Background()
	for _, st := range []State{Launching, Running, Finished} {
		if err := h.core.Report(ctx, id, st, ""); err != nil {
			return err
		}
	}
	return nil
}

// cancel is a user's cancel as production carries it out
// (api.Server.Cancel): the store cancels a waiting job or marks a kill
// request, then tells the core through JobCancelled; the core's next pass
// forgets the job or asks the cluster to kill it.
func (h *harness) cancel(id, reason string) {
	h.t.Helper()
	j, kill, err := h.store.cancel(id, reason, h.clock.Now())
	if err != nil {
		h.t.Fatalf("cancel %s: %v", id, err)
	}
	h.core.JobCancelled(j, kill)
}

func (h *harness) schedule() int {
	h.t.Helper()
	n, err := h.core.Schedule(context.Background())
	if err != nil {
		h.t.Fatalf("schedule: %v", err)
	}
	if got := countByChoice(h.core); got != h.core.byChoiceDQ {
		h.t.Fatalf("deadline entries waiting by choice: %d, counted %d", got, h.core.byChoiceDQ)
	}
	return n
}

func TestDeadlineQueueEDF(t *testing.T) {
	q := &DeadlineQueue{}
	add := func(id string, submit, deadline time.Duration) {
		j := mkJob(id, 1, 1, submittedAt(submit))
		dl := t0.Add(deadline)
		j.DeadlineAt = &dl
		q.Push(NewEntry(&j))
	}
	add("late", 0, 300*time.Second)
	add("tie-second", 20*time.Second, 100*time.Second)
	add("tie-first", 10*time.Second, 100*time.Second)
	add("early", 30*time.Second, 50*time.Second)
	add("tie-first-b", 10*time.Second, 100*time.Second) // same submit: by id
	var got []string
	for _, e := range q.Entries() {
		got = append(got, e.ID)
	}
	want := []string{"early", "tie-first", "tie-first-b", "tie-second", "late"}
	if !slices.Equal(got, want) {
		t.Fatalf("EDF order %v, want %v", got, want)
	}
	if e := q.Remove("tie-first"); e == nil || q.Len() != 4 {
		t.Fatalf("remove failed")
	}
}

func TestJobQueueOrder(t *testing.T) {
	for _, tc := range []struct {
		name string
		fifo bool
		want []string
	}{
		{"descending RD, ties by submission", false, []string{"big", "mid-a", "mid-b", "small"}},
		{"fifo keeps submission order", true, []string{"small", "mid-a", "big", "mid-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			q := &JobQueue{FIFO: tc.fifo}
			for i, j := range []Job{
				mkJob("small", 1, 1, submittedAt(0)),
				mkJob("mid-a", 2, 2, submittedAt(1*time.Second)),
				mkJob("big", 4, 4, submittedAt(2*time.Second)),
				mkJob("mid-b", 2, 2, submittedAt(3*time.Second)),
			} {
				_ = i
				e := NewEntry(&j)
				e.RD = placement.ResourceDemand(e.Demand, 100, 409600, 0.8, 0.2)
				q.Push(e)
			}
			var got []string
			for _, e := range q.Entries() {
				got = append(got, e.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("order %v, want %v", got, tc.want)
			}
			q.Resort(50, 409600, 0.8, 0.2)
			got = got[:0]
			for _, e := range q.Entries() {
				got = append(got, e.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("order after resort %v, want %v", got, tc.want)
			}
		})
	}
}

func TestJobBuffer(t *testing.T) {
	var b JobBuffer
	b.Push(mkJob("a", 1, 1))
	b.Push(mkJob("b", 1, 1))
	if !b.Remove("a") || b.Remove("zz") || b.Len() != 1 {
		t.Fatal("remove")
	}
	if got := b.Drain(); len(got) != 1 || got[0].ID != "b" || b.Len() != 0 {
		t.Fatalf("drain %v", got)
	}
}

// TestAlgorithm3 runs one or two scheduling passes per scenario and checks
// which jobs started (in order), the final states and the waiting reasons.
func TestAlgorithm3(t *testing.T) {
	a4 := func(id string) placement.Agent { return agent(id, 4, 16384, 0.24) }
	type tc struct {
		name        string
		cfg         Config
		agents      []placement.Agent
		pre         []Job // submitted and scheduled first
		jobs        []Job
		wantStarted []string // order of Apply in the second pass
		wantStates  map[string]State
		wantReason  map[string]string // substring of the waiting reason
		wantAtRisk  map[string]bool
	}
	cases := []tc{
		{
			name:   "EDF: earliest deadline first, ties by submission",
			agents: []placement.Agent{a4("a1")},
			jobs: []Job{
				mkJob("d-late", 1, 4, withDeadline(time.Hour)),
				mkJob("d-tie-later", 1, 4, submittedAt(2*time.Second), withDeadline(10*time.Minute-2*time.Second)),
				mkJob("d-tie-first", 1, 4, submittedAt(time.Second), withDeadline(10*time.Minute-time.Second)),
			},
			wantStarted: []string{"d-tie-first"},
			wantStates:  map[string]State{"d-tie-first": Reserving, "d-tie-later": Queued, "d-late": Queued},
			wantReason:  map[string]string{"d-tie-later": "does not fit", "d-late": "does not fit"},
		},
		{
			name:   "regular jobs are not tried while a deadline job waits",
			agents: []placement.Agent{a4("a1"), a4("a2")},
			jobs: []Job{
				mkJob("d-small", 1, 4, withDeadline(time.Hour)),
				mkJob("d-big", 2, 4, withDeadline(2*time.Hour)),
				mkJob("r-fits", 1, 2),
			},
			wantStarted: []string{"d-small"},
			wantStates:  map[string]State{"d-big": Queued, "r-fits": Queued},
			wantReason:  map[string]string{"d-big": "does not fit", "r-fits": ReasonDeadlineFirst},
		},
		{
			name:   "a regular job that does not fit is skipped and the next one tried",
			agents: []placement.Agent{a4("a1"), a4("a2"), a4("a3")},
			pre:    []Job{mkJob("r0", 1, 4)},
			jobs: []Job{
				mkJob("r-big", 3, 4, submittedAt(time.Second)),
				mkJob("r-small", 1, 2, submittedAt(2*time.Second)),
				mkJob("r-small2", 1, 2, submittedAt(3*time.Second)),
			},
			wantStarted: []string{"r-small", "r-small2"},
			wantStates:  map[string]State{"r-big": Queued},
			wantReason:  map[string]string{"r-big": "does not fit"},
		},
		{
			name:   "regular jobs by descending demand",
			agents: []placement.Agent{a4("a1"), a4("a2")},
			jobs: []Job{
				mkJob("r-1cpu", 1, 1),
				mkJob("r-4cpu", 2, 2, submittedAt(time.Second)),
				mkJob("r-2cpu", 1, 2, submittedAt(2*time.Second)),
			},
			wantStarted: []string{"r-4cpu", "r-2cpu", "r-1cpu"},
		},
		{
			name:   "a job that fits no agent is rejected",
			agents: []placement.Agent{a4("a1"), a4("a2")},
			jobs: []Job{
				mkJob("too-wide", 1, 16),
				mkJob("too-many", 3, 4),
				mkJob("ok", 1, 1),
			},
			wantStarted: []string{"ok"},
			wantStates:  map[string]State{"too-wide": Rejected, "too-many": Rejected},
			wantReason:  map[string]string{"too-wide": "larger than every agent", "too-many": "even on the empty cluster"},
		},
		{
			name:       "admission rejects a deadline job that cannot make it",
			agents:     []placement.Agent{a4("a1")},
			jobs:       []Job{mkJob("hopeless", 1, 1, withDeadline(time.Minute), withEstimate(2*time.Minute))},
			wantStates: map[string]State{"hopeless": Rejected},
			wantReason: map[string]string{"hopeless": "cannot finish by its deadline"},
		},
		{
			name:        "accept-and-flag admits it and flags it at risk",
			cfg:         Config{Admission: AdmitFlag},
			agents:      []placement.Agent{a4("a1")},
			pre:         []Job{mkJob("r0", 1, 4)},
			jobs:        []Job{mkJob("hopeless", 1, 1, withDeadline(time.Minute), withEstimate(2*time.Minute))},
			wantStarted: nil,
			wantStates:  map[string]State{"hopeless": Queued},
			wantReason:  map[string]string{"hopeless": "does not fit"},
			wantAtRisk:  map[string]bool{"hopeless": true},
		},
		{
			name:   "fifo ordering ignores deadlines and demand",
			cfg:    Config{Ordering: OrderFIFO, Policy: "spread"},
			agents: []placement.Agent{a4("a1")},
			jobs: []Job{
				mkJob("r-first", 1, 2),
				mkJob("d-second", 1, 2, submittedAt(time.Second), withDeadline(time.Minute)),
				mkJob("r-third", 1, 2, submittedAt(2*time.Second)),
			},
			wantStarted: []string{"r-first", "d-second"},
			wantReason:  map[string]string{"r-third": "does not fit"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, c.cfg, c.agents...)
			// A first pass with no jobs gives the core the cluster's capacity.
			h.schedule()
			h.submit(c.pre...)
			h.schedule()
			before := len(h.cluster.appliedIDs())
			h.submit(c.jobs...)
			h.schedule()
			got := h.cluster.appliedIDs()[before:]
			if !slices.Equal(got, c.wantStarted) && !(len(got) == 0 && len(c.wantStarted) == 0) {
				t.Errorf("started %v, want %v", got, c.wantStarted)
			}
			for id, st := range c.wantStates {
				if j := h.store.get(id); j.State != st {
					t.Errorf("%s: state %s, want %s (reason %q)", id, j.State, st, j.WaitingReason)
				}
			}
			for id, r := range c.wantReason {
				if j := h.store.get(id); !strings.Contains(j.WaitingReason, r) {
					t.Errorf("%s: waiting reason %q, want it to contain %q", id, j.WaitingReason, r)
				}
			}
			for id, r := range c.wantAtRisk {
				if j := h.store.get(id); j.AtRisk != r {
					t.Errorf("%s: atRisk %v, want %v", id, j.AtRisk, r)
				}
			}
			// The queues view agrees with the store: the store holds the
			// coarse form of the view's detailed reason.
			snap := h.core.snapshotView()
			for _, q := range append(snap.deadline, snap.regular...) {
				if s := h.store.get(q.ID); s.WaitingReason != q.storedReason || s.AtRisk != q.AtRisk || s.State != Queued {
					t.Errorf("queues view %s: %q (stored %q)/%v, store %q/%v/%s", q.ID, q.out().WaitingReason, q.storedReason, q.AtRisk, s.WaitingReason, s.AtRisk, s.State)
				}
			}
		})
	}
}

func TestQueuesViewOrder(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("r0", 1, 4))
	h.schedule()
	h.submit(
		mkJob("d-b", 1, 1, withDeadline(2*time.Hour)),
		mkJob("d-a", 1, 1, withDeadline(time.Hour)),
		mkJob("r-small", 1, 1),
		mkJob("r-big", 2, 2),
	)
	h.schedule()
	v := h.core.Queues()
	ids := func(q []QueuedJob) (out []string) {
		for _, j := range q {
			out = append(out, j.ID+"|"+j.WaitingReason)
		}
		return out
	}
	nf := "does not fit: short of 1 cpu; the cluster can hold 0 executors now (at most 0 on one agent)"
	if got, want := ids(v.Deadline), []string{"d-a|" + nf, "d-b|" + nf}; !slices.Equal(got, want) {
		t.Errorf("deadline queue %q, want %q", got, want)
	}
	if got, want := ids(v.Regular), []string{"r-big|" + ReasonDeadlineFirst, "r-small|" + ReasonDeadlineFirst}; !slices.Equal(got, want) {
		t.Errorf("regular queue %q, want %q", got, want)
	}
}

func TestPromotionAfterAge(t *testing.T) {
	h := newHarness(t, Config{PromoteAfter: 10 * time.Minute}, agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24))
	h.schedule()
	// r0 holds a1; "big" needs both agents, so it is skipped while small
	// jobs keep running on a2.
	h.submit(mkJob("r0", 1, 4))
	h.schedule()
	h.submit(mkJob("big", 2, 4, submittedAt(time.Second)), mkJob("s1", 1, 2, submittedAt(2*time.Second)))
	h.schedule()
	if got := h.store.get("s1").State; got != Reserving {
		t.Fatalf("s1 %s, want started", got)
	}
	if at, ok := h.core.NextWake(); !ok || !at.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("next wake %v %v, want promotion at +10m", at, ok)
	}
	// 9 minutes later s1 ends and s2 arrives: big still does not fit (r0 holds a1); s2 takes a2.
	h.clock.Advance(9 * time.Minute)
	if err := h.finish("s1"); err != nil {
		t.Fatal(err)
	}
	h.submit(mkJob("s2", 1, 2, submittedAt(9*time.Minute)))
	h.schedule()
	if got := h.store.get("s2").State; got != Reserving {
		t.Fatalf("s2 %s, want started before promotion", got)
	}
	// At +10m big is promoted: from then on s3 waits for it.
	h.clock.Advance(time.Minute)
	h.submit(mkJob("s3", 1, 1, submittedAt(10*time.Minute)))
	h.schedule()
	v := h.core.Queues()
	if len(v.Deadline) != 1 || v.Deadline[0].ID != "big" || !v.Deadline[0].Promoted {
		t.Fatalf("deadline queue %+v, want big promoted", v.Deadline)
	}
	if !strings.HasPrefix(v.Deadline[0].WaitingReason, "promoted") {
		t.Errorf("big reason %q", v.Deadline[0].WaitingReason)
	}
	if got := h.store.get("s3"); got.State != Queued || got.WaitingReason != ReasonDeadlineFirst {
		t.Fatalf("s3 %s %q, want queued behind the promoted job", got.State, got.WaitingReason)
	}
	// Both agents free up: big runs first, then s3.
	h.clock.Advance(time.Minute)
	if err := h.finish("r0"); err != nil {
		t.Fatal(err)
	}
	if err := h.finish("s2"); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	if got := h.store.get("big").State; got != Reserving {
		t.Fatalf("big %s, want started", got)
	}
	if got := h.store.get("s3").State; got != Queued {
		t.Fatalf("s3 %s, want still waiting (cluster full)", got)
	}
}

func TestAtRiskFlag(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("r0", 1, 4))
	h.schedule()
	h.submit(mkJob("d", 1, 2, withDeadline(30*time.Minute), withEstimate(20*time.Minute)))
	h.schedule()
	if j := h.store.get("d"); j.AtRisk || j.State != Queued {
		t.Fatalf("d at risk too early: %+v", j)
	}
	at, ok := h.core.NextWake()
	if want := t0.Add(10*time.Minute + time.Nanosecond); !ok || !at.Equal(want) {
		t.Fatalf("next wake %v, want %v", at, want)
	}
	h.clock.Advance(10 * time.Minute)
	h.schedule()
	if h.store.get("d").AtRisk {
		t.Fatal("exactly on time is not at risk")
	}
	h.clock.Advance(time.Second)
	h.schedule()
	if j := h.store.get("d"); !j.AtRisk {
		t.Fatalf("d not flagged at risk: %+v", j)
	}
	if v := h.core.Queues(); !v.Deadline[0].AtRisk {
		t.Fatal("queues view lacks at-risk flag")
	}
}

func TestReportLifecycleAndCost(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24), agent("a2", 8, 32768, 0.48))
	h.schedule()
	h.submit(mkJob("j1", 2, 2)) // bfd: cheapest idle agent that fits: a1
	h.schedule()
	if err := h.core.Report(ctx, "j1", Launching, "driver launched"); err != nil {
		t.Fatal(err)
	}
	if err := h.core.Report(ctx, "j1", Running, ""); err != nil {
		t.Fatal(err)
	}
	if j := h.store.get("j1"); j.StartedAt == nil || !j.StartedAt.Equal(t0) {
		t.Fatalf("startedAt %v", j.StartedAt)
	}
	h.clock.Advance(30 * time.Minute)
	if r := h.core.Cost(); r.BurnRateUSDPerHour != 0.24 || !near(r.TotalUSD, 0.12) {
		t.Fatalf("cost %+v, want $0.12 at $0.24/h", r)
	}
	if err := h.core.Report(ctx, "j1", Finished, "finished"); err != nil {
		t.Fatal(err)
	}
	if j := h.store.get("j1"); j.State != Finished || j.FinishedAt == nil {
		t.Fatalf("j1 %+v", j)
	}
	h.clock.Advance(time.Hour) // idle: no cost
	if r := h.core.Cost(); r.BurnRateUSDPerHour != 0 || !near(r.TotalUSD, 0.12) {
		t.Fatalf("idle cost %+v", r)
	}
	if err := h.core.Report(ctx, "j1", Finished, "finished"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("second finish: %v", err)
	}
	if err := h.core.Report(ctx, "nope", Running, ""); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown job: %v", err)
	}
}

func TestRetryRequeues(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("j", 1, 4))
	h.schedule()
	if err := h.core.Report(ctx, "j", Queued, "agent lost"); err != nil {
		t.Fatal(err)
	}
	if j := h.store.get("j"); j.State != Queued || !strings.Contains(j.WaitingReason, "agent lost") {
		t.Fatalf("%+v", j)
	}
	h.schedule()
	if j := h.store.get("j"); j.State != Reserving {
		t.Fatalf("not restarted: %s", j.State)
	}
}

func TestApplyFailureRequeues(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("j", 1, 4))
	h.store.failOn = Reserving
	if _, err := h.core.Schedule(context.Background()); err == nil {
		t.Fatal("want the injected error")
	}
	if j := h.store.get("j"); j.State != Queued {
		t.Fatalf("state %s", j.State)
	}
	if _, ok := h.core.NextWake(); !ok {
		t.Fatal("no retry wake after an error")
	}
	h.schedule()
	if j := h.store.get("j"); j.State != Reserving {
		t.Fatalf("state %s after retry", j.State)
	}
}

func TestCancel(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("run", 1, 4), mkJob("wait", 1, 4, submittedAt(time.Second)))
	h.schedule()
	// A waiting job: the store cancelled it, the core forgets it.
	h.cancel("wait", "user")
	h.schedule()
	if j := h.store.get("wait"); j.State != Cancelled || j.FinishedAt == nil {
		t.Fatalf("wait: %s finished at %v", j.State, j.FinishedAt)
	}
	if n := h.core.Waiting(); n != 0 {
		t.Fatalf("%d waiting after the cancel", n)
	}
	// A job that holds resources: the core asks the cluster to kill it.
	h.cancel("run", "user")
	h.schedule()
	if !slices.Equal(h.cluster.killed, []string{"run"}) {
		t.Fatalf("killed %v", h.cluster.killed)
	}
	// One cancelled before the core's first pass saw it (still in the
	// intake buffer) never starts, though the cluster has room again.
	if err := h.core.Report(context.Background(), "run", Killed, "killed"); err != nil {
		t.Fatal(err)
	}
	j := h.store.add(mkJob("api", 1, 4, submittedAt(2*time.Second)))
	h.core.JobSubmitted(j)
	h.cancel("api", "user")
	h.schedule()
	if n := h.core.Waiting(); n != 0 {
		t.Fatalf("%d waiting", n)
	}
	if j := h.store.get("api"); j.State != Cancelled {
		t.Fatalf("api: %s, want it left cancelled", j.State)
	}
}

func TestRecover(t *testing.T) {
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.store.add(mkJob("sub", 1, 1))
	q := mkJob("queued", 1, 1, submittedAt(time.Second))
	q.State = Queued
	h.store.add(q)
	p := mkJob("placing", 1, 1, submittedAt(2*time.Second))
	p.State = Placing
	h.store.add(p)
	r := mkJob("running", 1, 1, submittedAt(3*time.Second))
	r.State = Running
	h.store.add(r)
	if err := h.core.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	for _, id := range []string{"sub", "queued", "placing"} {
		if s := h.store.get(id).State; s != Reserving {
			t.Errorf("%s: %s", id, s)
		}
	}
	if err := h.core.Report(context.Background(), "running", Finished, "finished"); err != nil {
		t.Fatal(err)
	}
}

// TestRunEventDriven runs the live loop: a submission, a job end and a
// timer each wake it; nothing polls.
func TestRunEventDriven(t *testing.T) {
	changes := make(chan Job, 100)
	h := newHarness(t, Config{Observer: changeObserver{ch: changes}}, agent("a1", 4, 16384, 0.24))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.core.Run(ctx) }()
	waitFor := func(id string, st State) {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case j := <-changes:
				if j.ID == id && j.State == st {
					return
				}
			case <-timeout:
				t.Fatalf("%s never reached %s", id, st)
			}
		}
	}
	j1 := h.store.add(mkJob("j1", 1, 4))
	h.core.JobSubmitted(j1)
	waitFor("j1", Reserving)
	j2 := h.store.add(mkJob("j2", 1, 4, submittedAt(time.Second), withDeadline(time.Hour), withEstimate(50*time.Minute)))
	h.core.JobSubmitted(j2)
	waitFor("j2", Queued)
	if err := h.finish("j1"); err != nil {
		t.Fatal(err)
	}
	waitFor("j2", Reserving)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
}

// TestRunRecoversThroughFailuresAndChanges: Run's recovery is tried again
// while the store cannot be read, and a job that changed under it (here
// cancelled by its user while its kill was pending) is left as it is now;
// the core then schedules, rather than stopping at its first error and
// leaving its leader scheduling nothing.
func TestRunRecoversThroughFailuresAndChanges(t *testing.T) {
	changes := make(chan Job, 100)
	h := newHarness(t, Config{Observer: changeObserver{ch: changes}}, agent("a1", 4, 16384, 0.24))
	q := mkJob("q", 1, 4)
	q.State = Queued
	h.store.add(q)
	k := mkJob("k", 1, 1, submittedAt(time.Second))
	k.State, k.KillRequested = Queued, true
	h.store.add(k)
	h.store.unfinishedFails = 2
	h.store.hold = func(id string, to State) {
		if id == "k" && to == Cancelled {
			// The user's DELETE commits first.
			h.store.update("k", func(j *Job) { j.State = Cancelled })
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.core.Run(ctx) }()
	timeout := time.After(30 * time.Second)
	for started := false; !started; {
		select {
		case j := <-changes:
			started = j.ID == "q" && j.State == Reserving
		case err := <-done:
			t.Fatalf("Run returned %v before scheduling", err)
		case <-timeout:
			t.Fatal("q was never placed")
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
	if n := h.store.callCount("Unfinished"); n != 3 {
		t.Errorf("Unfinished read %d times, want 3 (two failures, then the recovery)", n)
	}
	if got := h.store.get("k").State; got != Cancelled {
		t.Errorf("k is %s, want CANCELLED", got)
	}
}

// TestStrandedJobIsPutBackWhenTheStoreAnswers: the cluster refuses a
// started job's plan, and putting the job back in the queue fails too (the
// store is away): its row says RESERVING, no queue holds it and the
// cluster holds nothing for it. Later passes put it back once the store
// answers, and it starts; a kill asked for meanwhile ends it instead.
func TestStrandedJobIsPutBackWhenTheStoreAnswers(t *testing.T) {
	for _, kill := range []bool{false, true} {
		t.Run(fmt.Sprintf("kill=%v", kill), func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
			h.schedule()
			h.submit(mkJob("j", 1, 4))
			h.cluster.failApply = 1
			h.store.failTimes = map[State]int{Queued: 3}
			for i := 0; i < 3; i++ {
				if _, err := h.core.Schedule(context.Background()); err == nil {
					t.Fatalf("pass %d: want the injected error", i)
				}
				if got := h.store.get("j").State; got != Reserving {
					t.Fatalf("pass %d: j is %s, want RESERVING while the store fails", i, got)
				}
				if h.core.byID["j"] != nil || h.core.ActiveJobs() != 0 || len(h.cluster.appliedIDs()) != 0 {
					t.Fatalf("pass %d: j queued %v, %d active jobs, applied %v; want none", i, h.core.byID["j"] != nil, h.core.ActiveJobs(), h.cluster.appliedIDs())
				}
			}
			if kill {
				h.store.update("j", func(j *Job) { j.KillRequested = true })
			}
			h.schedule()
			want, applied := Reserving, []string{"j"}
			if kill {
				want, applied = Cancelled, nil
			}
			if got := h.store.get("j").State; got != want || !slices.Equal(h.cluster.appliedIDs(), applied) {
				t.Fatalf("j is %s and applied %v once the store answers, want %s and %v", got, h.cluster.appliedIDs(), want, applied)
			}
		})
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	st, cl := newTestStore(), newTestCluster()
	for _, cfg := range []Config{{Policy: "nope"}, {Ordering: "lifo"}, {Admission: "maybe"}} {
		if _, err := New(cfg, cl, st, nil); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// TestDurationScaleAdmission: with DurationScale 0.1 a job estimated at
// 100 (simulated) seconds needs 10 s of wall time, so a 20 s deadline is
// admitted; with the default scale it is rejected.
func TestDurationScaleAdmission(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	dl := now.Add(20 * time.Second)
	j := Job{Spec: Spec{ID: "j", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 512, EstimatedDurationSeconds: 100}, DeadlineAt: &dl}
	for _, c := range []struct {
		scale  float64
		reject bool
	}{{0, true}, {1, true}, {0.1, false}} {
		core, err := New(Config{DurationScale: c.scale}, newTestCluster(agent("a", 4, 4096, 0.1)), newTestStore(), newManualClock(now))
		if err != nil {
			t.Fatal(err)
		}
		if got := core.Admit(&j, now); (got != "") != c.reject {
			t.Errorf("scale %g: Admit = %q, want rejected=%v", c.scale, got, c.reject)
		}
	}
}

// TestKillRequestedIsNeverRunAgain: a kill asked for while the job held
// resources is honoured even when the job went back to the queue before it
// was carried out: by the retry that raced it, by a kill notice that
// arrives after the retry, and by a restart.
func TestKillRequestedIsNeverRunAgain(t *testing.T) {
	ctx := context.Background()
	setKill := func(h *harness, id string) {
		h.store.update(id, func(j *Job) { j.KillRequested = true })
	}

	t.Run("retry reported after the kill was stored", func(t *testing.T) {
		h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
		h.schedule()
		h.submit(mkJob("j", 1, 4))
		h.schedule()
		setKill(h, "j") // stored by the API; its notice is still on its way
		if err := h.core.Report(ctx, "j", Queued, "driver TASK_FAILED; retry 1 of 2"); err != nil {
			t.Fatal(err)
		}
		h.schedule()
		if j := h.store.get("j"); j.State != Cancelled {
			t.Fatalf("job is %s, want CANCELLED", j.State)
		}
		if n := len(h.cluster.appliedIDs()); n != 1 {
			t.Fatalf("applied %d times, want 1", n)
		}
	})

	t.Run("kill notice after the retry", func(t *testing.T) {
		h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24), agent("busy", 1, 1024, 0.01))
		h.schedule()
		h.submit(mkJob("blocker", 1, 4))
		h.submit(mkJob("j", 1, 4, submittedAt(time.Second)))
		h.schedule() // blocker runs; j waits
		if err := h.core.Report(ctx, "blocker", Queued, "driver TASK_FAILED; retry 1 of 1"); err != nil {
			t.Fatal(err)
		}
		setKill(h, "blocker")
		h.core.JobCancelled(h.store.get("blocker"), true)
		h.schedule()
		if j := h.store.get("blocker"); j.State != Cancelled {
			t.Fatalf("blocker is %s, want CANCELLED", j.State)
		}
		if j := h.store.get("j"); j.State != Reserving {
			t.Fatalf("j is %s, want RESERVING (the blocker's resources are free)", j.State)
		}
	})

	t.Run("restart", func(t *testing.T) {
		h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
		for i, st := range []State{Queued, Placing} {
			j := mkJob(string(st), 1, 1, submittedAt(time.Duration(i)*time.Second))
			j.State, j.KillRequested = st, true
			h.store.add(j)
		}
		if err := h.core.Recover(ctx); err != nil {
			t.Fatal(err)
		}
		h.schedule()
		for _, id := range []string{string(Queued), string(Placing)} {
			if j := h.store.get(id); j.State != Cancelled {
				t.Errorf("%s job is %s after a restart, want CANCELLED", id, j.State)
			}
		}
		if n := len(h.cluster.appliedIDs()); n != 0 {
			t.Fatalf("%d applied", n)
		}
	})
}

// TestAttemptCountsRuns: every move to RUNNING is one more run.
func TestAttemptCountsRuns(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("j", 1, 4))
	for run := 1; run <= 2; run++ {
		h.schedule()
		for _, st := range []State{Launching, Running} {
			if err := h.core.Report(ctx, "j", st, ""); err != nil {
				t.Fatal(err)
			}
		}
		if a := h.store.get("j").Attempt; a != run {
			t.Fatalf("attempt %d after run %d", a, run)
		}
		if err := h.core.Report(ctx, "j", Queued, "retry"); err != nil {
			t.Fatal(err)
		}
	}
}

// TestUnknownIsWhatTheCoreNeverHeardOf: Unknown names only the jobs the
// core neither buffers, queues, follows, nor placed, cancelled or sent back
// lately, whatever inbox or map holds the others.
func TestUnknownIsWhatTheCoreNeverHeardOf(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("back", 1, 4))
	h.schedule() // placed on one agent
	// Long enough that the pass forgets it placed "back": only the
	// active jobs, then the requeue inbox, know it.
	h.clock.Advance(cancelledMemory + time.Minute)
	h.core.ClusterChanged() // a full pass forgets
	h.schedule()
	h.submit(mkJob("run", 1, 4), mkJob("wait", 1, 4, submittedAt(time.Second)),
		mkJob("cancel", 1, 4, submittedAt(2*time.Second)))
	h.schedule()
	// Cancelled through the API: the store first, then the core hears.
	h.store.update("cancel", func(j *Job) { j.State = Cancelled })
	h.core.JobCancelled(h.store.get("cancel"), false)
	h.schedule()
	h.core.JobSubmitted(h.store.add(mkJob("buffered", 1, 1, submittedAt(3*time.Second))))
	if got := h.store.get("back"); !got.State.Active() {
		t.Fatalf("back is %s, want it holding resources", got.State)
	}
	all := []string{"back", "run", "wait", "cancel", "buffered", "lost"}
	if got := h.core.Unknown(all); !slices.Equal(got, []string{"lost"}) {
		t.Fatalf("Unknown = %v, want [lost]", got)
	}
	// "back" gives its agent back for a retry: no pass has taken it
	// from the requeue inbox yet.
	if err := h.core.Report(ctx, "back", Queued, "agent lost"); err != nil {
		t.Fatal(err)
	}
	if got := h.core.Unknown(all); !slices.Equal(got, []string{"lost"}) {
		t.Fatalf("after the requeue: Unknown = %v, want [lost]", got)
	}
	h.schedule()
	if got := h.core.Unknown(all); !slices.Equal(got, []string{"lost"}) {
		t.Fatalf("after a pass: Unknown = %v, want [lost]", got)
	}
	if got := h.core.Unknown(nil); got != nil {
		t.Fatalf("Unknown(nil) = %v", got)
	}
}

// TestFailingPassesAreLoggedOnceAPeriod: while every pass fails (the
// cluster's snapshot cannot be read: the master away), the core retries
// every RetryBackoff and logs the first failure, then one line every 30 s
// of its clock, then the first pass that works. It used to log every
// failed pass.
func TestFailingPassesAreLoggedOnceAPeriod(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	h := newHarness(t, Config{Log: log}, agent("a1", 4, 16384, 0.24))
	h.cluster.mu.Lock()
	h.cluster.snapErr = errors.New("mesos cluster snapshot: the master does not answer")
	h.cluster.mu.Unlock()
	h.store.add(mkJob("j", 1, 4))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.core.Run(ctx) }()
	defer func() { cancel(); <-done }()
	snapshots := func() int {
		h.cluster.mu.Lock()
		defer h.cluster.mu.Unlock()
		return h.cluster.snapshots
	}
	deadline := time.Now().Add(60 * time.Second)
	for snapshots() < 40 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d passes in 60 s", snapshots())
		}
		h.clock.Advance(DefaultRetryBackoff)
		time.Sleep(time.Millisecond)
	}
	h.cluster.mu.Lock()
	h.cluster.snapErr = nil
	h.cluster.mu.Unlock()
	recovered := func() bool {
		for _, e := range hook.AllEntries() {
			if e.Message == "a scheduling pass worked again" {
				return true
			}
		}
		return false
	}
	for deadline = time.Now().Add(60 * time.Second); !recovered(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no line saying a pass worked again")
		}
		h.clock.Advance(DefaultRetryBackoff)
	}
	warnings := 0
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && strings.Contains(e.Message, "scheduling pass") {
			warnings++
		}
	}
	// 40 or more failed passes 5 s apart on the core's clock: the first
	// and one every 30 s, at most one more for passes a kick brought.
	if n := snapshots(); warnings < 1 || warnings > n/6+2 {
		t.Fatalf("%d failed passes logged %d warnings; want the first and one every 30 s", n, warnings)
	}
}
