package scheduler

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// Boot-aware placement and shifting work in time (docs/power.md). An agent
// that is off takes a boot time to come up; one that is booting comes up
// at its ready time. When a job does not fit on the agents that are on, a
// pass that knows the boot time (BootInfo) looks at the cluster as it
// will be — the agents on, those booting with what the pass has not yet
// promised of them, those off — and decides, cheapest first:
//
//  1. a plan that only needs agents already booting: the job waits for
//     them ("waiting for agent-03 to boot, ready by 02:40:15 UTC") and shares
//     their boot, at no extra cost;
//  2. a deadline job whose slack absorbs waiting for the room the running
//     jobs give back (their estimated ends) and then, if that room has not
//     come, still a boot: it waits for that warm capacity ("waiting for
//     warm capacity, starts by 02:40 UTC at the latest"), which costs
//     nothing, instead of paying for an agent's boot and run now;
//  3. otherwise the plan's agents that are off are powered on at once (a
//     decision the apply step carries out) and the job waits for them; a
//     deadline job whose slack cannot absorb the boot is marked at risk.
//
// The job is started by a later pass, once its agents are on (their
// registration wakes the core; the pass also wakes at the ready time).
// Jobs that wait this way, or for their start time (notBefore), wait by
// choice: they do not hold back the regular queue as a deadline job that
// does not fit does. A job held for its start time is decided as above
// one boot time before it, so that what it needs is up by then.
//
// With no BootInfo, or a zero boot time, the pass does as before: a job
// that fits only with powered-off agents starts at once on a plan that
// powers them on, and waits in RESERVING for them.

// BootInfo is what a Standby (package power) may also tell the pass: the
// boot time of an agent that is off and the agents booting now.
type BootInfo interface {
	BootState() BootState
}

// BootState is the boot side of the cluster at one instant.
type BootState struct {
	// BootTime is how long an agent that is off takes to register once
	// powered on; zero turns boot-aware placement off.
	BootTime time.Duration
	// Booting are the agents being powered on, with their whole capacity
	// (the pass subtracts what running jobs hold there).
	Booting []BootingAgent
}

// BootingAgent is an agent being powered on and when it should register.
type BootingAgent struct {
	Agent   placement.Agent
	ReadyAt time.Time
}

// deferred is an outcome of trying a job: it waits by choice (its start
// time, warm capacity, a boot) and does not hold back the regular queue.
const deferred outcome = rejected + 1

// decPowerOn: power the agents on (apply does it), and the job waits for
// them with the decision's waiting state.
const decPowerOn = decEvict + 1

// bootMargin is what a boot may overrun its expected time by before a job
// waiting for warm capacity would miss its deadline: waiting for warm
// capacity gives up this much earlier than the last moment.
func bootMargin(boot time.Duration) time.Duration { return boot / 2 }

// futureView is the cluster as it will be once the booting agents are up:
// the agents on (as the pass has marked them), the booting ones and those
// off, each with when it is ready.
type futureView struct {
	agents []placement.Agent
	ix     *placement.FitIndex
	at     map[string]int
	ready  map[string]time.Time // booting (or powered on by this pass): ready then
	off    map[string]bool      // off: a plan on it powers it on
}

// futureOf builds the pass's future view (once; plans waiting for a boot
// then mark it).
func (p *passRun) futureOf() *futureView {
	if p.future != nil {
		return p.future
	}
	b := &p.in.boot
	fv := &futureView{at: map[string]int{}, ready: map[string]time.Time{}, off: map[string]bool{}}
	fv.agents = slices.Clone(p.snap.Agents)
	for i, a := range fv.agents {
		fv.at[a.ID] = i
	}
	held := map[string][2]float64{} // what running jobs hold on booting agents
	for i := range p.running {
		r := &p.running[i]
		if r.plan == nil {
			continue
		}
		for _, as := range r.plan.Assignments {
			h := held[as.AgentID]
			h[0] += float64(as.Executors) * r.demand.CPUs
			h[1] += float64(as.Executors) * r.demand.MemMB
			held[as.AgentID] = h
		}
	}
	for _, ba := range b.Booting {
		a := ba.Agent
		h := held[a.ID]
		a.FreeCPUs, a.FreeMemMB = max(a.CPUs-h[0], 0), max(a.MemMB-h[1], 0)
		a.Active = true // paid for from its boot on: sharing it costs nothing more
		fv.ready[a.ID] = maxTime(ba.ReadyAt, p.now)
		if i, listed := fv.at[a.ID]; listed {
			// Registered already, not yet marked on by power management
			// (plans cannot use it yet: the snapshot shows nothing free):
			// it is still the boot. Power management marks it on at its
			// next look, which the core may not hear of: look again soon.
			fv.agents[i] = a
			p.wakeAtLeast(p.now.Add(time.Second))
			continue
		}
		fv.at[a.ID] = len(fv.agents)
		fv.agents = append(fv.agents, a)
	}
	for _, a := range p.standbyAgents {
		if _, known := fv.at[a.ID]; known || (a.FreeCPUs <= 0 && a.FreeMemMB <= 0) {
			continue
		}
		fv.at[a.ID] = len(fv.agents)
		fv.agents = append(fv.agents, a)
		fv.off[a.ID] = true
	}
	// The pass's earlier boot waits, on the agents not on now (their part
	// on the agents on is marked on the snapshot already).
	for _, c := range p.claims {
		fv.take(c.demand, c.plan, p.now.Add(b.BootTime), len(p.snap.Agents))
		if c.driverCPUs > 0 || c.driverMemMB > 0 {
			takeDriverRoom(fv.agents, fv.at, c.plan, c.driverCPUs, c.driverMemMB)
		}
	}
	fv.ix = placement.NewFitIndex(placement.Snapshot{Agents: fv.agents})
	p.future = fv
	return fv
}

// bootClaim is a plan waiting for a boot, decided earlier in the pass.
type bootClaim struct {
	demand placement.Demand
	plan   placement.Plan
	// The room kept for its driver (Config.DriverRoom), as a start keeps it.
	driverCPUs, driverMemMB float64
}

// take marks a plan's executors on the future view's agents (from index
// from on, and those booting: the first are the agents on now, whose part
// the pass's snapshot holds); an agent off is then booting, ready at
// bootReady.
func (fv *futureView) take(d placement.Demand, plan placement.Plan, bootReady time.Time, from int) {
	for _, as := range plan.Assignments {
		i, ok := fv.at[as.AgentID]
		if _, booting := fv.ready[as.AgentID]; !ok || (i < from && !booting) {
			continue
		}
		n := float64(as.Executors)
		a := &fv.agents[i]
		a.FreeCPUs, a.FreeMemMB = max(a.FreeCPUs-n*d.CPUs, 0), max(a.FreeMemMB-n*d.MemMB, 0)
		a.Active = true
		if fv.off[a.ID] {
			delete(fv.off, a.ID)
			fv.ready[a.ID] = bootReady
		}
	}
}

// notOnNow decides about a job that does not fit on the agents that are
// on now (nf says why): boot-aware when the pass knows the boot time, else
// a plan that powers agents on, else a wait (or a rejection, an eviction).
func (p *passRun) notOnNow(e *Entry, nf *placement.NoFit) outcome {
	if o, ok := p.bootAware(e); ok {
		return o
	}
	// Boot-aware, the future view holds every agent a standby plan could
	// use (less what the pass's boot waits took): no plan there, none here.
	if p.in.boot.BootTime <= 0 {
		if plan, ok := p.placeOnStandby(e); ok {
			p.start(e, plan)
			return started
		}
	}
	return p.waitOrEvict(e, nf)
}

// holdUntilStart keeps a job whose start time (notBefore) is ahead
// waiting; ok is false when it may start now. With the boot time known,
// a job that will not fit on the agents on has what it needs powered on
// one boot time before its start time (or shares a boot), so that it
// starts then, not a boot later.
func (p *passRun) holdUntilStart(e *Entry) (outcome, bool) {
	if e.NotBefore == nil || !e.NotBefore.After(p.now) {
		return 0, false
	}
	if boot := p.in.boot.BootTime; boot > 0 {
		early := e.NotBefore.Add(-boot)
		// Not for a job its team's maximum would hold at its start time.
		if !p.now.Before(early) && p.ix.Check(e.Demand) != nil && !p.overTeamMax(e) {
			if o, ok := p.bootAware(e); ok {
				return o, true
			}
		}
		p.wakeAtLeast(early)
	}
	atRisk := false
	if e.DeadlineAt != nil {
		atRisk = e.NotBefore.Add(p.d.estimate(e)).After(*e.DeadlineAt)
	}
	dc := decision{entry: e, wait: waitState{kind: waitText, text: "waiting for its start time " + dayClockTime(*e.NotBefore, p.now), atRisk: atRisk, byChoice: true}}
	p.wait(&dc)
	p.wakeAtLeast(*e.NotBefore)
	return deferred, true
}

// bootAware decides about a job that does not fit on the agents on now
// (see the top of this file); ok is false when boot-aware placement is off
// or no plan with the agents booting and off holds the job.
func (p *passRun) bootAware(e *Entry) (outcome, bool) {
	boot := p.in.boot.BootTime
	if boot <= 0 {
		return 0, false
	}
	fv := p.futureOf()
	if len(fv.ready) == 0 && len(fv.off) == 0 {
		return 0, false
	}
	if fv.ix.Check(e.Demand) != nil {
		return 0, false
	}
	est := p.d.estimate(e)
	// Its run starts once its agents are up: a deadline-aware policy must
	// see that much less slack.
	dm := p.d.demandAt(e, p.now)
	dm.Now = p.now.Add(boot)
	plan, err := p.d.policy.Place(placement.Snapshot{Agents: fv.agents}, dm)
	if err != nil {
		return 0, false
	}
	ready, last, waitingOn := p.now, "", 0
	var powerOn []string
	for _, as := range plan.Assignments {
		r, booting := fv.ready[as.AgentID]
		switch {
		case fv.off[as.AgentID]:
			r = p.now.Add(boot)
			powerOn = append(powerOn, as.AgentID)
		case !booting:
			continue
		}
		waitingOn++
		if last == "" || r.After(ready) {
			ready, last = maxTime(r, ready), as.AgentID
		}
	}
	if waitingOn == 0 {
		return 0, false // on agents only: the pass's snapshot said no
	}
	if len(powerOn) > 0 && e.DeadlineAt != nil {
		// Waiting for room on the agents that are on costs nothing; it is
		// chosen while the room is expected before the last moment to
		// power on and still meet the deadline (with a margin).
		giveUp := e.DeadlineAt.Add(-est - boot - bootMargin(boot))
		if at, ok := p.roomProfile().roomAt(e.Demand); ok && !at.After(giveUp) && giveUp.After(p.now) {
			dc := decision{entry: e, wait: waitState{kind: waitText,
				text: "waiting for warm capacity, starts by " + dayClockTime(giveUp, p.now) + " at the latest", byChoice: true}}
			p.wait(&dc)
			p.wakeAtLeast(giveUp)
			return deferred, true
		}
	}
	atRisk := e.DeadlineAt != nil && ready.Add(est).After(*e.DeadlineAt)
	dc := decision{entry: e, wait: waitState{kind: waitText, text: bootReason(fv.agents[fv.at[last]], waitingOn, ready, p.now), atRisk: atRisk, byChoice: true}}
	if len(powerOn) > 0 {
		dc.kind = decPowerOn
		dc.extra().powerOn = powerOn
	}
	p.wait(&dc)
	p.claim(e, plan, fv, boot)
	if ready.After(p.now) {
		p.wakeAtLeast(ready)
	} else {
		// Overdue: look again every little while (the agent's
		// registration, or power management marking it on, may come
		// without a cluster change the core hears of).
		p.wakeAtLeast(p.now.Add(max(time.Second, boot/20)))
	}
	return deferred, true
}

// claim marks a plan that waits for a boot: its executors are taken from
// the future view (the jobs after it share what is left of the boot), and
// from the pass's snapshot on the agents on now, so that no job after it
// in this pass takes that room.
func (p *passRun) claim(e *Entry, plan placement.Plan, fv *futureView, boot time.Duration) {
	c := bootClaim{demand: e.Demand, plan: plan}
	if p.d.cfg.DriverRoom {
		c.driverCPUs, c.driverMemMB = float64(e.driverCPUs), float64(e.driverMemMB)
	}
	p.claims = append(p.claims, c)
	onNow := map[string]int{}
	for i, a := range p.snap.Agents {
		onNow[a.ID] = i
	}
	fv.take(e.Demand, plan, p.now.Add(boot), 0)
	if c.driverCPUs > 0 || c.driverMemMB > 0 {
		// On the future view only: where the driver goes is decided when
		// the job starts.
		takeDriverRoom(fv.agents, fv.at, plan, c.driverCPUs, c.driverMemMB)
	}
	fv.ix = placement.NewFitIndex(placement.Snapshot{Agents: fv.agents})
	var agents []placement.Agent
	for _, as := range plan.Assignments {
		i, ok := onNow[as.AgentID]
		if !ok {
			continue
		}
		if agents == nil {
			agents = slices.Clone(p.snap.Agents)
		}
		n := float64(as.Executors)
		a := &agents[i]
		a.FreeCPUs, a.FreeMemMB = max(a.FreeCPUs-n*e.Demand.CPUs, 0), max(a.FreeMemMB-n*e.Demand.MemMB, 0)
	}
	if agents != nil {
		p.snap = placement.Snapshot{Agents: agents}
		p.ix = placement.NewFitIndex(p.snap)
		p.standby, p.room, p.future = nil, nil, nil
	}
}

// bootReason is the waiting reason of a job waiting for a boot: the agent
// that is ready last, and when (a time of day, not a count of seconds: the
// reason is stored and shown until it changes, and "ready in 60 s" was
// still shown a minute later, or changed at every pass, each change a
// "waited" event in the job's timeline).
func bootReason(a placement.Agent, n int, ready, now time.Time) string {
	name := a.Hostname
	if name == "" {
		name = a.ID
	}
	if n > 1 {
		name += fmt.Sprintf(" (and %d more)", n-1)
	}
	if !ready.After(now) {
		return "waiting for " + name + " to boot, ready any moment"
	}
	if r := ready.Truncate(time.Second); r.Before(ready) {
		ready = r.Add(time.Second) // up to the second: never earlier than it is
	}
	return fmt.Sprintf("waiting for %s to boot, ready by %s", name, dayClockTime(ready, now))
}

// clockTime is a time of day as waiting reasons show it (UTC).
func clockTime(t time.Time) string {
	t = t.UTC()
	if t.Second() == 0 {
		return t.Format("15:04") + " UTC"
	}
	return t.Format("15:04:05") + " UTC"
}

// dayClockTime is t as clockTime, with its date when t is not on now's
// day (UTC): a start time tomorrow at 10:10 read "10:10 UTC", as if it
// were today.
func dayClockTime(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if y, m, d := t.Date(); y != now.Year() || m != now.Month() || d != now.Day() {
		return t.Format("2006-01-02 ") + clockTime(t)
	}
	return clockTime(t)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// applyPowerOn carries out a decision to power agents on for a waiting
// job: each is handed to the Provisioner, then the job's waiting state is
// recorded. A failed power-on is retried by a later pass.
func (c *Core) applyPowerOn(ctx context.Context, now time.Time, d *decision) error {
	var err error
	for _, id := range d.powerOn {
		if perr := c.powerOnFor(ctx, id, d.entry.ID, "waits for it to boot"); perr != nil {
			err = fmt.Errorf("scheduler: power on agent %s for job %s: %w", id, d.entry.ID, perr)
			c.fullDue = true
			break
		}
	}
	c.applyWait(now, d)
	return err
}
