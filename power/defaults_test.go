package power_test

// The defaults of power.Config as docs/power.md and the Config comments
// state them (MaxFailures 5, AvoidFor 30 minutes, PowerOnTimeout 5
// minutes), checked through the manager's exported calls with a Config
// that leaves them unset (issue 33: every other test set them).

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/power"
)

type recStore struct {
	mu   sync.Mutex
	recs map[string]power.Record
}

func (s *recStore) PowerRecords(context.Context) ([]power.Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []power.Record
	for _, r := range s.recs {
		out = append(out, r)
	}
	return out, nil
}

func (s *recStore) PutPowerRecord(_ context.Context, r power.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.recs[r.AgentID] = r
	return nil
}

type okMesos struct{}

func (okMesos) DeactivateAgent(context.Context, string) error { return nil }
func (okMesos) ReactivateAgent(context.Context, string) error { return nil }

// brokenCloud fails every call and counts them.
type brokenCloud struct{ offs, ons int }

func (*brokenCloud) Name() string { return "broken" }
func (p *brokenCloud) PowerOff(context.Context, power.Target) error {
	p.offs++
	return errors.New("cloud API unavailable")
}
func (p *brokenCloud) PowerOn(context.Context, power.Target) error {
	p.ons++
	return errors.New("cloud API unavailable")
}

// okCloud accepts every call (the machine then never registers).
type okCloud struct{}

func (okCloud) Name() string                                 { return "ok" }
func (okCloud) PowerOff(context.Context, power.Target) error { return nil }
func (okCloud) PowerOn(context.Context, power.Target) error  { return nil }

var (
	start      = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	registered = start.Add(-time.Hour)
)

// defaultsManager: OffAfter 1 minute, every other setting left at its
// default; records start as given.
func defaultsManager(t *testing.T, prov power.Provider, now *time.Time, recs ...power.Record) *power.Manager {
	t.Helper()
	st := &recStore{recs: map[string]power.Record{}}
	for _, r := range recs {
		st.recs[r.AgentID] = r
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	m, err := power.NewManager(power.Config{OffAfter: time.Minute, Provider: prov, Log: log, Now: func() time.Time { return *now }}, st, okMesos{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

func idleAgent(drained bool) power.Agent {
	return power.Agent{ID: "a1", Hostname: "host-a1", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, Listed: true,
		Active: !drained, Deactivated: drained, RegisteredAt: registered}
}

func offRecord(now time.Time) power.Record {
	return power.Record{AgentID: "a1", Hostname: "host-a1", CPUs: 4, MemMB: 16384, PricePerHour: 0.24,
		State: power.StateOff, Since: now, RegisteredAt: registered}
}

// standby lists the standby agents a plan may power on (those with room:
// agents in passing or avoided are listed with none).
func standby(m *power.Manager) []string {
	var ids []string
	for _, a := range m.StandbyAgents() {
		if a.FreeCPUs > 0 {
			ids = append(ids, a.ID)
		}
	}
	return ids
}

// TestDefaultMaxFailuresPowerOff: a power-off that fails is retried; the
// fifth failure in a row gives it up and the agent is on again.
func TestDefaultMaxFailuresPowerOff(t *testing.T) {
	ctx := context.Background()
	now := start
	prov := &brokenCloud{}
	m := defaultsManager(t, prov, &now)
	_ = m.Tick(ctx, []power.Agent{idleAgent(false)}, nil) // idle timer starts
	now = now.Add(61 * time.Second)
	_ = m.Tick(ctx, []power.Agent{idleAgent(false)}, nil) // drained
	for i := 1; i <= 4; i++ {
		_ = m.Tick(ctx, []power.Agent{idleAgent(true)}, nil)
		if st := m.StateOf("a1"); st != power.StatePoweringOff || prov.offs != i {
			t.Fatalf("after %d failed power-offs: %s (%d calls), want still powering off", i, st, prov.offs)
		}
	}
	_ = m.Tick(ctx, []power.Agent{idleAgent(true)}, nil)
	if st := m.StateOf("a1"); st != power.StateOn || prov.offs != 5 {
		t.Fatalf("after 5 failed power-offs: %s (%d calls), want on", st, prov.offs)
	}
}

// TestDefaultMaxFailuresPowerOn: a power-on that fails five times is
// given up: the agent is off and plans avoid it for 30 minutes.
func TestDefaultMaxFailuresPowerOn(t *testing.T) {
	ctx := context.Background()
	now := start
	prov := &brokenCloud{}
	m := defaultsManager(t, prov, &now, offRecord(now))
	if err := m.PowerOn(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 4; i++ {
		_ = m.Tick(ctx, nil, nil)
		if st := m.StateOf("a1"); st != power.StateBooting || prov.ons != i {
			t.Fatalf("after %d failed power-ons: %s (%d calls), want still booting", i, st, prov.ons)
		}
	}
	_ = m.Tick(ctx, nil, nil)
	if st := m.StateOf("a1"); st != power.StateOff || prov.ons != 5 || !m.Failed("a1") {
		t.Fatalf("after 5 failed power-ons: %s (%d calls), want off", st, prov.ons)
	}
	now = now.Add(30*time.Minute - time.Second)
	if got := standby(m); len(got) != 0 {
		t.Fatalf("standby %v 1 s before the 30 minutes are over", got)
	}
	now = now.Add(time.Second)
	if got := standby(m); len(got) != 1 {
		t.Fatalf("standby %v after 30 minutes, want a1", got)
	}
}

// TestDefaultPowerOnTimeoutAndAvoidFor: a powered-on agent that does not
// register within 5 minutes counts as off and is avoided for 30 minutes
// (docs/power.md's state table).
func TestDefaultPowerOnTimeoutAndAvoidFor(t *testing.T) {
	ctx := context.Background()
	now := start
	m := defaultsManager(t, okCloud{}, &now, offRecord(now))
	if err := m.PowerOn(ctx, "a1"); err != nil {
		t.Fatal(err)
	}
	_ = m.Tick(ctx, nil, nil) // the provider is asked
	now = now.Add(5 * time.Minute)
	_ = m.Tick(ctx, nil, nil)
	if st := m.StateOf("a1"); st != power.StateBooting {
		t.Fatalf("at 5 minutes: %s, want still booting", st)
	}
	now = now.Add(time.Second)
	_ = m.Tick(ctx, nil, nil)
	if st := m.StateOf("a1"); st != power.StateOff {
		t.Fatalf("after 5 minutes: %s, want off", st)
	}
	gaveUp := now
	now = gaveUp.Add(30*time.Minute - time.Second)
	if got := standby(m); len(got) != 0 {
		t.Fatalf("standby %v 1 s before the 30 minutes are over", got)
	}
	now = gaveUp.Add(30 * time.Minute)
	if got := standby(m); len(got) != 1 {
		t.Fatalf("standby %v after 30 minutes, want a1", got)
	}
}
