package offers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	sched "github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// Tests written for the mutants of follow.go (scripts/mutation.sh --only
// '^follow\.go$' offers; docs/testing.md): the executor of the lifecycle
// machine. Each action is performed on a job whose machine awaits it, and
// what the action did (calls, store, the machine's next state) is checked
// against what lifecycle's rules say, worked out by hand.

// flakyStore is a memStore whose reads and writes fail on demand.
type flakyStore struct {
	*memStore
	fmu                    sync.Mutex
	driverErr, putErr      error
	getErr                 error
	putCalls, driverCalled int
}

func (s *flakyStore) Driver(ctx context.Context, id string) (sched.DriverRecord, error) {
	s.fmu.Lock()
	err := s.driverErr
	s.driverCalled++
	s.fmu.Unlock()
	if err != nil {
		return sched.DriverRecord{}, err
	}
	return s.memStore.Driver(ctx, id)
}

func (s *flakyStore) PutDriver(ctx context.Context, d sched.DriverRecord) error {
	s.fmu.Lock()
	err := s.putErr
	s.putCalls++
	s.fmu.Unlock()
	if err != nil {
		return err
	}
	return s.memStore.PutDriver(ctx, d)
}

func (s *flakyStore) GetJob(ctx context.Context, id string) (sched.Job, error) {
	s.fmu.Lock()
	err := s.getErr
	s.fmu.Unlock()
	if err != nil {
		return sched.Job{}, err
	}
	return s.memStore.GetJob(ctx, id)
}

// recPinner is a Pinner that records its calls and fails on demand.
type recPinner struct {
	mu                     sync.Mutex
	reserveErr, releaseErr error
	reserved, released     []string
}

func (p *recPinner) Reserve(_ context.Context, j sched.Job, _ placement.Plan) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reserved = append(p.reserved, j.ID)
	return p.reserveErr
}
func (p *recPinner) Release(_ context.Context, id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = append(p.released, id)
	return p.releaseErr
}
func (p *recPinner) Orphans(context.Context, func(string) bool) ([]string, error) { return nil, nil }
func (p *recPinner) FromOffers() bool                                             { return false }
func (p *recPinner) DropStrays(context.Context, string, []Reserved) []string      { return nil }

// errReporter answers every report with err, and counts ClusterChanged.
type errReporter struct {
	mu      sync.Mutex
	err     error
	reports []sched.State
	runs    []sched.RunStart // of ReportRan
	changed int
}

func (r *errReporter) Report(_ context.Context, _ string, to sched.State, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, to)
	return r.err
}
func (r *errReporter) ReportRan(ctx context.Context, id string, to sched.State, why string, run sched.RunStart) error {
	r.mu.Lock()
	r.runs = append(r.runs, run)
	r.mu.Unlock()
	return r.Report(ctx, id, to, why)
}
func (r *errReporter) ClusterChanged() { r.mu.Lock(); r.changed++; r.mu.Unlock() }

// followSetup is a Cluster on a recording master with a flaky store, a
// recording pinner and reporter, and agents S1 (host-1) registered, S2
// (host-2) seen before but not registered.
type followSetup struct {
	c     *Cluster
	fw    *Framework
	calls *callLog
	st    *flakyStore
	pin   *recPinner
	rep   *errReporter
	hook  *logtest.Hook // the cluster's log
}

func newFollowSetup(t *testing.T, job sched.Job) *followSetup {
	t.Helper()
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	st := &flakyStore{memStore: newMemStore(job)}
	pin := &recPinner{}
	rep := &errReporter{}
	c := NewCluster(ClusterConfig{Store: st, Framework: fw, Reserver: pin, Log: log,
		Submit: sparksubmit.Options{Master: "mesos://127.0.0.1:5050"}})
	c.SetReporter(rep)
	c.agents = []Agent{{ID: "S1", Hostname: "host-1", CPUs: 4, FreeCPUs: 4, FreeMemMB: 8192}}
	c.seen["S1"] = c.agents[0]
	c.seen["S2"] = Agent{ID: "S2", Hostname: "host-2"}
	c.loaded = true
	fw.sink = c
	return &followSetup{c: c, fw: fw, calls: calls, st: st, pin: pin, rep: rep, hook: hook}
}

// awaiting is a followed job in phase ph, with driver drv and plan on
// agents, whose machine awaits the answer to kind.
func (s *followSetup) awaiting(job sched.Job, ph lifecycle.Phase, drv sched.DriverRecord, kind lifecycle.ActionKind, agents ...string) *liveJob {
	var plan placement.Plan
	for _, a := range agents {
		plan.Assignments = append(plan.Assignments, placement.Assignment{AgentID: a, Executors: 1})
	}
	st := lifecycle.New(s.c.lifecycleConfig(), job, plan, ph, drv, time.Now())
	st.Busy = kind
	lj := &liveJob{st: st, signal: make(chan struct{}, 1)}
	s.c.mu.Lock()
	s.c.jobs[job.ID] = lj
	s.c.mu.Unlock()
	return lj
}

func (s *followSetup) state(lj *liveJob) lifecycle.State {
	s.c.mu.Lock()
	defer s.c.mu.Unlock()
	return lj.st
}

func kinds(acts []lifecycle.Action) []lifecycle.ActionKind {
	var out []lifecycle.ActionKind
	for _, a := range acts {
		out = append(out, a.Kind)
	}
	return out
}

// TestCheckAgentsNamesTheFirstUnregistered: the check names the plan's
// first agent GET_AGENTS does not list (by its hostname); the plan then
// waits for it (a timer), unless AgentFailed says it will not come, when
// the job goes back to the queue naming it. With every agent listed the
// reservations are made next.
func TestCheckAgentsNamesTheFirstUnregistered(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		agents []string
		failed func(string) bool
		phase  lifecycle.Phase
		reason string
		acts   []lifecycle.ActionKind
	}{
		{"all listed", []string{"S1"}, nil, lifecycle.Reserving, "", []lifecycle.ActionKind{lifecycle.ActExpect, lifecycle.ActReserve}},
		{"all listed, a failure hook", []string{"S1"}, func(string) bool { return true }, lifecycle.Reserving, "",
			[]lifecycle.ActionKind{lifecycle.ActExpect, lifecycle.ActReserve}},
		{"S2 missing", []string{"S1", "S2", "S3"}, nil, lifecycle.Reserving, "", []lifecycle.ActionKind{lifecycle.ActTimer}},
		// Every agent waited for is asked, not only the first (S2 booting).
		{"S2 missing, S3 failed", []string{"S1", "S2", "S3"}, func(a string) bool { return a == "S3" }, lifecycle.Releasing,
			"agent S3 was not powered on; placing again without it", []lifecycle.ActionKind{lifecycle.ActGiveBack}},
		{"S2 missing and failed", []string{"S1", "S2", "S3"}, func(a string) bool { return a == "S2" }, lifecycle.Releasing,
			"agent host-2 was not powered on; placing again without it", []lifecycle.ActionKind{lifecycle.ActGiveBack}},
	} {
		s := newFollowSetup(t, testJob(0))
		s.c.cfg.AgentFailed = c.failed
		lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActCheckAgents, c.agents...)
		acts := s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActCheckAgents})
		got := s.state(lj)
		if got.Phase != c.phase || got.Reason != c.reason || !slices.Equal(kinds(acts), c.acts) {
			t.Errorf("%s: phase %s, reason %q, actions %v; want %s, %q, %v", c.name, got.Phase, got.Reason, kinds(acts), c.phase, c.reason, c.acts)
		}
	}
}

// TestReserveOutcomes: reservations made: reserved, the core kicked; a
// conflict: back to the queue with the pinner's own error in the reason;
// any other error: tried again after Retry (the machine's timer counts
// from now, not from the zero time).
func TestReserveOutcomes(t *testing.T) {
	ctx := context.Background()
	conflict := fmt.Errorf("agent host-1: no room: %w", ErrReserveConflict)
	for _, c := range []struct {
		name     string
		err      error
		reserved bool
		reason   string
		acts     []lifecycle.ActionKind
	}{
		{"made", nil, true, "", []lifecycle.ActionKind{lifecycle.ActNote, lifecycle.ActKick, lifecycle.ActNameDriver}},
		{"conflict", conflict, false, "reservation refused (" + conflict.Error() + "); placing again", []lifecycle.ActionKind{lifecycle.ActGiveBack}},
		{"failed", errors.New("master unreachable"), false, "", []lifecycle.ActionKind{lifecycle.ActTimer}},
	} {
		s := newFollowSetup(t, testJob(0))
		s.pin.reserveErr = c.err
		lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActReserve, "S1")
		before := time.Now()
		acts := s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActReserve})
		got := s.state(lj)
		if got.Reserved != c.reserved || got.Reason != c.reason || !slices.Equal(kinds(acts), c.acts) {
			t.Errorf("%s: reserved %v, reason %q, actions %v; want %v, %q, %v", c.name, got.Reserved, got.Reason, kinds(acts), c.reserved, c.reason, c.acts)
		}
		if c.name == "failed" && got.Wake.Before(before.Add(s.c.cfg.Retry)) {
			t.Errorf("failed: retry at %v; want Retry (%v) after now (%v)", got.Wake, s.c.cfg.Retry, before)
		}
	}
}

// TestNameDriverCountsOn: a new driver task takes the next launch number
// after both the stored driver's and the action's attempt (numbers only
// grow), carries the lost launches, and is stored; with no stored driver
// it follows the action's attempt; when the store cannot be read or
// written nothing is named and the step is tried again.
func TestNameDriverCountsOn(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name              string
		stored            int // attempt of the stored driver (0: none)
		attempt, lost     int
		driverErr, putErr error
		want              int // the new attempt (0: none named)
	}{
		{"stored 3, action 1", 3, 1, 0, nil, nil, 4},
		{"stored 1, action 3", 1, 3, 2, nil, nil, 4},
		{"none stored, action 2", 0, 2, 0, nil, nil, 3},
		{"none stored, action 0", 0, 0, 0, nil, nil, 1},
		{"store unreadable", 3, 1, 0, errors.New("database down"), nil, 0},
		{"store unwritable", 3, 1, 0, nil, errors.New("database down"), 0},
	} {
		s := newFollowSetup(t, testJob(0))
		if c.stored > 0 {
			s.st.drivers[testJobID] = sched.DriverRecord{JobID: testJobID, Attempt: c.stored, TaskID: DriverTaskID(testJobID, c.stored)}
		}
		s.st.driverErr, s.st.putErr = c.driverErr, c.putErr
		lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActNameDriver, "S1")
		lj.st.Reserved = true
		acts := s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActNameDriver, Attempt: c.attempt, Lost: c.lost})
		got := s.state(lj).Driver
		if c.want == 0 {
			if got.TaskID != "" || !slices.Equal(kinds(acts), []lifecycle.ActionKind{lifecycle.ActTimer}) {
				t.Errorf("%s: named %+v, actions %v; want none named, a retry", c.name, got, kinds(acts))
			}
			continue
		}
		stored := s.st.drivers[testJobID]
		if got.Attempt != c.want || got.TaskID != DriverTaskID(testJobID, c.want) || got.LostLaunches != c.lost || stored != got {
			t.Errorf("%s: named %+v, stored %+v; want attempt %d, task %s, %d lost", c.name, got, stored, c.want, DriverTaskID(testJobID, c.want), c.lost)
		}
	}
}

// TestQueueLaunchByHand: the named driver's launch is queued with the
// framework: the job's driver size, the spark-submit command for the
// leading master (SparkMaster), the job label and, only for a job with an
// estimate, the duration label, the plan's agents preferred. When it is
// sent, LAUNCH_SENT is stored first; a launch the machine no longer wants
// is withdrawn; a failed store keeps it waiting. A command today's rules
// refuse fails the job; a command that cannot be built yet (no master) is
// tried again.
func TestQueueLaunchByHand(t *testing.T) {
	ctx := context.Background()
	named := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: DriverTaskID(testJobID, 1)}
	launching := func(s *followSetup, job sched.Job) *liveJob {
		lj := s.awaiting(job, lifecycle.Launching, named, lifecycle.ActQueueLaunch, "S2", "S1")
		return lj
	}

	sized := testJob(0)
	sized.Driver = &sched.Driver{Cores: 2, MemoryMB: 3072}
	s := newFollowSetup(t, sized)
	s.c.cfg.SparkMaster = func() string { return "mesos://leader-2:5050" }
	lj := launching(s, sized)
	acts := s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActQueueLaunch})
	if !s.state(lj).Queued || len(acts) != 1 || acts[0].Kind != lifecycle.ActTimer {
		t.Fatalf("queued %v, actions %v; want queued, a timer for the launch timeout", s.state(lj).Queued, kinds(acts))
	}
	s.fw.mu.Lock()
	l := s.fw.pending[testJobID]
	s.fw.mu.Unlock()
	if l == nil {
		t.Fatal("nothing queued with the framework")
	}
	if l.TaskID != named.TaskID || l.CPUs != 2 || l.MemMB != 3072 || !slices.Equal(l.Prefer, []string{"S2", "S1"}) {
		t.Errorf("launch %s of %v cpus, %v MiB, preferring %v; want %s, 2, 3072, [S2 S1]", l.TaskID, l.CPUs, l.MemMB, l.Prefer, named.TaskID)
	}
	if i := slices.Index(l.Argv, "--master"); i < 0 || l.Argv[i+1] != "mesos://leader-2:5050" {
		t.Errorf("command %v; want --master mesos://leader-2:5050", l.Argv)
	}
	if len(l.Labels) != 1 || l.Labels[LabelKey] != testJobID {
		t.Errorf("labels %v of a job without estimate; want the job label only", l.Labels)
	}
	// Sent: LAUNCH_SENT stored on the chosen agent, then the ACCEPT.
	s.fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 4, 8192, "sparkpack")))
	if d := s.st.drivers[testJobID]; d.State != LaunchSent || d.AgentID != "S1" || d.TaskID != named.TaskID {
		t.Errorf("stored driver %+v; want %s LAUNCH_SENT on S1", d, named.TaskID)
	}
	if got := launchedOn(s.calls); !slices.Equal(got, []string{"O-1"}) {
		t.Errorf("launched on %v, want O-1", got)
	}
	if st := s.state(lj); st.Sending || st.DriverAgentName != "host-1" {
		t.Errorf("after Sent: sending %v, agent name %q; want false, host-1", st.Sending, st.DriverAgentName)
	}

	// A job with an estimate carries it; a failed LAUNCH_SENT write keeps
	// the launch waiting (no ACCEPT).
	est := testJob(0)
	est.EstimatedDurationSeconds = 90.25
	s = newFollowSetup(t, est)
	s.c.cfg.Submit.Master = "mesos://m:5050"
	lj = launching(s, est)
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActQueueLaunch})
	s.fw.mu.Lock()
	l = s.fw.pending[testJobID]
	s.fw.mu.Unlock()
	if l == nil || l.Labels[DurationLabel] != "90.25" || len(l.Labels) != 2 {
		t.Fatalf("launch %+v; want the duration label 90.25 (as given) beside the job label", l)
	}
	s.st.putErr = errors.New("database down")
	s.fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 4, 8192, "sparkpack")))
	s.fw.mu.Lock()
	_, waits := s.fw.pending[testJobID]
	s.fw.mu.Unlock()
	if n := len(s.calls.of(scheduler.Call_ACCEPT)); n != 0 || !waits || s.state(lj).Sending {
		t.Fatalf("LAUNCH_SENT not stored: %d ACCEPTs, waiting %v, sending %v; want 0, true, false", n, waits, s.state(lj).Sending)
	}

	// Withdrawn: the job was killed meanwhile.
	s = newFollowSetup(t, testJob(0))
	s.c.cfg.Submit.Master = "mesos://m:5050"
	lj = launching(s, testJob(0))
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActQueueLaunch})
	s.c.mu.Lock()
	lj.st.Kill = true
	s.c.mu.Unlock()
	s.fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 4, 8192, "sparkpack")))
	if n := len(s.calls.of(scheduler.Call_ACCEPT)); n != 0 || s.st.putCalls != 0 {
		t.Fatalf("withdrawn launch: %d ACCEPTs, %d driver writes; want none", n, s.st.putCalls)
	}

	// Refused by today's rules: the job fails; no master yet: retried.
	bad := testJob(0)
	bad.App.MainClass = "not a class!"
	s = newFollowSetup(t, bad)
	s.c.cfg.Submit.Master = "mesos://m:5050"
	lj = launching(s, bad)
	acts = s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActQueueLaunch})
	if st := s.state(lj); st.Phase != lifecycle.Releasing || st.Outcome != sched.Failed || !strings.HasPrefix(st.Reason, "the driver command cannot be built: ") {
		t.Errorf("refused command: phase %s, outcome %s, reason %q; want releasing, FAILED, the command's error", st.Phase, st.Outcome, st.Reason)
	}
	s = newFollowSetup(t, testJob(0))
	s.c.cfg.Submit.Master = ""
	lj = launching(s, testJob(0))
	acts = s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActQueueLaunch})
	if st := s.state(lj); st.Queued || st.Phase != lifecycle.Launching || !slices.Equal(kinds(acts), []lifecycle.ActionKind{lifecycle.ActTimer}) || len(s.fw.pending) != 0 {
		t.Errorf("no master: queued %v, phase %s, actions %v; want a retry, nothing queued", st.Queued, st.Phase, kinds(acts))
	}
}

// TestRunTimesReachTheCoreAndTheStore: the LAUNCH_SENT record stored just
// before the ACCEPT carries the launch's time (driver_launches.launched_at),
// and a RUNNING report made after a restart passes the stored first
// RUNNING's time on to the core (scheduler.Core.ReportRan), not nothing
// (docs/learning.md, "How a run's times survive a restart").
func TestRunTimesReachTheCoreAndTheStore(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	named := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: DriverTaskID(testJobID, 1)}
	lj := s.awaiting(testJob(0), lifecycle.Launching, named, lifecycle.ActQueueLaunch, "S1")
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActQueueLaunch})
	before := time.Now()
	s.fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 4, 8192, "sparkpack")))
	d := s.st.drivers[testJobID]
	if d.State != LaunchSent || d.LaunchedAt.Before(before) || d.LaunchedAt.After(time.Now()) {
		t.Fatalf("stored driver %+v; want LAUNCH_SENT launched between %v and now", d, before)
	}
	if got := s.state(lj).Driver.LaunchedAt; !got.Equal(d.LaunchedAt) {
		t.Fatalf("the machine has the launch at %v, the store at %v", got, d.LaunchedAt)
	}

	// A restart finds TASK_RUNNING stored a minute ago, not yet reported.
	runningAt := time.Now().Add(-time.Minute)
	s = newFollowSetup(t, testJob(0))
	stored := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: named.TaskID, AgentID: "S1", State: "TASK_RUNNING", Started: true,
		RunningAt: runningAt, UpdatedAt: runningAt}
	lj = s.awaiting(testJob(0), lifecycle.Launching, stored, lifecycle.ActNone, "S1")
	s.c.mu.Lock()
	acts := s.c.stepLocked(lj, lifecycle.Event{Kind: lifecycle.EvStart, At: time.Now()})
	s.c.mu.Unlock()
	if len(acts) != 1 || acts[0].Kind != lifecycle.ActReport || acts[0].To != sched.Running {
		t.Fatalf("resumed: actions %v; want a RUNNING report", kinds(acts))
	}
	s.c.perform(ctx, lj, acts[0])
	if len(s.rep.runs) != 1 || !s.rep.runs[0].At.Equal(runningAt) || !s.rep.runs[0].Measured || !slices.Equal(s.rep.reports, []sched.State{sched.Running}) {
		t.Fatalf("reported %v with runs %+v; want RUNNING since %v, measured", s.rep.reports, s.rep.runs, runningAt)
	}
}

// TestGiveBackByHand: giving back drops the queued launch, kills the
// driver when one still runs (by task and agent), then releases; a failed
// kill or release is the step's error (tried again). Without a framework
// (a process that only releases) nothing is killed or cancelled.
func TestGiveBackByHand(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	s.fw.mu.Lock()
	s.fw.pending[testJobID] = &DriverLaunch{JobID: testJobID}
	s.fw.mu.Unlock()
	if err := s.c.giveBack(ctx, testJobID, "", ""); err != nil {
		t.Fatal(err)
	}
	if n := len(s.calls.of(scheduler.Call_KILL)); n != 0 || len(s.fw.pending) != 0 || !slices.Equal(s.pin.released, []string{testJobID}) {
		t.Fatalf("no driver: %d kills, %d queued, released %v; want 0, 0, the job", n, len(s.fw.pending), s.pin.released)
	}
	if err := s.c.giveBack(ctx, testJobID, "t-1", "S1"); err != nil {
		t.Fatal(err)
	}
	k := s.calls.of(scheduler.Call_KILL)
	if len(k) != 1 || k[0].Kill.TaskID.Value != "t-1" || k[0].Kill.AgentID.GetValue() != "S1" || len(s.pin.released) != 2 {
		t.Fatalf("a driver that runs: kills %+v, %d releases; want t-1 on S1, then a release", k, len(s.pin.released))
	}
	s.pin.releaseErr = errors.New("master unreachable")
	if err := s.c.giveBack(ctx, testJobID, "", ""); err == nil || !strings.HasPrefix(err.Error(), "release: ") {
		t.Fatalf("failed release: %v; want \"release: ...\"", err)
	}

	noKill := &failingMaster{}
	noKill.failing(scheduler.Call_KILL, true)
	fw, _ := frameworkOn(t, noKill, FrameworkConfig{}, nil, nil)
	pin := &recPinner{}
	c := NewCluster(ClusterConfig{Store: newMemStore(), Framework: fw, Reserver: pin, Log: s.c.log.(*logrus.Entry).Logger})
	if err := c.giveBack(ctx, testJobID, "t-1", "S1"); err == nil || !strings.HasPrefix(err.Error(), "kill driver t-1: ") || len(pin.released) != 0 {
		t.Fatalf("refused kill: %v, released %v; want \"kill driver t-1: ...\" and no release yet", err, pin.released)
	}

	bare := NewCluster(ClusterConfig{Store: newMemStore(), Reserver: pin, Log: s.c.log.(*logrus.Entry).Logger})
	if err := bare.giveBack(ctx, testJobID, "", ""); err != nil || len(pin.released) != 1 {
		t.Fatalf("without a framework: %v, released %v; want the release only", err, pin.released)
	}
}

// TestReportOutcomeByHand: the outcome is reported; when the report fails
// but the job has ended meanwhile (the store says so) there is nothing
// left to report; otherwise the failure is the step's error.
func TestReportOutcomeByHand(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	if err := s.c.reportOutcome(ctx, testJobID, sched.Finished, "done", sched.RunStart{}); err != nil || !slices.Equal(s.rep.reports, []sched.State{sched.Finished}) {
		t.Fatalf("report: %v, reported %v; want FINISHED", err, s.rep.reports)
	}
	s.rep.err = errors.New("core busy")
	err := s.c.reportOutcome(ctx, testJobID, sched.Finished, "done", sched.RunStart{})
	if err == nil || !strings.HasPrefix(err.Error(), "report FINISHED: ") {
		t.Fatalf("failed report of a running job: %v; want \"report FINISHED: ...\"", err)
	}
	ended := testJob(0)
	ended.State = sched.Killed
	s.st.jobs[testJobID] = ended
	if err := s.c.reportOutcome(ctx, testJobID, sched.Finished, "done", sched.RunStart{}); err != nil {
		t.Fatalf("failed report of a job that ended meanwhile: %v; want nil", err)
	}
	s.st.getErr = errors.New("database down")
	if err := s.c.reportOutcome(ctx, testJobID, sched.Finished, "done", sched.RunStart{}); err == nil {
		t.Fatal("failed report, job unreadable: nil; want the report's error")
	}
}

// TestFinishForgetsOnlyItsJob: a finished follower forgets its job and
// tells the reporter the cluster changed; if the job is followed by a
// newer follower meanwhile, that one is kept. Without a reporter nothing
// crashes.
func TestFinishForgetsOnlyItsJob(t *testing.T) {
	s := newFollowSetup(t, testJob(0))
	lj := s.awaiting(testJob(0), lifecycle.Releasing, sched.DriverRecord{}, lifecycle.ActNone)
	s.c.finish(lj)
	if _, ok := s.c.jobs[testJobID]; ok || s.rep.changed != 1 {
		t.Fatalf("after finish: followed %v, %d changes heard; want false, 1", ok, s.rep.changed)
	}
	newer := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActNone)
	s.c.finish(lj)
	if s.c.jobs[testJobID] != newer {
		t.Fatal("finish of an old follower forgot the newer one")
	}
	s.c.SetReporter(nil)
	s.c.finish(newer)
}

// TestStepStampsNow: an event without a time is stepped at now (a retry's
// timer counts from it); one with a time keeps it.
func TestStepStampsNow(t *testing.T) {
	s := newFollowSetup(t, testJob(0))
	lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActReserve, "S1")
	before := time.Now()
	s.c.mu.Lock()
	s.c.stepLocked(lj, lifecycle.Event{Kind: lifecycle.EvReserved, Err: errors.New("x")})
	wake := lj.st.Wake
	s.c.mu.Unlock()
	if wake.Before(before.Add(s.c.cfg.Retry)) {
		t.Fatalf("retry at %v; want Retry after now (%v)", wake, before)
	}
	at := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	lj.st.Busy = lifecycle.ActReserve
	s.c.mu.Lock()
	s.c.stepLocked(lj, lifecycle.Event{Kind: lifecycle.EvReserved, Err: errors.New("x"), At: at})
	wake = lj.st.Wake
	s.c.mu.Unlock()
	if !wake.Equal(at.Add(s.c.cfg.Retry)) {
		t.Fatalf("retry at %v; want %v", wake, at.Add(s.c.cfg.Retry))
	}
}

// TestDriverStatusOfOrphans: a running task of a job not followed is
// killed, by its agent when the status names one and without agent
// otherwise; a failed kill is DriverStatus' error (not acknowledged); a
// terminal status of such a task is only acknowledged. A status of the
// followed driver is stored (with the invalid-offers flag: a lost launch
// the master refused is no lost launch) and stepped.
func TestDriverStatusOfOrphans(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	running, finished := mesos.TASK_RUNNING, mesos.TASK_FINISHED
	if err := s.c.DriverStatus(ctx, "job-gone", mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-9"}, State: &running}); err != nil {
		t.Fatal(err)
	}
	if err := s.c.DriverStatus(ctx, "job-gone", mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-8"}, State: &finished}); err != nil {
		t.Fatal(err)
	}
	k := s.calls.of(scheduler.Call_KILL)
	if len(k) != 1 || k[0].Kill.TaskID.Value != "t-9" || k[0].Kill.AgentID != nil {
		t.Fatalf("kills %+v; want t-9 without agent only", k)
	}

	noKill := &failingMaster{}
	noKill.failing(scheduler.Call_KILL, true)
	fw, _ := frameworkOn(t, noKill, FrameworkConfig{}, nil, nil)
	c := NewCluster(ClusterConfig{Store: newMemStore(), Framework: fw, Reserver: &recPinner{}, Log: s.c.log.(*logrus.Entry).Logger})
	err := c.DriverStatus(ctx, "job-gone", mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-9"}, State: &running, AgentID: &mesos.AgentID{Value: "S1"}})
	if err == nil || !strings.Contains(err.Error(), "kill driver t-9") {
		t.Fatalf("refused kill of an orphan: %v; want the kill's error", err)
	}
	bare := NewCluster(ClusterConfig{Store: newMemStore(), Reserver: &recPinner{}, Log: s.c.log.(*logrus.Entry).Logger})
	if err := bare.DriverStatus(ctx, "job-gone", mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-9"}, State: &running}); err != nil {
		t.Fatalf("an orphan without a framework to kill it: %v", err)
	}

	// The followed driver: stored, agent and invalid-offers flag read.
	sent := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: "t-1", AgentID: "S1", State: LaunchSent}
	lj := s.awaiting(testJob(0), lifecycle.Launching, sent, lifecycle.ActNone, "S1")
	dropped := mesos.TASK_DROPPED
	reason := mesos.REASON_INVALID_OFFERS
	if err := s.c.DriverStatus(ctx, testJobID, mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-1"}, State: &dropped, Reason: &reason}); err != nil {
		t.Fatal(err)
	}
	d := s.st.drivers[testJobID]
	if !d.Ended || d.State != "TASK_DROPPED" || d.AgentID != "S1" || d.LostLaunches != 0 || s.state(lj).Driver != d {
		t.Fatalf("stored %+v (machine: %+v); want TASK_DROPPED ended on S1, no lost launch (the master refused the offer)", d, s.state(lj).Driver)
	}
	s.st.putErr = errors.New("database down")
	lj2 := s.awaiting(testJob(0), lifecycle.Launching, sent, lifecycle.ActNone, "S1")
	if err := s.c.DriverStatus(ctx, testJobID, mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-1"}, State: &running, AgentID: &mesos.AgentID{Value: "S1"}}); err == nil {
		t.Fatal("a status the store could not take: nil; want the error (left unacknowledged)")
	}
	if s.state(lj2).Driver.Started {
		t.Fatal("a status the store could not take reached the machine")
	}
}

// failOnce is a Pinner whose first Reserve fails (not a conflict).
type failOnce struct {
	recPinner
	once sync.Once
}

func (p *failOnce) Reserve(ctx context.Context, j sched.Job, plan placement.Plan) error {
	err := p.recPinner.Reserve(ctx, j, plan)
	p.once.Do(func() { err = errors.New("master unreachable") })
	return err
}

// TestFollowerWakesForItsTimer: a job whose first reservation fails is
// tried again when the machine's timer (Retry) fires, and goes on to
// LAUNCHING: the follower waits for the timer rather than only for new
// actions. The outcome does not depend on how long anything takes.
func TestFollowerWakesForItsTimer(t *testing.T) {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	fw, _ := subscribedFramework(t, nil)
	pin := &failOnce{}
	rep := &chanReporter{reports: make(chan sched.State, 16)}
	cl := NewCluster(ClusterConfig{Store: newMemStore(testJob(0)), Framework: fw, Reserver: pin, Log: log, Retry: 10 * time.Millisecond,
		Submit: sparksubmit.Options{Master: "mesos://127.0.0.1:5050"}})
	fw.sink = cl
	cl.SetReporter(rep)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); cl.Wait() }()
	cl.mu.Lock()
	cl.ctx = ctx
	cl.agents = []Agent{{ID: "S1", Hostname: "host-1", CPUs: 4, FreeCPUs: 4, FreeMemMB: 8192}}
	cl.loaded = true
	cl.mu.Unlock()
	if err := cl.Apply(ctx, testJob(0), placement.Plan{Assignments: []placement.Assignment{{AgentID: "S1", Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-rep.reports:
		if got != sched.Launching {
			t.Fatalf("reported %s, want LAUNCHING", got)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("no LAUNCHING within 60 s: the failed reservation was never tried again")
	}
	pin.mu.Lock()
	defer pin.mu.Unlock()
	if len(pin.reserved) != 2 {
		t.Fatalf("%d reservations tried, want 2 (one failed, one made)", len(pin.reserved))
	}
}

// TestPerformSmallActions: the actions without an answer do what they say
// and return nothing: a note is stored, a kick asks for a refresh, a
// launch is announced (the plan's agents) or cancelled with the framework
// (nothing without one), a timer is the follower's own; an action of an
// unknown kind is only logged.
func TestPerformSmallActions(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActNone, "S2", "S1")
	for _, a := range []lifecycle.Action{{Kind: lifecycle.ActNote, Text: "a note"}, {Kind: lifecycle.ActKick}, {Kind: lifecycle.ActExpect},
		{Kind: lifecycle.ActTimer}, {Kind: lifecycle.ActionKind(99)}} {
		if acts := s.c.perform(ctx, lj, a); len(acts) != 0 {
			t.Errorf("%s: actions %v, want none", a.Kind, kinds(acts))
		}
	}
	if !slices.Equal(s.st.notes, []string{"a note"}) || len(s.c.kickCh) != 1 {
		t.Errorf("notes %v, %d kicks; want the note, 1", s.st.notes, len(s.c.kickCh))
	}
	s.fw.mu.Lock()
	e, expected := s.fw.expected[testJobID]
	s.fw.mu.Unlock()
	if !expected || !slices.Equal(e.agents, []string{"S2", "S1"}) {
		t.Fatalf("announced %v on %v; want the plan's agents S2, S1", expected, e.agents)
	}
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActCancelLaunch})
	s.fw.mu.Lock()
	_, expected = s.fw.expected[testJobID]
	s.fw.mu.Unlock()
	if expected {
		t.Fatal("a cancelled launch is still announced")
	}
	bare := NewCluster(ClusterConfig{Store: newMemStore(), Reserver: &recPinner{}, Log: s.c.log.(*logrus.Entry).Logger})
	lj2 := &liveJob{st: lj.st, signal: make(chan struct{}, 1)}
	for _, k := range []lifecycle.ActionKind{lifecycle.ActExpect, lifecycle.ActCancelLaunch} {
		if acts := bare.perform(ctx, lj2, lifecycle.Action{Kind: k}); len(acts) != 0 {
			t.Errorf("%s without a framework: %v", k, kinds(acts))
		}
	}
}

// TestPerformKillReadCount: a kill sent waits KillWait (10 s) for the
// terminal update, a failed one is tried again after Retry; the stored
// kill and eviction requests are read into the machine (a failed read is
// tried again); a failed run is counted in the store for its task and
// decides the outcome.
func TestPerformKillReadCount(t *testing.T) {
	ctx := context.Background()
	running := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: "t-1", AgentID: "S1", State: "TASK_RUNNING", Started: true}
	for _, c := range []struct {
		name string
		fail bool
		wait time.Duration
	}{{"sent", false, lifecycle.KillWait}, {"refused", true, time.Second}} {
		m := &failingMaster{}
		m.failing(scheduler.Call_KILL, c.fail)
		fw, _ := frameworkOn(t, m, FrameworkConfig{}, nil, nil)
		s := newFollowSetup(t, testJob(0))
		s.c.cfg.Framework = fw
		lj := s.awaiting(testJob(0), lifecycle.Running, running, lifecycle.ActKillDriver, "S1")
		lj.st.Kill = true
		before := time.Now()
		acts := s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActKillDriver, Task: "t-1", Agent: "S1"})
		k := m.of(scheduler.Call_KILL)
		wake := s.state(lj).Wake
		if len(k) != 1 || k[0].Kill.TaskID.Value != "t-1" || !slices.Equal(kinds(acts), []lifecycle.ActionKind{lifecycle.ActTimer}) ||
			wake.Before(before.Add(c.wait)) || wake.After(time.Now().Add(c.wait)) {
			t.Errorf("%s: kills %+v, actions %v, wake in %v; want t-1, a timer in %v", c.name, k, kinds(acts), wake.Sub(before), c.wait)
		}
	}

	ended := running
	ended.State, ended.Ended = "TASK_FAILED", true
	job := testJob(1)
	job.KillRequested, job.PreemptRequested = true, "a deadline job"
	s := newFollowSetup(t, job)
	lj := s.awaiting(testJob(1), lifecycle.Running, ended, lifecycle.ActReadJob, "S1")
	s.st.getErr = errors.New("database down")
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActReadJob})
	if st := s.state(lj); st.JobChecked || st.Kill {
		t.Fatalf("failed read: checked %v, kill %v; want neither", st.JobChecked, st.Kill)
	}
	s.st.getErr = nil
	lj.st.Busy = lifecycle.ActReadJob
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActReadJob})
	if st := s.state(lj); !st.JobChecked || !st.Kill || st.Preempt != "a deadline job" {
		t.Fatalf("read: checked %v, kill %v, preempt %q; want true, true, \"a deadline job\"", st.JobChecked, st.Kill, st.Preempt)
	}

	s = newFollowSetup(t, testJob(1))
	lj = s.awaiting(testJob(1), lifecycle.Running, ended, lifecycle.ActCountRun, "S1")
	lj.st.JobChecked = true
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActCountRun, Task: "t-1"})
	// 1 failed run of 1 retry allowed: back to the queue.
	if st := s.state(lj); s.st.counted[testJobID] != "t-1" || s.st.jobs[testJobID].FailedRuns != 1 || st.Phase != lifecycle.Releasing || st.Outcome != sched.Queued {
		t.Fatalf("counted %q (%d runs), phase %s, outcome %s; want t-1 (1), releasing, QUEUED", s.st.counted[testJobID], s.st.jobs[testJobID].FailedRuns, st.Phase, st.Outcome)
	}
}

// messages are the log entries at level lv or more severe, "message action" each.
func messages(h *logtest.Hook, lv logrus.Level) []string {
	var out []string
	for _, e := range h.AllEntries() {
		if e.Level <= lv {
			m := e.Message
			if a, ok := e.Data["action"]; ok {
				m += " " + a.(string)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestStepFailuresLogged: a step that failed is logged as retried (with
// its action), unless it was a conflict (the job goes back to the queue,
// no retry) or the context ended (the process stops); a step that worked
// logs no failure. A kill requested and a relaunch of a lost driver are
// logged at info.
func TestStepFailuresLogged(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		err   error
		ended bool
		want  []string
	}{
		{"made", nil, false, nil},
		{"failed", errors.New("master unreachable"), false, []string{"step failed; retrying reserve"}},
		{"conflict", ErrReserveConflict, false, nil},
		{"failed, context ended", errors.New("master unreachable"), true, nil},
	} {
		s := newFollowSetup(t, testJob(0))
		s.pin.reserveErr = c.err
		lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActReserve, "S1")
		cctx, cancel := context.WithCancel(ctx)
		if c.ended {
			cancel()
		}
		s.c.perform(cctx, lj, lifecycle.Action{Kind: lifecycle.ActReserve})
		cancel()
		if got := messages(s.hook, logrus.WarnLevel); !slices.Equal(got, c.want) {
			t.Errorf("%s: warnings %q, want %q", c.name, got, c.want)
		}
	}

	// A kill requested: logged; refused: a retry warning instead.
	for _, fail := range []bool{false, true} {
		m := &failingMaster{}
		m.failing(scheduler.Call_KILL, fail)
		fw, _ := frameworkOn(t, m, FrameworkConfig{}, nil, nil)
		s := newFollowSetup(t, testJob(0))
		s.c.cfg.Framework = fw
		running := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: "t-1", AgentID: "S1", State: "TASK_RUNNING", Started: true}
		lj := s.awaiting(testJob(0), lifecycle.Running, running, lifecycle.ActKillDriver, "S1")
		lj.st.Kill = true
		s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActKillDriver, Task: "t-1", Agent: "S1"})
		want := []string{"driver kill requested"}
		if fail {
			want = []string{"step failed; retrying kill-driver"}
		}
		if got := messages(s.hook, logrus.InfoLevel); !slices.Equal(got, want) {
			t.Errorf("kill refused %v: log %q, want %q", fail, got, want)
		}
	}

	// A relaunch: the new task named is logged (not a first naming).
	for _, relaunch := range []bool{false, true} {
		s := newFollowSetup(t, testJob(0))
		lost := sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: "t-1", State: "TASK_DROPPED", Ended: true, LostLaunches: 1}
		lj := s.awaiting(testJob(0), lifecycle.Launching, lost, lifecycle.ActNameDriver, "S1")
		s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActNameDriver, Attempt: 1, Lost: 1, Relaunch: relaunch})
		got := messages(s.hook, logrus.InfoLevel)
		if logged := len(got) == 1 && strings.HasPrefix(got[0], "Mesos lost the driver launch"); logged != relaunch || len(got) > 1 {
			t.Errorf("relaunch %v: log %q", relaunch, got)
		}
	}
	s := newFollowSetup(t, testJob(0))
	s.st.driverErr = errors.New("database down")
	lj := s.awaiting(testJob(0), lifecycle.Launching, sched.DriverRecord{}, lifecycle.ActNameDriver, "S1")
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActNameDriver, Attempt: 1, Relaunch: true})
	if got := messages(s.hook, logrus.InfoLevel); !slices.Equal(got, []string{"step failed; retrying name-driver"}) {
		t.Errorf("a relaunch not named: log %q; want only the retry warning", got)
	}
}

// TestRunningStatusOfAnOlderLaunch: a followed job's older driver task
// that reports RUNNING (a launch the job moved on from) is killed; a
// RUNNING of the job's current task whose ACCEPT was never sent (Mesos
// answers a reconciliation of it) is only acknowledged, not killed.
func TestRunningStatusOfAnOlderLaunch(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	running := mesos.TASK_RUNNING
	sent := sched.DriverRecord{JobID: testJobID, Attempt: 2, TaskID: "t-2", AgentID: "S1", State: LaunchSent}
	s.awaiting(testJob(0), lifecycle.Launching, sent, lifecycle.ActNone, "S1")
	if err := s.c.DriverStatus(ctx, testJobID, mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-1"}, State: &running, AgentID: &mesos.AgentID{Value: "S1"}}); err != nil {
		t.Fatal(err)
	}
	unsent := sched.DriverRecord{JobID: testJobID, Attempt: 3, TaskID: "t-3"}
	s.awaiting(testJob(0), lifecycle.Launching, unsent, lifecycle.ActNone, "S1")
	if err := s.c.DriverStatus(ctx, testJobID, mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-3"}, State: &running, AgentID: &mesos.AgentID{Value: "S1"}}); err != nil {
		t.Fatal(err)
	}
	var killed []string
	for _, c := range s.calls.of(scheduler.Call_KILL) {
		killed = append(killed, c.Kill.TaskID.Value)
	}
	if !slices.Equal(killed, []string{"t-1"}) {
		t.Fatalf("killed %v; want the older launch t-1 only", killed)
	}
}

// TestAStepFailingOverAndOverIsLoggedOnce: a job's step that fails at
// every retry (the master away: about one a second per job) is logged the
// first time, not at every try, and its first success after the failures
// is logged. It used to be a warning per try per job: 47 a job in 45 s
// with the master stopped.
func TestAStepFailingOverAndOverIsLoggedOnce(t *testing.T) {
	ctx := context.Background()
	s := newFollowSetup(t, testJob(0))
	s.pin.reserveErr = errors.New("master unreachable")
	lj := s.awaiting(testJob(0), lifecycle.Reserving, sched.DriverRecord{}, lifecycle.ActReserve, "S1")
	for i := 0; i < 50; i++ {
		s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActReserve})
	}
	if got := messages(s.hook, logrus.WarnLevel); !slices.Equal(got, []string{"step failed; retrying reserve"}) {
		t.Fatalf("50 failed tries logged %d warnings %q; want one", len(got), got)
	}
	s.pin.reserveErr = nil
	s.c.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActReserve})
	var recovered []*logrus.Entry
	for _, e := range s.hook.AllEntries() {
		if e.Message == "step succeeded after failing" {
			recovered = append(recovered, e)
		}
	}
	if len(recovered) != 1 || recovered[0].Data["failures"] != 50 {
		t.Fatalf("the success after 50 failures: %d lines %v; want one counting 50", len(recovered), recovered)
	}
}
