package store

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/power"
)

type restartCloud struct {
	mu    sync.Mutex
	calls []string
}

func (c *restartCloud) Name() string { return "test" }
func (c *restartCloud) PowerOff(_ context.Context, t power.Target) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "off "+t.AgentID)
	return nil
}
func (c *restartCloud) PowerOn(_ context.Context, t power.Target) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, "on "+t.AgentID)
	return nil
}

type restartMesos struct {
	mu    sync.Mutex
	calls []string
}

func (m *restartMesos) DeactivateAgent(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, "deactivate "+id)
	return nil
}
func (m *restartMesos) ReactivateAgent(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, "reactivate "+id)
	return nil
}

// TestPowerOffSurvivesARestart: an agent powered off stays off for the
// next leader, which reads its record back from PostgreSQL while the
// master still lists the agent (inactive, until it is marked unreachable)
// with the same registration time. Mesos gives that time to the
// nanosecond, timestamptz keeps microseconds: the record read back was up
// to a microsecond before the listed registration, and the new leader took
// the agent for one that had registered again ("registered again while
// off"): on for good, though powered off, and never offered to plans as
// standby again (found by sparkpack-chaos --power, a leader killed while
// agents powered off). Sub-microsecond parts on both sides of the
// rounding are tried, as are a booting agent and one that is really back.
func TestPowerOffSurvivesARestart(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	base := time.Date(2026, 11, 27, 3, 35, 27, 123456000, time.UTC)
	for i, c := range []struct {
		name    string
		sub     time.Duration // the registration's sub-microsecond part
		booting bool          // a plan powered it on before the restart
		back    time.Duration // the listed registration moves by this after the restart
		want    power.State
	}{
		{"off, rounds down", 100, false, 0, power.StateOff},
		{"off, rounds up", 900, false, 0, power.StateOff},
		{"off, whole microsecond", 0, false, 0, power.StateOff},
		{"booting, rounds down", 499, true, 0, power.StateBooting},
		{"off, really back", 100, false, time.Second, power.StateOn},
		{"booting, really back", 100, true, time.Second, power.StateOn},
		{"booting, back a microsecond later", 100, true, time.Microsecond, power.StateOn},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := fmt.Sprintf("restart-S%d", i)
			reg := base.Add(c.sub)
			now := base.Add(time.Hour)
			clock := func() time.Time { return now }
			agent := power.Agent{ID: id, Hostname: fmt.Sprintf("restart-%d", i), CPUs: 4, MemMB: 16384, Listed: true, Active: true, RegisteredAt: reg}
			cloud, mesos := &restartCloud{}, &restartMesos{}
			cfg := power.Config{OffAfter: time.Second, Provider: cloud, Log: quietLog(), Now: clock, PowerOnTimeout: time.Hour}
			m1, err := power.NewManager(cfg, s, mesos)
			if err != nil {
				t.Fatal(err)
			}
			if err := m1.Load(ctx); err != nil {
				t.Fatal(err)
			}
			tick := func(m *power.Manager, a power.Agent) {
				t.Helper()
				if err := m.Tick(ctx, []power.Agent{a}, nil); err != nil {
					t.Fatal(err)
				}
			}
			tick(m1, agent) // idle from now
			now = now.Add(2 * time.Second)
			tick(m1, agent) // draining: DEACTIVATE_AGENT
			agent.Active, agent.Deactivated = false, true
			tick(m1, agent) // deactivated and idle: powered off
			if got := m1.StateOf(id); got != power.StateOff {
				t.Fatalf("before the restart: %s, want off (cloud %v, mesos %v)", got, cloud.calls, mesos.calls)
			}
			if c.booting {
				if err := m1.PowerOn(ctx, id); err != nil {
					t.Fatal(err)
				}
				tick(m1, agent) // the provider is asked
			}
			// The leader dies; the next one reads the records back. The
			// master still lists the agent, inactive (or it registered
			// again, c.back later).
			m2, err := power.NewManager(cfg, s, mesos)
			if err != nil {
				t.Fatal(err)
			}
			if err := m2.Load(ctx); err != nil {
				t.Fatal(err)
			}
			if c.back > 0 {
				agent.RegisteredAt, agent.Active = reg.Add(c.back), false
			}
			now = now.Add(time.Second)
			tick(m2, agent)
			if got := m2.StateOf(id); got != c.want {
				t.Errorf("after the restart: %s, want %s (cloud %v, mesos %v)", got, c.want, cloud.calls, mesos.calls)
			}
		})
	}
}
