package main

import (
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/teams"
)

// The teams file's budgets reach the budget tracker, follow a reload, and
// --team-budgets wins for a team both name.
func TestBudgetsFromTheTeamsFile(t *testing.T) {
	parse := func(s string) *teams.Config {
		t.Helper()
		c, err := teams.Parse(strings.NewReader(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	h := &teams.Holder{}
	h.Set(parse("ml budget=400/day budget-action=hold\netl budget=9000/month budget-action=reject\nbi weight=2\n"))
	flag, err := chargeback.ParseStatic("etl=100/day:hold")
	if err != nil {
		t.Fatal(err)
	}
	src := budgetSource{file: h, flag: flag}
	got := src.TeamBudgets()
	want := map[string]chargeback.Budget{
		"ml":  {USD: 400, Period: chargeback.PerDay, Action: chargeback.Hold},
		"etl": {USD: 100, Period: chargeback.PerDay, Action: chargeback.Hold},
	}
	if len(got) != len(want) || got["ml"] != want["ml"] || got["etl"] != want["etl"] {
		t.Fatalf("budgets %+v, want %+v", got, want)
	}
	h.Set(parse("ml budget=50/month budget-action=reject\n"))
	if got := (budgetSource{file: h}).TeamBudgets(); len(got) != 1 || got["ml"] != (chargeback.Budget{USD: 50, Period: chargeback.PerMonth, Action: chargeback.Reject}) {
		t.Fatalf("budgets after a reload %+v", got)
	}
	if newBudgetTracker(nil, nil, nil, nil) != nil {
		t.Fatal("a tracker without budgets nor a teams file")
	}
}
