package main

import (
	"context"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/metrics"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// teamBudgetsHelp is --team-budgets' help.
const teamBudgetsHelp = "team budgets in dollars per UTC day or month, weighed against the teams' attributed cost (the cost ledger): " +
	"team=USD/day|month[:hold|reject],... e.g. analytics=50/day:reject,etl=1000/month. Over its budget a team's waiting jobs are held " +
	"(waiting reason \"team X over its daily budget $Y\"); with reject its new jobs are also refused (403). (default) names the default team"

// newBudgetTracker follows the teams' spend against budgets (nil when
// there are none and no teams file could bring some). Its OnChange and
// Run are set and started by serve.
func newBudgetTracker(budgets chargeback.Static, tf *teams.Holder, st *store.Store, log logrus.FieldLogger) *chargeback.Tracker {
	if len(budgets) == 0 && tf == nil {
		return nil
	}
	return &chargeback.Tracker{Source: st, Budgets: budgetSource{file: tf, flag: budgets}, Log: log.WithField("component", "budgets")}
}

// budgetSource is chargeback.Budgets from the teams file's budget= keys
// (as the file in force says: a reload changes them) and --team-budgets,
// which wins for a team both name.
type budgetSource struct {
	file *teams.Holder // nil without --teams
	flag chargeback.Static
}

func (b budgetSource) TeamBudgets() map[string]chargeback.Budget {
	out := map[string]chargeback.Budget{}
	if b.file != nil {
		if cfg := b.file.Get(); cfg != nil {
			for _, t := range cfg.Teams {
				if t.Budget != nil {
					out[t.Name] = *t.Budget
				}
			}
		}
	}
	for team, bud := range b.flag {
		out[team] = bud
	}
	return out
}

// budgetRefusal is api.Config.BudgetRefusal from a tracker.
func budgetRefusal(t *chargeback.Tracker) func(team string) (string, bool) {
	return func(team string) (string, bool) {
		v, refused := t.Refusal(team)
		if !refused {
			return "", false
		}
		return v.Refusal(), true
	}
}

// teamMetrics is metrics.TeamSource from the store and the budgets.
type teamMetrics struct {
	st      *store.Store
	budgets *chargeback.Tracker // nil without budgets
}

func (t teamMetrics) TeamTotals(ctx context.Context) (map[string]metrics.TeamTotal, float64, error) {
	totals, idle, err := t.st.TeamTotals(ctx)
	if err != nil {
		return nil, 0, err
	}
	out := make(map[string]metrics.TeamTotal, len(totals))
	for team, u := range totals {
		out[team] = metrics.TeamTotal{CostUSD: u.CostUSD, CPUSeconds: u.CPUSeconds, MemMBSeconds: u.MemMBSeconds}
	}
	return out, idle, nil
}

func (t teamMetrics) TeamBudgets() map[string]metrics.TeamBudget {
	if t.budgets == nil {
		return nil
	}
	out := map[string]metrics.TeamBudget{}
	for _, v := range t.budgets.Verdicts() {
		out[v.Team] = metrics.TeamBudget{BudgetUSD: v.Budget.USD, SpentUSD: v.SpentUSD, Held: v.Over}
	}
	return out
}
