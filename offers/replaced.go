package offers

import (
	"sort"
	"time"

	"github.com/sirupsen/logrus"
)

// An agent of a plan whose machine came back under a new agent id.
//
// A machine that crashes (or is powered off by anyone but sparkpack's power
// management) and loses its agent's work dir (tmpfs, a fresh instance from
// an image) registers as a new agent: a new agent id, none of the old
// agent's reservations. The old id never registers again. What a real
// Mesos 1.12 master shows of it (scripts/mesos-agent-crash.sh,
// docs/power.md): at the old address, the old agent is removed at once
// ("a new agent registered at the same address", AGENT_REMOVED); at a new
// address it stays listed, inactive, with its reservations, until its
// ping timeouts mark it unreachable (75 s by default; no AGENT_REMOVED
// then), and then leaves GET_AGENTS. A plan that names the old id would
// wait for it until AgentWait; so the plan's check of its agents
// (ActCheckAgents) asks whether each agent it waits for was replaced, and
// the job is placed again at once.
//
// An agent that is only slow to register again (a restart that keeps the
// work dir keeps the id; a restarted master lists its agents as
// recovered_agents until they re-register, up to 10 minutes) is not
// replaced: no other agent registers on its hostname. Nor is one that is
// merely gone from GET_AGENTS (marked unreachable, it may still register
// again under its id): its plan waits AgentWait as before.

// replacement is what the adapter keeps of an agent id replaced by a new
// one: the new id, the machine's hostname (the old id may no longer be
// listed to name it) and when the replacement was first seen.
type replacement struct {
	by, host string
	at       time.Time
}

// replacedInListing decides, from one GET_AGENTS listing, which agents it
// lists disconnected (inactive, not deactivated) were replaced: exactly
// one other agent is listed on the hostname, active, a new agent (no
// reregistered_time: an agent back under its own id has one, and after it
// was marked unreachable, or after a master failover, a new
// registered_time too), registered after the disconnected one's last
// (re-)registration. That is
// a machine back at a new address under a new agent id while the master
// still lists its old agent (until the ping timeouts). Several agents on
// a hostname make it ambiguous: nothing is replaced. Agents without a
// hostname are never matched; nor are deactivated ones (taken out of
// service on purpose: power management follows them, power/newid.go).
// refresh also drops a match whose new agent it listed active beside the
// old one before the old one went (a shared hostname, not its machine
// back).
func replacedInListing(statuses []AgentStatus) map[string]replacement {
	// Most listings have no disconnected agent: nothing else is looked at
	// (a refresh of a large cluster runs this on every agent).
	var hosts map[string][]int // hostname of a disconnected agent -> positions of its agents
	for i, st := range statuses {
		if !st.Active && !st.Deactivated && st.Hostname != "" {
			if hosts == nil {
				hosts = map[string][]int{}
			}
			hosts[st.Hostname] = append(hosts[st.Hostname], i)
		}
	}
	if hosts == nil {
		return nil
	}
	for i, st := range statuses {
		if st.Active {
			if at, ok := hosts[st.Hostname]; ok {
				hosts[st.Hostname] = append(at, i)
			}
		}
	}
	out := map[string]replacement{}
	for host, at := range hosts {
		if len(at) != 2 {
			continue
		}
		old, n := statuses[at[0]], statuses[at[1]]
		if n.Active && !n.Reregistered && !old.RegisteredAt.IsZero() && n.RegisteredAt.After(old.RegisteredAt) {
			out[old.ID] = replacement{by: n.ID, host: host}
		}
	}
	return out
}

// firstAgentOut decides what a plan's check of its agents finds: of the
// plan's agents not registered now (waiting, in plan order), the first
// that will not come (replaced: the new agent id its machine came back
// under; failed: power management gave its power-on up), else the first
// one. Every waiting agent is asked, not only the first: a plan that
// waits for a booting agent must not wait for it before it learns that
// another will not come.
func firstAgentOut(waiting []string, replacedBy func(string) string, failed func(string) bool) (agent, by string, isFailed bool) {
	for _, id := range waiting {
		if by := replacedBy(id); by != "" {
			return id, by, true
		}
	}
	if failed != nil {
		for _, id := range waiting {
			if failed(id) {
				return id, "", true
			}
		}
	}
	if len(waiting) > 0 {
		return waiting[0], "", false
	}
	return "", "", false
}

// replacedLocked is what is known of an agent replaced by a new one (by
// "" when it was not). c.mu is held.
func (c *Cluster) replacedLocked(id string) replacement {
	return c.replaced[id]
}

// noteReplacedLocked keeps the replacements found by a refresh and drops
// those nothing needs: an old id listed active again (a wrong match), or
// one known for AgentWait that no followed job's plan names (a plan waits
// for an agent at most AgentWait). c.mu is held.
func (c *Cluster) noteReplacedLocked(found map[string]replacement, present map[string]bool, now time.Time) {
	if c.replaced == nil {
		c.replaced = map[string]replacement{}
	}
	ids := make([]string, 0, len(found))
	for id := range found {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if rp, ok := c.replaced[id]; ok && rp.by == found[id].by {
			continue
		}
		rp := found[id]
		rp.at = now
		c.replaced[id] = rp
		c.log.WithFields(logrus.Fields{"agent": rp.host, "agent_id": id, "new_agent_id": rp.by}).
			Info("an agent's machine came back under a new Mesos agent id (its work dir was lost); plans that name the old id are placed again")
	}
	if len(c.replaced) == 0 {
		return
	}
	named := map[string]bool{}
	for _, lj := range c.jobs {
		for _, as := range lj.st.Plan.Assignments {
			named[as.AgentID] = true
		}
	}
	for id, rp := range c.replaced {
		if present[id] || (now.Sub(rp.at) >= c.cfg.AgentWait && !named[id]) {
			delete(c.replaced, id)
		}
	}
}
