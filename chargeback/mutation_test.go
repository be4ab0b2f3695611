package chargeback

// Tests written from the mutants scripts/mutation.sh found alive
// (docs/testing.md, "Mutation testing").

import (
	"context"
	"errors"
	"testing"
	"time"
)

// recordingSpend records the period starts it is asked for.
type recordingSpend struct {
	calls      int
	day, month time.Time
}

func (r *recordingSpend) TeamSpend(_ context.Context, day, month time.Time) (map[string]Spend, error) {
	r.calls++
	r.day, r.month = day, month
	return map[string]Spend{}, nil
}

// TestTrackerAsksForTheCurrentPeriods: the spend is read from the start of
// the tracker's day and month (its clock, not the machine's): 2020-02-29
// 15:00 UTC asks from 2020-02-29 00:00 and 2020-02-01 00:00.
func TestTrackerAsksForTheCurrentPeriods(t *testing.T) {
	src := &recordingSpend{}
	tr := &Tracker{Source: src, Budgets: Static{"a": {USD: 5, Period: PerDay, Action: Hold}},
		Now: func() time.Time { return time.Date(2020, 2, 29, 15, 0, 0, 0, time.UTC) }}
	if err := tr.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !src.day.Equal(time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)) || !src.month.Equal(time.Date(2020, 2, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("asked from %v and %v", src.day, src.month)
	}
}

type failingSpend struct{ calls int }

func (f *failingSpend) TeamSpend(context.Context, time.Time, time.Time) (map[string]Spend, error) {
	f.calls++
	return nil, errors.New("store down")
}

// TestTrackerWithoutBudgetsReadsNothing: no budgets, no spend to read (a
// store that is down does not matter).
func TestTrackerWithoutBudgetsReadsNothing(t *testing.T) {
	src := &failingSpend{}
	tr := &Tracker{Source: src, Budgets: Static{}}
	if err := tr.Refresh(context.Background()); err != nil || src.calls != 0 {
		t.Fatalf("Refresh: %v after %d reads, want nil and none", err, src.calls)
	}
}

// TestZeroBudget: a budget of $0 is allowed (any spend is over it).
func TestZeroBudget(t *testing.T) {
	s, err := ParseStatic("x=0/day")
	if err != nil || s["x"].USD != 0 || s["x"].Period != PerDay {
		t.Fatalf("%+v, %v", s, err)
	}
}
