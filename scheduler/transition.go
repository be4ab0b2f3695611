package scheduler

import (
	"fmt"
	"time"
)

// TransitionEvent is the record of one state change that a store appends
// to the job's timeline.
type TransitionEvent struct {
	At       time.Time
	JobID    string
	From, To State
	Reason   string
}

// ApplyTransition is the one implementation of a job's state change, pure:
// every store (the PostgreSQL store and the simulator's) reads the job,
// calls it, and writes the job and the event it returns.
//
// It checks that j is in state from (else ErrStale) and that from -> to is
// in the state table (else ErrIllegalTransition), then applies mutate (the
// caller's own changes: it cannot change the job's id or state) and the
// side effects of the move itself, at now:
//   - leaving the waiting states clears the waiting reason;
//   - entering RUNNING starts a run (LastStartedAt = now, unless mutate
//     set it), and the first run sets StartedAt;
//   - a terminal state sets FinishedAt (unless already set).
//
// On error j is returned unchanged.
func ApplyTransition(j Job, from, to State, reason string, now time.Time, mutate func(*Job)) (Job, TransitionEvent, error) {
	id := j.ID
	if j.State != from {
		return j, TransitionEvent{}, fmt.Errorf("job %s is %s, not %s: %w", id, j.State, from, ErrStale)
	}
	if err := CheckTransition(from, to); err != nil {
		return j, TransitionEvent{}, fmt.Errorf("job %s: %w", id, err)
	}
	lastStarted := j.LastStartedAt
	j.State = to
	if !to.Waiting() {
		j.WaitingReason = ""
	}
	if mutate != nil {
		mutate(&j)
		j.ID, j.State = id, to // not the mutator's to change
	}
	if to == Running && from != Running && j.LastStartedAt == lastStarted {
		t := now // a new run, unless the mutator timed it
		j.LastStartedAt = &t
	}
	if to == Running && j.StartedAt == nil {
		t := now
		j.StartedAt = &t
	}
	if to.Terminal() && j.FinishedAt == nil {
		t := now
		j.FinishedAt = &t
	}
	return j, TransitionEvent{At: now, JobID: id, From: from, To: to, Reason: reason}, nil
}

// WaitedReason is the timeline's record of a waiting reason that held for d
// before it changed: "waited 2m19s: does not fit now: short of cpus".
func WaitedReason(d time.Duration, reason string) string {
	return "waited " + d.Round(time.Second).String() + ": " + reason
}
