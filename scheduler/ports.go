package scheduler

import (
	"context"
	"errors"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// Errors a Store returns; implementations wrap them with context.
var (
	ErrNotFound = errors.New("job not found")
	// ErrConflict: a job with the same id but a different body exists.
	ErrConflict = errors.New("a different job with this id exists")
	// ErrStale: the job is not in the state the caller expected.
	ErrStale = errors.New("job state changed concurrently")
)

// Store is the durable job record the core needs. The live implementation
// is package store (PostgreSQL); the simulator keeps one in memory. Every
// method is atomic: a transition and its event are written together or not
// at all.
type Store interface {
	// Transition moves job id from state from to state to (CheckTransition
	// must allow it) and appends an event with reason. mutate, if not nil,
	// may change the job's other fields (times, waiting reason) before it
	// is written. It fails with ErrStale when the job is not in state from.
	Transition(ctx context.Context, id string, from, to State, reason string, mutate func(*Job)) (Job, error)
	// Unfinished returns every job that is not in a terminal state, oldest
	// submission first: the core rebuilds its queues from it at start.
	Unfinished(ctx context.Context) ([]Job, error)
	// StartPlaced records the start of a queued job in one transaction:
	// QUEUED -> PLACING -> RESERVING, each move with its event, and the
	// plan (replacing any earlier one). It fails with ErrStale when the
	// job is not QUEUED; nothing is written then.
	StartPlaced(ctx context.Context, p Placed) (Job, error)
	// RequestPreemption marks job id, which holds resources, for eviction
	// with the reason (its PreemptRequested) and appends an event. It
	// fails with ErrStale when the job no longer holds resources.
	RequestPreemption(ctx context.Context, id, reason string) (Job, error)
	BatchStore
	PlanReader
}

// Placed is the start of a queued job with its plan (Store.StartPlaced).
type Placed struct {
	ID   string
	Plan placement.Plan
	// PlacingReason and ReservingReason are the reasons of the events
	// QUEUED -> PLACING and PLACING -> RESERVING.
	PlacingReason, ReservingReason string
	// Mutate, if not nil, changes the job's other fields (as in
	// Store.Transition) with the move to PLACING.
	Mutate func(*Job)
}

// Clock tells the time and makes timers; the simulator drives a virtual one.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed on this clock.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

func (SystemClock) Now() time.Time                         { return time.Now() }
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Change is one state change of a batch (see BatchStore).
type Change struct {
	ID       string
	From, To State
	Reason   string
	// Mutate, if not nil, changes the job's other fields before it is
	// written, as in Store.Transition.
	Mutate func(*Job)
}

// ChangeResult is the outcome of one Change: the job as stored, or the
// error of that change alone (ErrStale, ErrNotFound, an illegal move).
type ChangeResult struct {
	Job Job
	Err error
}

// WaitingNote is a waiting job's reason and at-risk flag, to be stored.
type WaitingNote struct {
	ID     string
	Reason string
	AtRisk bool
}

// BatchStore writes many changes in one round trip: the core admits a
// burst of submissions and records waiting reasons without one database
// call per job.
type BatchStore interface {
	// TransitionMany applies every change in one transaction. A change
	// that fails on its own (stale state, unknown job) is reported in its
	// result and does not affect the others; err is for the whole batch
	// (nothing was written).
	TransitionMany(ctx context.Context, changes []Change) (results []ChangeResult, err error)
	// SetWaitingMany records several waiting reasons at once; jobs that no
	// longer wait are left alone.
	SetWaitingMany(ctx context.Context, notes []WaitingNote) error
}

// PlanReader returns the plan saved for a job (StartPlaced): the core
// reads the plans of the jobs it finds running at a restart, so that it
// knows what evicting them would free.
type PlanReader interface {
	Plan(ctx context.Context, id string) (placement.Plan, error)
}
