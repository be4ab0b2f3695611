package power

import (
	"math"
	"sort"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// The Manager's reads: what plans (through the cluster snapshot), the
// dashboard and the simulator ask while Tick runs. They see the records
// under m.mu, as published after each store write (see put).

// StandbyAgents are the agents that are off and may be powered on for a
// plan (their whole capacity free; they cost nothing until then), and the
// other agents plans cannot use now — draining, powering off, booting, or
// off but avoided after a failed power-on — with nothing free: they count
// when the core decides whether a job could ever run. Agents outside the
// selector are left out.
func (m *Manager) StandbyAgents() []placement.Agent {
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []placement.Agent
	for _, r := range m.recs {
		// Every agent that plans cannot use now (Unavailable: draining,
		// powering off, off, booting) is here, so that the core's picture
		// of what the cluster could hold never misses an agent in
		// passing: a job must not be rejected as too big for the cluster
		// while one of its agents is on its way off. Only an agent that is
		// off and not avoided (a failed power-on) may be planned on: the
		// others are listed with no free room.
		usable := r.State == StateOff && !now.Before(r.AvoidUntil)
		if r.State == StateOn || r.CPUs <= 0 || !m.cfg.Selector.Match(r.Hostname, r.Attributes) {
			continue
		}
		a := standbyAgent(r)
		if !usable {
			a.FreeCPUs, a.FreeMemMB = 0, 0
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// standbyAgent is a record as a plan sees it, with its whole capacity free.
func standbyAgent(r *Record) placement.Agent {
	loc := placement.LocationCloud
	if r.Attributes["location"] == string(placement.LocationLocal) {
		loc = placement.LocationLocal
	}
	return placement.Agent{
		ID: r.AgentID, Hostname: r.Hostname, Attributes: r.Attributes,
		CPUs: r.CPUs, MemMB: r.MemMB, FreeCPUs: r.CPUs, FreeMemMB: r.MemMB,
		PriceMicroUSDPerHour: int64(math.Round(r.PricePerHour * 1e6)), Location: loc,
	}
}

// Unavailable reports whether plans must not use an agent now: it is
// being drained or powered off, is off, or is booting (or its machine came
// back under a new agent id).
func (m *Manager) Unavailable(agentID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.recs[agentID]
	_, replaced := m.replaced[agentID]
	return r != nil && r.State != StateOn || replaced
}

// Failed reports whether a power-on of the agent was given up (it is off
// again), or its machine came back under a new agent id (the old one will
// never register again): a job waiting for it should be placed elsewhere.
func (m *Manager) Failed(agentID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := m.recs[agentID]
	_, replaced := m.replaced[agentID]
	return r != nil && r.State == StateOff || replaced
}

// Records returns a copy of every record, by agent id.
func (m *Manager) Records() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Record, 0, len(m.recs))
	for _, r := range m.recs {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AgentID < out[j].AgentID })
	return out
}

// StateOf is an agent's power state (StateOn when unknown).
func (m *Manager) StateOf(agentID string) State {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.recs[agentID]; r != nil {
		return r.State
	}
	return StateOn
}

// NextIdleExpiry is the earliest time an agent on and idle now reaches
// OffAfter (for a caller with a virtual clock, such as the simulator, that
// must Tick at that moment); ok is false when no agent is idle.
func (m *Manager) NextIdleExpiry() (t time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, since := range m.idle {
		if r := m.recs[id]; r == nil || r.State != StateOn {
			continue
		}
		if at := since.Add(m.cfg.OffAfter); !ok || at.Before(t) {
			t, ok = at, true
		}
	}
	return t, ok
}

// BootState is what the scheduler's pass knows of boots (it implements
// scheduler.BootInfo): the configured boot time, and the agents booting
// now with their expected ready time (when the power-on was decided plus
// the boot time) and their whole capacity. With no boot time configured
// it is empty, and placement is not boot-aware.
func (m *Manager) BootState() scheduler.BootState {
	if m.cfg.BootTime <= 0 {
		return scheduler.BootState{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	st := scheduler.BootState{BootTime: m.cfg.BootTime}
	for _, r := range m.recs {
		if r.State != StateBooting || r.CPUs <= 0 || !m.cfg.Selector.Match(r.Hostname, r.Attributes) {
			continue
		}
		a := standbyAgent(r)
		st.Booting = append(st.Booting, scheduler.BootingAgent{Agent: a, ReadyAt: r.Since.Add(m.cfg.BootTime)})
	}
	sort.Slice(st.Booting, func(i, j int) bool { return st.Booting[i].Agent.ID < st.Booting[j].Agent.ID })
	return st
}
