package offers

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants of clusteragents.go that mutation testing
// found alive (docs/testing.md). A fake master answers GET_AGENTS with the
// agents the test sets; what a refresh must notice is worked out by hand.

// agentsList is a master whose GET_AGENTS answers the agents set last.
type agentsList struct {
	mu        sync.Mutex
	agents    []master.Response_GetAgents_Agent
	recovered []mesos.AgentInfo // GET_AGENTS' recovered_agents
	calls     atomic.Int32
}

func (l *agentsList) set(agents ...master.Response_GetAgents_Agent) {
	l.mu.Lock()
	l.agents = agents
	l.mu.Unlock()
}

func (l *agentsList) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var call master.Call
	if err := call.Unmarshal(body); err != nil || call.GetType() != master.Call_GET_AGENTS {
		http.Error(w, "unexpected call", http.StatusBadRequest)
		return
	}
	l.calls.Add(1)
	l.mu.Lock()
	resp := master.Response{Type: master.Response_GET_AGENTS, GetAgents: &master.Response_GetAgents{Agents: l.agents, RecoveredAgents: l.recovered}}
	l.mu.Unlock()
	b, _ := resp.Marshal()
	w.Header().Set("Content-Type", protobufType)
	_, _ = w.Write(b)
}

func agentsOperator(t *testing.T, l *agentsList) *Operator {
	t.Helper()
	srv := httptest.NewServer(l)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return NewOperator(ep)
}

// changeCounter counts ClusterChanged.
type changeCounter struct{ n atomic.Int32 }

func (r *changeCounter) Report(context.Context, string, scheduler.State, string) error { return nil }
func (r *changeCounter) ReportRan(context.Context, string, scheduler.State, string, scheduler.RunStart) error {
	return nil
}
func (r *changeCounter) ClusterChanged() { r.n.Add(1) }

// TestSameCapacity: the refresh tells the core only when an agent came or
// went or its free cpus or memory (by more than 1e-9) or its cpus changed.
func TestSameCapacity(t *testing.T) {
	a := Agent{ID: "A", CPUs: 4, FreeCPUs: 3, FreeMemMB: 4096, MemMB: 8192}
	with := func(f func(*Agent)) []Agent {
		b := a
		f(&b)
		return []Agent{b}
	}
	for _, c := range []struct {
		name string
		b    []Agent
		same bool
	}{
		{"the same", with(func(*Agent) {}), true},
		{"free cpus within 1e-9", with(func(b *Agent) { b.FreeCPUs = 3 + 1e-10 }), true},
		{"free memory within 1e-9", with(func(b *Agent) { b.FreeMemMB = 4096 - 1e-10 }), true},
		{"another id", with(func(b *Agent) { b.ID = "B" }), false},
		{"one more free cpu", with(func(b *Agent) { b.FreeCPUs = 4 }), false},
		{"one less free cpu", with(func(b *Agent) { b.FreeCPUs = 2 }), false},
		{"free memory up", with(func(b *Agent) { b.FreeMemMB = 5000 }), false},
		{"free memory down", with(func(b *Agent) { b.FreeMemMB = 1 }), false},
		{"more cpus", with(func(b *Agent) { b.CPUs = 8 }), false},
		{"one agent more", append(with(func(*Agent) {}), a), false},
		{"no agent", nil, false},
	} {
		if got := sameCapacity([]Agent{a}, c.b); got != c.same {
			t.Errorf("%s: sameCapacity %v, want %v", c.name, got, c.same)
		}
	}
	// An exact tie at the tolerance is the same: |0 - 1e-9| is 1e-9, not more.
	z := []Agent{{ID: "Z"}}
	for _, b := range [][]Agent{{{ID: "Z", FreeCPUs: 1e-9}}, {{ID: "Z", FreeMemMB: 1e-9}}} {
		if !sameCapacity(z, b) {
			t.Errorf("%+v differs from nothing free by exactly 1e-9: want the same", b)
		}
	}
	if !sameCapacity(nil, nil) {
		t.Error("two empty lists differ")
	}
}

// TestRefreshNoticesChangesAndLostAgents: a refresh tells the core when
// the cluster changed (and only then), counts the refreshes an agent has
// been missing, remembers agents seen before as gone, and tells the
// launching and running jobs whose agents went missing: an agent of
// executors only is recorded, the driver's agent stops the job; agents
// never listed (being powered on), jobs in other phases, ended drivers
// and jobs already stopped by a loss hear nothing.
func TestRefreshNoticesChangesAndLostAgents(t *testing.T) {
	ctx := context.Background()
	l := &agentsList{}
	A, B, C, D := getAgent("A", 4, 8192), getAgent("B", 4, 8192), getAgent("C", 8, 16384), getAgent("D", 2, 4096)
	l.set(A, B, C, D)
	rep := &changeCounter{}
	c := NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: newMemStore(), Log: quietLog()})
	c.SetReporter(rep)
	refresh := func() {
		t.Helper()
		if err := c.refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	expectChanges := func(n int32, why string) {
		t.Helper()
		if got := rep.n.Load(); got != n {
			t.Fatalf("%s: ClusterChanged %d times, want %d", why, got, n)
		}
	}
	refresh()
	expectChanges(1, "first refresh")
	if len(c.agents) != 4 || !c.loaded {
		t.Fatalf("after the first refresh: %d agents, loaded %v", len(c.agents), c.loaded)
	}
	refresh()
	expectChanges(1, "nothing changed")
	l.set(getAgent("A", 4, 8192, scalarRes("cpus", 1, "other")), B, C, D)
	refresh()
	expectChanges(2, "A's free cpus changed")
	l.set(getAgent("A", 4, 8192, scalarRes("cpus", 1, "other")), B, C, D)
	refresh()
	expectChanges(2, "nothing changed again")

	// Jobs: each awaits an answer (Busy), so an event is only recorded.
	hold := func(id string, ph lifecycle.Phase, agents []string, drv scheduler.DriverRecord) *liveJob {
		j := testJob(0)
		j.ID = id
		var plan placement.Plan
		for _, a := range agents {
			plan.Assignments = append(plan.Assignments, placement.Assignment{AgentID: a, Executors: 1})
		}
		lj := &liveJob{signal: make(chan struct{}, 1), st: lifecycle.New(lifecycle.Config{}, j, plan, ph, drv, time.Now())}
		lj.st.Busy = lifecycle.ActKillDriver
		c.mu.Lock()
		c.jobs[id] = lj
		c.mu.Unlock()
		return lj
	}
	drvOn := func(agent string) scheduler.DriverRecord {
		return scheduler.DriverRecord{TaskID: "t-" + agent, AgentID: agent, State: "TASK_RUNNING", Started: true}
	}
	// Executors on A and on E (not registered yet), the driver on C.
	run := hold("run", lifecycle.Running, []string{"A", "E"}, drvOn("C"))
	// The driver on D, not in the plan.
	drvD := hold("drv-d", lifecycle.Running, []string{"B"}, drvOn("D"))
	// Launching, its driver not sent: an agent of the plan lost stops it.
	launch := hold("launch", lifecycle.Launching, []string{"A"}, scheduler.DriverRecord{})
	// Other phases.
	reserving := hold("reserving", lifecycle.Reserving, []string{"A"}, scheduler.DriverRecord{})
	releasing := hold("releasing", lifecycle.Releasing, []string{"A"}, scheduler.DriverRecord{})
	// An ended driver on D, executors on B.
	ended := hold("ended", lifecycle.Running, []string{"B"}, scheduler.DriverRecord{TaskID: "t-x", AgentID: "D", State: "TASK_FINISHED", Started: true, Ended: true})
	// Running without a plan (resumed without one), its driver on B.
	noPlan := hold("no-plan", lifecycle.Running, nil, drvOn("B"))
	// Already stopped by the loss of B.
	stopped := hold("stopped", lifecycle.Running, []string{"A"}, drvOn("B"))
	stopped.st.Lost = "B"

	// A and D go.
	v := c.Version()
	l.set(B, C)
	refresh()
	expectChanges(3, "A and D went")
	c.mu.Lock()
	if c.missing["A"] != 1 || c.missing["D"] != 1 || len(c.missing) != 2 {
		t.Errorf("missing %v, want A and D once", c.missing)
	}
	if _, ok := c.gone["A"]; !ok || len(c.gone) != 2 {
		t.Errorf("gone %v, want A and D", c.gone)
	}
	// One change for the refresh, one per job told: run (A), launch (A),
	// drv-d (D); not reserving, releasing, ended (D ended), stopped.
	if d := c.version - v; d != 4 {
		t.Errorf("version moved by %d, want 1 for the refresh and 3 for the jobs told", d)
	}
	c.mu.Unlock()
	if !slices.Equal(run.st.LostExecutors, []string{"A"}) || run.st.Lost != "" {
		t.Errorf("run: lost executors %v, lost %q; want A recorded, the job going on", run.st.LostExecutors, run.st.Lost)
	}
	if drvD.st.Lost != "D" || drvD.st.LostName != "host-D" {
		t.Errorf("drv-d: lost %q (%q), want its driver's agent D (host-D)", drvD.st.Lost, drvD.st.LostName)
	}
	if launch.st.Lost != "A" {
		t.Errorf("launch: lost %q, want A", launch.st.Lost)
	}
	for _, lj := range []*liveJob{reserving, releasing, ended, noPlan} {
		if lj.st.Lost != "" || len(lj.st.LostExecutors) != 0 {
			t.Errorf("%s: lost %q, executors %v; want nothing", lj.st.Job.ID, lj.st.Lost, lj.st.LostExecutors)
		}
	}
	if stopped.st.Lost != "B" || len(stopped.st.LostExecutors) != 0 {
		t.Errorf("stopped: lost %q, executors %v; want B only", stopped.st.Lost, stopped.st.LostExecutors)
	}

	// Still gone: an agent is counted missing when a refresh no longer
	// lists what the one before listed, not again; nobody is told twice.
	v = c.Version()
	l.set(B, C)
	refresh()
	expectChanges(3, "nothing changed while A and D stay away")
	c.mu.Lock()
	if c.missing["A"] != 1 || c.missing["D"] != 1 || len(c.missing) != 2 {
		t.Errorf("missing %v, want A and D once", c.missing)
	}
	if d := c.version - v; d != 1 {
		t.Errorf("version moved by %d, want 1 (the refresh; no job told again)", d)
	}
	c.mu.Unlock()

	// The driver's agent C goes: run stops; A back: no longer missing nor gone.
	l.set(A, B)
	refresh()
	expectChanges(4, "A came back, C went")
	if run.st.Lost != "C" || run.st.LostName != "host-C" {
		t.Errorf("run: lost %q (%q), want its driver's agent C", run.st.Lost, run.st.LostName)
	}
	c.mu.Lock()
	if _, ok := c.missing["A"]; ok || c.missing["C"] != 1 || c.missing["D"] != 1 || len(c.missing) != 2 {
		t.Errorf("missing %v, want C and D once, not A", c.missing)
	}
	if _, ok := c.gone["A"]; ok || len(c.gone) != 2 {
		t.Errorf("gone %v, want C and D", c.gone)
	}
	c.mu.Unlock()
}

// sweepPinner is a Pinner whose labelled reservations belong to the
// given jobs; it records what it releases.
type sweepPinner struct {
	orderPinner
	labelled   []string
	released   []string
	orphansErr error
}

func (p *sweepPinner) Orphans(_ context.Context, keep func(string) bool) ([]string, error) {
	if p.orphansErr != nil {
		return nil, p.orphansErr
	}
	var out []string
	for _, id := range p.labelled {
		if !keep(id) {
			out = append(out, id)
		}
	}
	return out, nil
}
func (p *sweepPinner) Release(_ context.Context, id string) error {
	p.released = append(p.released, id)
	return nil
}

// unfinishedStore lists unfinished jobs.
type unfinishedStore struct {
	memStore
	ids []string
	err error
}

func (s *unfinishedStore) Unfinished(context.Context) ([]scheduler.Job, error) {
	var out []scheduler.Job
	for _, id := range s.ids {
		out = append(out, scheduler.Job{Spec: scheduler.Spec{ID: id}})
	}
	return out, s.err
}

// TestSweepReleasesOrphans: reservations of jobs neither followed nor
// unfinished in the store are released, in the order of their ids, and a
// refresh is asked for; with no orphan nothing is released or asked.
func TestSweepReleasesOrphans(t *testing.T) {
	ctx := context.Background()
	p := &sweepPinner{labelled: []string{"zeta", "stored", "followed", "alpha"}}
	st := &unfinishedStore{memStore: *newMemStore(), ids: []string{"stored"}}
	c := NewCluster(ClusterConfig{Store: st, Reserver: p, Log: quietLog()})
	heldJob(c, "followed", lifecycle.Running)
	if err := c.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.released, []string{"alpha", "zeta"}) {
		t.Errorf("released %v, want alpha then zeta", p.released)
	}
	if len(c.kickCh) != 1 {
		t.Fatal("orphans released without asking for a refresh")
	}
	<-c.kickCh
	p.labelled, p.released = []string{"stored", "followed"}, nil
	if err := c.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if len(p.released) != 0 || len(c.kickCh) != 0 {
		t.Errorf("no orphan: released %v, refresh asked %v", p.released, len(c.kickCh) == 1)
	}
	boom := errors.New("boom")
	st.err = boom
	if err := c.sweep(ctx); !errors.Is(err, boom) {
		t.Errorf("the store fails: %v", err)
	}
	st.err, p.orphansErr = nil, boom
	if err := c.sweep(ctx); !errors.Is(err, boom) {
		t.Errorf("Orphans fails: %v", err)
	}
}
