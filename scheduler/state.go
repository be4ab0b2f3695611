package scheduler

import "fmt"

// State is where a job is in its life.
type State string

const (
	Submitted State = "SUBMITTED" // accepted and durable, not yet queued
	Queued    State = "QUEUED"    // waiting in the deadline or regular queue
	Placing   State = "PLACING"   // a placement is being computed / persisted
	Reserving State = "RESERVING" // reservations are being made on the planned agents
	Launching State = "LAUNCHING" // the Spark driver is being launched
	Running   State = "RUNNING"   // the driver runs
	Finished  State = "FINISHED"  // the driver ended successfully
	Failed    State = "FAILED"    // the driver or its placement failed
	Killed    State = "KILLED"    // stopped on request while it ran
	Rejected  State = "REJECTED"  // can never run (too big, deadline past)
	Cancelled State = "CANCELLED" // withdrawn on request before it ran
)

// AllStates lists every state in life order.
var AllStates = []State{Submitted, Queued, Placing, Reserving, Launching, Running, Finished, Failed, Killed, Rejected, Cancelled}

// ParseState returns the state named s (exact, upper case).
func ParseState(s string) (State, error) {
	for _, st := range AllStates {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("unknown state %q (one of %v)", s, AllStates)
}

// Terminal reports whether no transition leaves s.
func (s State) Terminal() bool {
	switch s {
	case Finished, Failed, Killed, Rejected, Cancelled:
		return true
	}
	return false
}

// Waiting reports whether the job has not started to take resources.
func (s State) Waiting() bool { return s == Submitted || s == Queued }

// Active reports whether the job holds, or is acquiring, cluster resources.
func (s State) Active() bool {
	switch s {
	case Placing, Reserving, Launching, Running:
		return true
	}
	return false
}

// transitions is the one table of legal moves. Going back to QUEUED from
// PLACING, RESERVING, LAUNCHING or RUNNING is a retry (the plan no longer
// fits, a reservation was refused, or an agent was lost and the job asks
// for retries).
var transitions = map[State][]State{
	Submitted: {Queued, Rejected, Cancelled},
	Queued:    {Placing, Rejected, Cancelled},
	Placing:   {Reserving, Queued, Rejected, Failed, Cancelled},
	Reserving: {Launching, Queued, Failed, Cancelled, Killed},
	Launching: {Running, Finished, Queued, Failed, Killed},
	Running:   {Finished, Failed, Killed, Queued},
}

// CanTransition reports whether a job may move from one state to another.
func CanTransition(from, to State) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// ErrIllegalTransition is wrapped by CheckTransition's errors.
var ErrIllegalTransition = fmt.Errorf("illegal state transition")

// CheckTransition returns nil when from -> to is legal, else an error that
// wraps ErrIllegalTransition and names both states.
func CheckTransition(from, to State) error {
	if CanTransition(from, to) {
		return nil
	}
	return fmt.Errorf("%w: %s -> %s", ErrIllegalTransition, from, to)
}
