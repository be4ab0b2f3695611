package simulate

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Event is one recorded job state change.
type Event struct {
	At       time.Time
	JobID    string
	From, To scheduler.State
	Reason   string
}

// MemStore is an in-memory scheduler.Store. Like the PostgreSQL store it
// changes a job's state with scheduler.ApplyTransition (the checks against
// the state machine and the side effects are the same code) and keeps an
// append-only event log. Its clock stamps events and transitions.
type MemStore struct {
	mu     sync.Mutex
	clock  scheduler.Clock
	jobs   map[string]*scheduler.Job
	seq    map[string]int
	next   int
	plans  map[string]placement.Plan
	events []Event
	// KeepEvents turns the event log on (off by default: a 24-hour run
	// makes tens of thousands).
	KeepEvents bool
}

// NewMemStore returns an empty store stamping events with clock.
func NewMemStore(clock scheduler.Clock) *MemStore {
	if clock == nil {
		clock = scheduler.SystemClock{}
	}
	return &MemStore{clock: clock, jobs: map[string]*scheduler.Job{}, seq: map[string]int{}, plans: map[string]placement.Plan{}}
}

// Create stores a new job in state SUBMITTED. Creating an id twice is
// scheduler.ErrConflict.
func (s *MemStore) Create(j scheduler.Job) (scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[j.ID]; ok {
		return j, fmt.Errorf("create job %s: %w", j.ID, scheduler.ErrConflict)
	}
	j.State = scheduler.Submitted
	cp := j
	s.jobs[j.ID] = &cp
	s.seq[j.ID] = s.next
	s.next++
	s.log(Event{At: s.clock.Now(), JobID: j.ID, To: scheduler.Submitted, Reason: "submitted"})
	return cp, nil
}

func (s *MemStore) log(e Event) {
	if s.KeepEvents {
		s.events = append(s.events, e)
	}
}

// Get returns a copy of the job.
func (s *MemStore) Get(id string) (scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return scheduler.Job{}, fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	return *j, nil
}

// Jobs returns copies of all jobs in creation order.
func (s *MemStore) Jobs() []scheduler.Job {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]scheduler.Job, 0, len(s.jobs))
	for _, j := range s.jobs {
		out = append(out, *j)
	}
	slices.SortFunc(out, func(a, b scheduler.Job) int { return s.seq[a.ID] - s.seq[b.ID] })
	return out
}

// Events returns the event log (empty unless KeepEvents).
func (s *MemStore) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Plan returns the placement stored for the job.
func (s *MemStore) Plan(id string) (placement.Plan, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.plans[id]
	return p, ok
}

// Transition implements scheduler.Store.
func (s *MemStore) Transition(_ context.Context, id string, from, to scheduler.State, reason string, mutate func(*scheduler.Job)) (scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return scheduler.Job{}, fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	cp, ev, err := scheduler.ApplyTransition(*j, from, to, reason, s.clock.Now(), mutate)
	if err != nil {
		return cp, err
	}
	*j = cp
	s.log(Event(ev))
	return cp, nil
}

// Unfinished implements scheduler.Store.
func (s *MemStore) Unfinished(context.Context) ([]scheduler.Job, error) {
	var out []scheduler.Job
	for _, j := range s.Jobs() {
		if !j.State.Terminal() {
			out = append(out, j)
		}
	}
	slices.SortStableFunc(out, func(a, b scheduler.Job) int {
		if c := a.SubmittedAt.Compare(b.SubmittedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// SetWaiting implements scheduler.Store.
func (s *MemStore) SetWaiting(_ context.Context, id, reason string, atRisk bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	if !j.State.Waiting() {
		return fmt.Errorf("job %s is %s: %w", id, j.State, scheduler.ErrStale)
	}
	j.WaitingReason, j.AtRisk = reason, atRisk
	return nil
}

// SavePlacement implements scheduler.Store.
func (s *MemStore) SavePlacement(_ context.Context, id string, plan placement.Plan) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.jobs[id]; !ok {
		return fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	s.plans[id] = plan
	return nil
}

// RequestPreemption implements scheduler.PreemptionStore.
func (s *MemStore) RequestPreemption(_ context.Context, id, reason string) (scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return scheduler.Job{}, fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	if !j.State.Active() {
		return *j, fmt.Errorf("job %s is %s: %w", id, j.State, scheduler.ErrStale)
	}
	j.PreemptRequested = reason
	s.log(Event{At: s.clock.Now(), JobID: id, From: j.State, To: j.State, Reason: "preemption requested: " + reason})
	return *j, nil
}

// StartPlaced implements scheduler.Store: the two moves through Transition
// (the simulator's one transition implementation) and the plan. The
// simulation runs its core from one goroutine, so nothing comes between
// them; a job not QUEUED is refused before anything is written.
func (s *MemStore) StartPlaced(ctx context.Context, p scheduler.Placed) (scheduler.Job, error) {
	if j, err := s.Get(p.ID); err != nil {
		return j, err
	} else if j.State != scheduler.Queued {
		return j, fmt.Errorf("job %s is %s, not %s: %w", p.ID, j.State, scheduler.Queued, scheduler.ErrStale)
	}
	if _, err := s.Transition(ctx, p.ID, scheduler.Queued, scheduler.Placing, p.PlacingReason, p.Mutate); err != nil {
		return scheduler.Job{}, err
	}
	if err := s.SavePlacement(ctx, p.ID, p.Plan); err != nil {
		return scheduler.Job{}, err
	}
	return s.Transition(ctx, p.ID, scheduler.Placing, scheduler.Reserving, p.ReservingReason, nil)
}
