package simulate

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Power management in the simulator: the same power.Manager as `serve
// --power-off-after` drives the simulated agents. An agent idle for
// PowerOffAfter is deactivated and powered off; a plan that needs one
// powers it on, and its job starts when the agent has booted (BootTime).
// Independently of the meter of the scheduler core (active agents only),
// the simulated cluster keeps the bill a cloud would send: every agent is
// billed from power-on to power-off, idle or not.

// agentPower is one simulated agent's power and bill.
type agentPower struct {
	off          bool
	bootAt       time.Time // registers again then; zero when not booting
	deactivated  bool
	registeredAt time.Time
	onSince      time.Time // zero while off
	onTotal      time.Duration
	boots        int // power-ons
}

// powerOn starts billing at t and schedules the registration.
func (c *Cluster) powerOn(i int, t time.Time, boot time.Duration) {
	p := &c.power[i]
	if !p.off || !p.bootAt.IsZero() {
		return
	}
	p.bootAt = t.Add(boot)
	p.onSince = t
	p.boots++
}

func (c *Cluster) powerOff(i int, t time.Time) {
	p := &c.power[i]
	if p.off {
		return
	}
	p.off, p.bootAt = true, time.Time{}
	if !p.onSince.IsZero() {
		p.onTotal += t.Sub(p.onSince)
		p.onSince = time.Time{}
	}
}

// registered: the agent runs and is known to Mesos (not off, booted).
func (p *agentPower) registered() bool { return !p.off }

// NextBoot is the earliest time a booting agent registers.
func (c *Cluster) NextBoot() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var at time.Time
	ok := false
	for i := range c.power {
		if b := c.power[i].bootAt; !b.IsZero() && (!ok || b.Before(at)) {
			at, ok = b, true
		}
	}
	return at, ok
}

// FinishBoots registers the agents whose boot ended by now; it reports
// whether any did.
func (c *Cluster) FinishBoots(now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	any := false
	for i := range c.power {
		p := &c.power[i]
		if !p.bootAt.IsZero() && !p.bootAt.After(now) {
			p.off, p.bootAt, p.registeredAt = false, time.Time{}, now
			any = true
		}
	}
	return any
}

// powerAgents is what power management sees of the simulated agents.
func (c *Cluster) powerAgents() []power.Agent {
	c.mu.Lock()
	defer c.mu.Unlock()
	busy := map[int]bool{}
	for _, al := range c.allocs {
		for _, i := range al.agentIndex {
			busy[i] = true
		}
	}
	out := make([]power.Agent, 0, len(c.agents))
	for i, a := range c.agents {
		p := c.power[i]
		if !p.registered() {
			continue // off or booting: not listed
		}
		out = append(out, power.Agent{ID: a.ID, Hostname: a.Hostname, Attributes: a.Attributes, CPUs: a.CPUs, MemMB: a.MemMB,
			PricePerHour: float64(a.PriceMicroUSDPerHour) / 1e6, Listed: true, Active: !p.deactivated,
			Deactivated: p.deactivated, Busy: busy[i], RegisteredAt: p.registeredAt})
	}
	return out
}

// Bill is what the cloud billed from start to end: with power management
// (every agent while powered on) and always on.
func (c *Cluster) Bill(start, end time.Time) (billUSD, alwaysOnUSD float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, a := range c.agents {
		p := c.power[i]
		on := p.onTotal
		if !p.onSince.IsZero() && end.After(p.onSince) {
			on += end.Sub(p.onSince)
		}
		price := float64(a.PriceMicroUSDPerHour) / 1e6
		billUSD += price * on.Hours()
		alwaysOnUSD += price * end.Sub(start).Hours()
	}
	return billUSD, alwaysOnUSD
}

// simPower connects a power.Manager to the simulated cluster: its Mesos
// (deactivation flags) and its provider (power off at once, on after the
// boot time).
type simPower struct {
	c     *Cluster
	clock interface{ Now() time.Time }
	boot  time.Duration
}

func (s *simPower) index(id string) (int, error) {
	i, ok := s.c.index[id]
	if !ok {
		return 0, fmt.Errorf("simulated cluster: no agent %s", id)
	}
	return i, nil
}

func (s *simPower) DeactivateAgent(_ context.Context, id string) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	s.c.mu.Lock()
	s.c.power[i].deactivated = true
	s.c.mu.Unlock()
	return nil
}

func (s *simPower) ReactivateAgent(_ context.Context, id string) error {
	i, err := s.index(id)
	if err != nil {
		return err
	}
	s.c.mu.Lock()
	s.c.power[i].deactivated = false
	s.c.mu.Unlock()
	return nil
}

func (s *simPower) Name() string { return "simulated cloud" }

func (s *simPower) PowerOff(_ context.Context, t power.Target) error {
	i, err := s.index(t.AgentID)
	if err != nil {
		return err
	}
	s.c.mu.Lock()
	s.c.powerOff(i, s.clock.Now())
	s.c.mu.Unlock()
	return nil
}

func (s *simPower) PowerOn(_ context.Context, t power.Target) error {
	i, err := s.index(t.AgentID)
	if err != nil {
		return err
	}
	s.c.mu.Lock()
	s.c.powerOn(i, s.clock.Now(), s.boot)
	s.c.mu.Unlock()
	return nil
}

// memPowerStore keeps power records in memory.
type memPowerStore struct {
	mu   sync.Mutex
	recs map[string]power.Record
}

func (m *memPowerStore) PowerRecords(context.Context) ([]power.Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]power.Record, 0, len(m.recs))
	for _, r := range m.recs {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out, nil
}

func (m *memPowerStore) PutPowerRecord(_ context.Context, r power.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs[r.AgentID] = r
	return nil
}

func (m *memPowerStore) DeletePowerRecord(_ context.Context, agentID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.recs, agentID)
	return nil
}

// newSimPower builds power management for a simulated cluster.
// With bootAware, the scheduler's placement knows the boot time (as serve
// with --power-boot-time).
func newSimPower(c *Cluster, clock *VirtualClock, offAfter, boot time.Duration, bootAware bool) (*power.Manager, error) {
	sp := &simPower{c: c, clock: clock, boot: boot}
	var known time.Duration
	if bootAware {
		known = boot
	}
	return power.NewManager(power.Config{OffAfter: offAfter, Provider: sp, Now: clock.Now, Log: scheduler.DiscardLogger(), BootTime: known,
		PowerOnTimeout: 100 * 365 * 24 * time.Hour}, &memPowerStore{recs: map[string]power.Record{}}, sp)
}
