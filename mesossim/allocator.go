package mesossim

import (
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

// Minimum allocatable resources (Mesos' default --min_allocatable_resources
// is "cpus:0.01|mem:32").
const (
	minCPUs = 10        // milli cpus
	minMem  = 32 * 1000 // milli MiB
)

type candidate struct {
	fw   *framework
	role string
	// head is headroom(role) as of the last offer to role: whether it may
	// still get unreserved cpus or mem (checked per candidate and agent,
	// it had been half of a full round's time at 20,000 agents).
	head bool
}

// filterKey indexes decline filters: they hold per framework, role and agent.
type filterKey struct{ role, agentID string }

// filterSet is a framework's decline filters, indexed by role and agent, so
// that an allocation over tens of thousands of agents looks only at the
// filters of the agent at hand.
type filterSet map[filterKey][]*filter

func (fw *framework) addFilter(f *filter) {
	if fw.filters == nil {
		fw.filters = filterSet{}
	}
	k := filterKey{f.role, f.agentID}
	fw.filters[k] = append(fw.filters[k], f)
}

// blocks reports whether a filter holds back res: an offer that is a subset
// of what was refused.
func (s filterSet) blocks(role, agentID string, res Res, now time.Time) bool {
	for _, f := range s[filterKey{role, agentID}] {
		if f.until.After(now) && f.res.contains(res) {
			return true
		}
	}
	return false
}

// dropRoles removes the filters of the roles (REVIVE).
func (s filterSet) dropRoles(roles map[string]bool) {
	for k := range s {
		if roles[k.role] {
			delete(s, k)
		}
	}
}

// expire removes the filters that have run out.
func (s filterSet) expire(now time.Time) {
	for k, fs := range s {
		kept := fs[:0]
		for _, f := range fs {
			if f.until.After(now) {
				kept = append(kept, f)
			}
		}
		if len(kept) == 0 {
			delete(s, k)
		} else {
			s[k] = kept
		}
	}
}

// kickAgentLocked asks for an allocation of one agent's resources soon (its
// resources were freed or changed), as Mesos' allocator collects
// "allocation candidates" between batched allocations. kickAllocator asks
// for an allocation of every agent.
func (m *Master) kickAgentLocked(a *agent) {
	if m.allocAgents == nil {
		m.allocAgents = map[string]bool{}
	}
	m.allocAgents[a.id] = true
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// allocateLocked is one allocation round, a simplified version of Mesos'
// hierarchical allocator: for every agent (all of them, or with agents set
// only those), the frameworks' (framework, role) pairs are visited in order
// of the role's and framework's allocated cpus (a DRF-like order); each
// pair is offered the agent's resources reserved for that role plus all
// remaining unreserved resources, the unreserved scalars cut to the role's
// quota limit minus what the role consumes (reservations count as
// consumption; reservations themselves are never cut). Suppressed roles are
// skipped, and decline filters (per framework, role and agent) hold back
// any offer that is a subset of what was refused.
//
// The round costs little per agent that has nothing to offer and per
// (framework, role) that can take nothing there (a role capped by its quota
// limit gets only its reservations), so that a cluster of tens of thousands
// of agents is allocated every interval.
func (m *Master) allocateLocked(agents map[string]bool) {
	if len(m.frameworks) == 0 {
		return
	}
	now := time.Now()
	var cands []candidate
	for _, fw := range m.sortedFrameworksLocked() {
		if !fw.connected || fw.removed {
			continue
		}
		if agents == nil {
			fw.filters.expire(now)
		}
		for _, r := range fw.roles {
			if !fw.suppressed[r] {
				cands = append(cands, candidate{fw: fw, role: r})
			}
		}
	}
	if len(cands) == 0 {
		return
	}
	consumed := m.quotaConsumptionLocked()
	roleShare := map[string]int64{}
	fwShare := map[*framework]int64{}
	for _, a := range m.agents {
		for t := range a.tasks {
			if !t.released {
				c := t.res.scalar("cpus")
				roleShare[t.role] += c
				fwShare[t.fw] += c
			}
		}
		for _, o := range a.offers {
			c := o.res.scalar("cpus")
			roleShare[o.role] += c
			fwShare[o.fw] += c
		}
	}
	less := func(x, y candidate) bool {
		rx, ry := roleShare[x.role], roleShare[y.role]
		if rx != ry {
			return rx < ry
		}
		fx, fy := fwShare[x.fw], fwShare[y.fw]
		if fx != fy {
			return fx < fy
		}
		if x.fw.id != y.fw.id {
			return x.fw.id < y.fw.id
		}
		return x.role < y.role
	}
	sort.SliceStable(cands, func(i, j int) bool { return less(cands[i], cands[j]) })
	// headroom reports whether a role may still get unreserved cpus or
	// mem: without a quota limit, or below it.
	headroom := func(role string) bool {
		q := m.quotas[role]
		if q == nil || len(q.limits) == 0 {
			return true
		}
		for _, name := range []string{"cpus", "mem"} {
			lim, ok := q.limits[name]
			if !ok || lim-consumed[role][name] > 0 {
				return true
			}
		}
		return false
	}
	for i := range cands {
		cands[i].head = headroom(cands[i].role)
	}
	perFw := map[*framework][]*offer{}
	for _, a := range m.sortedAgentsLocked() {
		if agents != nil && !agents[a.id] {
			continue
		}
		if a.poweredOff || a.deactivated || a.crashed != nil {
			continue
		}
		avail := a.available()
		if avail.isEmpty() {
			continue
		}
		var reservedRoles map[string]bool // nil: no reservations here
		for _, e := range avail {
			if e.k.reserved() {
				if reservedRoles == nil {
					reservedRoles = map[string]bool{}
				}
				reservedRoles[e.k.role] = true
			}
		}
		var unresAll Res
		unresDone, offered := false, false
		for ci := 0; ci < len(cands); ci++ {
			c := cands[ci]
			if !c.head && !reservedRoles[c.role] {
				continue // nothing here for it: no reservation, quota reached
			}
			if !unresDone {
				unresAll, unresDone = avail.unreserved(), true
			}
			var res Res
			if reservedRoles[c.role] {
				res = avail.reservedFor(c.role)
			}
			unres := unresAll
			if q := m.quotas[c.role]; q != nil && len(q.limits) > 0 {
				unres = cutToLimits(unres, q.limits, consumed[c.role])
			}
			res = res.plus(unres)
			if res.scalar("cpus") < minCPUs && res.scalar("mem") < minMem {
				continue
			}
			if c.fw.filters.blocks(c.role, a.id, res, now) {
				// the reserved part alone may still be offerable
				res = avail.reservedFor(c.role)
				if res.scalar("cpus") < minCPUs && res.scalar("mem") < minMem {
					continue
				}
				if c.fw.filters.blocks(c.role, a.id, res, now) {
					continue
				}
				unres = nil
			}
			o := &offer{id: m.newOfferID(), fw: c.fw, agent: a, role: c.role, res: res, created: now}
			m.offers[o.id] = o
			c.fw.offers[o.id] = o
			a.offers[o.id] = o
			a.offered = a.offered.plus(res)
			avail = avail.minus(res)
			unresAll, unresDone = nil, false
			perFw[c.fw] = append(perFw[c.fw], o)
			offered = true
			if consumed[c.role] == nil {
				consumed[c.role] = map[string]int64{}
			}
			for _, e := range unres {
				if !e.ranges {
					consumed[c.role][e.k.name] += e.v
				}
			}
			if len(unres) > 0 {
				head := headroom(c.role)
				for i := range cands {
					if cands[i].role == c.role {
						cands[i].head = head
					}
				}
			}
			cpu := res.scalar("cpus")
			roleShare[c.role] += cpu
			fwShare[c.fw] += cpu
			if avail.isEmpty() {
				break
			}
		}
		// The shares changed: keep the order for the next agent (an
		// insertion sort, as only a few candidates moved).
		for i := 1; offered && i < len(cands); i++ {
			for j := i; j > 0 && less(cands[j], cands[j-1]); j-- {
				cands[j], cands[j-1] = cands[j-1], cands[j]
			}
		}
	}
	for fw, os := range perFw {
		ev := &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{}}
		for _, o := range os {
			ev.Offers.Offers = append(ev.Offers.Offers, m.offerProtoLocked(o, fw.offerFormat(), true))
		}
		m.sendLocked(fw, ev)
	}
}

// cutToLimits cuts unreserved scalars with a limit to limit - consumed.
func cutToLimits(unres Res, limits map[string]int64, consumed map[string]int64) Res {
	out := unres.clone()
	for i := range out {
		e := &out[i]
		if e.ranges {
			continue
		}
		lim, ok := limits[e.k.name]
		if !ok {
			continue
		}
		head := lim - consumed[e.k.name]
		if head < 0 {
			head = 0
		}
		if e.v > head {
			e.v = head
		}
	}
	return out.compact()
}

// quotaConsumptionLocked returns, for each role with a quota, the scalars it
// consumes: all its reservations (used or not) plus unreserved resources its
// tasks use or that are offered to it.
func (m *Master) quotaConsumptionLocked() map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	if len(m.quotas) == 0 {
		return out
	}
	add := func(role string, r Res, onlyUnreserved bool) {
		if m.quotas[role] == nil {
			return
		}
		if out[role] == nil {
			out[role] = map[string]int64{}
		}
		for _, e := range r {
			if e.ranges || (onlyUnreserved && e.k.reserved()) {
				continue
			}
			out[role][e.k.name] += e.v
		}
	}
	for _, a := range m.agents {
		if a.poweredOff {
			continue
		}
		for _, e := range a.total {
			if e.k.reserved() && !e.ranges && m.quotas[e.k.role] != nil {
				if out[e.k.role] == nil {
					out[e.k.role] = map[string]int64{}
				}
				out[e.k.role][e.k.name] += e.v
			}
		}
		for t := range a.tasks {
			if !t.released {
				add(t.role, t.res, true)
			}
		}
		for _, o := range a.offers {
			add(o.role, o.res, true)
		}
	}
	return out
}

// roleConsumptionLocked is quotaConsumptionLocked for one role, used by
// UPDATE_QUOTA's check.
func (m *Master) roleConsumptionLocked(role string) Res {
	var r Res
	for _, a := range m.agents {
		if a.poweredOff {
			continue
		}
		r = r.plus(a.total.reservedFor(role).stripReservations())
		for t := range a.tasks {
			if !t.released && t.role == role {
				r = r.plus(t.res.unreserved())
			}
		}
		for _, o := range a.offers {
			if o.role == role {
				r = r.plus(o.res.unreserved())
			}
		}
	}
	return r.filter(func(k rkey) bool { return k.name != "ports" })
}

var _ = mesos.SCALAR
