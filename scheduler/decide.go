package scheduler

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// The scheduling pass is split in two (docs/architecture.md): decide, a
// pure function from what the core knows (a snapshot of the cluster, the
// queues' entries, the jobs holding resources, now) to a list of
// decisions, and apply (apply.go), which carries them out: the store, the
// power provisioner, the cluster. decide does no I/O, reads no clock and
// takes no lock; it changes nothing it is given. It marks its own starts
// on its copy of the snapshot, so that the jobs after a start are placed
// on what is left.

// decisionKind says what a decision does.
type decisionKind uint8

const (
	// decStart: start the job with the plan (store the move to RESERVING
	// with the plan, power on the agents it activates, apply it).
	decStart decisionKind = iota + 1
	// decReject: the job can never run here: REJECTED with the reason.
	decReject
	// decWait: the job waits; its waiting state (and, for a regular job,
	// the time it was first skipped) changed.
	decWait
	// decEvict: evict running jobs for the waiting deadline job; it waits
	// meanwhile (wait holds the preemption view as decided).
	decEvict
)

func (k decisionKind) String() string {
	switch k {
	case decStart:
		return "start"
	case decReject:
		return "reject"
	case decWait:
		return "wait"
	case decEvict:
		return "evict"
	}
	return fmt.Sprintf("decision(%d)", uint8(k))
}

// decision is one thing a pass decided about one waiting job.
type decision struct {
	kind  decisionKind
	entry *Entry
	// Start.
	plan   placement.Plan
	atRisk bool
	// Reject.
	reason string
	// Wait and Evict: the waiting state; skipped sets a regular job's
	// SkippedSince to the pass's time (it was zero).
	wait    waitState
	skipped bool
	// evicting, when setEvicting, replaces the jobs being evicted for it
	// (those that ended are dropped).
	evicting    []string
	setEvicting bool
	// Evict: the victims, in the order they are evicted.
	victims []Victim
}

// runningJob is a job that holds resources as a pass sees it (a copy of
// the core's activeJob).
type runningJob struct {
	id          string
	plan        *placement.Plan // nil when recovered after a restart
	state       State
	startedAt   *time.Time // when its current run started (RUNNING only)
	preempting  bool
	estimate    time.Duration
	deadline    *time.Time
	demand      placement.Demand
	preemptions int
}

// passInput is what one pass decides from.
type passInput struct {
	now time.Time
	// snap is the cluster's powered-on agents (annotated with
	// RemainingActive); standby the powered-off agents a plan may power on
	// (and those booting, with nothing free).
	snap    placement.Snapshot
	standby []placement.Agent
	// deadline are the deadline queue's entries the pass looks at, in EDF
	// order; deadlineQueued is how many the queue holds in all.
	deadline       []*Entry
	deadlineQueued int
	// regular and regularFresh are the regular queue's entries (all of
	// them, and those that entered it since the last pass), in queue
	// order; full says the pass looks at every entry, blocked that regular
	// jobs waited behind deadline jobs at the last pass.
	regular, regularFresh []*Entry
	full, blocked         bool
	// running are the jobs holding resources; evictLog the recent
	// evictions (for PreemptMaxShare).
	running  []runningJob
	evictLog []evictRecord
}

// passOutput is what one pass decided.
type passOutput struct {
	decisions []decision
	// wakeAt is the earliest timer the waiting jobs need (a deadline job
	// becoming at risk, a promotion, a preemption check); zero for none.
	wakeAt time.Time
	// snap is the input snapshot with the pass's starts marked; ix its
	// fit index.
	snap placement.Snapshot
	ix   *placement.FitIndex
}

// decider holds what decisions depend on besides a pass's input: the
// configuration and the placement policy. It has no state of its own.
type decider struct {
	cfg    Config
	policy placement.Policy
}

// estimate is the job's estimated run time in wall time (see DurationScale).
func (d *decider) estimate(e *Entry) time.Duration {
	return time.Duration(e.EstimatedDurationSeconds * float64(time.Second) * d.cfg.DurationScale)
}

// atRisk: a waiting deadline job is at risk when, started now, it would
// end after its deadline (with its estimated duration), or when its
// deadline has passed.
func (d *decider) atRisk(e *Entry, now time.Time) bool {
	dl := e.DeadlineAt
	if dl == nil {
		return false
	}
	if est := d.estimate(e); est > 0 {
		return now.Add(est).After(*dl)
	}
	return !now.Before(*dl)
}

// demandAt is the entry's demand as the policy sees it at now: the time
// of the decision and the estimate in wall time (see DurationScale), so
// that deadline-aware policies compare like with like.
func (d *decider) demandAt(e *Entry, now time.Time) placement.Demand {
	dm := e.Demand
	dm.Now = now
	dm.EstimatedDuration = d.estimate(e)
	return dm
}

// promotions are the regular jobs skipped for longer than PromoteAfter:
// they move into the deadline queue (see Config.PromoteAfter).
func (d *decider) promotions(regular []*Entry, now time.Time) []*Entry {
	if d.cfg.PromoteAfter < 0 || d.cfg.Ordering == OrderFIFO {
		return nil
	}
	var out []*Entry
	for _, e := range regular {
		if !e.SkippedSince.IsZero() && now.Sub(e.SkippedSince) >= d.cfg.PromoteAfter {
			out = append(out, e)
		}
	}
	return out
}

// deadlineOrder is the order in which one pass tries the deadline queue's
// entries (all of them, or those new since the last pass, in EDF order).
// Algorithm 3 (and FIFO, whose deadline queue is empty) take it as it is:
// earliest deadline first. OrderFeasibleEDF moves the jobs that can no
// longer meet their deadline even if started now (atRisk: now + estimate >
// deadline, or the deadline passed) behind those that still can, keeping
// EDF order within both groups. Under overload this stops hopeless jobs
// from taking the resources that jobs which can still make it need (EDF's
// domino effect); the hopeless jobs still run, as soon as no feasible job
// can use the resources. Promoted regular jobs (no deadline) count as
// feasible. It returns a new slice.
func (d *decider) deadlineOrder(entries []*Entry, now time.Time) []*Entry {
	if d.cfg.Ordering != OrderFeasibleEDF {
		return entries
	}
	out := make([]*Entry, 0, len(entries))
	var late []*Entry
	for _, e := range entries {
		if d.atRisk(e, now) {
			late = append(late, e)
		} else {
			out = append(out, e)
		}
	}
	return append(out, late...)
}

// passRun is the working state of one decide call.
type passRun struct {
	d    *decider
	in   *passInput
	now  time.Time
	snap placement.Snapshot // the caller's until the first start, then a copy
	ix   *placement.FitIndex
	// standbyAgents is in.standby, copied once a start powers one on.
	standbyAgents []placement.Agent
	standbyCopied bool
	standby       *standbyView // built at most once per snapshot
	room          *roomProfile // built at most once per snapshot
	// running is in.running, copied once a start or an eviction changes it.
	running        []runningJob
	runningCopied  bool
	evictLog       []evictRecord
	preemptScanned int
	wakeAt         time.Time
	out            []decision
}

// outcome of trying one job.
type outcome uint8

const (
	waited outcome = iota
	started
	rejected
)

// decide is one pass of thesis Algorithm 3 over in: deadline jobs are
// tried in EDF order (see deadlineOrder); only if no deadline job is left
// waiting are regular jobs tried, in queue order, a job that does not fit
// being skipped and the next tried. A job that fits no agent now is
// checked in O(1) against a FitIndex of the snapshot; only jobs that can
// fit run the placement policy. A wait is a decision only when the job's
// waiting state changes, so that a pass over 100,000 waiting jobs whose
// reasons stay the same decides nothing about them.
func (d *decider) decide(in passInput) passOutput {
	p := &passRun{d: d, in: &in, now: in.now, snap: in.snap, standbyAgents: in.standby,
		running: in.running, evictLog: in.evictLog}
	p.ix = placement.NewFitIndex(p.snap)
	deadlineLeft := in.deadlineQueued
	for _, e := range d.deadlineOrder(in.deadline, in.now) {
		switch p.try(e) {
		case started:
			deadlineLeft--
			continue
		case rejected:
			deadlineLeft--
		}
		p.noteWake(e)
	}
	if deadlineLeft <= 0 {
		regular := in.regularFresh
		if in.full || in.blocked {
			regular = in.regular
		}
		for _, e := range regular {
			if p.try(e) == started {
				continue
			}
			p.noteWake(e)
		}
	} else {
		regular := in.regularFresh
		if in.full || !in.blocked {
			regular = in.regular
		}
		for _, e := range regular {
			p.wait(decision{entry: e, wait: waitState{kind: waitDeadlineFirst}, skipped: e.SkippedSince.IsZero()})
			p.noteWake(e)
		}
	}
	return passOutput{decisions: p.out, wakeAt: p.wakeAt, snap: p.snap, ix: p.ix}
}

// try places one waiting job on the pass's snapshot.
func (p *passRun) try(e *Entry) outcome {
	if nf := p.ix.Check(e.Demand); nf != nil {
		if plan, ok := p.placeOnStandby(e); ok {
			p.start(e, plan)
			return started
		}
		return p.waitOrEvict(e, nf)
	}
	plan, err := p.d.policy.Place(p.snap, p.d.demandAt(e, p.now))
	if err != nil {
		var nf *placement.NoFit
		if errors.As(err, &nf) {
			if plan, ok := p.placeOnStandby(e); ok {
				p.start(e, plan)
				return started
			}
			return p.waitOrEvict(e, nf)
		}
		// An invalid demand: it can never run.
		p.out = append(p.out, decision{kind: decReject, entry: e, reason: err.Error()})
		return rejected
	}
	p.start(e, plan)
	return started
}

// start decides to start e with plan and marks the plan on the pass's
// snapshot.
func (p *passRun) start(e *Entry, plan placement.Plan) {
	p.out = append(p.out, decision{kind: decStart, entry: e, plan: plan, atRisk: p.d.atRisk(e, p.now)})
	p.markStart(e, plan)
}

// markStart takes plan's executors (and, with Config.DriverRoom, room for
// the driver) from a copy of the pass's snapshot, as the cluster's next
// snapshot would show them: the plan's agents are active, each for at
// least the job's estimate. Powered-off agents the plan powers on are
// booting: standby with nothing free. The job holds resources from now.
func (p *passRun) markStart(e *Entry, plan placement.Plan) {
	agents := slices.Clone(p.snap.Agents)
	at := make(map[string]int, len(agents))
	for i := range agents {
		at[agents[i].ID] = i
	}
	est := p.d.estimate(e)
	for _, as := range plan.Assignments {
		i, ok := at[as.AgentID]
		if !ok || as.Executors <= 0 {
			continue
		}
		a := &agents[i]
		n := float64(as.Executors)
		a.FreeCPUs = max(a.FreeCPUs-n*e.Demand.CPUs, 0)
		a.FreeMemMB = max(a.FreeMemMB-n*e.Demand.MemMB, 0)
		a.Active = true
		if est > a.RemainingActive {
			a.RemainingActive = est
		}
	}
	if p.d.cfg.DriverRoom && (e.driverCPUs > 0 || e.driverMemMB > 0) {
		takeDriverRoom(agents, at, plan, e.driverCPUs, e.driverMemMB)
	}
	for _, id := range plan.Activated {
		if _, live := at[id]; live {
			continue
		}
		for i := range p.standbyAgents {
			if p.standbyAgents[i].ID == id && (p.standbyAgents[i].FreeCPUs > 0 || p.standbyAgents[i].FreeMemMB > 0) {
				if !p.standbyCopied {
					p.standbyAgents, p.standbyCopied = slices.Clone(p.standbyAgents), true
				}
				p.standbyAgents[i].FreeCPUs, p.standbyAgents[i].FreeMemMB = 0, 0
			}
		}
	}
	p.snap = placement.Snapshot{Agents: agents}
	p.ix = placement.NewFitIndex(p.snap)
	p.standby, p.room = nil, nil
	pl := plan
	p.copyRunning()
	p.running = append(p.running, runningJob{id: e.ID, plan: &pl, state: Reserving, estimate: est,
		deadline: e.DeadlineAt, demand: e.Demand, preemptions: e.Preemptions})
}

// takeDriverRoom keeps room for a started job's driver, as the live
// cluster's snapshot does (offers.Cluster.Snapshot): on the first of the
// plan's agents that has it, else on the agent with the most free cpus
// that has it; nowhere when none has.
func takeDriverRoom(agents []placement.Agent, at map[string]int, plan placement.Plan, cpus, memMB float64) {
	best := -1
	for _, as := range plan.Assignments {
		if i, ok := at[as.AgentID]; ok && agents[i].FreeCPUs+1e-9 >= cpus && agents[i].FreeMemMB+1e-9 >= memMB {
			best = i
			break
		}
	}
	if best < 0 {
		for i := range agents {
			if agents[i].FreeCPUs+1e-9 >= cpus && agents[i].FreeMemMB+1e-9 >= memMB && (best < 0 || agents[i].FreeCPUs > agents[best].FreeCPUs) {
				best = i
			}
		}
	}
	if best >= 0 {
		agents[best].FreeCPUs -= cpus
		agents[best].FreeMemMB -= memMB
	}
}

func (p *passRun) copyRunning() {
	if !p.runningCopied {
		p.running = slices.Clone(p.running)
		p.runningCopied = true
	}
}

// standbyView is the snapshot with the powered-off agents added, built at
// most once per snapshot.
type standbyView struct {
	snap  placement.Snapshot
	ix    *placement.FitIndex
	extra int // powered-off agents added
}

func (p *passRun) standbyOf() *standbyView {
	if p.standby != nil {
		return p.standby
	}
	v := &standbyView{snap: p.snap}
	if extra := p.standbyAgents; len(extra) > 0 {
		live := make(map[string]bool, len(p.snap.Agents))
		for _, a := range p.snap.Agents {
			live[a.ID] = true
		}
		ag := make([]placement.Agent, 0, len(p.snap.Agents)+len(extra))
		ag = append(ag, p.snap.Agents...)
		for _, a := range extra {
			if !live[a.ID] { // registered again already: it is in the snapshot
				ag = append(ag, a)
				v.extra++
			}
		}
		v.snap = placement.Snapshot{Agents: ag}
	}
	v.ix = placement.NewFitIndex(v.snap)
	p.standby = v
	return v
}

// placeOnStandby places a job that fits no powered-on agent on the
// cluster with the powered-off agents added (the plan activates them).
func (p *passRun) placeOnStandby(e *Entry) (placement.Plan, bool) {
	v := p.standbyOf()
	if v.extra == 0 || v.ix.Check(e.Demand) != nil {
		return placement.Plan{}, false
	}
	plan, err := p.d.policy.Place(v.snap, p.d.demandAt(e, p.now))
	return plan, err == nil
}

// waitOrEvict handles a job that does not fit now (nf): it is rejected
// when it could never run on this cluster (powered-off agents included),
// else it waits with the reason; a deadline job may then have running
// jobs evicted for it (considerPreemption).
func (p *passRun) waitOrEvict(e *Entry, nf *placement.NoFit) outcome {
	v := p.standbyOf()
	if len(v.snap.Agents) > 0 {
		whole := nf
		if v.extra > 0 {
			whole = v.ix.Check(e.Demand)
		}
		if whole != nil && whole.Never {
			p.out = append(p.out, decision{kind: decReject, entry: e, reason: whole.Error()})
			return rejected
		}
		if !v.ix.FitsEmpty(e.Demand) {
			p.out = append(p.out, decision{kind: decReject, entry: e, reason: fmt.Sprintf("does not fit even on the empty cluster: it needs %d executors of %g cpus and %g MiB",
				e.Demand.Executors, e.Demand.CPUs, e.Demand.MemMB)})
			return rejected
		}
	}
	// No agent known yet (a restart, a partition): wait, never reject.
	w := *nf
	w.Never = false
	dc := decision{entry: e, skipped: !e.IsDeadlineJob() && !e.Promoted && e.SkippedSince.IsZero(),
		// A deadline job keeps its preemption view; considerPreemption updates it.
		wait: waitState{kind: waitNoFit, nf: w, atRisk: p.d.atRisk(e, p.now), pre: e.wait.pre}}
	if e.DeadlineAt != nil {
		p.considerPreemption(&dc)
	}
	p.wait(dc)
	return waited
}

// wait records a wait decision when it changes something.
func (p *passRun) wait(dc decision) {
	if dc.kind == 0 {
		dc.kind = decWait
	}
	if dc.kind == decWait && !dc.skipped && !dc.setEvicting && sameWait(dc.wait, dc.entry.wait) {
		return
	}
	p.out = append(p.out, dc)
}

// sameWait reports whether two waiting states read the same.
func sameWait(a, b waitState) bool {
	return a.kind == b.kind && a.text == b.text && a.nf == b.nf && a.atRisk == b.atRisk && a.pre.equal(b.pre)
}

// noteWake takes a waiting entry's next timer into account: when a deadline
// job becomes at risk, when a skipped regular job is due for promotion.
// It looks at the entry as the pass's last decision about it leaves it.
func (p *passRun) noteWake(e *Entry) {
	atRisk, skipped := e.wait.atRisk, e.SkippedSince
	if n := len(p.out); n > 0 && p.out[n-1].entry == e {
		if dc := &p.out[n-1]; dc.kind == decWait || dc.kind == decEvict {
			atRisk = dc.wait.atRisk
			if dc.skipped {
				skipped = p.now
			}
		}
	}
	if e.DeadlineAt != nil && !atRisk {
		if est := p.d.estimate(e); est > 0 {
			p.wakeAtLeast(e.DeadlineAt.Add(-est + time.Nanosecond))
		} else {
			p.wakeAtLeast(*e.DeadlineAt)
		}
	}
	if !e.inDQ && p.d.cfg.PromoteAfter > 0 && p.d.cfg.Ordering != OrderFIFO && !skipped.IsZero() {
		p.wakeAtLeast(skipped.Add(p.d.cfg.PromoteAfter))
	}
}

// wakeAtLeast makes the next pass happen no later than t (when t is ahead).
func (p *passRun) wakeAtLeast(t time.Time) {
	if t.After(p.now) && (p.wakeAt.IsZero() || t.Before(p.wakeAt)) {
		p.wakeAt = t
	}
}

// roomProfile is the pass's view of the running jobs' expected ends on its
// snapshot (built once per snapshot). Jobs being evicted for a deadline
// job that still waits are left out: their room is that job's.
func (p *passRun) roomProfile() *roomProfile {
	if p.room != nil {
		return p.room
	}
	rp := &roomProfile{base: p.snap, ix: map[int]*placement.FitIndex{}}
	for i := range p.running {
		a := &p.running[i]
		if a.preempting || a.plan == nil || a.estimate <= 0 {
			continue
		}
		start := p.now
		if a.startedAt != nil && a.state == Running {
			start = *a.startedAt
		}
		end := start.Add(a.estimate)
		if end.Before(p.now) {
			end = p.now
		}
		rp.rel = append(rp.rel, release{at: end, v: Victim{ID: a.id, Plan: *a.plan, Demand: a.demand}})
	}
	slices.SortFunc(rp.rel, func(x, y release) int {
		if c := x.at.Compare(y.at); c != 0 {
			return c
		}
		return strings.Compare(x.v.ID, y.v.ID)
	})
	p.room = rp
	return rp
}

// victimOf describes a running job as a possible victim; ok is false when
// it is not running or already being evicted.
func victimOf(a *runningJob) (Victim, bool) {
	if a.state != Running || a.preempting || a.plan == nil || a.startedAt == nil {
		return Victim{}, false
	}
	return Victim{ID: a.id, Deadline: a.deadline, RunningSince: *a.startedAt, Estimate: a.estimate,
		Preemptions: a.preemptions, Plan: *a.plan, Demand: a.demand}, true
}

// considerPreemption looks at a waiting deadline job that does not fit
// now: whether it will miss its deadline waiting, and if so, with a
// preemption policy, decides to evict running jobs for it. It records
// what it found in the decision's waiting state (its preemption view).
func (p *passRun) considerPreemption(dc *decision) {
	e, now, cfg := dc.entry, p.now, &p.d.cfg
	if p.d.atRisk(e, now) {
		dc.wait.pre = nil // too late either way: the at-risk reason says so
		return
	}
	p.preemptScanned++
	if p.preemptScanned > preemptScanLimit {
		return
	}
	est := p.d.estimate(e)
	pv := &PreemptionView{LatestStart: e.DeadlineAt.Add(-est), Policy: cfg.Preemption}
	if pending := p.pendingVictims(dc); len(pending) > 0 {
		pv.WillMiss, pv.Evicting = true, pending
		dc.wait.pre = pv
		return
	}
	d := p.d.demandAt(e, now)
	if at, ok := p.roomProfile().roomAt(d); ok {
		pv.RoomExpectedAt = &at
		pv.WillMiss = at.After(pv.LatestStart.Add(-evictionAllowance))
	}
	// Without an expected time (jobs holding resources have no estimate)
	// nothing is claimed and nothing evicted.
	check := pv.LatestStart.Add(-evictionAllowance)
	if !pv.WillMiss || cfg.Preemption == PreemptNone {
		if !pv.WillMiss {
			pv = nil // the reason needs no preemption note
		}
		dc.wait.pre = pv
		if cfg.Preemption != PreemptNone {
			p.wakeAtLeast(check) // look again before it is too late
		}
		return
	}
	rules := PreemptRules{Protect: cfg.PreemptProtect, MaxPreemptions: cfg.MaxPreemptions}
	var cands []Victim
	for i := range p.running {
		v, ok := victimOf(&p.running[i])
		if !ok {
			continue
		}
		if ok, _ := rules.Eligible(&v, *e.DeadlineAt, est, now); ok {
			cands = append(cands, v)
		}
	}
	OrderVictims(cfg.Preemption, cands, now)
	chosen := ChooseVictims(p.snap, d, cands)
	if chosen == nil {
		pv.Blocked = "no running job may be evicted for it (protected, evicted too often, or with a deadline of its own to meet)"
		dc.wait.pre = pv
		p.wakeAtLeast(check)
		return
	}
	ids := make([]string, len(chosen))
	var cpus float64
	for i, v := range chosen {
		ids[i] = v.ID
		cpus += v.CPUs()
	}
	if free, until, none := p.evictionRoom(); cpus > free+1e-9 && !(none && len(chosen) == 1) {
		pv.WouldEvict = ids
		pv.Blocked = fmt.Sprintf("the eviction limit (%g%% of the running jobs' cpus per minute) is reached", cfg.PreemptMaxShare*100)
		dc.wait.pre = pv
		p.wakeAtLeast(until)
		return
	}
	// Evict: the victims no longer count as running for the jobs after
	// this one, and their eviction counts against PreemptMaxShare.
	p.copyRunning()
	for _, v := range chosen {
		for i := range p.running {
			if p.running[i].id == v.ID {
				p.running[i].preempting = true
			}
		}
		p.evictLog = append(p.evictLog, evictRecord{at: now, cpus: v.CPUs()})
	}
	p.room = nil
	pv.Evicting = ids
	dc.wait.pre = pv
	dc.kind, dc.victims = decEvict, chosen
}

// pendingVictims are the jobs evicted for the decision's job that still
// hold resources; when some ended, the decision drops them.
func (p *passRun) pendingVictims(dc *decision) []string {
	e := dc.entry
	if len(e.evicting) == 0 {
		return nil
	}
	var kept []string
	for _, id := range e.evicting {
		for i := range p.running {
			if p.running[i].id == id && p.running[i].preempting {
				kept = append(kept, id)
				break
			}
		}
	}
	if len(kept) != len(e.evicting) {
		dc.evicting, dc.setEvicting = kept, true
	}
	return slices.Clone(kept)
}

// evictionRoom is how many cpus may still be evicted now under
// PreemptMaxShare, when the oldest eviction of the window expires, and
// whether the window holds no eviction (one job may then go whatever its
// size, or a cluster held by one big job could never be preempted).
func (p *passRun) evictionRoom() (float64, time.Time, bool) {
	var used float64
	var oldest time.Time
	n := 0
	for _, r := range p.evictLog {
		if p.now.Sub(r.at) < preemptWindow {
			if n == 0 {
				oldest = r.at
			}
			n++
			used += r.cpus
		}
	}
	var running float64
	for i := range p.running {
		if a := &p.running[i]; a.plan != nil {
			running += float64(a.plan.Executors()) * a.demand.CPUs
		}
	}
	until := p.now.Add(preemptWindow)
	if n > 0 {
		until = oldest.Add(preemptWindow)
	}
	return p.d.cfg.PreemptMaxShare*running - used, until, n == 0
}
