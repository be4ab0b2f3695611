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
}

// allocateLocked is one allocation round, a simplified version of Mesos'
// hierarchical allocator: for every agent, the frameworks' (framework, role)
// pairs are visited in order of the role's and framework's allocated cpus
// (a DRF-like order); each pair is offered the agent's resources reserved
// for that role plus all remaining unreserved resources, the unreserved
// scalars cut to the role's quota limit minus what the role consumes
// (reservations count as consumption; reservations themselves are never
// cut). Suppressed roles are skipped, and decline filters (per framework,
// role and agent) hold back any offer that is a subset of what was refused.
func (m *Master) allocateLocked() {
	if len(m.frameworks) == 0 {
		return
	}
	now := time.Now()
	var cands []candidate
	for _, fw := range m.sortedFrameworksLocked() {
		if !fw.connected || fw.removed {
			continue
		}
		kept := fw.filters[:0]
		for _, f := range fw.filters {
			if f.until.After(now) {
				kept = append(kept, f)
			}
		}
		fw.filters = kept
		for _, r := range fw.roles {
			if !fw.suppressed[r] {
				cands = append(cands, candidate{fw, r})
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
	perFw := map[*framework][]*offer{}
	for _, a := range m.sortedAgentsLocked() {
		if a.poweredOff || a.deactivated {
			continue
		}
		avail := a.available()
		if avail.isEmpty() {
			continue
		}
		sort.SliceStable(cands, func(i, j int) bool {
			ri, rj := roleShare[cands[i].role], roleShare[cands[j].role]
			if ri != rj {
				return ri < rj
			}
			fi, fj := fwShare[cands[i].fw], fwShare[cands[j].fw]
			if fi != fj {
				return fi < fj
			}
			if cands[i].fw.id != cands[j].fw.id {
				return cands[i].fw.id < cands[j].fw.id
			}
			return cands[i].role < cands[j].role
		})
		for _, c := range cands {
			res := avail.reservedFor(c.role)
			unres := avail.unreserved()
			if q := m.quotas[c.role]; q != nil && len(q.limits) > 0 {
				unres = cutToLimits(unres, q.limits, consumed[c.role])
			}
			res = res.plus(unres)
			if res.scalar("cpus") < minCPUs && res.scalar("mem") < minMem {
				continue
			}
			if filtered(c.fw, c.role, a.id, res, now) {
				// the reserved part alone may still be offerable
				res = avail.reservedFor(c.role)
				if res.scalar("cpus") < minCPUs && res.scalar("mem") < minMem {
					continue
				}
				if filtered(c.fw, c.role, a.id, res, now) {
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
			perFw[c.fw] = append(perFw[c.fw], o)
			if consumed[c.role] == nil {
				consumed[c.role] = map[string]int64{}
			}
			for _, e := range unres {
				if !e.ranges {
					consumed[c.role][e.k.name] += e.v
				}
			}
			cpu := res.scalar("cpus")
			roleShare[c.role] += cpu
			fwShare[c.fw] += cpu
			if avail.isEmpty() {
				break
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

func filtered(fw *framework, role, agentID string, res Res, now time.Time) bool {
	for _, f := range fw.filters {
		if f.role == role && f.agentID == agentID && f.until.After(now) && f.res.contains(res) {
			return true
		}
	}
	return false
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
		for role := range m.quotas {
			add(role, a.total.reservedFor(role), false)
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
