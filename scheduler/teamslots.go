package scheduler

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// Executor slots for the team protection (teams.go). The aggregate check
// (protect) compares the cpus and memory summed over agents: 9 free cpus
// spread as 3 on each of three agents pass for room for a job of one
// 4-cpu executor, though no agent holds it. So once the sums let a
// deadline job past its team's guarantee start, protectSlots also counts
// room as placement does, in whole executors per agent: for each executor
// shape the other teams' owed deadline jobs (within their guarantee) ask
// for (on the resources they are guaranteed: a team guaranteed memory
// only is owed memory, not cpus), the executors of that shape the agents hold must not drop, with
// the job placed, below what those jobs ask for (or below what the agents
// hold now, when that is less: room another team is owed is not given
// away). Shapes are counted one at a time (two shapes competing for the
// same agents are not packed together); the aggregate check bounds the
// total.

// slotNeed is how many executors of one shape owed jobs ask for.
type slotNeed struct {
	cpus, memMB float64
	executors   int
	teams       []string
}

// slotNeeds is ts's owed jobs' executors by shape (on the resources it is
// guaranteed), the jobs taken in the deadline queue's order while the team
// stays within its guarantee with them (made once per change of the team:
// teamStarted).
func (tp *teamPass) slotNeeds(ts *teamState) []slotNeed {
	if ts.needsOK {
		return ts.needs
	}
	ts.needs, ts.needsOK = ts.needs[:0], true
	u := ts.use
	for _, j := range ts.owedJobs {
		if tp.started[j] {
			continue
		}
		fp := footprint(j)
		if !ts.t.WithinGuarantee(u, fp) {
			continue
		}
		u = u.Add(fp)
		// Only what the team is guaranteed is kept: a shape counts on the
		// guaranteed resources alone (as the aggregate check).
		d := j.Demand
		c, m := d.CPUs, d.MemMB
		if ts.t.GuaranteedCPUs <= 0 {
			c = 0
		}
		if ts.t.GuaranteedMemMB <= 0 {
			m = 0
		}
		i := slices.IndexFunc(ts.needs, func(n slotNeed) bool { return n.cpus == c && n.memMB == m })
		if i < 0 {
			ts.needs = append(ts.needs, slotNeed{cpus: c, memMB: m, teams: []string{ts.name}})
			i = len(ts.needs) - 1
		}
		ts.needs[i].executors += d.Executors
	}
	return ts.needs
}

// slotHold keeps e waiting when teamHold let it through past its team's
// guarantee (slotsDue) and plan, the plan try made for it, would leave
// other teams' owed jobs short of executor slots (protectSlots); it has
// then recorded e's wait with the reason and returns true. The check is
// made on the plan e starts with: e is placed once.
func (p *passRun) slotHold(e *Entry, plan placement.Plan) bool {
	reason := p.slotReason(e, plan)
	if reason == "" {
		return false
	}
	p.wait(&decision{entry: e, wait: waitState{kind: waitText, text: reason, atRisk: p.d.atRisk(e, p.now)}})
	return true
}

// slotReason is why e may not start with plan for the executor slots
// owed to other teams ("" when it may): asked only when teamReason let e
// through past its team's guarantee (slotsDue). The pass and the preview
// both ask it.
func (p *passRun) slotReason(e *Entry, plan placement.Plan) string {
	tp := p.teams
	if tp == nil || tp.slotsDue != e {
		return ""
	}
	tp.slotsDue = nil
	return p.protectSlots(e, plan)
}

// protectSlots is why deadline job e, past its team's guarantee, may not
// start with plan although the summed room allows it: it would leave fewer
// executor slots of some shape than other teams' owed deadline jobs ask
// for (see above). "" when it may start.
func (p *passRun) protectSlots(e *Entry, plan placement.Plan) string {
	tp := p.teams
	var needs []slotNeed
	for name, ts := range tp.byName {
		if name == e.Team || len(ts.owedJobs) == 0 {
			continue
		}
		for _, n := range tp.slotNeeds(ts) {
			i := slices.IndexFunc(needs, func(m slotNeed) bool { return m.cpus == n.cpus && m.memMB == n.memMB })
			if i < 0 {
				needs = append(needs, slotNeed{cpus: n.cpus, memMB: n.memMB})
				i = len(needs) - 1
			}
			needs[i].executors += n.executors
			needs[i].teams = append(needs[i].teams, n.teams...)
		}
	}
	// The shapes e's start could matter to: at most lostAtMost slots of
	// a shape go per executor of e (and for its driver).
	d := e.Demand
	var driver [2]float64
	if p.d.cfg.DriverRoom {
		driver = [2]float64{float64(e.driverCPUs), float64(e.driverMemMB)}
	}
	type risk struct {
		need      *slotNeed
		have, min int
	}
	var risks []risk
	for i := range needs {
		n := &needs[i]
		if n.executors <= 0 {
			continue
		}
		have := p.ix.Placeable(n.cpus, n.memMB)
		keep := min(n.executors, have)
		lost := d.Executors*lostAtMost(d.CPUs, d.MemMB, n.cpus, n.memMB) + lostAtMost(driver[0], driver[1], n.cpus, n.memMB)
		if have-lost < keep {
			risks = append(risks, risk{n, have, keep})
		}
	}
	if len(risks) == 0 {
		return ""
	}
	// What e's plan takes on its agents.
	agents, at := p.ownSnapshot()
	type after struct{ before, after placement.Agent }
	var touched []after
	touchedAt := map[int]int{} // agent index -> its place in touched
	for _, as := range plan.Assignments {
		i, ok := at[as.AgentID]
		if !ok || as.Executors <= 0 {
			continue
		}
		a := agents[i]
		b := a
		b.FreeCPUs -= float64(as.Executors) * d.CPUs
		b.FreeMemMB -= float64(as.Executors) * d.MemMB
		touchedAt[i] = len(touched)
		touched = append(touched, after{a, b})
	}
	if driver != [2]float64{} {
		// Where markStart keeps the driver's room (takeDriverRoom): on
		// the first of the plan's agents that has it, else on the agent
		// with the most free cpus that has it, which the plan may not
		// touch.
		fits := func(a placement.Agent) bool {
			return a.FreeCPUs+1e-9 >= driver[0] && a.FreeMemMB+1e-9 >= driver[1]
		}
		best := -1
		for k := range touched {
			if fits(touched[k].after) {
				best = k
				break
			}
		}
		if best < 0 {
			var bestCPUs float64
			bi := -1
			for i := range agents {
				a := agents[i]
				if k, ok := touchedAt[i]; ok {
					a = touched[k].after
				}
				if fits(a) && (bi < 0 || a.FreeCPUs > bestCPUs) {
					bi, bestCPUs = i, a.FreeCPUs
				}
			}
			if k, ok := touchedAt[bi]; ok {
				best = k
			} else if bi >= 0 {
				best = len(touched)
				touched = append(touched, after{agents[bi], agents[bi]})
			}
		}
		if best >= 0 {
			b := &touched[best].after
			b.FreeCPUs -= driver[0]
			b.FreeMemMB -= driver[1]
		}
	}
	var short []string
	for _, r := range risks {
		n := r.need
		lost := 0
		for _, t := range touched {
			lost += placement.FitCount(t.before.FreeCPUs, t.before.FreeMemMB, n.cpus, n.memMB) -
				placement.FitCount(max(t.after.FreeCPUs, 0), max(t.after.FreeMemMB, 0), n.cpus, n.memMB)
		}
		if r.have-lost < r.min {
			short = append(short, n.teams...)
		}
	}
	if len(short) == 0 {
		return ""
	}
	slices.Sort(short)
	short = slices.Compact(short)
	return fmt.Sprintf("team %s past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team %s (their executors would no longer fit)",
		teams.Label(e.Team), strings.Join(short, ", team "))
}

// lostAtMost bounds the executors of shape (c, m) one agent holds less
// once (x, xm) more of it is taken: the ceiling of the ratio on each
// resource the shape asks for, plus one for rounding.
func lostAtMost(x, xm, c, m float64) int {
	if x <= 0 && xm <= 0 {
		return 0
	}
	n := 0.0
	if c > 0 {
		n = math.Ceil(x / c)
	}
	if m > 0 {
		n = max(n, math.Ceil(xm/m))
	}
	if math.IsNaN(n) || n > 1<<20 {
		return 1 << 20
	}
	return int(n) + 1
}
