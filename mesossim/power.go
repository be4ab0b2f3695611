package mesossim

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
)

// Agent power, deactivation and the bill.
//
// Facts from a real Mesos 1.12 master (testdata/transcripts/17-*):
//   - DEACTIVATE_AGENT and DRAIN_AGENT answer 200 with an empty body, also
//     when sent again; an unknown agent is 400 "Unknown agent". The agent
//     is then listed with active=false, deactivated=true (DRAIN_AGENT adds
//     drain_info, DRAINED once no task runs). The allocator offers nothing
//     from it.
//   - REACTIVATE_AGENT answers 200; on an agent that is not deactivated,
//     and on an unknown agent id, 400 "Agent is not deactivated"; on a
//     drained agent marked unreachable, 400 "Agent is still in the
//     DRAINING state".
//   - An agent whose machine stops stays listed (active=false) until the
//     master marks it unreachable (agent_ping_timeout 15 s x 5: 75-90 s);
//     it then leaves GET_AGENTS. When it registers again it keeps its
//     deactivation (and a drain, DRAINED again), so it needs
//     REACTIVATE_AGENT; reregistered_time moves at every registration,
//     registered_time too once it was marked unreachable.
//     (Once, on an agent that had been unreachable before, the master
//     answered 409 "Agent removed while processing the call" to a
//     REACTIVATE_AGENT while it was unreachable and let it come back
//     active; that path is not emulated.)
//   - A reservation on a deactivated agent is accepted (202); so are
//     RESERVE and UNRESERVE on an agent that is disconnected but still
//     listed (checked by hand on the real master).
//
// The bill is the emulator's own (not Mesos): every agent costs its price
// from power-on to power-off, in simulated time (wall time / TimeScale),
// whatever any framework thinks: the independent referee of the cost.

// billEntry is one agent's account.
type billEntry struct {
	id       string
	price    float64 // $/h
	added    time.Time
	removed  time.Time // zero while the agent exists
	onSince  time.Time // wall; zero while off
	onBefore time.Duration
}

func (m *Master) billOpenLocked(a *agent, now time.Time) {
	b := m.bill[a.id]
	if b == nil {
		b = &billEntry{id: a.id, price: a.spec.PricePerHour, added: now}
		m.bill[a.id] = b
	}
	if b.onSince.IsZero() {
		b.onSince = now
	}
}

func (m *Master) billCloseLocked(id string, now time.Time, removed bool) {
	b := m.bill[id]
	if b == nil {
		return
	}
	if !b.onSince.IsZero() {
		b.onBefore += now.Sub(b.onSince)
		b.onSince = time.Time{}
	}
	if removed {
		b.removed = now
	}
}

// AgentBill is one agent's line of the bill.
type AgentBill struct {
	ID               string  `json:"id"`
	PricePerHour     float64 `json:"pricePerHour"`
	PoweredOn        bool    `json:"poweredOn"`
	PoweredOnSeconds float64 `json:"poweredOnSeconds"`
	USD              float64 `json:"usd"`
}

// Bill is what the cluster cost so far, in simulated time.
type Bill struct {
	// Seconds is the simulated time since the emulator started.
	Seconds float64 `json:"seconds"`
	// TotalUSD: every agent billed from power-on to power-off.
	TotalUSD float64 `json:"totalUSD"`
	// AlwaysOnUSD: the same agents over the same time, never off.
	AlwaysOnUSD float64     `json:"alwaysOnUSD"`
	Agents      []AgentBill `json:"agents"`
	// ActiveUSD: every agent billed only while it held a dynamic
	// reservation or ran a task (activebill.go).
	ActiveUSD float64 `json:"activeUSD"`
}

// Bill returns the bill so far (GET /sim/bill).
func (m *Master) Bill() Bill {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	sim := func(d time.Duration) float64 { return d.Seconds() / m.cfg.TimeScale }
	out := Bill{Seconds: sim(now.Sub(m.bornAt)), ActiveUSD: m.activeUSDLocked(now, sim)}
	ids := make([]string, 0, len(m.bill))
	for id := range m.bill {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		b := m.bill[id]
		on := b.onBefore
		if !b.onSince.IsZero() {
			on += now.Sub(b.onSince)
		}
		end := now
		if !b.removed.IsZero() {
			end = b.removed
		}
		line := AgentBill{ID: id, PricePerHour: b.price, PoweredOn: !b.onSince.IsZero(), PoweredOnSeconds: sim(on)}
		line.USD = b.price * line.PoweredOnSeconds / 3600
		out.TotalUSD += line.USD
		out.AlwaysOnUSD += b.price * sim(end.Sub(b.added)) / 3600
		out.Agents = append(out.Agents, line)
	}
	return out
}

// listedLocked: GET_AGENTS lists the agent (a stopped machine stays listed,
// inactive, until it is marked unreachable).
func (m *Master) listedLocked(a *agent, now time.Time) bool {
	if !a.poweredOff {
		return true
	}
	return !a.unreachable && now.Before(a.offAt.Add(m.cfg.UnreachableAfter))
}

// markUnreachableLocked marks agents off longer than UnreachableAfter
// unreachable (no longer listed); a drained one is DRAINING again, as the
// real master shows it.
func (m *Master) markUnreachableLocked(now time.Time) {
	for _, a := range m.agents {
		if a.poweredOff && !a.unreachable && !now.Before(a.offAt.Add(m.cfg.UnreachableAfter)) {
			a.unreachable = true
			if a.drain != nil {
				a.drain.State = mesos.DrainState_DRAINING
			}
		}
	}
}

// PowerOff turns an agent's VM off: its tasks are lost, it stops being
// billed, and it leaves GET_AGENTS once marked unreachable; it keeps its
// id and checkpointed reservations for PowerOn. Powering off an agent that
// is off is not an error.
func (m *Master) PowerOff(agentID string) error {
	m.mu.Lock()
	agentID = m.machineLocked(agentID)
	a := m.agents[agentID]
	off := a != nil && a.poweredOff
	if a != nil && a.booting != nil {
		// Stopped while booting: it never registers.
		a.booting.cancel()
		a.booting = nil
		m.billCloseLocked(agentID, time.Now(), false)
		off = true
	}
	m.mu.Unlock()
	if off {
		return nil
	}
	return m.dropAgent(agentID, true, mesos.REASON_AGENT_DISCONNECTED, "Agent powered off")
}

// PowerOn starts a powered-off agent's VM: it is billed from now and
// registers again after BootTime (simulated). Powering on an agent that is
// on or booting is not an error.
func (m *Master) PowerOn(agentID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	agentID = m.machineLocked(agentID)
	a := m.agents[agentID]
	if a == nil {
		return fmt.Errorf("mesossim: no agent %q", agentID)
	}
	if !a.poweredOff || a.booting != nil {
		return nil
	}
	now := time.Now()
	m.billOpenLocked(a, now)
	boot := time.Duration(float64(m.cfg.BootTime) * m.cfg.TimeScale)
	m.log.WithField("agent", agentID).WithField("boot", boot.String()).Info("agent powering on")
	a.booting = m.afterLocked(boot, func() {
		a.booting = nil
		if !a.poweredOff {
			return
		}
		t := time.Now()
		m.markUnreachableLocked(t)
		if a.unreachable && !m.cfg.AgentsLoseWorkDir {
			// A real 1.12 master registers an agent back from unreachable
			// anew: registered_time moves too (scripts/mesos-agent-crash.sh).
			a.registered = t
		}
		a.poweredOff, a.unreachable = false, false
		a.used = nil
		if m.cfg.AgentsLoseWorkDir {
			m.newAgentIDLocked(a, t)
			m.publishAgentLocked(a, true)
			m.log.WithFields(logrus.Fields{"agent": a.id, "old_agent": agentID}).Info("agent registered as a new agent after power-on (its work dir was lost)")
			m.kickAllocator()
			return
		}
		a.reregistered = t
		a.restoreCheckpoint()
		m.publishAgentLocked(a, true)
		m.log.WithField("agent", agentID).Info("agent registered again after power-on")
		m.kickAllocator()
	})
	return nil
}

// deactivateLocked implements DEACTIVATE_AGENT and DRAIN_AGENT (drain set):
// no more offers from the agent; outstanding ones are rescinded. DRAIN_AGENT
// also kills the agent's tasks.
func (m *Master) deactivateLocked(agentID string, drain bool) *httpError {
	now := time.Now()
	m.markUnreachableLocked(now)
	a := m.agents[agentID]
	if a == nil || (a.poweredOff && a.unreachable) {
		return errorf(http.StatusBadRequest, "Unknown agent")
	}
	a.deactivated = true
	for _, id := range sortedOfferIDs(a.offers) {
		m.removeOfferLocked(a.offers[id], true)
	}
	if drain {
		if a.drain == nil {
			a.drain = &mesos.DrainInfo{State: mesos.DrainState_DRAINING, Config: mesos.DrainConfig{MarkGone: new(bool)}}
		}
		tasks := make([]*task, 0, len(a.tasks))
		for t := range a.tasks {
			if !isTerminal(t.actual) {
				tasks = append(tasks, t)
			}
		}
		sort.Slice(tasks, func(i, j int) bool { return tasks[i].id < tasks[j].id })
		for _, t := range tasks {
			m.killTaskLocked(t)
		}
		m.updateDrainLocked(a)
	}
	m.kickAllocator()
	return nil
}

// updateDrainLocked moves a draining agent to DRAINED once no task runs.
func (m *Master) updateDrainLocked(a *agent) {
	if a.drain == nil || a.drain.State == mesos.DrainState_DRAINED {
		return
	}
	for t := range a.tasks {
		if !isTerminal(t.actual) {
			return
		}
	}
	a.drain.State = mesos.DrainState_DRAINED
}

// reactivateLocked implements REACTIVATE_AGENT.
func (m *Master) reactivateLocked(agentID string) *httpError {
	now := time.Now()
	m.markUnreachableLocked(now)
	a := m.agents[agentID]
	switch {
	case a == nil || !a.deactivated:
		return errorf(http.StatusBadRequest, "Agent is not deactivated")
	case a.poweredOff && a.unreachable && a.drain != nil:
		return errorf(http.StatusBadRequest, "Agent is still in the DRAINING state")
	}
	a.deactivated, a.drain = false, nil
	m.kickAllocator()
	return nil
}

func cloneDrain(d *mesos.DrainInfo) *mesos.DrainInfo {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

func optTimeInfo(t time.Time) *mesos.TimeInfo {
	if t.IsZero() {
		return nil
	}
	return timeInfo(t)
}

// machineLocked follows an agent id to the id its machine has now (the
// power API takes the old ids of a machine that came back as a new agent).
func (m *Master) machineLocked(agentID string) string {
	for i := 0; i < len(m.renamed) && m.renamed[agentID] != ""; i++ {
		agentID = m.renamed[agentID]
	}
	return agentID
}

// newAgentIDLocked makes a powered-on agent whose work dir was lost
// register as a new agent, as on a real 1.12 master (checked 2026-11-27,
// docs/power.md): a new id (the next -S<n> of the master), registered_time
// now and no reregistered_time, its --resources only (no reservation:
// they were checkpointed in the lost work dir), not deactivated; the old
// agent is removed at once ("a new agent registered at the same
// address"), so the old id is unknown to the operator API (UNRESERVE: 400
// "No agent found with specified ID"; DEACTIVATE_AGENT: 400 "Unknown
// agent"). The machine's bill goes on under the new id.
func (m *Master) newAgentIDLocked(a *agent, now time.Time) {
	old := a.id
	m.publishAgentLocked(a, false)
	m.activeEndLocked(old, now) // the old agent's reservations are gone with it
	delete(m.agents, old)
	for i, id := range m.agentOrder {
		if id == old {
			m.agentOrder = append(m.agentOrder[:i], m.agentOrder[i+1:]...)
			break
		}
	}
	prefix := old
	if i := strings.LastIndex(old, "-S"); i >= 0 {
		if _, err := strconv.Atoi(old[i+2:]); err == nil {
			prefix = old[:i]
		}
	}
	for n := len(m.bill); ; n++ {
		id := prefix + "-S" + strconv.Itoa(n)
		if m.agents[id] == nil && m.bill[id] == nil && m.renamed[id] == "" {
			a.id = id
			break
		}
	}
	a.info, a.registered, a.reregistered = nil, now, time.Time{}
	a.total, a.checkpoint, a.checkpointSet = a.base.clone(), nil, false
	a.deactivated, a.drain = false, nil
	if b := m.bill[old]; b != nil {
		delete(m.bill, old)
		b.id = a.id
		m.bill[a.id] = b
	}
	if m.renamed == nil {
		m.renamed = map[string]string{}
	}
	m.renamed[old] = a.id
	m.agents[a.id] = a
	m.agentOrder = append(m.agentOrder, a.id)
	sort.Strings(m.agentOrder)
}
