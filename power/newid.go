package power

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/sirupsen/logrus"
)

// An agent that comes back from a power cycle with a new agent id.
//
// Whether a powered-on machine registers under its old agent id is the
// agent's business, not the master's (docs/power.md, "An agent that comes
// back with a new agent id"): an agent that finds its work dir's meta
// directory recovers its id, also after a host reboot; one whose work dir
// was wiped (tmpfs, a fresh instance from an image) registers as a new
// agent, without the reservations the old one had. The old id then never
// registers again, so a record that waits for it (booting) or counts it as
// powered off (off) would do so for ever: a plan would wait for it to boot
// until the power-on timeout, power it on again once it is no longer
// avoided, and the cluster would count the machine twice (off or booting
// under its old id, on under the new one).
//
// So each Tick first decides (replacements, a pure function) which
// records of agents that are off or booting were replaced: a machine is
// known by its hostname, which is also what the providers are given to
// power it (Target). The old record is carried over to the new id (on,
// with a fresh idle timer; the machine's bill goes on under the new id)
// and dropped (adopt); plans that waited for the old id are told it
// failed, so they are placed again at once. The store keeps the old id as
// replaced (a restart or a new leader knows it too) until nothing can
// refer to it (forgettable).

// replacements decides, from the records and what Mesos shows now, which
// records of agents that are off or booting (or draining or powering off
// and no longer listed: the machine crashed meanwhile) came back under a
// new agent id: the old id is not back (not listed, or listed without a newer
// registration: a real master lists an agent that left, inactive, until
// it is marked unreachable), and exactly one other agent with the same
// hostname is listed: one that power management has no other state for
// (on or no record) and that registered after the old one's last
// registration. Only one record per hostname may be off or booting.
// Anything else is ambiguous (returned by hostname, nothing adopted):
// several agents on one machine, or hostnames that do not tell machines
// apart (also an older agent listed beside the new one).
func replacements(recs map[string]*Record, seen map[string]Agent) (map[string]Agent, []string) {
	stale := map[string][]*Record{}
	for _, r := range recs {
		if r.Hostname == "" {
			continue
		}
		a, ok := seen[r.AgentID]
		switch r.State {
		case StateOff, StateBooting:
		case StateDraining, StatePoweringOff:
			// Gone from Mesos while power management let it go: a crash
			// (not our power-off) that came back under a new id is a busy
			// machine to follow, not to power off. While it is listed it
			// is our own deactivated agent.
			if (ok && a.Listed) || r.RegisteredAt.IsZero() {
				continue
			}
		default:
			continue
		}
		if ok && a.Listed && a.RegisteredAt.After(r.RegisteredAt) {
			continue // back under its own id
		}
		stale[r.Hostname] = append(stale[r.Hostname], r)
	}
	if len(stale) == 0 {
		return nil, nil
	}
	fresh := map[string][]Agent{}
	others := map[string]int{} // listed agents on the hostname other than its stale records'
	for _, a := range seen {
		rs := stale[a.Hostname]
		if !a.Listed || rs == nil || slices.ContainsFunc(rs, func(r *Record) bool { return r.AgentID == a.ID }) {
			continue
		}
		others[a.Hostname]++
		if r := recs[a.ID]; r != nil && r.State != StateOn {
			continue
		}
		fresh[a.Hostname] = append(fresh[a.Hostname], a)
	}
	out := map[string]Agent{}
	var ambiguous []string
	for host, rs := range stale {
		var cands []Agent
		for _, a := range fresh[host] {
			if len(rs) > 1 || a.RegisteredAt.After(rs[0].RegisteredAt) {
				cands = append(cands, a)
			}
		}
		switch {
		case len(cands) == 0:
		case len(rs) == 1 && len(cands) == 1 && others[host] == 1:
			out[rs[0].AgentID] = cands[0]
		default:
			ambiguous = append(ambiguous, host)
		}
	}
	sort.Strings(ambiguous)
	return out, ambiguous
}

// replacement is what Manager.replaced keeps of an old agent id: the id
// its machine came back under, and the old id's last registration seen
// (as the master listed it, or as its record had it): a later one means
// the old id registered again after all (the match by hostname was wrong:
// another machine's agent), and it is an agent like any other again.
// known is when this process learnt it (adopted it, or loaded it from the
// store): see forgettable.
//
// The store keeps it too, as the old id's record with ReplacedBy set
// (written by adopt, read by Load), so that a restarted sparkpack, or a
// standby that takes over, still tells a plan that names the old id that
// it will not come, at once, instead of letting it wait for the old id
// until the plan's agent wait (the power-on timeout) ends.
type replacement struct {
	by    string
	at    time.Time
	known time.Time
}

// forgettable decides which replaced old ids nothing can refer to any
// more: the master no longer lists them (so Tick has no listing of them
// to skip), and this process has known the replacement for at least
// horizon, the power-on timeout. A plan waits at most its agent wait for
// an agent (serve sets it to the power-on timeout), and a plan that names
// a replaced id is told at its next check of its agents (within a second)
// that it failed, so by then no plan this process follows names it, and
// no new plan does (the old id is no agent: not listed, no record). known
// counts from this process's Load, not from the adoption: after a restart
// the resumed plans get the same time to learn it.
func forgettable(replaced map[string]replacement, agents []Agent, now time.Time, horizon time.Duration) []string {
	var out []string
	for id, rp := range replaced {
		if now.Sub(rp.known) < horizon {
			continue
		}
		if slices.ContainsFunc(agents, func(a Agent) bool { return a.ID == id && a.Listed }) {
			continue
		}
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// forget drops a replaced old id that nothing can refer to any more
// (forgettable): its record in the store first, then from memory.
func (m *Manager) forget(ctx context.Context, id string) error {
	if d, ok := m.store.(RecordDeleter); ok {
		if err := d.DeletePowerRecord(ctx, id); err != nil {
			return fmt.Errorf("power: forget agent %s (replaced by a new agent id): %w", id, err)
		}
	}
	m.mu.Lock()
	delete(m.replaced, id)
	m.mu.Unlock()
	return nil
}

// skipReplacedLocked reports whether Tick must skip a, an old id of a
// machine that came back under a new one, listed still (inactive, until
// the master marks it unreachable). An old id that registered again is
// not skipped, and no longer replaced (back: its record must be written
// again, see revive). m.mu is held.
func (m *Manager) skipReplacedLocked(a Agent) (skip, back bool) {
	rp, ok := m.replaced[a.ID]
	if !ok {
		return false, false
	}
	if !a.Listed || !a.RegisteredAt.After(rp.at) {
		return true, false
	}
	delete(m.replaced, a.ID)
	m.log.WithFields(logrus.Fields{"agent": a.ID, "hostname": a.Hostname, "was_replaced_by": rp.by}).
		Warn("agent power: an agent id thought replaced by a new agent on its hostname registered again; power management follows it again " +
			"(hostnames that do not tell machines apart?)")
	return false, true
}

// revive writes the record of an old id that registered again (r, on) over
// its stored replacement, so that a restart does not take it for replaced
// again. A failed write is only logged: the next state change writes the
// record, and a restart before it finds the old id registered again as
// this Tick did.
func (m *Manager) revive(ctx context.Context, r Record) error {
	if r.Since.IsZero() {
		r.Since = m.cfg.Now()
	}
	r.ReplacedBy = ""
	if err := m.store.PutPowerRecord(ctx, r); err != nil {
		return fmt.Errorf("power: record agent %s, registered again, as an agent: %w", r.AgentID, err)
	}
	return nil
}

// adopt carries the record of an agent that is off or booting (r, the
// step's own copy) over to n, the new agent id its machine registered
// under: n's record is on (persisted first), with a fresh idle timer, and
// the old record is dropped from memory and rewritten in the store as the
// replacement (ReplacedBy), which Load reads back. old is the old id's
// listing, if present. Repeating it after a failure (or a crash between
// the two writes) is harmless: the next Tick finds the same replacement.
func (m *Manager) adopt(ctx context.Context, now time.Time, r *Record, n Agent, old Agent, present bool) error {
	m.mu.Lock()
	var prev Record
	if cur := m.recs[n.ID]; cur != nil {
		prev = *cur
	}
	m.mu.Unlock()
	rec := prev
	rec.AgentID, rec.Hostname, rec.Attributes = n.ID, n.Hostname, n.Attributes
	if n.CPUs > 0 || n.MemMB > 0 {
		rec.CPUs, rec.MemMB, rec.PricePerHour = n.CPUs, n.MemMB, n.PricePerHour
	}
	rec.State, rec.Since, rec.Requested, rec.Failures, rec.AvoidUntil = StateOn, now, false, 0, time.Time{}
	rec.RegisteredAt = n.RegisteredAt
	rec.LastError = fmt.Sprintf("came back from %s as a new agent (was %s)", r.State, r.AgentID)
	if err := m.put(ctx, &rec, prev); err != nil {
		return err
	}
	rp := replacement{by: n.ID, at: r.RegisteredAt, known: now}
	if present && old.Listed && old.RegisteredAt.After(rp.at) {
		rp.at = old.RegisteredAt
	}
	gone := *r
	gone.ReplacedBy, gone.RegisteredAt, gone.Since = n.ID, rp.at, now
	gone.LastError = fmt.Sprintf("came back as a new agent, %s", n.ID)
	if err := m.store.PutPowerRecord(ctx, gone); err != nil {
		return fmt.Errorf("power: record agent %s as replaced by %s: %w", r.AgentID, n.ID, err)
	}
	m.mu.Lock()
	delete(m.recs, r.AgentID)
	delete(m.idle, r.AgentID)
	m.replaced[r.AgentID] = rp
	m.idle[n.ID] = now // a fresh idle timer, as for an agent back from a power-on
	m.mu.Unlock()
	m.log.WithFields(logrus.Fields{"agent": n.ID, "old_agent": r.AgentID, "hostname": n.Hostname, "from": r.State, "to": StateOn}).
		Warn("agent power: the machine came back under a new Mesos agent id (its work dir did not survive the power cycle); " +
			"its power record moves to the new id and the old id is forgotten (Mesos dropped the old agent's reservations with it)")
	if m.cfg.OnChange != nil {
		m.cfg.OnChange(rec)
	}
	return nil
}

// warnAmbiguous warns once per hostname that a machine that may have come
// back under a new agent id cannot be told apart from others.
func (m *Manager) warnAmbiguous(hosts []string) {
	for _, h := range hosts {
		m.mu.Lock()
		warned := m.ambiguous[h]
		m.ambiguous[h] = true
		m.mu.Unlock()
		if !warned {
			m.log.WithField("hostname", h).Warn("agent power: several agents share this hostname, so a machine that came back under a new agent id " +
				"cannot be matched to its record; it is left as it is (booting ones time out after --power-on-timeout)")
		}
	}
}

// ReplacedBy is the new agent id of an agent that came back under one
// ("" when it did not, or once nothing can refer to the old id any more:
// forgettable).
func (m *Manager) ReplacedBy(agentID string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.replaced[agentID].by
}
