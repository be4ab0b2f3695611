package scheduler

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestApplyTransition(t *testing.T) {
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	earlier := now.Add(-time.Hour)
	tp := func(t time.Time) *time.Time { return &t }
	base := func(st State, mod func(*Job)) Job {
		j := Job{Spec: Spec{ID: "j"}, State: st, WaitingReason: "no room", AtRisk: true}
		if mod != nil {
			mod(&j)
		}
		return j
	}
	cases := []struct {
		name     string
		job      Job
		from, to State
		mutate   func(*Job)
		want     Job
		err      error
	}{
		{name: "queued keeps the waiting reason", job: base(Submitted, nil), from: Submitted, to: Queued,
			want: base(Queued, nil)},
		{name: "placing clears it", job: base(Queued, nil), from: Queued, to: Placing,
			want: base(Placing, func(j *Job) { j.WaitingReason = "" })},
		{name: "first run", job: base(Launching, func(j *Job) { j.WaitingReason = "" }), from: Launching, to: Running,
			want: base(Running, func(j *Job) { j.WaitingReason, j.StartedAt, j.LastStartedAt = "", tp(now), tp(now) })},
		{name: "a rerun keeps StartedAt", job: base(Launching, func(j *Job) { j.StartedAt, j.LastStartedAt = tp(earlier), tp(earlier) }),
			from: Launching, to: Running,
			want: base(Running, func(j *Job) { j.WaitingReason, j.StartedAt, j.LastStartedAt = "", tp(earlier), tp(now) })},
		{name: "the mutator's start time wins", job: base(Launching, nil), from: Launching, to: Running,
			mutate: func(j *Job) { j.LastStartedAt = tp(earlier); j.Attempt++ },
			want:   base(Running, func(j *Job) { j.WaitingReason, j.StartedAt, j.LastStartedAt, j.Attempt = "", tp(now), tp(earlier), 1 })},
		{name: "terminal sets FinishedAt", job: base(Running, nil), from: Running, to: Finished,
			want: base(Finished, func(j *Job) { j.WaitingReason, j.FinishedAt = "", tp(now) })},
		{name: "a set FinishedAt stays", job: base(Queued, nil), from: Queued, to: Cancelled,
			mutate: func(j *Job) { j.FinishedAt = tp(earlier) },
			want:   base(Cancelled, func(j *Job) { j.WaitingReason, j.FinishedAt = "", tp(earlier) })},
		{name: "retry: the mutator's reason", job: base(Running, func(j *Job) { j.WaitingReason = "" }), from: Running, to: Queued,
			mutate: func(j *Job) { j.WaitingReason = "retry: agent lost" },
			want:   base(Queued, func(j *Job) { j.WaitingReason = "retry: agent lost" })},
		{name: "the mutator cannot change id or state", job: base(Queued, nil), from: Queued, to: Placing,
			mutate: func(j *Job) { j.ID, j.State = "other", Finished },
			want:   base(Placing, func(j *Job) { j.WaitingReason = "" })},
		{name: "stale", job: base(Queued, nil), from: Submitted, to: Queued, want: base(Queued, nil), err: ErrStale},
		{name: "illegal", job: base(Queued, nil), from: Queued, to: Running, want: base(Queued, nil), err: ErrIllegalTransition},
		{name: "nothing leaves a terminal state", job: base(Finished, nil), from: Finished, to: Queued, want: base(Finished, nil), err: ErrIllegalTransition},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			called := false
			mutate := c.mutate
			if c.err != nil {
				mutate = func(*Job) { called = true }
			}
			got, ev, err := ApplyTransition(c.job, c.from, c.to, "why", now, mutate)
			if !errors.Is(err, c.err) {
				t.Fatalf("err %v, want %v", err, c.err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("job\n got %+v\nwant %+v", got, c.want)
			}
			if c.err != nil {
				if called || ev != (TransitionEvent{}) {
					t.Fatalf("a refused transition ran the mutator (%v) or made an event %+v", called, ev)
				}
				return
			}
			if want := (TransitionEvent{At: now, JobID: "j", From: c.from, To: c.to, Reason: "why"}); ev != want {
				t.Fatalf("event %+v, want %+v", ev, want)
			}
		})
	}
}

// TestApplyTransitionFollowsTheTable: every pair of states is accepted
// exactly when the state table has it.
func TestApplyTransitionFollowsTheTable(t *testing.T) {
	for _, from := range AllStates {
		for _, to := range AllStates {
			_, _, err := ApplyTransition(Job{Spec: Spec{ID: "j"}, State: from}, from, to, "", time.Time{}, nil)
			if (err == nil) != CanTransition(from, to) {
				t.Errorf("%s -> %s: err %v, table says %v", from, to, err, CanTransition(from, to))
			}
		}
	}
}
