package scheduler

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// newBatchHarness is newHarness with a store that writes in batches (as
// the PostgreSQL store does).
func newBatchHarness(t testing.TB, cfg Config, agents ...placement.Agent) (*harness, batchStore) {
	h := &harness{store: newTestStore(), cluster: newTestCluster(agents...), clock: newManualClock(t0)}
	if tt, ok := t.(*testing.T); ok {
		h.t = tt
	}
	if cfg.Log == nil {
		cfg.Log = DiscardLogger()
	}
	bs := batchStore{h.store}
	c, err := New(cfg, h.cluster, bs, h.clock)
	if err != nil {
		t.Fatal(err)
	}
	h.core = c
	return h, bs
}

func thesisAgents() []placement.Agent {
	var out []placement.Agent
	for i := 0; i < 6; i++ {
		out = append(out, agent(fmt.Sprintf("s%d", i), 4, 16384, 0.24))
	}
	for i := 6; i < 11; i++ {
		out = append(out, agent(fmt.Sprintf("m%d", i), 8, 32768, 0.48))
	}
	for i := 11; i < 14; i++ {
		out = append(out, agent(fmt.Sprintf("l%d", i), 12, 49152, 0.72))
	}
	return out
}

// addWaiting stores n SUBMITTED jobs of 12 executors x 2 cpus and hands them
// to the core through its intake (as the API does).
func addWaiting(h *harness, prefix string, n int, opts ...jobOpt) {
	for i := 0; i < n; i++ {
		j := h.store.add(mkJob(fmt.Sprintf("%s-%06d", prefix, i), 12, 2, append([]jobOpt{submittedAt(time.Duration(i) * time.Millisecond)}, opts...)...))
		h.core.JobSubmitted(j)
	}
}

// TestPassDoesNoStoreCallPerWaitingJob: with thousands of jobs that cannot
// fit, admitting them is one batch, their reasons are one batch, and later
// passes write nothing unless a reason's kind changes; a small job that
// fits starts at the next pass.
func TestPassDoesNoStoreCallPerWaitingJob(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, thesisAgents()...)
	h.t = t
	h.schedule()
	h.submit(mkJob("blocker", 1, 96)) // no agent has 96 cpus: rejected...
	if st := h.store.get("blocker").State; st != Rejected {
		t.Fatalf("blocker %s", st)
	}
	// ...so hold the cluster with 12 jobs of 1 executor taking each agent's cpus.
	for i, a := range thesisAgents() {
		h.submit(mkJob(fmt.Sprintf("hold-%02d", i), 1, int(a.CPUs), submittedAt(-time.Hour)))
	}
	h.schedule()
	const n = 5000
	addWaiting(h, "w", n)
	before := map[string]int{}
	for _, m := range []string{"Transition", "TransitionMany", "SetWaiting", "SetWaitingMany", "SavePlacement"} {
		before[m] = h.store.callCount(m)
	}
	h.schedule()
	delta := func(m string) int { return h.store.callCount(m) - before[m] }
	if delta("TransitionMany") != 1 || delta("Transition") != 0 || delta("SetWaiting") != 0 || delta("SetWaitingMany") != 1 {
		t.Fatalf("admitting %d waiting jobs made %d TransitionMany, %d Transition, %d SetWaitingMany, %d SetWaiting calls; want 1, 0, 1, 0",
			n, delta("TransitionMany"), delta("Transition"), delta("SetWaitingMany"), delta("SetWaiting"))
	}
	if j := h.store.get("w-000042"); j.State != Queued || j.WaitingReason != "does not fit now: short of cpus" {
		t.Fatalf("w-000042 %s %q", j.State, j.WaitingReason)
	}
	// More passes, one after a cluster change: nothing to write.
	for m := range before {
		before[m] = h.store.callCount(m)
	}
	h.schedule()
	h.core.ClusterChanged()
	h.schedule()
	for m := range before {
		if d := delta(m); d != 0 {
			t.Errorf("idle passes over %d waiting jobs called %s %d times", n, m, d)
		}
	}
	// The detailed reason is in the view.
	p, err := h.core.QueuePage(1, "")
	if err != nil || len(p.Regular) != 1 || p.Totals.Regular != n || !strings.HasPrefix(p.Regular[0].WaitingReason, "does not fit: short of 24 cpus") {
		t.Fatalf("page %+v, %v", p, err)
	}
	// A small job that fits somewhere (1 cpu) does not exist: the hold jobs
	// took every cpu. Free one agent, then a small job starts at once.
	if err := h.finish("hold-00"); err != nil {
		t.Fatal(err)
	}
	small := h.store.add(mkJob("small", 1, 1, submittedAt(time.Hour)))
	h.core.JobSubmitted(small)
	h.schedule()
	if st := h.store.get("small").State; st != Reserving {
		t.Fatalf("small job is %s after one pass, want RESERVING", st)
	}
	// The 12x2 jobs still do not fit (4 cpus free, then 3).
	if st := h.store.get("w-000000").State; st != Queued {
		t.Fatalf("w-000000 %s", st)
	}
}

// TestReadersNeverWaitForAPass blocks the store in the middle of a pass
// (while a job is being placed) and checks that every reader and every
// event source of the core returns meanwhile.
func TestReadersNeverWaitForAPass(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24))
	h.t = t
	h.schedule()
	h.submit(mkJob("running", 1, 4))
	h.schedule()
	if err := h.core.Report(context.Background(), "running", Launching, ""); err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h.store.hold = func(id string, to State) {
		if id == "slow" && to == Placing {
			once.Do(func() { close(entered) })
			<-release
		}
	}
	h.submit(mkJob("slow", 1, 4, submittedAt(time.Second)))
	addWaiting(h, "w", 50)
	passDone := make(chan error, 1)
	go func() { _, err := h.core.Schedule(context.Background()); passDone <- err }()
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the pass never reached the store")
	}
	calls := []struct {
		name string
		f    func() error
	}{
		{"Queues", func() error { h.core.Queues(); return nil }},
		{"QueuePage", func() error { _, err := h.core.QueuePage(10, ""); return err }},
		{"Lengths", func() error { h.core.Lengths(); return nil }},
		{"Waiting", func() error { h.core.Waiting(); return nil }},
		{"NextWake", func() error { h.core.NextWake(); return nil }},
		{"Cost", func() error { h.core.Cost(); return nil }},
		{"ActiveJobs", func() error { h.core.ActiveJobs(); return nil }},
		{"JobSubmitted", func() error {
			h.core.JobSubmitted(h.store.add(mkJob("late", 1, 1, submittedAt(time.Minute))))
			return nil
		}},
		{"JobCancelled", func() error { h.core.JobCancelled(h.store.get("w-000001"), false); return nil }},
		{"ClusterChanged", func() error { h.core.ClusterChanged(); return nil }},
		{"Report", func() error { return h.core.Report(context.Background(), "running", Running, "") }},
		{"Admit", func() error { j := mkJob("x", 1, 1); h.core.Admit(&j, t0); return nil }},
	}
	for _, c := range calls {
		done := make(chan error, 1)
		go func() { done <- c.f() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s during a pass: %v", c.name, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s waited for the scheduling pass", c.name)
		}
	}
	close(release)
	if err := <-passDone; err != nil {
		t.Fatal(err)
	}
	if st := h.store.get("slow").State; st != Reserving {
		t.Fatalf("slow %s", st)
	}
	h.schedule()
	if st := h.store.get("w-000001").State; st == Queued {
		if e := h.core.byID["w-000001"]; e != nil {
			t.Fatal("a job cancelled during the pass is still queued")
		}
	}
}

// TestQueuePagination walks the queues page by page: every job once, in
// the order they will be tried, also while jobs leave between pages.
func TestQueuePagination(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, thesisAgents()...)
	h.t = t
	h.schedule()
	for i, a := range thesisAgents() {
		h.submit(mkJob(fmt.Sprintf("hold-%02d", i), 1, int(a.CPUs), submittedAt(-time.Hour)))
	}
	h.schedule()
	addWaiting(h, "d", 130, withDeadline(3*time.Hour))
	addWaiting(h, "r", 170)
	h.schedule()
	full := h.core.Queues()
	var want []string
	for _, q := range append(full.Deadline, full.Regular...) {
		want = append(want, q.ID)
	}
	if len(want) != 300 {
		t.Fatalf("%d waiting, want 300", len(want))
	}
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		p, err := h.core.QueuePage(70, cursor)
		if err != nil {
			t.Fatal(err)
		}
		if pages == 0 && (p.Totals.Deadline != 130 || p.Totals.Regular != 170) {
			t.Fatalf("totals %+v", p.Totals)
		}
		for _, q := range append(p.Deadline, p.Regular...) {
			got = append(got, q.ID)
		}
		if pages == 1 {
			// A job of a later page leaves: the walk goes on without it.
			h.cancel("r-000100", "user")
			h.schedule() // the pass forgets it (the cluster is full: nothing starts)
			want = slices.DeleteFunc(want, func(id string) bool { return id == "r-000100" })
		}
		if p.Next == "" {
			break
		}
		cursor = p.Next
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("pages gave %d jobs, want %d in order", len(got), len(want))
	}
	if p, err := h.core.QueuePage(0, ""); err != nil || len(p.Deadline)+len(p.Regular) != DefaultQueuePageLimit {
		t.Fatalf("default page: %d jobs, %v", len(p.Deadline)+len(p.Regular), err)
	}
	for _, bad := range []string{"x", "eyJxIjoieiJ9", "!!!"} {
		if _, err := h.core.QueuePage(10, bad); !errors.Is(err, ErrBadQueueCursor) {
			t.Errorf("cursor %q: %v", bad, err)
		}
	}
}

// TestRetryOfCancelledJobIsDropped: a retry on its way back to the queue
// for a job cancelled meanwhile does not queue it again.
func TestRetryOfCancelledJobIsDropped(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.t = t
	h.schedule()
	j := mkJob("j", 1, 1)
	j.State = Cancelled
	h.core.JobCancelled(j, false)
	h.schedule()
	q := mkJob("j", 1, 1)
	q.State = Queued
	h.core.inboxMu.Lock()
	h.core.requeues = append(h.core.requeues, q)
	h.core.inboxMu.Unlock()
	h.schedule()
	if n := h.core.Waiting(); n != 0 {
		t.Fatalf("%d waiting after the cancelled job's retry", n)
	}
}

// benchCore builds a core with the thesis cluster held full and n regular
// jobs of 12 x 2 cpus waiting.
func benchCore(b *testing.B, n int) *harness {
	h, _ := newBatchHarness(b, Config{}, thesisAgents()...)
	ctx := context.Background()
	if _, err := h.core.Schedule(ctx); err != nil {
		b.Fatal(err)
	}
	for i, a := range thesisAgents() {
		j := h.store.add(mkJob(fmt.Sprintf("hold-%02d", i), 1, int(a.CPUs)))
		h.core.JobSubmitted(j)
	}
	for i := 0; i < n; i++ {
		h.core.JobSubmitted(h.store.add(mkJob(fmt.Sprintf("w-%07d", i), 12, 2, submittedAt(time.Duration(i)*time.Millisecond))))
	}
	if _, err := h.core.Schedule(ctx); err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkPassFull is a pass that looks at every one of 100,000 waiting
// jobs that cannot fit (something was freed since the last pass).
func BenchmarkPassFull(b *testing.B) {
	h := benchCore(b, 100_000)
	ctx := context.Background()
	c0 := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.core.ClusterChanged()
		if _, err := h.core.Schedule(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, c0)
}

// BenchmarkPassNewJob is a pass after one submission with 100,000 jobs
// waiting: the new job is admitted and tried, the others are not looked at.
func BenchmarkPassNewJob(b *testing.B) {
	h := benchCore(b, 100_000)
	ctx := context.Background()
	c0 := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.core.JobSubmitted(h.store.add(mkJob(fmt.Sprintf("n-%07d", i), 12, 2, submittedAt(time.Hour))))
		if _, err := h.core.Schedule(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	reportCPU(b, c0)
}

// BenchmarkQueuedJobMemory reports the heap a queued job costs the core
// (its entry, its published view and its index entry), not counting the
// store's copy.
func BenchmarkQueuedJobMemory(b *testing.B) {
	const n = 100_000
	for i := 0; i < b.N; i++ {
		c, err := New(Config{Log: DiscardLogger()}, newTestCluster(thesisAgents()...), newTestStore(), newManualClock(t0))
		if err != nil {
			b.Fatal(err)
		}
		jobs := make([]Job, n)
		for k := range jobs {
			jobs[k] = mkJob(fmt.Sprintf("%08d-aaaa-bbbb-cccc-dddddddddddd", k), 12, 2, withDeadline(time.Hour))
			jobs[k].Name = "wordcount-20g"
			jobs[k].State = Queued
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		es := make([]*Entry, n)
		for k := range jobs {
			es[k] = NewEntry(&jobs[k])
		}
		c.passMu.Lock()
		c.enqueueMany(es, t0)
		c.publish(t0)
		c.passMu.Unlock()
		jobs = nil
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "bytes/queued-job")
		runtime.KeepAlive(c)
	}
}

// TestPushManyKeepsOrder: merging batches into a queue gives the order of
// inserting one by one.
func TestPushManyKeepsOrder(t *testing.T) {
	for seed := 0; seed < 50; seed++ {
		var a, b JobQueue
		n := 0
		for round := 0; round < 5; round++ {
			var batch []*Entry
			for k := 0; k < (seed*7+round*13)%40; k++ {
				j := mkJob(fmt.Sprintf("j%03d-%03d", seed, n), 1+(n*31+seed)%9, 1+(n*17)%4, submittedAt(time.Duration((n*7919)%100)*time.Second))
				n++
				e1, e2 := NewEntry(&j), NewEntry(&j)
				e1.RD = placement.ResourceDemand(e1.Demand, 100, 409600, 0.8, 0.2)
				e2.RD = e1.RD
				a.Push(e1)
				batch = append(batch, e2)
			}
			b.PushMany(batch)
		}
		var ga, gb []string
		for _, e := range a.Entries() {
			ga = append(ga, e.ID)
		}
		for _, e := range b.Entries() {
			gb = append(gb, e.ID)
		}
		if !slices.Equal(ga, gb) {
			t.Fatalf("seed %d: PushMany order %v, Push order %v", seed, gb, ga)
		}
	}
}

// TestAnnouncedTwiceIsQueuedOnce: with several instances the leader hears
// of a job from the API and again from the database's notification, often
// in the same batch; each job must be queued once (a duplicate entry was
// counted in the totals and never left the queue).
func TestAnnouncedTwiceIsQueuedOnce(t *testing.T) {
	for _, n := range []int{3, 50} { // below and above enqueueMany's batch path
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			h, _ := newBatchHarness(t, Config{}, agent("a", 4, 16384, 0.24))
			h.submit(mkJob("hold", 1, 4, submittedAt(-time.Hour)))
			h.schedule()
			for i := 0; i < n; i++ {
				j := mkJob(fmt.Sprintf("q-%03d", i), 1, 2) // waits: the agent is held
				j.State, j.WaitingReason = Queued, ReasonQueued
				h.store.add(j)
				h.core.JobSubmitted(j)
				h.core.JobSubmitted(j) // the notification's copy
			}
			for i := 0; i < n; i++ { // and SUBMITTED jobs announced twice
				j := h.store.add(mkJob(fmt.Sprintf("s-%03d", i), 1, 2))
				h.core.JobSubmitted(j)
				h.core.JobSubmitted(j)
			}
			h.schedule()
			l := h.core.Lengths()
			if l.Regular+l.Deadline != 2*n || l.Intake != 0 {
				t.Fatalf("queues hold %+v, want %d jobs", l, 2*n)
			}
			seen := map[string]bool{}
			for _, q := range h.core.Queues().Regular {
				if seen[q.ID] {
					t.Fatalf("job %s queued twice", q.ID)
				}
				seen[q.ID] = true
			}
		})
	}
}

// TestLateAnnouncementOfAStartedJob: the API's announcement queues a job
// and a pass starts it; the database's notification of the same job (as it
// was stored: QUEUED) arrives after that. It must not queue the job again
// (a ghost that counted in the totals for ever, and could run the job
// twice).
func TestLateAnnouncementOfAStartedJob(t *testing.T) {
	h, _ := newBatchHarness(t, Config{}, agent("a", 4, 16384, 0.24))
	j := mkJob("late", 1, 4) // the whole agent: a ghost could not start and be dropped
	j.State, j.WaitingReason = Queued, ReasonQueued
	h.store.add(j)
	h.core.JobSubmitted(j)
	h.schedule()
	if got := h.store.get("late"); got.State == Queued {
		t.Fatalf("the job did not start: %s (%s)", got.State, got.WaitingReason)
	}
	h.core.JobSubmitted(j) // the notification's copy, late
	h.schedule()
	if l := h.core.Lengths(); l.Regular+l.Deadline+l.Intake != 0 {
		t.Fatalf("a started job was queued again: %+v", l)
	}
}
