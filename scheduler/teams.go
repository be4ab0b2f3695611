package scheduler

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/teams"
)

// The team policy in a pass (package teams has the settings and the pure
// share rules). Without a teams configuration (Config.Teams nil or empty)
// none of this runs and a pass decides as it always did. With one:
//
//   - a job whose team would hold more than its maximum running cpus or
//     memory with it waits, with the reason "team analytics at its cpu
//     limit" (deadline jobs too); such a job neither counts as a deadline
//     job regular jobs wait behind nor is skipped towards promotion. A
//     job held for its team's budget or waiting for its start time says
//     that instead (try asks the team policy only about a job that may
//     start now);
//   - regular jobs are tried team by team in weighted dominant-resource
//     fairness order: teams below their guarantee first (the least filled
//     first), then the others by their weighted dominant share, recomputed
//     after each start; within a team, the queue's own order (demand);
//   - deadline jobs stay in EDF order, but one that would take its team
//     past its guarantee starts only if the free room left after it still
//     holds what other teams' guaranteed deadline jobs wait for (each
//     team's waiting deadline jobs, up to what is left of its guarantee):
//     room another team is owed is never given to a team beyond its own.
//     The check is on cpus and memory in aggregate, and then on executor
//     slots (protectSlots, on the plan the job would start with): the owed
//     jobs' executors must still fit on the agents, whole, where they fit
//     before the job (free room summed over agents holds no executor when
//     it is spread thin).
//
// A job's footprint is its executors' cpus and memory plus its driver's,
// and a team's usage the footprints of its jobs that hold resources.

// teamPass is the team policy's working state in one pass; nil without teams.
type teamPass struct {
	cfg   *teams.Config
	total teams.Usage
	// free is the snapshot's free room, less the footprints of the pass's starts.
	free teams.Usage
	// byName is each team's state in the pass (made on first use);
	// lastName and lastState cache the last lookup (queues hold runs of
	// one team's jobs).
	byName    map[string]*teamState
	lastName  string
	lastState *teamState
	starts    map[string]time.Time // in.teamStarts (read only)
	now       time.Time
	// anyOwed: some team was owed room for its deadline jobs at the start.
	anyOwed bool
	// heldDeadline counts the deadline queue's entries held by their
	// team's maximum at the pass's start: regular jobs do not wait behind
	// them.
	heldDeadline int
	// started: owed deadline entries the pass started (no longer owed).
	started map[*Entry]bool
	// slotsDue is the deadline entry teamHold let through past its
	// team's guarantee: try checks its executor slots on the plan it
	// makes (slotHold), so that the job is placed once, and only when
	// nothing else holds it (its budget, its start time).
	slotsDue *Entry
}

// teamState is one team in a pass.
type teamState struct {
	name string
	t    teams.Team
	// use is what its jobs hold (running, and started by the pass).
	use teams.Usage
	// owed, for a team with a guarantee, is the footprints of its waiting
	// deadline jobs (those within its maximum at the pass's start), and
	// owedJobs those jobs (in the deadline queue's order).
	owed     teams.Usage
	owedJobs []*Entry
	// needs are the executor slots its owed jobs within its guarantee ask
	// for (slotNeeds; needsOK: up to date).
	needs   []slotNeed
	needsOK bool
	// last is its last start (the pass's own starts at its time): between
	// teams ranking equal, the one that started a job least recently goes
	// first, so that ties never starve a team.
	last time.Time
	// q is its regular entries in fairOrder.
	q *teamQueue
	// The reasons of its jobs held at its maximums (limitReason).
	cpuReason, memReason string
}

// team is the named team's state, made on first use.
func (tp *teamPass) team(name string) *teamState {
	if tp.lastState != nil && tp.lastName == name {
		return tp.lastState
	}
	ts := tp.byName[name]
	if ts == nil {
		ts = &teamState{name: name, t: tp.cfg.Team(name), last: tp.starts[name]}
		tp.byName[name] = ts
	}
	tp.lastName, tp.lastState = name, ts
	return ts
}

// footprint is what a waiting job holds once started.
func footprint(e *Entry) teams.Usage {
	n := float64(e.Demand.Executors)
	return teams.Usage{CPUs: n*e.Demand.CPUs + float64(e.driverCPUs), MemMB: n*e.Demand.MemMB + float64(e.driverMemMB)}
}

// runningFootprint is what a job holding resources holds.
func runningFootprint(r *runningJob) teams.Usage {
	n := float64(r.demand.Executors)
	if r.plan != nil {
		n = float64(r.plan.Executors())
	}
	return teams.Usage{CPUs: n*r.demand.CPUs + r.driverCPUs, MemMB: n*r.demand.MemMB + r.driverMemMB}
}

// teamUsage sums the footprints of jobs holding resources by team.
func teamUsage(running []runningJob) map[string]teams.Usage {
	use := map[string]teams.Usage{}
	for i := range running {
		r := &running[i]
		use[r.team] = use[r.team].Add(runningFootprint(r))
	}
	return use
}

// newTeamPass sets up the team policy for one pass (nil without teams).
func newTeamPass(in *passInput) *teamPass {
	if in.teams.Empty() {
		return nil
	}
	tc, tm := in.snap.Totals()
	tp := teamRanking(in.teams, teams.Usage{CPUs: tc, MemMB: tm}, in.running, in.teamStarts, in.now)
	for _, a := range in.snap.Agents {
		tp.free = tp.free.Add(teams.Usage{CPUs: a.FreeCPUs, MemMB: a.FreeMemMB})
	}
	// The deadline queue is looked through only when a maximum or a
	// guarantee can matter (O(queue) a pass).
	anyMax, anyGuarantee := tp.cfg.Limits()
	for _, e := range in.deadlineAll {
		if !anyMax && !anyGuarantee {
			break
		}
		if _, held := in.budgetHeld[e.Team]; held {
			continue // out of the count already (budgetInput), and it cannot start
		}
		ts := tp.team(e.Team)
		fp := footprint(e)
		if ts.t.OverMax(ts.use, fp) != "" {
			looked := in.full || e.fresh // the pass tries it
			switch {
			case looked && e.NotBefore != nil && e.NotBefore.After(in.now):
				// It waits for its start time (by choice: its outcome
				// takes it out of the count), not for its team.
			case looked || !e.wait.byChoice:
				// One the pass does not look at is counted here when it
				// was held at its last look (for its team: not by
				// choice); one that waited by choice is out of the count
				// already (deferredOut). TestHeldDeadlineCountInIncrementalPass.
				tp.heldDeadline++
			}
			continue
		}
		if e.DeadlineAt != nil && ts.t.HasGuarantee() {
			ts.owed = ts.owed.Add(fp)
			ts.owedJobs = append(ts.owedJobs, e)
			tp.anyOwed = true
		}
	}
	return tp
}

// teamRanking is the team policy's state as a pass starts, as far as the
// ranks between teams need it (rankOf, fairOrder): what each team's jobs
// hold of the cluster's total, and each team's last start. newTeamPass
// adds the free room and the room owed to guaranteed teams; the published
// regular queue (publish) is put in fairOrder's order on it alone.
func teamRanking(cfg *teams.Config, total teams.Usage, running []runningJob, starts map[string]time.Time, now time.Time) *teamPass {
	tp := &teamPass{cfg: cfg, total: total, byName: map[string]*teamState{}, starts: starts, now: now}
	for i := range running {
		r := &running[i]
		ts := tp.team(r.team)
		ts.use = ts.use.Add(runningFootprint(r))
	}
	return tp
}

// noneOwed reports that no team is owed room for its deadline jobs.
func (tp *teamPass) noneOwed() bool { return !tp.anyOwed }

// heldDeadlineJobs is how many deadline queue entries the team maximums
// hold at the pass's start (0 without teams).
func (p *passRun) heldDeadlineJobs() int {
	if p.teams == nil {
		return 0
	}
	return p.teams.heldDeadline
}

// teamHold decides whether the team policy holds e back now; if so it has
// recorded e's wait (with the reason) and returns true. try asks it only
// about a job that may start now (not held for its team's budget, not
// waiting for its start time): such a job says why it waits, and one
// waiting for its start time waits by choice (regular jobs do not wait
// behind it).
func (p *passRun) teamHold(e *Entry) bool {
	reason := p.teamReason(e)
	if reason == "" {
		return false
	}
	dc := decision{entry: e, wait: waitState{kind: waitText, text: reason, atRisk: p.d.atRisk(e, p.now)}}
	p.wait(&dc)
	return true
}

// teamReason is why the team policy holds e back now ("" when it does
// not): at its team's maximum, or past its team's guarantee with the room
// owed to other teams' deadline jobs. When it lets a deadline job through
// past its team's guarantee it leaves the executor slots to check on the
// plan (slotsDue, slotHold). The pass and the preview both ask it.
func (p *passRun) teamReason(e *Entry) string {
	tp := p.teams
	if tp == nil {
		return ""
	}
	tp.slotsDue = nil
	ts := tp.team(e.Team)
	t := &ts.t
	if !t.HasMax() && (e.DeadlineAt == nil || tp.noneOwed()) {
		return "" // the common case: nothing to check
	}
	fp, u := footprint(e), ts.use
	reason := ""
	if res := t.OverMax(u, fp); res != "" {
		reason = ts.limitReason(res)
		if t.OverMax(teams.Usage{}, fp) != "" {
			// It can never start under this maximum: say so (it waits all
			// the same: the maximum may be raised).
			reason += fmt.Sprintf(": the job alone needs %g cpus and %g MiB, more than the team's maximum", fp.CPUs, fp.MemMB)
		}
	} else if e.DeadlineAt != nil && !t.WithinGuarantee(u, fp) && p.ix.Check(e.Demand) == nil {
		// Only a job that fits the powered-on agents takes their room (one
		// that does not waits, or starts on agents powered on for it).
		reason = tp.protect(e.Team, fp)
		if reason == "" {
			tp.slotsDue = e // on the plan try makes (slotHold)
		}
	}
	return reason
}

// overTeamMax: e's team would hold more than its maximum with e (false
// without teams).
func (p *passRun) overTeamMax(e *Entry) bool {
	tp := p.teams
	if tp == nil {
		return false
	}
	ts := tp.team(e.Team)
	return ts.t.HasMax() && ts.t.OverMax(ts.use, footprint(e)) != ""
}

// limitReason is the team's reason at its maximum of resource, made once
// a pass.
func (ts *teamState) limitReason(resource string) string {
	if resource == "cpu" {
		if ts.cpuReason == "" {
			ts.cpuReason = teams.LimitReason(ts.name, resource)
		}
		return ts.cpuReason
	}
	if ts.memReason == "" {
		ts.memReason = teams.LimitReason(ts.name, resource)
	}
	return ts.memReason
}

// protect is why a deadline job of team, past its guarantee with fp, may
// not start: the room left after it would no longer hold what other teams
// are owed for their guaranteed deadline jobs. "" when it may start.
func (tp *teamPass) protect(team string, fp teams.Usage) string {
	var owed teams.Usage
	var who []string
	for name, ts := range tp.byName {
		w := ts.owed
		if name == team || (w.CPUs <= 0 && w.MemMB <= 0) {
			continue
		}
		t := &ts.t
		room := t.Room(ts.use)
		o := teams.Usage{CPUs: min(room.CPUs, w.CPUs), MemMB: min(room.MemMB, w.MemMB)}
		if t.GuaranteedCPUs <= 0 {
			o.CPUs = 0
		}
		if t.GuaranteedMemMB <= 0 {
			o.MemMB = 0
		}
		if o.CPUs > 0 || o.MemMB > 0 {
			owed = owed.Add(o)
			who = append(who, name)
		}
	}
	if len(who) == 0 {
		return ""
	}
	if tp.free.CPUs-fp.CPUs+1e-9 >= owed.CPUs && tp.free.MemMB-fp.MemMB+1e-9 >= owed.MemMB {
		return ""
	}
	slices.Sort(who)
	return fmt.Sprintf("team %s past its guarantee: the room left is kept for the guaranteed deadline jobs of team %s",
		teams.Label(team), strings.Join(who, ", team "))
}

// teamStarted counts a start against its team.
func (p *passRun) teamStarted(e *Entry) {
	tp := p.teams
	if tp == nil {
		return
	}
	fp := footprint(e)
	ts := tp.team(e.Team)
	ts.use = ts.use.Add(fp)
	ts.last = tp.now
	ts.needsOK = false
	tp.free = teams.Usage{CPUs: max(tp.free.CPUs-fp.CPUs, 0), MemMB: max(tp.free.MemMB-fp.MemMB, 0)}
	if e.DeadlineAt != nil {
		ts.owed = teams.Usage{CPUs: max(ts.owed.CPUs-fp.CPUs, 0), MemMB: max(ts.owed.MemMB-fp.MemMB, 0)}
		if tp.anyOwed {
			if tp.started == nil {
				tp.started = map[*Entry]bool{}
			}
			tp.started[e] = true
		}
	}
}

// teamVictims keeps, of the eviction candidates for e (in the order they
// would be evicted), those whose eviction leaves their team at or above its
// guarantee: each team may lose only what it holds beyond its guarantee,
// counted down candidate by candidate, so that any set of them is safe.
// Candidates of e's own team are kept. Without teams it returns vs.
func (p *passRun) teamVictims(e *Entry, vs []Victim) []Victim {
	tp := p.teams
	if tp == nil {
		return vs
	}
	teamOf := make(map[string]*runningJob, len(p.running))
	for i := range p.running {
		teamOf[p.running[i].id] = &p.running[i]
	}
	spare := map[string]teams.Usage{}
	out := vs[:0:0]
	for _, v := range vs {
		r := teamOf[v.ID]
		if r == nil {
			continue
		}
		if r.team == e.Team {
			out = append(out, v)
			continue
		}
		ts := tp.team(r.team)
		t := &ts.t
		sp, seen := spare[r.team]
		if !seen {
			sp = teams.Usage{CPUs: ts.use.CPUs - t.GuaranteedCPUs, MemMB: ts.use.MemMB - t.GuaranteedMemMB}
		}
		fp := runningFootprint(r)
		if fp.CPUs <= sp.CPUs+1e-9 && fp.MemMB <= sp.MemMB+1e-9 || !t.HasGuarantee() {
			sp = teams.Usage{CPUs: sp.CPUs - fp.CPUs, MemMB: sp.MemMB - fp.MemMB}
			out = append(out, v)
		}
		spare[r.team] = sp
	}
	return out
}

// considerReclaim: with preemption on, a waiting job without a deadline
// whose team stays within its guarantee with it, and that does not fit
// now, may have regular jobs of other teams evicted for it: only teams
// above their guarantee lose jobs, never going below it (teamVictims),
// under the usual protection rules (PreemptProtect, MaxPreemptions,
// PreemptMaxShare). The evicted jobs go back to their queue.
func (p *passRun) considerReclaim(dc *decision) {
	tp, e, cfg := p.teams, dc.entry, &p.d.cfg
	if tp == nil || cfg.Preemption == PreemptNone {
		return
	}
	ts := tp.team(e.Team)
	if !ts.t.WithinGuarantee(ts.use, footprint(e)) {
		return
	}
	pv := &PreemptionView{Policy: cfg.Preemption}
	if pending := p.pendingVictims(dc); len(pending) > 0 {
		pv.Evicting = pending
		dc.wait.pre = pv
		return
	}
	p.preemptScanned++
	if p.preemptScanned > preemptScanLimit {
		return
	}
	rules := PreemptRules{Protect: cfg.PreemptProtect, MaxPreemptions: cfg.MaxPreemptions}
	var cands []Victim
	for i := range p.running {
		r := &p.running[i]
		v, ok := victimOf(r)
		if !ok || v.Deadline != nil || r.team == e.Team {
			continue
		}
		if ok, _ := rules.Eligible(&v, p.now, 0, p.now); ok {
			cands = append(cands, v)
		}
	}
	OrderVictims(cfg.Preemption, cands, p.now)
	cands = p.teamVictims(e, cands)
	chosen := ChooseVictims(p.snap, p.d.demandAt(e, p.now), cands)
	if chosen == nil {
		return
	}
	ids := make([]string, len(chosen))
	var cpus float64
	for i, v := range chosen {
		ids[i] = v.ID
		cpus += v.CPUs()
	}
	if free, until, none := p.evictionRoom(); cpus > free+1e-9 && !(none && len(chosen) == 1) {
		p.wakeAtLeast(until)
		return
	}
	p.copyRunning()
	for _, v := range chosen {
		for i := range p.running {
			if p.running[i].id == v.ID {
				p.running[i].preempting = true
			}
		}
		p.evictLog = append(p.evictLog, evictRecord{at: p.now, cpus: v.CPUs()})
	}
	p.room = nil
	pv.Evicting = ids
	dc.wait.pre = pv
	dc.kind, dc.extra().victims = decEvict, chosen
}

// reclaimReason is the eviction reason of a job evicted for e's team's
// guarantee (considerReclaim).
func reclaimReason(policy PreemptionPolicy, e *Entry) string {
	return fmt.Sprintf("evicted (%s) to give team %s its guarantee (job %s)", policy, teams.Label(e.Team), e.ID)
}

// teamOfActive is what the team policy keeps of a job holding resources:
// its team and its driver's size.
func teamOfActive(j *Job) (string, float64, float64) {
	d := j.DriverOrDefault()
	return j.Team, d.Cores, float64(d.MemoryMB)
}

// teamMemory is what the team policy keeps between passes (owned by the
// pass).
type teamMemory struct {
	// seen is the teams configuration's version the last pass saw.
	seen uint64
	// lastStart is each team's last start (for ties, see teamPass.last);
	// entries a day old are dropped.
	lastStart map[string]time.Time
	// checked is the configuration version and cluster size the
	// guarantees were last checked against (checkCapacity).
	checked [3]float64
	// rankedUse is what each team's jobs held when the regular queue was
	// last published in the fair-share order (publishFair).
	rankedUse map[string]teams.Usage
}

// rankedUseChanged: with teams, what the teams' jobs hold (running) is
// not what the published regular queue was ranked on: a job ended or was
// evicted, which may change the order between teams although no waiting
// job's reason changes.
func (c *Core) rankedUseChanged(running []runningJob) bool {
	if c.cfg.Teams.Get().Empty() {
		return false
	}
	return !maps.Equal(teamUsage(running), c.teams.rankedUse)
}

// teamsChanged reports (once) that another teams configuration came in
// force: the pass then looks at every waiting job again.
func (c *Core) teamsChanged() bool {
	v := c.cfg.Teams.Version()
	if v == c.teams.seen {
		return false
	}
	c.teams.seen = v
	return true
}

// teamInput hands the pass the teams configuration in force.
func (c *Core) teamInput(in *passInput) {
	if cfg := c.cfg.Teams.Get(); !cfg.Empty() {
		in.teams, in.deadlineAll, in.teamStarts = cfg, c.dq.Entries(), c.teams.lastStart
		c.checkCapacity(cfg)
	}
}

// checkCapacity logs an error when the guarantees in force are more than
// the cluster holds (a configuration loaded before the cluster's size was
// known, or agents that left): once per configuration and cluster size.
// The guarantees stay as configured; the error names the line.
func (c *Core) checkCapacity(cfg *teams.Config) {
	cpus, mem, ok := c.Capacity()
	key := [3]float64{float64(c.cfg.Teams.Version()), cpus, mem}
	if !ok || key == c.teams.checked {
		return
	}
	c.teams.checked = key
	if err := cfg.CheckCapacity(cpus, mem); err != nil {
		c.log.WithError(err).Error("the teams' guarantees are more than the cluster holds; fix the teams file (guarantees past the cluster cannot all be met)")
	}
}

// noteTeamStarts remembers when each team last started a job.
func (c *Core) noteTeamStarts(ds []decision, now time.Time) {
	if c.cfg.Teams.Get().Empty() {
		return
	}
	if c.teams.lastStart == nil {
		c.teams.lastStart = map[string]time.Time{}
	}
	for i := range ds {
		if ds[i].kind == decStart {
			c.teams.lastStart[ds[i].entry.Team] = now
		}
	}
	for team, at := range c.teams.lastStart {
		if now.Sub(at) > 24*time.Hour {
			delete(c.teams.lastStart, team)
		}
	}
}

// TeamUsage is what each team's jobs holding resources hold now (their
// footprints: executors and driver), by team ("" the default team).
func (c *Core) TeamUsage() map[string]teams.Usage {
	c.actMu.Lock()
	defer c.actMu.Unlock()
	use := map[string]teams.Usage{}
	for _, a := range c.active {
		r := runningJob{plan: a.plan, demand: a.demand, driverCPUs: a.driverCPUs, driverMemMB: a.driverMemMB}
		use[a.team] = use[a.team].Add(runningFootprint(&r))
	}
	return use
}

// Capacity is the cluster's size as the last pass saw it (every agent,
// powered off ones included): cpus and memory in MiB; ok is false before
// the core has seen an agent.
func (c *Core) Capacity() (cpus, memMB float64, ok bool) {
	c.capMu.RLock()
	defer c.capMu.RUnlock()
	for _, s := range c.capCounts {
		cpus += s.cpus * float64(s.agents)
		memMB += s.memMB * float64(s.agents)
	}
	return cpus, memMB, len(c.capCounts) > 0
}
