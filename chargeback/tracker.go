package chargeback

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/sirupsen/logrus"
)

// SpendSource reads what each team spent since the start of the current
// UTC day and month (the store, from the cost ledger).
type SpendSource interface {
	TeamSpend(ctx context.Context, dayStart, monthStart time.Time) (map[string]Spend, error)
}

// DefaultRefresh is how often Run reads the spend again. With the cost
// meter's save period (10 s) it bounds how late a team is held.
const DefaultRefresh = 5 * time.Second

// Tracker keeps the budget verdicts: every team over its budget has its
// waiting jobs held (scheduler.BudgetHolds); a team over a reject budget
// also has its new jobs refused (Refusal).
type Tracker struct {
	Source  SpendSource
	Budgets Budgets // nil: no budgets
	// OnChange, if set, is called when the set of held teams changed (the
	// scheduler should look at its waiting jobs again).
	OnChange func()
	Now      func() time.Time
	Log      logrus.FieldLogger

	mu       sync.Mutex
	verdicts []Verdict
	held     map[string]string
	refused  map[string]Verdict
}

// Refresh reads the spend and decides again.
func (t *Tracker) Refresh(ctx context.Context) error {
	var budgets map[string]Budget
	if t.Budgets != nil {
		budgets = t.Budgets.TeamBudgets()
	}
	now := time.Now()
	if t.Now != nil {
		now = t.Now()
	}
	var verdicts []Verdict
	if len(budgets) > 0 {
		spend, err := t.Source.TeamSpend(ctx, PeriodStart(PerDay, now), PeriodStart(PerMonth, now))
		if err != nil {
			return err
		}
		verdicts = Decide(budgets, spend, now)
	}
	held, refused := map[string]string{}, map[string]Verdict{}
	for _, v := range verdicts {
		if !v.Over {
			continue
		}
		held[v.Team] = v.Reason()
		if v.Budget.Action == Reject {
			refused[v.Team] = v
		}
	}
	t.mu.Lock()
	changed := !maps.Equal(held, t.held)
	t.verdicts, t.held, t.refused = verdicts, held, refused
	t.mu.Unlock()
	if changed {
		if t.Log != nil {
			t.Log.WithField("held", slices.Sorted(maps.Keys(held))).Info("teams held for their budget changed")
		}
		if t.OnChange != nil {
			t.OnChange()
		}
	}
	return nil
}

// Run refreshes every interval until ctx ends.
func (t *Tracker) Run(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultRefresh
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		if err := t.Refresh(ctx); err != nil && ctx.Err() == nil && t.Log != nil {
			t.Log.WithError(err).Warn("reading the teams' spend failed; the budget verdicts stay as they were")
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// HeldTeams implements scheduler.BudgetHolds.
func (t *Tracker) HeldTeams() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held
}

// Refusal says whether a new job of team is refused, and why.
func (t *Tracker) Refusal(team string) (Verdict, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.refused[team]
	return v, ok
}

// Verdicts is every budgeted team's verdict at the last refresh.
func (t *Tracker) Verdicts() []Verdict {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.verdicts)
}
