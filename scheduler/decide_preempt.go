package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// The preemption part of a pass's decisions (the rules are in preempt.go):
// for a waiting deadline job that does not fit, whether it will miss its
// deadline waiting, and which running jobs to evict for it.

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
	pv := &PreemptionView{LatestStart: e.DeadlineAt.Add(-est - startAllowance), Policy: cfg.Preemption}
	if pending := p.pendingVictims(dc); len(pending) > 0 {
		pv.WillMiss, pv.Evicting = true, pending
		dc.wait.pre = pv
		return
	}
	d := p.d.demandAt(e, now)
	if at, ok := p.roomProfile().roomAt(d); ok {
		pv.RoomExpectedAt = &at
		pv.WillMiss = at.After(pv.LatestStart)
	}
	// Without an expected time (jobs holding resources have no estimate)
	// nothing is claimed and nothing evicted.
	check := pv.LatestStart
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
	cands = p.teamVictims(e, cands)
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
	dc.kind, dc.extra().victims = decEvict, chosen
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
		x := dc.extra()
		x.evicting, x.setEvicting = kept, true
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
