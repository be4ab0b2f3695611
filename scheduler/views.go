package scheduler

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// QueuedJob is a waiting job as the views show it: what the queue keeps of
// a job, with the reason it waits.
type QueuedJob struct {
	ID                       string     `json:"id"`
	Name                     string     `json:"name,omitempty"`
	Team                     string     `json:"team,omitempty"`
	State                    State      `json:"state"`
	Executors                int        `json:"executors"`
	ExecutorCores            int        `json:"executorCores"`
	ExecutorMemoryMB         int        `json:"executorMemoryMB"`
	SubmittedAt              time.Time  `json:"submittedAt"`
	DeadlineAt               *time.Time `json:"deadlineAt,omitempty"`
	NotBefore                *time.Time `json:"notBefore,omitempty"`
	EstimatedDurationSeconds float64    `json:"estimatedDurationSeconds,omitempty"`
	WaitingReason            string     `json:"waitingReason,omitempty"`
	AtRisk                   bool       `json:"atRisk"`
	// Promoted marks a regular job moved to the deadline queue because it
	// waited too long.
	Promoted bool `json:"promoted,omitempty"`
	// ResourceDemand is the job's RD (the regular queue's key).
	ResourceDemand float64 `json:"resourceDemand"`
	// Preemptions counts the job's evictions so far.
	Preemptions int `json:"preemptions,omitempty"`
	// Preemption, for a deadline job that does not fit, says whether it
	// will miss its deadline waiting and which jobs are (or would be)
	// evicted for it.
	Preemption *PreemptionView `json:"preemption,omitempty"`

	// The reason is formatted when the view is read (a pass only records
	// the figures); storedReason is what the store holds.
	wait         waitState
	promoteAfter time.Duration
	storedReason string
	edfKey       time.Time
	demand       placement.Demand
	// The driver's size (Entry's), for the team policy of a preview.
	driverCPUs, driverMemMB float32
}

// Demand is what the job asks of the placement engine.
func (q *QueuedJob) Demand() placement.Demand { return q.demand }

// out is the view as handed to a reader, with its reason formatted.
func (q *QueuedJob) out() QueuedJob {
	v := *q
	v.WaitingReason = q.wait.detail(q.Promoted, q.promoteAfter)
	return v
}

func (c *Core) viewOf(e *Entry) *QueuedJob {
	if e.view == nil {
		e.view = &QueuedJob{
			ID: e.ID, Name: e.Name, Team: e.Team, State: Queued,
			Executors: e.Demand.Executors, ExecutorCores: int(e.Demand.CPUs), ExecutorMemoryMB: e.ExecutorMemoryMB,
			SubmittedAt: e.SubmittedAt, DeadlineAt: e.DeadlineAt, NotBefore: e.NotBefore, EstimatedDurationSeconds: e.EstimatedDurationSeconds,
			AtRisk: e.wait.atRisk, Promoted: e.Promoted, ResourceDemand: e.RD,
			Preemptions: e.Preemptions, Preemption: e.wait.pre,
			wait: e.wait, promoteAfter: c.cfg.PromoteAfter, storedReason: e.stored.reason, edfKey: e.edfKey(),
			demand: e.Demand, driverCPUs: e.driverCPUs, driverMemMB: e.driverMemMB,
		}
	}
	return e.view
}

// entry is what the team policy reads of a waiting job, rebuilt from its
// view (a preview may not read the queues' entries: the pass owns them).
func (q *QueuedJob) entry() Entry {
	return Entry{ID: q.ID, Team: q.Team, DeadlineAt: q.DeadlineAt, NotBefore: q.NotBefore, Demand: q.demand,
		driverCPUs: q.driverCPUs, driverMemMB: q.driverMemMB}
}

// queueSnapshot is an immutable copy of the queues, published after every
// pass that changed them: readers never wait for a pass.
type queueSnapshot struct {
	deadline []*QueuedJob
	regular  []*QueuedJob
	fifo     bool
	at       time.Time
	// blocked: the last pass held regular jobs back for deadline jobs
	// that wait for room (not those that wait by choice or are held).
	blocked bool
	// shapes are the distinct executor sizes (cpus, MiB) of waiting jobs.
	shapes [][2]float64
	// owed is, for previews, the deadline jobs of the teams with a
	// guarantee under the teams configuration owedCfg (owedEntries).
	owedMu  sync.Mutex
	owedCfg *teams.Config
	owed    []*Entry
	// byTeam is, for previews, the regular queue's jobs' demands by team
	// (regularTeams; guarded by owedMu).
	byTeam map[string][]float64
	// teamStarts is each team's last start as the pass knew it (a copy of
	// teamMemory.lastStart; nil without teams): between teams that rank
	// equal, a preview breaks the tie as the pass does.
	teamStarts map[string]time.Time
	// order is how regular is ordered (RegularOrder); with teams
	// (RegularFairShare) teams are the teams with waiting regular jobs in
	// the order the pass offers them the room, each team's jobs one run
	// of regular (QueueTeam.first), and teamAt a team's index in teams.
	order  string
	teams  []QueueTeam
	teamAt map[string]int
}

// The orders of the published regular queue (QueuePage.RegularOrder).
const (
	// RegularByDemand: the largest resource demand first, then by submission.
	RegularByDemand = "demand"
	// RegularBySubmission: first submitted first (--queue fifo).
	RegularBySubmission = "fifo"
	// RegularFairShare: with teams, team by team in the fair-share order
	// between teams (fairOrder), each team's jobs in the queue's own
	// order (demand, or submission with --queue fifo).
	RegularFairShare = "fair-share"
)

// QueueTeam is a team with waiting regular jobs, in the order the fair
// share between teams offers the room (fairBefore on rankOf, as the pass
// ranks the teams at its start: what their jobs hold now, their last
// starts).
type QueueTeam struct {
	Team string `json:"team"`
	// Jobs is how many of its regular jobs wait.
	Jobs int `json:"jobs"`
	// BelowGuarantee: the team holds less than its guarantee, and Share
	// is how much of it (0 to 1); otherwise Share is its weighted
	// dominant share of the cluster.
	BelowGuarantee bool    `json:"belowGuarantee,omitempty"`
	Share          float64 `json:"share"`
	// LastStart is when it last started a job (between teams that rank
	// equal, the least recent goes first); absent when not in the last day.
	LastStart *time.Time `json:"lastStart,omitempty"`
	first     int        // its first job's index in the published regular queue
}

// publishEvery bounds how often a large queue is copied for readers while
// Run drives the core: copying 100,000 entries after every small pass
// would cost more than the pass. Below publishSmall entries every pass
// publishes.
const (
	publishEvery = 100 * time.Millisecond
	publishSmall = 5000
)

// publish makes the queues' current state the one readers see. Under Run,
// a large queue is published at most every publishGap (Run's loop comes
// back for a pending one).
func (c *Core) publish(now time.Time) {
	if !c.viewDirty && c.view.Load() != nil {
		return
	}
	if c.async.Load() && c.dq.Len()+c.jq.Len() > publishSmall && time.Since(c.publishedAt) < c.publishGap() {
		return // Run publishes it when the gap has passed
	}
	start := time.Now()
	defer func() { c.publishedAt, c.publishTook = start, time.Since(start) }()
	s := &queueSnapshot{
		deadline: make([]*QueuedJob, 0, c.dq.Len()),
		regular:  make([]*QueuedJob, 0, c.jq.Len()),
		fifo:     c.jq.FIFO, at: now, blocked: c.blocked,
	}
	s.order = RegularByDemand
	if c.jq.FIFO {
		s.order = RegularBySubmission
	}
	seen := map[[2]float64]bool{}
	var last [2]float64
	shape := func(e *Entry) {
		if c.bootTime > 0 && e.NotBefore != nil && e.NotBefore.After(now.Add(c.bootTime)) {
			return // held for its start time: its agents are powered on a boot ahead (boot.go)
		}
		// Neighbours mostly share a size: skip the map for repeats.
		if k := [2]float64{e.Demand.CPUs, e.Demand.MemMB}; k != last || len(seen) == 0 {
			seen[k], last = true, k
		}
	}
	for _, e := range c.dq.Entries() {
		s.deadline = append(s.deadline, c.viewOf(e))
		shape(e)
	}
	if cfg := c.cfg.Teams.Get(); !cfg.Empty() {
		s.teamStarts = maps.Clone(c.teams.lastStart)
		c.publishFair(s, cfg, now, shape)
	} else {
		for _, e := range c.jq.Entries() {
			s.regular = append(s.regular, c.viewOf(e))
			shape(e)
		}
	}
	for k := range seen {
		s.shapes = append(s.shapes, k)
	}
	c.view.Store(s)
	c.viewDirty = false
}

// publishFair publishes the regular queue in the order a pass tries it
// with teams: fairOrder itself, on the ranks the next pass starts with
// (teamRanking: what each team's jobs hold now, the teams' last starts),
// over the queue, none of its jobs starting. That is the order the next
// pass tries them until one of them starts; a start ranks its team again,
// so that team's later jobs may then go after other teams'.
func (c *Core) publishFair(s *queueSnapshot, cfg *teams.Config, now time.Time, shape func(*Entry)) {
	s.order = RegularFairShare
	running := c.runningJobs()
	c.teams.rankedUse = teamUsage(running)
	tp := teamRanking(cfg, teams.Usage{CPUs: c.totalCPU, MemMB: c.totalMem}, running, c.teams.lastStart, now)
	s.teamAt = map[string]int{}
	(&passRun{teams: tp}).fairOrder(c.jq.Entries(), func(e *Entry) outcome {
		// A team's jobs come in one run: look its index up once.
		i := len(s.teams) - 1
		if i < 0 || s.teams[i].Team != e.Team {
			i = -1
		}
		if i < 0 {
			r := tp.rankOf(tp.team(e.Team))
			t := QueueTeam{Team: e.Team, BelowGuarantee: r.below, Share: r.key, first: len(s.regular)}
			if !r.last.IsZero() {
				last := r.last
				t.LastStart = &last
			}
			i = len(s.teams)
			s.teamAt[e.Team] = i
			s.teams = append(s.teams, t)
		}
		s.teams[i].Jobs++
		s.regular = append(s.regular, c.viewOf(e))
		shape(e)
		return waited
	})
}

// publishGap is the least time between two publishes of a large queue:
// publishEvery, or twenty times what the last publish took, whichever is
// longer, so that copying the queue for readers never takes more than
// about a twentieth of a core however long the queue grows.
func (c *Core) publishGap() time.Duration {
	return max(publishEvery, 20*c.publishTook)
}

func (c *Core) snapshotView() *queueSnapshot {
	if s := c.view.Load(); s != nil {
		return s
	}
	return &queueSnapshot{}
}

// CouldUse reports whether a job waiting now (as of the last pass) has
// executors that fit an agent of this capacity: power management keeps
// such an agent on.
func (c *Core) CouldUse(cpus, memMB float64) bool {
	for _, sh := range c.snapshotView().shapes {
		if sh[0] <= cpus+1e-9 && sh[1] <= memMB+1e-9 {
			return true
		}
	}
	return false
}

// QueuesView is the waiting jobs in the order they will be tried. Jobs
// still in the intake buffer (not yet admitted) are not shown.
type QueuesView struct {
	Deadline []QueuedJob `json:"deadline"`
	Regular  []QueuedJob `json:"regular"`
}

// Queues returns both queues in order, with waiting reasons, as of the
// last scheduling pass. It copies every waiting job: the API uses
// QueuePage.
func (c *Core) Queues() QueuesView {
	s := c.snapshotView()
	v := QueuesView{Deadline: make([]QueuedJob, 0, len(s.deadline)), Regular: make([]QueuedJob, 0, len(s.regular))}
	for _, q := range s.deadline {
		v.Deadline = append(v.Deadline, q.out())
	}
	for _, q := range s.regular {
		v.Regular = append(v.Regular, q.out())
	}
	return v
}

// QueueLengths is how many jobs wait: in the deadline queue, in the
// regular queue, and not yet admitted (intake buffer and retries on their
// way back), as of the last pass (the intake count is current).
type QueueLengths struct {
	Deadline int `json:"deadline"`
	Regular  int `json:"regular"`
	Intake   int `json:"intake"`
}

// Lengths returns the queue lengths without copying any job.
func (c *Core) Lengths() QueueLengths {
	s := c.snapshotView()
	c.inboxMu.Lock()
	rq := len(c.requeues)
	c.inboxMu.Unlock()
	return QueueLengths{Deadline: len(s.deadline), Regular: len(s.regular), Intake: c.buffer.Len() + rq}
}

// DefaultQueuePageLimit and MaxQueuePageLimit bound a page of QueuePage.
const (
	DefaultQueuePageLimit = 100
	MaxQueuePageLimit     = 1000
)

// ErrBadQueueCursor is returned for a cursor QueuePage did not hand out.
var ErrBadQueueCursor = errors.New("invalid queue cursor")

// rank is t's rank as it was published.
func (t *QueueTeam) rank() teamRank {
	r := teamRank{team: t.Team, below: t.BelowGuarantee, key: t.Share}
	if t.LastStart != nil {
		r.last = *t.LastStart
	}
	return r
}

// QueuePage is one page of the queues: the jobs in the order they will be
// tried, deadline queue first, then the regular queue.
type QueuePage struct {
	Deadline []QueuedJob `json:"deadline"`
	Regular  []QueuedJob `json:"regular"`
	// RegularOrder is how Regular is ordered: RegularByDemand ("demand"),
	// RegularBySubmission ("fifo") or, with teams, RegularFairShare
	// ("fair-share"): team by team in the order the pass offers them the
	// room (Teams), as the teams stand now; that is the order the next
	// pass tries the jobs until one of them starts, when its team is
	// ranked again (its later jobs may then go after other teams').
	RegularOrder string `json:"regularOrder"`
	// WithinTeam, with RegularFairShare, is how each team's jobs are
	// ordered: RegularByDemand or RegularBySubmission.
	WithinTeam string `json:"withinTeam,omitempty"`
	// Teams, with RegularFairShare, are the teams of this page's regular
	// jobs in that order (Jobs counts all their waiting regular jobs).
	Teams []QueueTeam `json:"teams,omitempty"`
	// Totals are the full lengths, not the page's.
	Totals QueueLengths `json:"totals"`
	// Next is the cursor of the following page; empty on the last one.
	Next string `json:"next"`
	// At is when the scheduling pass that produced this view ran.
	At time.Time `json:"at"`
}

// queueCursor points just after a job of one queue, by that queue's sort
// key, so that it stays meaningful while jobs come and go.
type queueCursor struct {
	Queue     string    `json:"q"` // "d" or "r"
	Key       time.Time `json:"k,omitzero"`
	RD        float64   `json:"rd,omitempty"`
	Submitted time.Time `json:"s"`
	ID        string    `json:"id"`
	// In a fair-share regular queue: the job's team (the page after it
	// goes on within that team's run, then the teams after it) and that
	// team's rank, to go on after where it would rank if it no longer
	// waits.
	Team      string    `json:"t,omitempty"`
	TeamBelow bool      `json:"tb,omitempty"`
	TeamKey   float64   `json:"tk,omitempty"`
	TeamLast  time.Time `json:"tl,omitzero"`
}

func encodeQueueCursor(q string, j *QueuedJob, team *QueueTeam) string {
	c := queueCursor{Queue: q, Submitted: j.SubmittedAt, ID: j.ID}
	if q == "d" {
		c.Key = j.edfKey
	} else {
		c.RD = j.ResourceDemand
		if team != nil {
			c.Team, c.TeamBelow, c.TeamKey = team.Team, team.BelowGuarantee, team.Share
			if team.LastStart != nil {
				c.TeamLast = *team.LastStart
			}
		}
	}
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeQueueCursor(s string) (queueCursor, error) {
	var c queueCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > 512 {
		return c, ErrBadQueueCursor
	}
	if err := json.Unmarshal(b, &c); err != nil || (c.Queue != "d" && c.Queue != "r") || c.ID == "" {
		return c, ErrBadQueueCursor
	}
	return c, nil
}

// QueuePage returns up to limit waiting jobs (DefaultQueuePageLimit when
// limit <= 0, at most MaxQueuePageLimit) after cursor ("" for the first
// page), from the view of the last pass. It never waits for a pass.
func (c *Core) QueuePage(limit int, cursor string) (QueuePage, error) {
	if limit <= 0 {
		limit = DefaultQueuePageLimit
	}
	limit = min(limit, MaxQueuePageLimit)
	s := c.snapshotView()
	p := QueuePage{Deadline: []QueuedJob{}, Regular: []QueuedJob{}, Totals: c.Lengths(), At: s.at, RegularOrder: s.order}
	p.Totals.Deadline, p.Totals.Regular = len(s.deadline), len(s.regular)
	di, ri := 0, 0
	if cursor != "" {
		cur, err := decodeQueueCursor(cursor)
		if err != nil {
			return p, err
		}
		if cur.Queue == "d" {
			di, _ = slices.BinarySearchFunc(s.deadline, cur, func(q *QueuedJob, k queueCursor) int {
				return cmpEDF(q.edfKey, q.SubmittedAt, q.ID, k.Key, k.Submitted, k.ID)
			})
			if di < len(s.deadline) && s.deadline[di].ID == cur.ID {
				di++
			}
		} else {
			di = len(s.deadline)
			ri = s.regularAfter(cur)
		}
	}
	var last *QueuedJob
	lastQ := ""
	for ; di < len(s.deadline) && len(p.Deadline) < limit; di++ {
		last, lastQ = s.deadline[di], "d"
		p.Deadline = append(p.Deadline, last.out())
	}
	fair := s.order == RegularFairShare
	if fair {
		p.WithinTeam = RegularByDemand
		if s.fifo {
			p.WithinTeam = RegularBySubmission
		}
	}
	for ; ri < len(s.regular) && len(p.Deadline)+len(p.Regular) < limit; ri++ {
		last, lastQ = s.regular[ri], "r"
		p.Regular = append(p.Regular, last.out())
		if fair && (len(p.Teams) == 0 || p.Teams[len(p.Teams)-1].Team != last.Team) {
			p.Teams = append(p.Teams, s.teams[s.teamAt[last.Team]])
		}
	}
	if last != nil && (di < len(s.deadline) || ri < len(s.regular)) {
		var team *QueueTeam
		if fair && lastQ == "r" {
			team = &s.teams[s.teamAt[last.Team]]
		}
		p.Next = encodeQueueCursor(lastQ, last, team)
	}
	return p, nil
}

// regularAfter is the index in the published regular queue of the first
// job after the cursor's. By the queue's key; in a fair-share queue,
// within the run of the cursor's team, then on with the teams after it as
// they rank now (the teams' order may have changed since the cursor's
// page: a team's jobs may then be seen twice or not at all), or, when its
// team no longer waits, at the first team ranked after the cursor's team
// as it ranked then (fairBefore).
func (s *queueSnapshot) regularAfter(cur queueCursor) int {
	lo, hi := 0, len(s.regular)
	if s.order == RegularFairShare {
		i, ok := s.teamAt[cur.Team]
		if !ok {
			gone := teamRank{team: cur.Team, below: cur.TeamBelow, key: cur.TeamKey, last: cur.TeamLast}
			for _, t := range s.teams {
				if fairBefore(gone, t.rank()) {
					return t.first
				}
			}
			return len(s.regular)
		}
		lo, hi = s.teams[i].first, s.teams[i].first+s.teams[i].Jobs
	}
	run := s.regular[lo:hi]
	ri, _ := slices.BinarySearchFunc(run, cur, func(q *QueuedJob, k queueCursor) int {
		return cmpRegular(s.fifo, q.ResourceDemand, q.SubmittedAt, q.ID, k.RD, k.Submitted, k.ID)
	})
	if ri < len(run) && run[ri].ID == cur.ID {
		ri++
	}
	return lo + ri
}

func cmpEDF(aKey, aSub time.Time, aID string, bKey, bSub time.Time, bID string) int {
	if c := aKey.Compare(bKey); c != 0 {
		return c
	}
	if c := aSub.Compare(bSub); c != 0 {
		return c
	}
	return strings.Compare(aID, bID)
}

func cmpRegular(fifo bool, aRD float64, aSub time.Time, aID string, bRD float64, bSub time.Time, bID string) int {
	if !fifo {
		switch {
		case aRD > bRD:
			return -1
		case aRD < bRD:
			return 1
		}
	}
	if c := aSub.Compare(bSub); c != 0 {
		return c
	}
	return strings.Compare(aID, bID)
}

// String describes the lengths for logs.
func (l QueueLengths) String() string {
	return fmt.Sprintf("%d deadline, %d regular, %d in intake", l.Deadline, l.Regular, l.Intake)
}
