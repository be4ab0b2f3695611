package power

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sirupsen/logrus"
)

// memStore keeps records in memory; failNext makes the next put fail.
type memStore struct {
	mu       sync.Mutex
	recs     map[string]Record
	failNext bool
}

func newMemStore() *memStore { return &memStore{recs: map[string]Record{}} }

func (s *memStore) PowerRecords(context.Context) ([]Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	for _, r := range s.recs {
		out = append(out, r)
	}
	return out, nil
}

func (s *memStore) PutPowerRecord(_ context.Context, r Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failNext {
		s.failNext = false
		return errors.New("store down")
	}
	s.recs[r.AgentID] = r
	return nil
}

func (s *memStore) DeletePowerRecord(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, id)
	return nil
}

func (s *memStore) state(id string) State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.recs[id].State
}

// fakeMesos records DRAIN_AGENT and REACTIVATE_AGENT calls.
type fakeMesos struct {
	mu    sync.Mutex
	calls []string
	fail  error
}

func (f *fakeMesos) DeactivateAgent(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "drain "+id)
	return f.fail
}

func (f *fakeMesos) ReactivateAgent(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "reactivate "+id)
	return f.fail
}

func (f *fakeMesos) took() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// fakeProvider records calls; failures fail that many calls first.
type fakeProvider struct {
	mu       sync.Mutex
	calls    []string
	failures int
}

func (p *fakeProvider) Name() string { return "fake" }
func (p *fakeProvider) PowerOff(_ context.Context, t Target) error {
	return p.call("off " + t.AgentID)
}
func (p *fakeProvider) PowerOn(_ context.Context, t Target) error { return p.call("on " + t.AgentID) }
func (p *fakeProvider) call(c string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
	if p.failures > 0 {
		p.failures--
		return errors.New("cloud API unavailable")
	}
	return nil
}
func (p *fakeProvider) took() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.calls
	p.calls = nil
	return out
}

type rig struct {
	t     *testing.T
	now   time.Time
	store *memStore
	mesos *fakeMesos
	prov  *fakeProvider
	m     *Manager
	cfg   Config
}

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

func newRig(t *testing.T, cfg Config) *rig {
	r := &rig{t: t, now: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), store: newMemStore(), mesos: &fakeMesos{}, prov: &fakeProvider{}}
	if cfg.OffAfter == 0 {
		cfg.OffAfter = time.Minute
	}
	cfg.Provider, cfg.Log = r.prov, quiet()
	cfg.Now = func() time.Time { return r.now }
	r.cfg = cfg
	r.restart()
	return r
}

// restart builds a new manager from the persisted records, as a new
// sparkpack process would.
func (r *rig) restart() {
	m, err := NewManager(r.cfg, r.store, r.mesos)
	if err != nil {
		r.t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		r.t.Fatal(err)
	}
	r.m = m
}

// newLoggedRig is a rig whose manager logs to a hook the test reads.
func newLoggedRig(t *testing.T, cfg Config) (*rig, *logtest.Hook) {
	r := newRig(t, cfg)
	log, hook := logtest.NewNullLogger()
	r.cfg.Log = log
	r.restart()
	return r, hook
}

// offAfterIdle has a idle past the default minute, drained, and powered
// off.
func (r *rig) offAfterIdle(a Agent) {
	r.tick(nil, a)
	r.now = r.now.Add(61 * time.Second)
	r.tick(nil, a)
	r.tick(nil, drained(a))
}

func (r *rig) tick(wanted func(Agent) bool, agents ...Agent) {
	r.t.Helper()
	_ = r.m.Tick(context.Background(), agents, wanted)
}

func idle(id string, cpus float64) Agent {
	return Agent{ID: id, Hostname: "host-" + id, CPUs: cpus, MemMB: 16384, PricePerHour: 0.24, Listed: true, Active: true,
		Attributes: map[string]string{"location": "cloud"}, RegisteredAt: registered}
}

// registered is the master's registration time of the agents in the tests.
var registered = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

func drained(a Agent) Agent { a.Deactivated, a.Active = true, false; return a }

// rebooted is an agent that registered again (after a power-on).
func rebooted(a Agent) Agent { a.RegisteredAt = a.RegisteredAt.Add(2 * time.Hour); return a }
func busy(a Agent) Agent     { a.Busy = true; return a }

// TestIdleAgentGoesOffAfterTimeout: drain -> drained -> power off -> off.
func TestIdleAgentGoesOffAfterTimeout(t *testing.T) {
	r := newRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a) // idle timer starts
	r.now = r.now.Add(59 * time.Second)
	r.tick(nil, a)
	if got := r.mesos.took(); len(got) != 0 || r.m.StateOf("a1") != StateOn {
		t.Fatalf("before the timeout: calls %v, state %s", got, r.m.StateOf("a1"))
	}
	r.now = r.now.Add(2 * time.Second)
	r.tick(nil, a)
	if got := r.mesos.took(); !slices.Equal(got, []string{"drain a1"}) || r.store.state("a1") != StateDraining {
		t.Fatalf("after the timeout: calls %v, stored %s", got, r.store.state("a1"))
	}
	if !r.m.Unavailable("a1") {
		t.Fatal("a draining agent is available to plans")
	}
	r.tick(nil, drained(a))
	if got := r.prov.took(); !slices.Equal(got, []string{"off a1"}) || r.store.state("a1") != StateOff {
		t.Fatalf("drained: provider %v, stored %s", got, r.store.state("a1"))
	}
	// Gone from Mesos while off: nothing more happens.
	r.tick(nil)
	if r.mesos.took() != nil || r.prov.took() != nil {
		t.Fatal("calls while off")
	}
	if sb := r.m.StandbyAgents(); len(sb) != 1 || sb[0].ID != "a1" || sb[0].FreeCPUs != 4 || sb[0].PriceMicroUSDPerHour != 240000 {
		t.Fatalf("standby %+v", sb)
	}
}

// TestHysteresis: work, the warm minimum, waiting jobs, the selector and
// an operator's drain each keep an agent on.
func TestHysteresis(t *testing.T) {
	sel, err := ParseSelector("location=cloud")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		cfg    Config
		agents []Agent
		wanted func(Agent) bool
		off    []string // agents that must be drained
	}{
		{"busy agents stay on", Config{}, []Agent{busy(idle("a1", 4)), idle("a2", 4)}, nil, []string{"a2"}},
		{"warm minimum keeps the last cpus on", Config{MinWarmCPUs: 6}, []Agent{idle("a1", 4), idle("a2", 4), idle("a3", 4)}, nil, []string{"a1"}},
		{"waiting jobs that could use it", Config{}, []Agent{idle("a1", 4), idle("a2", 12)}, func(a Agent) bool { return a.CPUs >= 8 }, []string{"a1"}},
		{"selector", Config{Selector: sel}, []Agent{idle("a1", 4), func() Agent { a := idle("a2", 4); a.Attributes = map[string]string{"location": "local"}; return a }()}, nil, []string{"a1"}},
		{"deactivated by an operator", Config{}, []Agent{drained(idle("a1", 4)), idle("a2", 4)}, nil, []string{"a2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, c.cfg)
			r.tick(c.wanted, c.agents...)
			r.now = r.now.Add(2 * time.Minute)
			r.tick(c.wanted, c.agents...)
			var got []string
			for _, call := range r.mesos.took() {
				got = append(got, strings.TrimPrefix(call, "drain "))
			}
			if !slices.Equal(got, c.off) {
				t.Fatalf("drained %v, want %v", got, c.off)
			}
		})
	}
}

// TestBusyResetsTheIdleTimer: an agent that works in between starts its
// idle time again.
func TestBusyResetsTheIdleTimer(t *testing.T) {
	r := newRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(50 * time.Second)
	r.tick(nil, busy(a))
	r.now = r.now.Add(50 * time.Second)
	r.tick(nil, a)
	r.now = r.now.Add(50 * time.Second)
	r.tick(nil, a)
	if r.mesos.took() != nil {
		t.Fatal("drained before a full idle minute")
	}
	r.now = r.now.Add(11 * time.Second)
	r.tick(nil, a)
	if got := r.mesos.took(); !slices.Equal(got, []string{"drain a1"}) {
		t.Fatalf("calls %v", got)
	}
}

// TestWorkBeforePowerOffKeepsItOn: an agent that got work while draining,
// or right before the power-off, is reactivated and never powered off.
func TestWorkBeforePowerOffKeepsItOn(t *testing.T) {
	r := newRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a)
	r.mesos.took()
	r.tick(nil, busy(drained(a)))
	if got := r.mesos.took(); !slices.Equal(got, []string{"reactivate a1"}) || r.store.state("a1") != StateOn || r.prov.took() != nil {
		t.Fatalf("work while draining: calls %v, state %s", got, r.store.state("a1"))
	}
	// In powering-off (e.g. a crash right after recording it): work seen.
	r.store.recs["a1"] = Record{AgentID: "a1", State: StatePoweringOff, Since: r.now}
	r.restart()
	r.tick(nil, busy(drained(a)))
	if r.prov.took() != nil || r.store.state("a1") != StateOn {
		t.Fatalf("powered off an agent that holds work (state %s)", r.store.state("a1"))
	}
}

// TestProviderFailures: a failing power-off is retried; after MaxFailures
// the agent is reactivated and counts as on — never assumed off.
func TestProviderFailures(t *testing.T) {
	r := newRig(t, Config{MaxFailures: 3})
	r.prov.failures = 10
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a)
	for i := 0; i < 2; i++ {
		r.tick(nil, drained(a))
		if r.store.state("a1") != StatePoweringOff {
			t.Fatalf("after failure %d: %s", i+1, r.store.state("a1"))
		}
	}
	r.mesos.took()
	r.tick(nil, drained(a))
	if st := r.store.state("a1"); st != StateOn || !slices.Equal(r.mesos.took(), []string{"reactivate a1"}) {
		t.Fatalf("after %d failures: %s", 3, st)
	}
	if len(r.prov.took()) != 3 {
		t.Fatal("provider not called 3 times")
	}
	if rec := r.m.Records()[0]; !strings.Contains(rec.LastError, "cloud API unavailable") {
		t.Fatalf("last error %q", rec.LastError)
	}
}

// TestPowerOnAndBootTimeout: a plan powers an off agent on; it registers
// (still drained) and is reactivated; one that never comes back is given
// up after the timeout and avoided.
func TestPowerOnAndBootTimeout(t *testing.T) {
	r := newRig(t, Config{PowerOnTimeout: 5 * time.Minute, AvoidFor: 30 * time.Minute})
	for _, id := range []string{"a1", "a2"} {
		r.store.recs[id] = Record{AgentID: id, Hostname: "host-" + id, CPUs: 4, MemMB: 16384, State: StateOff, Since: r.now, RegisteredAt: registered}
	}
	r.restart()
	ctx := context.Background()
	for _, id := range []string{"a1", "a2"} {
		if err := r.m.PowerOn(ctx, id); err != nil {
			t.Fatal(err)
		}
		if r.store.state(id) != StateBooting {
			t.Fatalf("%s not booting", id)
		}
	}
	select {
	case <-r.m.Kicked():
	default:
		t.Fatal("PowerOn did not kick the loop")
	}
	r.tick(nil)
	if got := r.prov.took(); !slices.Equal(got, []string{"on a1", "on a2"}) {
		t.Fatalf("provider %v", got)
	}
	r.tick(nil) // requested: not called again
	if r.prov.took() != nil {
		t.Fatal("power-on requested twice")
	}
	r.now = r.now.Add(time.Minute)
	r.tick(nil, drained(idle("a1", 4))) // still listed from before: not back
	if r.mesos.took() != nil || r.store.state("a1") != StateBooting {
		t.Fatalf("a1 counted as back before it registered again: %s", r.store.state("a1"))
	}
	r.tick(nil, rebooted(drained(idle("a1", 4))))
	if got := r.mesos.took(); !slices.Equal(got, []string{"reactivate a1"}) || r.store.state("a1") != StateOn {
		t.Fatalf("a1 back: %v %s", got, r.store.state("a1"))
	}
	// a1 came back with a fresh idle timer: not powered off at once.
	r.now = r.now.Add(50 * time.Second)
	r.tick(nil, rebooted(idle("a1", 4)))
	if r.store.state("a1") != StateOn || r.mesos.took() != nil {
		t.Fatal("a1 drained right after it booted")
	}
	r.now = r.now.Add(5 * time.Minute)
	r.tick(nil, busy(rebooted(idle("a1", 4))))
	if r.store.state("a2") != StateOff || !r.m.Failed("a2") {
		t.Fatalf("a2 after the timeout: %s", r.store.state("a2"))
	}
	// Avoided for a while: still counted (its capacity), but with no room
	// a plan may take.
	if sb := r.m.StandbyAgents(); len(sb) != 1 || sb[0].ID != "a2" || sb[0].FreeCPUs != 0 {
		t.Fatalf("standby right after a failed boot: %+v", sb)
	}
	r.now = r.now.Add(31 * time.Minute)
	if sb := r.m.StandbyAgents(); len(sb) != 1 || sb[0].ID != "a2" || sb[0].FreeCPUs != 4 {
		t.Fatalf("standby after the avoid time: %+v", sb)
	}
}

// TestCrashAtEachStep: a new manager on the persisted records finishes
// whatever step the old one was at.
func TestCrashAtEachStep(t *testing.T) {
	a := idle("a1", 4)
	for _, c := range []struct {
		name      string
		rec       Record
		agent     *Agent
		wantMesos []string
		wantProv  []string
		want      State
	}{
		{"draining, DRAIN_AGENT maybe not sent", Record{State: StateDraining}, &a, []string{"drain a1"}, nil, StateDraining},
		{"draining, drained meanwhile", Record{State: StateDraining}, ptr(drained(a)), nil, []string{"off a1"}, StateOff},
		{"draining, work arrived", Record{State: StateDraining}, ptr(busy(drained(a))), []string{"reactivate a1"}, nil, StateOn},
		{"powering off, provider maybe not called", Record{State: StatePoweringOff}, ptr(drained(a)), nil, []string{"off a1"}, StateOff},
		{"powering off, the machine went already", Record{State: StatePoweringOff}, nil, nil, []string{"off a1"}, StateOff},
		{"booting, provider maybe not called", Record{State: StateBooting}, nil, nil, []string{"on a1"}, StateBooting},
		{"booting, registered meanwhile", Record{State: StateBooting, Requested: true}, ptr(rebooted(drained(a))), []string{"reactivate a1"}, nil, StateOn},
		{"booting, registered after it was unreachable (not deactivated any more)", Record{State: StateBooting, Requested: true}, ptr(rebooted(a)), nil, nil, StateOn},
		{"off, still listed after the power-off", Record{State: StateOff}, ptr(drained(a)), nil, nil, StateOff},
		{"off, someone powered it on", Record{State: StateOff}, ptr(rebooted(drained(a))), []string{"reactivate a1"}, nil, StateOn},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Config{})
			rec := c.rec
			rec.AgentID, rec.Hostname, rec.CPUs, rec.Since, rec.RegisteredAt = "a1", "host-a1", 4, r.now, registered
			r.store.recs["a1"] = rec
			r.restart()
			var agents []Agent
			if c.agent != nil {
				agents = append(agents, *c.agent)
			}
			r.tick(nil, agents...)
			if got := r.mesos.took(); !slices.Equal(got, c.wantMesos) {
				t.Errorf("Mesos calls %v, want %v", got, c.wantMesos)
			}
			if got := r.prov.took(); !slices.Equal(got, c.wantProv) {
				t.Errorf("provider calls %v, want %v", got, c.wantProv)
			}
			if st := r.store.state("a1"); st != c.want {
				t.Errorf("state %s, want %s", st, c.want)
			}
		})
	}
}

func ptr(a Agent) *Agent { return &a }

// TestNoStepWithoutRecord: when the store cannot record a step, the step
// is not taken.
func TestNoStepWithoutRecord(t *testing.T) {
	r := newRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.store.failNext = true
	r.tick(nil, a)
	if got := r.mesos.took(); got != nil || r.m.StateOf("a1") != StateOn {
		t.Fatalf("drained without a record: %v, %s", got, r.m.StateOf("a1"))
	}
	r.tick(nil, a)
	if got := r.mesos.took(); !slices.Equal(got, []string{"drain a1"}) {
		t.Fatalf("next tick: %v", got)
	}
}

func TestNewManagerRejectsBadConfig(t *testing.T) {
	st, ms := newMemStore(), &fakeMesos{}
	for i, cfg := range []Config{
		{OffAfter: 0, Provider: &fakeProvider{}},
		{OffAfter: time.Minute},
		{OffAfter: time.Minute, Provider: &fakeProvider{}, MinWarmCPUs: -1},
	} {
		if _, err := NewManager(cfg, st, ms); err == nil {
			t.Errorf("config %d accepted", i)
		}
	}
}

func TestStringers(t *testing.T) {
	s, err := ParseSelector(" location=cloud , hostname=agent-* ")
	if err != nil || s.String() != "location=cloud,hostname=agent-*" {
		t.Fatalf("%q %v", s.String(), err)
	}
	_ = fmt.Sprint(StateOff)
}

// TestFailedRecordNamesItsState: the error of a step the store could not
// record names the state it tried to record, not the one the agent stays
// in (a failed move to draining was logged "record agent a1 as on", while
// PostgreSQL was down under the chaos suite).
func TestFailedRecordNamesItsState(t *testing.T) {
	r := newRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(2 * time.Minute)
	r.store.failNext = true
	err := r.m.Tick(context.Background(), []Agent{a}, nil)
	if err == nil || !strings.Contains(err.Error(), "record agent a1 as draining") {
		t.Fatalf("Tick returned %v, want the failed record as draining", err)
	}
}
