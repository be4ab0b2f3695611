package scheduler

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// Preview is what would happen to a job submitted now, without submitting
// it (sparkpack plan, submit --dry-run): rejected and why, or which queue
// it joins behind how many jobs, where the placement policy would put it on
// the cluster as it is, what that adds to the hourly bill, and when it
// would start and end if nothing else changed.
type Preview struct {
	// Rejected is why the job would not be queued: stored REJECTED by the
	// scheduler's intake, or, with RefusedStatus, refused at submission.
	Rejected string `json:"rejected,omitempty"`
	// RefusedStatus is the HTTP status a submission would be refused with
	// (403 for its team's spent budget under budget-action=reject, 429 at
	// --max-waiting-per-token or its team's max-waiting or max-deadline),
	// and RefusedReason the refusal's reason in
	// sparkpack_requests_refused_total (too_many_waiting, team_cap) where
	// it is counted there; both absent when it would be stored REJECTED.
	RefusedStatus int    `json:"refusedStatus,omitempty"`
	RefusedReason string `json:"refusedReason,omitempty"`
	// Queue is "deadline" or "regular"; Ahead the waiting jobs it would
	// wait behind in it (and, for a regular job, DeadlineWaiting the
	// deadline jobs, which all go first). With teams a regular job's
	// Ahead is in the pass's fair-share order between teams: every
	// waiting job of the teams offered the room before its team
	// (TeamsBefore, in that order), then its own team's jobs before it.
	Queue           string   `json:"queue,omitempty"`
	Ahead           int      `json:"ahead"`
	DeadlineWaiting int      `json:"deadlineWaiting"`
	TeamsBefore     []string `json:"teamsBefore,omitempty"`
	// StartsNow is true when it fits the cluster now and nothing waits
	// before it; otherwise WaitingReason says why it would wait.
	StartsNow     bool   `json:"startsNow"`
	WaitingReason string `json:"waitingReason,omitempty"`
	AtRisk        string `json:"atRisk,omitempty"`
	// Plan is where it would go now (nil when it does not fit now).
	Plan *PreviewPlan `json:"plan,omitempty"`
	// EstimatedStart and EstimatedFinish, when it would start now and
	// its estimated duration is known.
	EstimatedStart  *time.Time `json:"estimatedStart,omitempty"`
	EstimatedFinish *time.Time `json:"estimatedFinish,omitempty"`
	// EstimateSource says where the run time behind EstimatedFinish came
	// from, for people: the estimated duration given, or the learned
	// model's p90 (the runs it learned from, or its default).
	EstimateSource string `json:"estimateSource,omitempty"`
	// DeadlineMarginSeconds is deadline minus estimated finish.
	DeadlineMarginSeconds *float64 `json:"deadlineMarginSeconds,omitempty"`
}

// PreviewPlan is a placement as a preview shows it.
type PreviewPlan struct {
	Policy      string              `json:"policy"`
	Assignments []PreviewAssignment `json:"assignments"`
	Activated   []string            `json:"activated,omitempty"`
	// AddedUSDPerHour is what the agents it would activate add to the
	// hourly bill (agents already active cost nothing more).
	AddedUSDPerHour float64 `json:"addedUSDPerHour"`
}

// PreviewAssignment is one agent of a previewed plan.
type PreviewAssignment struct {
	AgentID   string `json:"agentId"`
	Hostname  string `json:"hostname,omitempty"`
	Executors int    `json:"executors"`
}

// Preview answers what would happen to j if it were submitted at now. It
// changes nothing: the intake decision (Decide), the queues as the last
// pass published them, the holds of the pass (previewPass) and the
// placement policy (pure) on a fresh snapshot. j's team is the caller's to
// set, as a submission sets it (TeamOf).
func (c *Core) Preview(ctx context.Context, j Job, now time.Time) (Preview, error) {
	var p Preview
	d := c.Decide(&j, now)
	if d.Reject != "" {
		p.Rejected = d.Reject
		return p, nil
	}
	p.AtRisk = d.AtRisk
	snap, err := c.cluster.Snapshot(ctx)
	if err != nil {
		return p, fmt.Errorf("preview: snapshot of the cluster: %w", err)
	}
	s := c.snapshotView()
	e := c.newEntry(&j)
	pr := c.previewPass(s, snap, e, now)
	// Its place in its queue, as the last pass ordered the queues (and,
	// for a regular job, as the pass offers the room between teams).
	p.DeadlineWaiting = len(s.deadline)
	var fair []teamWaiting
	if j.DeadlineAt != nil {
		p.Queue = "deadline"
		for _, q := range s.deadline {
			if q.DeadlineAt != nil && !q.DeadlineAt.After(*j.DeadlineAt) {
				p.Ahead++
			}
		}
	} else {
		p.Queue = "regular"
		tc, tm := snap.Totals()
		e.RD = placement.ResourceDemand(e.Demand, tc, tm, c.alpha, c.beta)
		p.Ahead, fair = pr.regularAhead(s, e)
		for _, f := range fair {
			p.TeamsBefore = append(p.TeamsBefore, teams.Label(f.rank.team))
		}
	}
	dm := e.Demand
	dm.Now = now
	c.dec.planEstimates(&dm, e)
	// What holds it whatever the room, in the pass's order (try): its
	// team's budget, its start time, then the team policy (its maximums,
	// the room owed to other teams' guarantees).
	budget, budgetHeld := pr.budgetReason(e)
	nb := j.NotBeforeAt()
	startLater := nb != nil && nb.After(now)
	team := ""
	if !budgetHeld && !startLater {
		team = pr.teamReason(e)
	}
	plan, perr := c.policy.Place(snap, dm)
	slots := ""
	if perr == nil && team == "" {
		slots = pr.slotReason(e, plan) // on the plan it would start with, as the pass checks it
	}
	if perr == nil {
		pp := &PreviewPlan{Policy: plan.Policy, Activated: plan.Activated, AddedUSDPerHour: float64(plan.CostMicroUSDPerHour) / 1e6}
		for _, a := range plan.Assignments {
			if a.Executors > 0 {
				pp.Assignments = append(pp.Assignments, PreviewAssignment{AgentID: a.AgentID, Hostname: a.Hostname, Executors: a.Executors})
			}
		}
		p.Plan = pp
	}
	// A regular job waits behind the deadline jobs when the last pass held
	// the regular queue back for them (not for those that wait by choice,
	// for a start time, a boot or warm capacity, or are held for their team).
	behindDeadline := p.Queue == "regular" && p.DeadlineWaiting > 0 && s.blocked
	blocked := p.Ahead > 0 || behindDeadline
	switch {
	case budgetHeld:
		p.WaitingReason = budget
	case startLater:
		p.WaitingReason = "waiting for its start time " + dayClockTime(*nb, now)
	case team != "":
		p.WaitingReason = team
	case perr != nil:
		p.WaitingReason = perr.Error()
	case slots != "":
		p.WaitingReason = slots
	case behindDeadline:
		p.WaitingReason = fmt.Sprintf("deadline jobs first: %d waiting", p.DeadlineWaiting)
	case blocked:
		they := "they are"
		if p.Ahead == 1 {
			they = "that one is"
		}
		p.WaitingReason = fmt.Sprintf("behind %s in the %s queue (it fits now, but %s tried first", plural.N(p.Ahead, "waiting job"), p.Queue, they)
		if len(fair) > 0 {
			p.WaitingReason += "; " + pr.fairShareReason(e, fair)
		}
		p.WaitingReason += ")"
	default:
		p.StartsNow = true
		start := now
		p.EstimatedStart = &start
		if est := c.dec.estimate(e); est > 0 {
			end := now.Add(est)
			p.EstimatedFinish = &end
			p.EstimateSource = c.dec.estimateSource(e)
			if j.DeadlineAt != nil {
				m := j.DeadlineAt.Sub(end).Seconds()
				p.DeadlineMarginSeconds = &m
			}
		}
	}
	return p, nil
}

// regularAhead is the previewed regular job e's place in the pass's
// order over the published regular queue: how many waiting jobs the pass
// tries before it, and, with teams, the teams whose waiting jobs it
// offers the room first (fairAhead, on the ranks fairOrder uses: what
// each team's jobs hold now, and its last start as last published).
// Without teams it is the queue's own order (demand, or FIFO).
func (p *passRun) regularAhead(s *queueSnapshot, e *Entry) (int, []teamWaiting) {
	tp := p.teams
	if tp == nil {
		n := 0
		for _, q := range s.regular {
			if s.fifo || q.ResourceDemand >= e.RD {
				n++
			}
		}
		return n, nil
	}
	byTeam := s.regularTeams()
	own := 0
	if rds := byTeam[e.Team]; s.fifo {
		own = len(rds)
	} else {
		// Its team's jobs keep the queue's order: by demand, largest
		// first; those of e's demand or more go before it.
		own = sort.Search(len(rds), func(i int) bool { return rds[i] < e.RD })
	}
	others := make([]teamWaiting, 0, len(byTeam))
	for name, rds := range byTeam {
		if name != e.Team {
			others = append(others, teamWaiting{rank: tp.rankOf(tp.team(name)), jobs: len(rds)})
		}
	}
	return fairAhead(tp.rankOf(tp.team(e.Team)), own, others)
}

// regularTeams is the published regular queue's jobs by team: their
// demands (RD), in the queue's order. Made at the first preview that asks
// (per published queue) and shared, read only, by the next ones, so that
// a preview reads a queue of 100,000 jobs once, not at every preview.
func (s *queueSnapshot) regularTeams() map[string][]float64 {
	s.owedMu.Lock()
	defer s.owedMu.Unlock()
	if s.byTeam == nil {
		s.byTeam = map[string][]float64{}
		for _, q := range s.regular {
			s.byTeam[q.Team] = append(s.byTeam[q.Team], q.ResourceDemand)
		}
	}
	return s.byTeam
}

// fairShareReason says why the teams of before go before e's team in the
// fair share: e's team's rank, and the first of those teams.
func (p *passRun) fairShareReason(e *Entry, before []teamWaiting) string {
	names := make([]string, 0, 3)
	for i, b := range before {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(before)-3))
			break
		}
		names = append(names, teams.Label(b.rank.team))
	}
	own := p.teams.rankOf(p.teams.team(e.Team))
	where := fmt.Sprintf("whose weighted share is %.2f", own.key)
	if own.below {
		where = fmt.Sprintf("below its guarantee (%.2f of it held)", own.key)
	}
	team := "team"
	if len(before) > 1 {
		team = "teams"
	}
	return fmt.Sprintf("the fair share between teams offers the room to %s %s before team %s, %s",
		team, strings.Join(names, ", "), teams.Label(e.Team), where)
}

// previewPass is a pass over nothing but a previewed job e, on what the
// core publishes: the teams and budgets in force, the jobs holding
// resources, the deadline queue as the last pass left it (the room owed to
// guaranteed teams) and snap. The preview asks it the holds of try
// (budgetReason, teamReason, slotReason): the pass's own decisions, on
// the pass's own code. It decides only; nothing of it is applied.
func (c *Core) previewPass(s *queueSnapshot, snap placement.Snapshot, e *Entry, now time.Time) *passRun {
	in := passInput{now: now, snap: snap, full: true}
	if c.cfg.Budgets != nil {
		in.budgetHeld = c.cfg.Budgets.HeldTeams()
	}
	if cfg := c.cfg.Teams.Get(); !cfg.Empty() {
		in.teams, in.running, in.teamStarts = cfg, c.runningJobs(), s.teamStarts
		in.deadlineAll = owedCandidates(cfg, s, e)
	}
	p := &passRun{d: &c.dec, in: &in, now: now, snap: snap, running: in.running, teams: newTeamPass(&in)}
	p.ix = placement.NewFitIndex(snap)
	return p
}

// owedCandidates is what of the published deadline queue the team policy
// may read for e: only a deadline job is held for the room owed to other
// teams, and only the waiting deadline jobs of teams with a guarantee are
// owed room (teamPass.protect). The pass's other use of the queue,
// counting the jobs held at their team's maximum, does not concern a
// preview. Nil when none can matter (a regular job, no guarantee): a
// preview then reads nothing of a queue of 100,000 jobs.
func owedCandidates(cfg *teams.Config, s *queueSnapshot, e *Entry) []*Entry {
	if _, anyGuarantee := cfg.Limits(); !anyGuarantee || e.DeadlineAt == nil {
		return nil
	}
	return s.owedEntries(cfg)
}

// owedEntries is the published deadline queue's jobs of the teams cfg
// guarantees something, in the queue's order, rebuilt from their views:
// made at the first preview that asks (per published queue and teams
// configuration) and shared, read only, by the next ones.
func (s *queueSnapshot) owedEntries(cfg *teams.Config) []*Entry {
	s.owedMu.Lock()
	defer s.owedMu.Unlock()
	if s.owedCfg == cfg {
		return s.owed
	}
	guaranteed := map[string]bool{}
	for i := range cfg.Teams {
		if t := &cfg.Teams[i]; t.HasGuarantee() {
			guaranteed[t.Name] = true
		}
	}
	n := 0
	for _, q := range s.deadline {
		if guaranteed[q.Team] {
			n++
		}
	}
	slab, out := make([]Entry, 0, n), make([]*Entry, 0, n)
	for _, q := range s.deadline {
		if guaranteed[q.Team] {
			slab = append(slab, q.entry())
			out = append(out, &slab[len(slab)-1])
		}
	}
	s.owedCfg, s.owed = cfg, out
	return out
}
