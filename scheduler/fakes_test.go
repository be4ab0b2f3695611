package scheduler

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/internal/manualclock"
	"github.com/sparkpack/sparkpack/placement"
)

// testStore is a minimal in-memory Store for the core's tests.
type testStore struct {
	mu     sync.Mutex
	jobs   map[string]*Job
	events []string // "id:from->to:reason"
	plans  map[string]placement.Plan
	failOn State // Transition into this state fails (once) when set
	// calls counts the store calls by method.
	calls map[string]int
	// hold, when set, is called (without the store's lock) at the start
	// of every Transition; a test blocks in it to catch the core mid-call.
	hold func(id string, to State)
	// failTimes[st] is how many next Transitions into st fail.
	failTimes map[State]int
	// unfinishedFails is how many next Unfinished calls fail.
	unfinishedFails int
}

func newTestStore() *testStore {
	return &testStore{jobs: map[string]*Job{}, plans: map[string]placement.Plan{}, calls: map[string]int{}}
}

func (s *testStore) add(j Job) Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	if j.State == "" {
		j.State = Submitted
	}
	cp := j
	s.jobs[j.ID] = &cp
	return cp
}

func (s *testStore) get(id string) Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.jobs[id]
}

// update changes a stored job as another writer would (the API, a user).
func (s *testStore) update(id string, change func(*Job)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	change(s.jobs[id])
}

// cancel is what the PostgreSQL store's Cancel does on a user's request
// (store/jobs.go): a waiting job is CANCELLED at once, one that holds
// resources is marked kill-requested. kill reports the latter.
func (s *testStore) cancel(id, reason string, now time.Time) (j Job, kill bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.jobs[id]
	if !ok {
		return Job{}, false, ErrNotFound
	}
	from := p.State
	switch {
	case from.Terminal():
		return *p, false, fmt.Errorf("job %s is %s: %w", id, from, ErrStale)
	case from.Waiting():
		t := now
		p.State, p.FinishedAt, p.WaitingReason = Cancelled, &t, ""
		s.events = append(s.events, fmt.Sprintf("%s:%s->%s:%s", id, from, Cancelled, reason))
	default:
		p.KillRequested, kill = true, true
	}
	return *p, kill, nil
}

func (s *testStore) count(method string) {
	s.mu.Lock()
	s.calls[method]++
	s.mu.Unlock()
}

func (s *testStore) callCount(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[method]
}

func (s *testStore) Transition(_ context.Context, id string, from, to State, reason string, mutate func(*Job)) (Job, error) {
	s.count("Transition")
	if s.hold != nil {
		s.hold(id, to)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return Job{}, ErrNotFound
	}
	if j.State != from {
		return *j, fmt.Errorf("job %s is %s: %w", id, j.State, ErrStale)
	}
	if err := CheckTransition(from, to); err != nil {
		return *j, err
	}
	if s.failTimes[to] > 0 {
		s.failTimes[to]--
		return *j, fmt.Errorf("injected failure: connection reset by peer")
	}
	if s.failOn != "" && s.failOn == to {
		s.failOn = ""
		return *j, fmt.Errorf("injected failure")
	}
	cp := *j
	if mutate != nil {
		mutate(&cp)
	}
	cp.State = to
	*j = cp
	s.events = append(s.events, fmt.Sprintf("%s:%s->%s:%s", id, from, to, reason))
	return cp, nil
}

func (s *testStore) Unfinished(context.Context) ([]Job, error) {
	s.count("Unfinished")
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unfinishedFails > 0 {
		s.unfinishedFails--
		return nil, errors.New("injected failure: connection reset by peer")
	}
	var out []Job
	for _, j := range s.jobs {
		if !j.State.Terminal() {
			out = append(out, *j)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].SubmittedAt.Before(out[b].SubmittedAt) })
	return out, nil
}

func (s *testStore) SetWaiting(_ context.Context, id, reason string, atRisk bool) error {
	s.count("SetWaiting")
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return ErrNotFound
	}
	j.WaitingReason, j.AtRisk = reason, atRisk
	return nil
}

func (s *testStore) SavePlacement(_ context.Context, id string, p placement.Plan) error {
	s.count("SavePlacement")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.plans[id] = p
	return nil
}

// StartPlaced implements Store: both moves and the plan, or nothing. An
// injected failure of either move fails the whole.
func (s *testStore) StartPlaced(_ context.Context, p Placed) (Job, error) {
	s.count("StartPlaced")
	if s.hold != nil {
		s.hold(p.ID, Placing)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[p.ID]
	if !ok {
		return Job{}, ErrNotFound
	}
	if j.State != Queued {
		return *j, fmt.Errorf("job %s is %s: %w", p.ID, j.State, ErrStale)
	}
	for _, to := range []State{Placing, Reserving} {
		if s.failTimes[to] > 0 {
			s.failTimes[to]--
			return *j, fmt.Errorf("injected failure: connection reset by peer")
		}
		if s.failOn != "" && s.failOn == to {
			s.failOn = ""
			return *j, fmt.Errorf("injected failure")
		}
	}
	cp := *j
	if p.Mutate != nil {
		p.Mutate(&cp)
	}
	cp.State = Reserving
	*j = cp
	s.plans[p.ID] = p.Plan
	s.events = append(s.events, fmt.Sprintf("%s:%s->%s:%s", p.ID, Queued, Placing, p.PlacingReason),
		fmt.Sprintf("%s:%s->%s:%s", p.ID, Placing, Reserving, p.ReservingReason))
	return cp, nil
}

// batchStore is a testStore as the harnesses that count its batches name it.
type batchStore struct{ *testStore }

// Plan implements Store.
func (s *testStore) Plan(_ context.Context, id string) (placement.Plan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.plans[id]
	if !ok {
		return p, ErrNotFound
	}
	return p, nil
}

// TransitionMany implements Store, counting batches.
func (b *testStore) TransitionMany(ctx context.Context, changes []Change) ([]ChangeResult, error) {
	b.count("TransitionMany")
	out := make([]ChangeResult, len(changes))
	for i, ch := range changes {
		b.mu.Lock()
		b.calls["Transition"]-- // counted as part of the batch
		b.mu.Unlock()
		j, err := b.Transition(ctx, ch.ID, ch.From, ch.To, ch.Reason, ch.Mutate)
		out[i] = ChangeResult{Job: j, Err: err}
	}
	return out, nil
}

// SetWaitingMany implements Store, counting batches.
func (b *testStore) SetWaitingMany(_ context.Context, notes []WaitingNote) error {
	b.count("SetWaitingMany")
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, n := range notes {
		if j, ok := b.jobs[n.ID]; ok && j.State.Waiting() {
			j.WaitingReason, j.AtRisk = n.Reason, n.AtRisk
		}
	}
	return nil
}

// testCluster holds agents and applies plans exactly.
type testCluster struct {
	mu        sync.Mutex
	agents    []placement.Agent
	held      map[string]placement.Plan
	cpus      map[string]float64 // per-executor size by job
	mem       map[string]float64
	applied   []string
	killed    []string
	preempted []string
	// failApply is how many next Applies fail.
	failApply int
	// snapErr, when set, fails every Snapshot; snapshots counts them.
	snapErr   error
	snapshots int
}

func newTestCluster(agents ...placement.Agent) *testCluster {
	for i := range agents {
		agents[i].FreeCPUs, agents[i].FreeMemMB = agents[i].CPUs, agents[i].MemMB
	}
	return &testCluster{agents: agents, held: map[string]placement.Plan{}, cpus: map[string]float64{}, mem: map[string]float64{}}
}

func agent(id string, cpus, memMB float64, priceUSD float64) placement.Agent {
	return placement.Agent{ID: id, Hostname: id, CPUs: cpus, MemMB: memMB, PriceMicroUSDPerHour: int64(priceUSD*1e6 + 0.5)}
}

func (c *testCluster) Snapshot(context.Context) (placement.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snapshots++
	if c.snapErr != nil {
		return placement.Snapshot{}, c.snapErr
	}
	active := map[string]bool{}
	for _, p := range c.held {
		for _, a := range p.Assignments {
			active[a.AgentID] = true
		}
	}
	s := placement.Snapshot{Agents: make([]placement.Agent, len(c.agents))}
	copy(s.Agents, c.agents)
	for i := range s.Agents {
		s.Agents[i].Active = active[s.Agents[i].ID]
	}
	return s, nil
}

func (c *testCluster) Apply(_ context.Context, j Job, p placement.Plan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.failApply > 0 {
		c.failApply--
		return errors.New("injected failure: the cluster refused the plan")
	}
	d := DemandOf(&j)
	for _, a := range p.Assignments {
		for i := range c.agents {
			if c.agents[i].ID == a.AgentID {
				c.agents[i].FreeCPUs -= d.CPUs * float64(a.Executors)
				c.agents[i].FreeMemMB -= d.MemMB * float64(a.Executors)
			}
		}
	}
	c.held[j.ID] = p
	c.cpus[j.ID], c.mem[j.ID] = d.CPUs, d.MemMB
	c.applied = append(c.applied, j.ID)
	return nil
}

func (c *testCluster) Release(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.held[id]
	if !ok {
		return nil
	}
	for _, a := range p.Assignments {
		for i := range c.agents {
			if c.agents[i].ID == a.AgentID {
				c.agents[i].FreeCPUs += c.cpus[id] * float64(a.Executors)
				c.agents[i].FreeMemMB += c.mem[id] * float64(a.Executors)
			}
		}
	}
	delete(c.held, id)
	return nil
}

func (c *testCluster) Kill(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.killed = append(c.killed, id)
	return nil
}

func (c *testCluster) appliedIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.applied...)
}

// manualClock is a clock moved by hand; After fires when Advance passes it.
type manualClock = manualclock.Clock

var newManualClock = manualclock.New

// Preempt implements Preempter: it records the eviction; the test reports
// the job back (as the framework does once the driver is gone).
func (c *testCluster) Preempt(_ context.Context, id, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.preempted = append(c.preempted, id)
	return nil
}

func (c *testCluster) takePreempted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.preempted
	c.preempted = nil
	return out
}

// RequestPreemption implements Store.
func (s *testStore) RequestPreemption(_ context.Context, id, reason string) (Job, error) {
	s.count("RequestPreemption")
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return Job{}, ErrNotFound
	}
	if !j.State.Active() {
		return *j, ErrStale
	}
	j.PreemptRequested = reason
	s.events = append(s.events, fmt.Sprintf("%s:%s->%s:preemption requested: %s", id, j.State, j.State, reason))
	return *j, nil
}

// changeObserver sends every job change the core makes to ch.
type changeObserver struct {
	NopObserver
	ch chan Job
}

func (o changeObserver) JobChanged(j Job) { o.ch <- j }
