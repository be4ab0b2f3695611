// Package failurelog decides which occurrences of a failure that repeats
// on every tick or retry are worth a log line: the first, then one a
// period with the count since, and the recovery. A loop that retries
// every 250 ms while a database or a master is down otherwise writes
// thousands of identical warnings an hour.
//
// It is a pure decision (State.Step); the caller logs what the verdict
// says.
package failurelog

import "time"

// DefaultEvery is the period of the reminders while a failure lasts.
const DefaultEvery = 30 * time.Second

// Kind is what to log for one attempt.
type Kind int

const (
	// Silent: nothing (a success while all is well, or a failure repeated
	// within the period).
	Silent Kind = iota
	// First: the first failure after a success (or ever).
	First
	// Still: the failure goes on; Verdict.Failures and Since say how long.
	Still
	// Recovered: a success after failures; Verdict.Failures and Since say
	// how many and since when.
	Recovered
)

// Verdict is what to log for one attempt.
type Verdict struct {
	Kind Kind
	// Failures counts the failed attempts since the first one of this run
	// of failures (Still, Recovered).
	Failures int
	// Since is when this run of failures began (Still, Recovered).
	Since time.Time
}

// State is the memory of one repeated attempt. The zero State is all
// well; Every <= 0 means DefaultEvery.
type State struct {
	Every    time.Duration
	failing  bool
	since    time.Time
	logged   time.Time
	failures int
}

// Step records one attempt at now and returns the state after it and
// what to log.
func (s State) Step(now time.Time, failed bool) (State, Verdict) {
	every := s.Every
	if every <= 0 {
		every = DefaultEvery
	}
	switch {
	case failed && !s.failing:
		s.failing, s.since, s.logged, s.failures = true, now, now, 1
		return s, Verdict{Kind: First, Failures: 1, Since: now}
	case failed:
		s.failures++
		if now.Sub(s.logged) >= every {
			s.logged = now
			return s, Verdict{Kind: Still, Failures: s.failures, Since: s.since}
		}
		return s, Verdict{Kind: Silent}
	case s.failing:
		v := Verdict{Kind: Recovered, Failures: s.failures, Since: s.since}
		s.failing, s.failures = false, 0
		return s, v
	}
	return s, Verdict{Kind: Silent}
}

// Failing reports whether the last attempt failed.
func (s State) Failing() bool { return s.failing }
