package offers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants of cluster.go that mutation testing found
// alive (scripts/mutation.sh --only '^cluster\.go$' offers;
// docs/testing.md). The expected values come from the doc comments of
// ClusterConfig and of the adapter's methods, worked out by hand.

func quietLog() *logrus.Logger {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	return log
}

// TestClusterConfigDefaults: a zero or negative setting takes the default
// its doc comment states (Refresh 2 s, Sweep 30 s, Retry 1 s,
// LaunchTimeout 2 min, AgentWait 5 min); a positive one is kept; the
// lifecycle machine gets them, with 5 lost launches and FromOffers only
// from a reserver that makes its reservations from offers.
func TestClusterConfigDefaults(t *testing.T) {
	defaults := [5]time.Duration{2 * time.Second, 30 * time.Second, time.Second, 2 * time.Minute, 5 * time.Minute}
	got := func(c *Cluster) [5]time.Duration {
		return [5]time.Duration{c.cfg.Refresh, c.cfg.Sweep, c.cfg.Retry, c.cfg.LaunchTimeout, c.cfg.AgentWait}
	}
	for _, d := range []time.Duration{0, -time.Second} {
		c := NewCluster(ClusterConfig{Refresh: d, Sweep: d, Retry: d, LaunchTimeout: d, AgentWait: d})
		if g := got(c); g != defaults {
			t.Errorf("settings of %v: %v, want the defaults %v", d, g, defaults)
		}
		if c.cfg.Log == nil || c.log == nil {
			t.Errorf("settings of %v: no logger", d)
		}
	}
	set := [5]time.Duration{3 * time.Second, 7 * time.Second, 11 * time.Millisecond, 13 * time.Second, 17 * time.Second}
	c := NewCluster(ClusterConfig{Refresh: set[0], Sweep: set[1], Retry: set[2], LaunchTimeout: set[3], AgentWait: set[4]})
	if g := got(c); g != set {
		t.Errorf("positive settings %v became %v", set, g)
	}
	lc := c.lifecycleConfig()
	if lc.FromOffers || lc.Retry != set[2] || lc.LaunchTimeout != set[3] || lc.AgentWait != set[4] || lc.MaxLostLaunches != 5 {
		t.Errorf("lifecycle config without a reserver: %+v", lc)
	}
	for _, fromOffers := range []bool{false, true} {
		c := NewCluster(ClusterConfig{Reserver: wrappedPinner{&orderPinner{fromOffers: fromOffers}}})
		if lc := c.lifecycleConfig(); lc.FromOffers != fromOffers {
			t.Errorf("reserver from offers %v: lifecycle FromOffers %v", fromOffers, lc.FromOffers)
		}
	}
}

// stoppedCluster is an adapter "started" with a context that has already
// ended: jobs it registers get a follower that takes the machine's first
// step and stops, so what the entry points registered can be read after
// Wait.
func stoppedCluster(t *testing.T, st JobStore, fw *Framework) *Cluster {
	t.Helper()
	c := NewCluster(ClusterConfig{Store: st, Framework: fw, Reserver: &orderPinner{}, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c.ctx = ctx
	return c
}

// heldJob is a followed job whose machine awaits an answer (Busy), so
// that an event is only recorded: no follower, no decisions.
func heldJob(c *Cluster, id string, ph lifecycle.Phase) *liveJob {
	j := testJob(0)
	j.ID = id
	lj := &liveJob{signal: make(chan struct{}, 1), st: lifecycle.New(lifecycle.Config{}, j, placement.Plan{}, ph, scheduler.DriverRecord{}, time.Now())}
	lj.st.Busy = lifecycle.ActKillDriver
	c.jobs[id] = lj
	return lj
}

// TestClusterEntryPoints: Apply and Release before Start; Release,
// Kill and Preempt of jobs followed or not, in each phase that decides.
func TestClusterEntryPoints(t *testing.T) {
	ctx := context.Background()
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "S1", Executors: 1}}}

	// Not started: Apply refuses, Release of an unknown job does nothing.
	c := NewCluster(ClusterConfig{Store: newMemStore(), Log: quietLog()})
	if err := c.Apply(ctx, testJob(0), plan); err == nil {
		t.Error("Apply before Start: no error")
	}
	if err := c.Release(ctx, "unknown"); err != nil || len(c.jobs) != 0 {
		t.Errorf("Release before Start: %v, %d jobs followed; want nil and none", err, len(c.jobs))
	}

	// Started: Apply follows the job from Reserving with its plan;
	// Release of a job not followed gives back what Mesos shows for it.
	c = stoppedCluster(t, newMemStore(), nil)
	if err := c.Apply(ctx, testJob(0), plan); err != nil {
		t.Fatal(err)
	}
	if err := c.Release(ctx, "not-followed"); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	c.mu.Lock()
	if lj := c.jobs[testJobID]; lj == nil || lj.st.Phase != lifecycle.Reserving || len(lj.st.Plan.Assignments) != 1 || lj.st.Plan.Assignments[0].AgentID != "S1" {
		t.Errorf("Apply: followed %+v, want the job reserving its plan on S1", lj)
	}
	if lj := c.jobs["not-followed"]; lj == nil || lj.st.Phase != lifecycle.Releasing || lj.st.Job.ID != "not-followed" || lj.st.Outcome != "" {
		t.Errorf("Release of a job not followed: %+v, want it releasing with nothing to report", lj)
	}
	c.mu.Unlock()

	// Followed jobs, by phase.
	c = NewCluster(ClusterConfig{Store: newMemStore(), Log: quietLog()})
	c.ctx = ctx
	done := heldJob(c, "done", lifecycle.Done)
	running := heldJob(c, "running", lifecycle.Running)
	releasing := heldJob(c, "releasing", lifecycle.Releasing)
	launching := heldJob(c, "launching", lifecycle.Launching)
	v := c.Version()
	if err := c.Release(ctx, "done"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.jobs["done"]; ok || c.Version() != v+1 {
		t.Errorf("Release of a done job: still followed %v, version moved by %d; want forgotten, moved by 1", ok, c.Version()-v)
	}
	_ = done
	if err := c.Release(ctx, "running"); err != nil {
		t.Fatal(err)
	}
	if running.st.Phase != lifecycle.Releasing || c.jobs["running"] != running {
		t.Errorf("Release of a running job: phase %s, want releasing and still followed", running.st.Phase)
	}

	if err := c.Kill(ctx, "unknown"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Kill of an unknown job: %v, want ErrNotFound", err)
	}
	if err := c.Kill(ctx, "launching"); err != nil || !launching.st.Kill {
		t.Errorf("Kill of a launching job: %v, kill recorded %v", err, launching.st.Kill)
	}

	for _, id := range []string{"unknown", "releasing"} {
		if err := c.Preempt(ctx, id, "make room"); !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("Preempt of %s: %v, want ErrNotFound", id, err)
		}
	}
	// A done job (not yet forgotten) cannot be evicted either.
	heldJob(c, "done", lifecycle.Done)
	if err := c.Preempt(ctx, "done", "make room"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Preempt of a done job: %v, want ErrNotFound", err)
	}
	if releasing.st.Preempt != "" {
		t.Errorf("a releasing job recorded an eviction: %q", releasing.st.Preempt)
	}
	lr := heldJob(c, "launching-2", lifecycle.Launching)
	if err := c.Preempt(ctx, "launching-2", "make room"); err != nil || lr.st.Preempt != "make room" {
		t.Errorf("Preempt of a launching job: %v, reason recorded %q", err, lr.st.Preempt)
	}
	rr := heldJob(c, "running-2", lifecycle.Running)
	if err := c.Preempt(ctx, "running-2", "make room"); err != nil || rr.st.Preempt != "make room" {
		t.Errorf("Preempt of a running job: %v, reason recorded %q", err, rr.st.Preempt)
	}
}

// resumeStore is a JobStore with unfinished jobs, their plans and
// drivers, and errors to return.
type resumeStore struct {
	memStore
	unfinished []scheduler.Job
	plans      map[string]placement.Plan
	planErr    error
	driverErr  error
	getErr     error
}

func (s *resumeStore) Unfinished(context.Context) ([]scheduler.Job, error) { return s.unfinished, nil }
func (s *resumeStore) Plan(_ context.Context, id string) (placement.Plan, error) {
	if s.planErr != nil {
		return placement.Plan{}, s.planErr
	}
	p, ok := s.plans[id]
	if !ok {
		return p, scheduler.ErrNotFound
	}
	return p, nil
}
func (s *resumeStore) Driver(ctx context.Context, id string) (scheduler.DriverRecord, error) {
	if s.driverErr != nil {
		return scheduler.DriverRecord{}, s.driverErr
	}
	return s.memStore.Driver(ctx, id)
}
func (s *resumeStore) GetJob(ctx context.Context, id string) (scheduler.Job, error) {
	if s.getErr != nil {
		return scheduler.Job{}, s.getErr
	}
	return s.memStore.GetJob(ctx, id)
}

// TestResumeAfterRestart: the unfinished jobs holding resources are
// followed again in their phase with their plan and driver; a driver
// record of a reserving job is an earlier generation's (dropped); the
// framework tracks exactly the drivers that were sent and have not ended;
// a queued job is not followed; a store error other than not-found stops
// the resume.
func TestResumeAfterRestart(t *testing.T) {
	ctx := context.Background()
	job := func(id string, s scheduler.State) scheduler.Job {
		j := testJob(0)
		j.ID, j.State = id, s
		return j
	}
	st := &resumeStore{memStore: *newMemStore(), plans: map[string]placement.Plan{
		"run": {Assignments: []placement.Assignment{{AgentID: "S2", Executors: 2}}}}}
	st.unfinished = []scheduler.Job{job("res", scheduler.Reserving), job("unsent", scheduler.Launching),
		job("run", scheduler.Running), job("ended", scheduler.Running), job("queued", scheduler.Queued)}
	drivers := map[string]scheduler.DriverRecord{
		"res":    {TaskID: "t-res", State: "TASK_RUNNING"},
		"unsent": {TaskID: "t-unsent"},
		"run":    {TaskID: "t-run", State: "TASK_RUNNING", AgentID: "S2"},
		"ended":  {TaskID: "t-ended", State: "TASK_FINISHED", Ended: true},
		"queued": {TaskID: "t-queued", State: "TASK_RUNNING"},
	}
	for id, d := range drivers {
		d.JobID = id
		st.drivers[id] = d
	}
	log := quietLog()
	fw := NewFramework(FrameworkConfig{}, NewSchedClient(nil, log), nil, nil, log)
	c := stoppedCluster(t, st, fw)
	if err := c.resume(ctx); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	c.mu.Lock()
	want := map[string]lifecycle.Phase{"res": lifecycle.Reserving, "unsent": lifecycle.Launching, "run": lifecycle.Running, "ended": lifecycle.Running}
	if len(c.jobs) != len(want) {
		t.Errorf("%d jobs followed, want %d (not the queued one)", len(c.jobs), len(want))
	}
	for id, ph := range want {
		lj := c.jobs[id]
		if lj == nil || lj.st.Phase != ph {
			t.Errorf("job %s: %+v, want followed in phase %s", id, lj, ph)
		}
	}
	if d := c.jobs["res"].st.Driver; d.TaskID != "" {
		t.Errorf("reserving job resumed with an earlier generation's driver %+v", d)
	}
	if d := c.jobs["run"].st.Driver; d.TaskID != "t-run" || d.AgentID != "S2" {
		t.Errorf("running job resumed with driver %+v, want t-run on S2", d)
	}
	if p := c.jobs["run"].st.Plan; len(p.Assignments) != 1 || p.Assignments[0].Executors != 2 {
		t.Errorf("running job resumed with plan %+v, want its stored plan", p)
	}
	c.mu.Unlock()
	fw.mu.Lock()
	if len(fw.taskJob) != 1 || fw.taskJob["t-run"] != "run" {
		t.Errorf("framework tracks %v, want only t-run (sent, not ended)", fw.taskJob)
	}
	fw.mu.Unlock()

	// Store errors other than not-found.
	boom := errors.New("disk on fire")
	for name, set := range map[string]func(s *resumeStore){
		"plan":   func(s *resumeStore) { s.planErr = boom },
		"driver": func(s *resumeStore) { s.driverErr = boom },
	} {
		st := &resumeStore{memStore: *newMemStore(), unfinished: []scheduler.Job{job("run", scheduler.Running)}}
		set(st)
		c := stoppedCluster(t, st, fw)
		if err := c.resume(ctx); !errors.Is(err, boom) {
			t.Errorf("%s read fails: resume %v, want the error", name, err)
		}
		c.Wait()
	}
}

// failingReporter fails every report.
type failingReporter struct{ err error }

func (r failingReporter) Report(context.Context, string, scheduler.State, string) error { return r.err }
func (r failingReporter) ReportRan(context.Context, string, scheduler.State, string, scheduler.RunStart) error {
	return r.err
}
func (r failingReporter) ClusterChanged() {}

// TestReportCountsAJobAlreadyThere: a report the core refuses counts as
// told when the store shows the job in that state already; otherwise
// its error is returned, as it is without a reporter.
func TestReportCountsAJobAlreadyThere(t *testing.T) {
	ctx := context.Background()
	refused := errors.New("transition refused")
	st := &resumeStore{memStore: *newMemStore(testJob(0))} // Running
	c := NewCluster(ClusterConfig{Store: st, Log: quietLog()})
	if err := c.report(ctx, testJobID, scheduler.Running, "", scheduler.RunStart{}); err == nil {
		t.Error("a report without a reporter: no error")
	}
	c.SetReporter(&nopReporter{})
	if err := c.report(ctx, testJobID, scheduler.Finished, "", scheduler.RunStart{}); err != nil {
		t.Errorf("a report the core takes: %v", err)
	}
	c.SetReporter(failingReporter{refused})
	if err := c.report(ctx, testJobID, scheduler.Running, "", scheduler.RunStart{}); err != nil {
		t.Errorf("a refused report of the state the job is in: %v, want nil", err)
	}
	if err := c.report(ctx, testJobID, scheduler.Finished, "", scheduler.RunStart{}); !errors.Is(err, refused) {
		t.Errorf("a refused report of another state: %v, want the refusal", err)
	}
	st.getErr = errors.New("store down")
	if err := c.report(ctx, testJobID, scheduler.Running, "", scheduler.RunStart{}); !errors.Is(err, refused) {
		t.Errorf("a refused report, the job unreadable: %v, want the refusal", err)
	}
}

// TestStartResumesRefreshesAndSweeps: Start resumes the store's jobs (and
// fails when it cannot read them), reads GET_AGENTS once before it
// returns, so that the first views see the cluster, and looks for leaked
// reservations at once.
func TestStartResumesRefreshesAndSweeps(t *testing.T) {
	l := &agentsList{}
	l.set(getAgent("A", 4, 8192), getAgent("B", 2, 4096))
	p := &sweepPinner{labelled: []string{"old"}}
	c := NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: &unfinishedStore{memStore: *newMemStore()}, Reserver: p, Log: quietLog()})
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	loaded, n := c.loaded, len(c.agents)
	c.mu.Unlock()
	cancel()
	c.Wait()
	if !loaded || n != 2 {
		t.Errorf("after Start: loaded %v, %d agents; want the 2 agents read", loaded, n)
	}
	if len(p.released) != 1 || p.released[0] != "old" {
		t.Errorf("released %v, want the leaked reservations of old", p.released)
	}

	boom := errors.New("store down")
	c = NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: &unfinishedStore{memStore: *newMemStore(), err: boom}, Reserver: p, Log: quietLog()})
	ctx, cancel = context.WithCancel(context.Background())
	if err := c.Start(ctx); !errors.Is(err, boom) {
		t.Errorf("Start with the store down: %v, want its error", err)
	}
	cancel()
	c.Wait()
	if c.loaded {
		t.Error("Start read GET_AGENTS although it could not resume")
	}
}
