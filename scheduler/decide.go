package scheduler

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
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
	case decPowerOn:
		return "power-on"
	}
	return fmt.Sprintf("decision(%d)", uint8(k))
}

// decision is one thing a pass decided about one waiting job. A wait, by
// far the most common, is kept small: a pass over 100,000 waiting jobs
// whose figures all changed (a job ended) decides 100,000 waits.
type decision struct {
	kind decisionKind
	// Wait and Evict: skipped sets a regular job's SkippedSince to the
	// pass's time (it was zero).
	skipped bool
	entry   *Entry
	// Wait and Evict: the waiting state.
	wait waitState
	// The rest: nil for a wait that changes only the waiting state.
	*decisionExtra
}

// decisionExtra is what starts, rejections and evictions decide besides
// a waiting state.
type decisionExtra struct {
	// Start.
	plan   placement.Plan
	atRisk bool
	// shape and pred: the plan's shape and the model's run time on it.
	shape RunShape
	pred  perfmodel.Prediction
	// Reject.
	reason string
	// evicting, when setEvicting, replaces the jobs being evicted for it
	// (those that ended are dropped).
	evicting    []string
	setEvicting bool
	// Evict: the victims, in the order they are evicted.
	victims []Victim
	// PowerOn: the agents to power on (boot.go).
	powerOn []string
}

// maxKeptDecisions bounds the decisions buffer a core keeps between passes.
const maxKeptDecisions = 4096

// extra returns d's decisionExtra, made when missing.
func (d *decision) extra() *decisionExtra {
	if d.decisionExtra == nil {
		d.decisionExtra = &decisionExtra{}
	}
	return d.decisionExtra
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
	// team and the driver's size, for the team policy (teams.go).
	team                    string
	driverCPUs, driverMemMB float64
}

// passInput is what one pass decides from.
type passInput struct {
	now time.Time
	// snap is the cluster's powered-on agents (annotated with
	// RemainingActive); standby the powered-off agents a plan may power on
	// (and those booting, with nothing free).
	snap    placement.Snapshot
	standby []placement.Agent
	// teams is the teams configuration in force (nil: none), deadlineAll
	// the whole deadline queue and teamStarts each team's last start, for
	// the team policy (teams.go).
	teams       *teams.Config
	deadlineAll []*Entry
	teamStarts  map[string]time.Time
	// deadline are the deadline queue's entries the pass looks at, in EDF
	// order; deadlineQueued is how many the queue holds in all.
	deadline       []*Entry
	deadlineQueued int
	// boot is what the Standby tells of boots (BootInfo; boot.go).
	boot BootState
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
	// buf, if not nil, is where the decisions are written (from its
	// start): a core reuses one across passes.
	buf []decision
	// budgetHeld: by team, why its jobs are held for its budget (budget.go).
	budgetHeld map[string]string
	// deferredOut: in a pass that is not full, the deadline queue's
	// entries the pass does not look at that wait by choice (a start
	// time, a boot): like the held ones, no regular job waits behind them.
	deferredOut int
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
	// blocked: regular jobs waited behind deadline jobs (passInput.blocked
	// of the next pass).
	blocked bool
}

// decider holds what decisions depend on besides a pass's input: the
// configuration and the placement policy. It has no state of its own.
type decider struct {
	cfg    Config
	policy placement.Policy
}

// estimate is the job's estimated run time in wall time (see DurationScale).
func (d *decider) estimate(e *Entry) time.Duration {
	if t, ok := d.learnedEstimate(e); ok {
		return t // the model's p90 (predict.go)
	}
	return d.toldEstimate(e)
}

// estimateSource says, for people, where estimate(e) came from: the
// learned model's p90 (from the runs of the job's signature, of its
// application type, or the model's default before any run) or the
// estimated duration the job was given.
func (d *decider) estimateSource(e *Entry) string {
	if _, ok := d.learnedEstimate(e); !ok {
		return "from its estimated duration"
	}
	_, _, pred, _ := d.learned(e, e.Demand.Executors, perfmodel.Placement{})
	switch pred.Level {
	case perfmodel.LevelSignature:
		return fmt.Sprintf("the learned model's p90, from %s of this application", plural.N(pred.Runs, "earlier run"))
	case perfmodel.LevelAppType:
		return fmt.Sprintf("the learned model's p90, from %s of %s applications (none yet of this one)", plural.N(pred.Runs, "run"), cmp.Or(e.learn.key.App, "other"))
	case perfmodel.LevelPrior:
		if e.learn.key.EstimateSeconds > 0 {
			return "the learned model's default p90 around its estimated duration (no runs learned yet)"
		}
		return "the learned model's default for its input size (no estimated duration given, no runs learned yet)"
	}
	return "the learned model's p90"
}

// medianEstimate is e's expected run time: the model's p50 before a plan
// is known, else the told estimate.
func (d *decider) medianEstimate(e *Entry) time.Duration {
	if _, ok := d.learnedEstimate(e); ok && e.learn.p50 > 0 {
		return e.learn.p50
	}
	return d.toldEstimate(e)
}

// toldEstimate is the estimate e was submitted with, in wall time.
func (d *decider) toldEstimate(e *Entry) time.Duration {
	return time.Duration(e.EstimatedDurationSeconds * float64(time.Second) * d.cfg.DurationScale)
}

// atRisk: a waiting deadline job is at risk when, started now, it would
// end after its deadline (with its estimated duration: the model's p90
// when it has one), or when its deadline has passed.
func (d *decider) atRisk(e *Entry, now time.Time) bool {
	return lateWith(e, now, d.estimate(e))
}

// hopeless: a waiting deadline job can no longer meet its deadline when,
// started now, even its median run time (the model's p50, else the told
// estimate) ends after it, or its deadline has passed. The feasible
// orderings put such jobs last (deadlineOrder), which makes their miss
// certain; a job that the p90 puts at risk but the p50 still lets finish
// in time has about an even chance, and keeps its EDF place. (With the
// p90 here, the simulator's live-like decisions demoted such jobs and
// missed 3-8 points more deadlines than with the estimates told:
// docs/simulation.md, "Learned decisions as live".)
func (d *decider) hopeless(e *Entry, now time.Time) bool {
	return lateWith(e, now, d.medianEstimate(e))
}

// lateWith: a deadline job started now and running est would end after
// its deadline (with no estimate: the deadline has passed).
func lateWith(e *Entry, now time.Time, est time.Duration) bool {
	dl := e.DeadlineAt
	if dl == nil {
		return false
	}
	if est > 0 {
		return now.Add(est).After(*dl)
	}
	return !now.Before(*dl)
}

// demandAt is the entry's demand as the policy sees it at now: the time
// of the decision and the estimates in wall time (see DurationScale), so
// that deadline-aware policies compare like with like: the p50 to price a
// plan, the p90 to test its deadline (planEstimates).
func (d *decider) demandAt(e *Entry, now time.Time) placement.Demand {
	dm := e.Demand
	dm.Now = now
	d.planEstimates(&dm, e)
	d.learnedTraits(&dm, e)
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

// passRun is the working state of one decide call.
type passRun struct {
	d    *decider
	in   *passInput
	now  time.Time
	snap placement.Snapshot // the caller's until the first start, then a copy
	ix   *placement.FitIndex
	// snapOwned is set once snap is the pass's own copy (made at the first
	// start, then changed in place); at indexes its agents by id.
	snapOwned bool
	at        map[string]int
	// standbyAgents is in.standby, copied once a start powers one on.
	standbyAgents []placement.Agent
	standbyCopied bool
	standby       *standbyView // built at most once per snapshot
	future        *futureView  // boot-aware: built at most once per snapshot (boot.go)
	claims        []bootClaim  // boot-aware: the pass's plans waiting for a boot
	room          *roomProfile // built at most once per snapshot
	// running is in.running, copied once a start or an eviction changes it.
	running        []runningJob
	runningCopied  bool
	teams          *teamPass // nil without teams
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
		running: in.running, evictLog: in.evictLog, out: in.buf[:0], teams: newTeamPass(&in)}
	p.ix = placement.NewFitIndex(p.snap)
	deadlineLeft := in.deadlineQueued - p.heldDeadlineJobs() - in.deferredOut
	for _, e := range d.deadlineOrder(in.deadline, in.now) {
		switch p.try(e) {
		case started:
			deadlineLeft--
			continue
		case rejected, deferred:
			deadlineLeft--
		}
		p.noteWake(e)
	}
	if deadlineLeft <= 0 {
		regular := in.regularFresh
		if in.full || in.blocked {
			regular = in.regular
		}
		p.fairOrder(regular, func(e *Entry) outcome {
			o := p.try(e)
			if o != started {
				p.noteWake(e)
			}
			return o
		})
	} else {
		regular := in.regularFresh
		if in.full || !in.blocked {
			regular = in.regular
		}
		for _, e := range regular {
			dc := decision{entry: e, wait: waitState{kind: waitDeadlineFirst}, skipped: e.SkippedSince.IsZero()}
			p.wait(&dc)
			p.noteWake(e)
		}
	}
	return passOutput{decisions: p.out, wakeAt: p.wakeAt, snap: p.snap, ix: p.ix, blocked: deadlineLeft > 0}
}

// try places one waiting job on the pass's snapshot. What keeps a job
// from starting whatever the room is looked at first, so that the job
// says so: its team's budget (first: the start-time hold may power agents
// on), then its start time; the team policy (its maximums, the room owed
// to other teams) judges only a job that may start now.
func (p *passRun) try(e *Entry) outcome {
	if p.budgetHold(e) {
		return waited
	}
	if o, held := p.holdUntilStart(e); held {
		return o
	}
	if p.teamHold(e) {
		return waited
	}
	if nf := p.ix.Check(e.Demand); nf != nil {
		return p.notOnNow(e, nf)
	}
	plan, err := p.d.policy.Place(p.snap, p.d.demandAt(e, p.now))
	if err != nil {
		var nf *placement.NoFit
		if errors.As(err, &nf) {
			return p.notOnNow(e, nf)
		}
		// An invalid demand: it can never run.
		p.out = append(p.out, decision{kind: decReject, entry: e, decisionExtra: &decisionExtra{reason: err.Error()}})
		return rejected
	}
	if p.slotHold(e, plan) {
		return waited
	}
	p.start(e, plan)
	return started
}

// start decides to start e with plan and marks the plan on the pass's
// snapshot.
func (p *passRun) start(e *Entry, plan placement.Plan) {
	shape, pred, atRisk := p.onPlan(e, plan)
	p.out = append(p.out, decision{kind: decStart, entry: e, decisionExtra: &decisionExtra{plan: plan, atRisk: atRisk, shape: shape, pred: pred}})
	p.markStart(e, plan)
	p.teamStarted(e)
}

// markStart takes plan's executors (and, with Config.DriverRoom, room for
// the driver) from a copy of the pass's snapshot, as the cluster's next
// snapshot would show them: the plan's agents are active, each for at
// least the job's estimate. Powered-off agents the plan powers on are
// booting: standby with nothing free. The job holds resources from now.
func (p *passRun) markStart(e *Entry, plan placement.Plan) {
	agents, at := p.ownSnapshot()
	est := p.startedEstimate(e)
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
		takeDriverRoom(agents, at, plan, float64(e.driverCPUs), float64(e.driverMemMB))
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
	p.ix = placement.NewFitIndex(p.snap)
	p.standby, p.room, p.future = nil, nil, nil
	pl := plan
	p.copyRunning()
	p.running = append(p.running, runningJob{id: e.ID, plan: &pl, state: Reserving, estimate: est,
		deadline: e.DeadlineAt, demand: e.Demand, preemptions: e.Preemptions,
		team: e.Team, driverCPUs: float64(e.driverCPUs), driverMemMB: float64(e.driverMemMB)})
}

// ownSnapshot returns the pass's own copy of the snapshot's agents, made at
// the first start and changed in place by the next ones, and its index by
// agent id. The caller's snapshot is never changed. One copy per pass, not
// per start: on a cluster of 30,000 agents a pass starting 50 jobs copied
// and indexed 1.5 million agents.
func (p *passRun) ownSnapshot() ([]placement.Agent, map[string]int) {
	if !p.snapOwned {
		p.snap = placement.Snapshot{Agents: slices.Clone(p.snap.Agents)}
		p.at = make(map[string]int, len(p.snap.Agents))
		for i := range p.snap.Agents {
			p.at[p.snap.Agents[i].ID] = i
		}
		p.snapOwned = true
	}
	return p.snap.Agents, p.at
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
			p.out = append(p.out, decision{kind: decReject, entry: e, decisionExtra: &decisionExtra{reason: whole.Error()}})
			return rejected
		}
		if !v.ix.FitsEmpty(e.Demand) {
			p.out = append(p.out, decision{kind: decReject, entry: e, decisionExtra: &decisionExtra{reason: emptyClusterReason(e.Demand)}})
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
	} else {
		p.considerReclaim(&dc)
	}
	p.wait(&dc)
	return waited
}

// wait records a wait decision when it changes something.
func (p *passRun) wait(dc *decision) {
	if dc.kind == 0 {
		dc.kind = decWait
	}
	if dc.kind == decWait && !dc.skipped && (dc.decisionExtra == nil || !dc.setEvicting) && sameWait(dc.wait, dc.entry.wait) {
		return
	}
	p.out = append(p.out, *dc)
}

// sameWait reports whether two waiting states read the same.
func sameWait(a, b waitState) bool {
	return a.kind == b.kind && a.text == b.text && a.nf == b.nf && a.atRisk == b.atRisk && a.pre.equal(b.pre) && a.byChoice == b.byChoice
}

// noteWake takes a waiting entry's next timer into account: when a deadline
// job becomes at risk, when a skipped regular job is due for promotion.
// It looks at the entry as the pass's last decision about it leaves it.
func (p *passRun) noteWake(e *Entry) {
	atRisk, skipped := e.wait.atRisk, e.SkippedSince
	if n := len(p.out); n > 0 && p.out[n-1].entry == e {
		if dc := &p.out[n-1]; dc.kind == decWait || dc.kind == decEvict || dc.kind == decPowerOn {
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
