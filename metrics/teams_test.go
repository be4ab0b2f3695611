package metrics

import (
	"context"
	"fmt"
	"math"
	"testing"
)

func TestFoldTeams(t *testing.T) {
	totals := map[string]TeamTotal{"a": {CostUSD: 5}, "b": {CostUSD: 3, CPUSeconds: 10}, "c": {CostUSD: 3}, "": {CostUSD: 1, CPUSeconds: 2}, "e": {CostUSD: 0.5}}
	got := FoldTeams(totals, 2)
	// a and b (b before c on the tie), the rest in other.
	if len(got) != 3 || got["a"].CostUSD != 5 || got["b"].CPUSeconds != 10 || got[OtherTeam].CostUSD != 4.5 || got[OtherTeam].CPUSeconds != 2 {
		t.Fatalf("%+v", got)
	}
	got = FoldTeams(totals, 10)
	if len(got) != 5 || got["(default)"].CostUSD != 1 {
		t.Fatalf("%+v", got)
	}
}

type fakeTeams struct {
	n      int
	calls  int
	budget map[string]TeamBudget
}

func (f *fakeTeams) TeamTotals(context.Context) (map[string]TeamTotal, float64, error) {
	f.calls++
	out := map[string]TeamTotal{}
	for i := 0; i < f.n; i++ {
		out[fmt.Sprintf("team-%02d", i)] = TeamTotal{CostUSD: float64(i + 1)}
	}
	return out, 0.25, nil
}

func (f *fakeTeams) TeamBudgets() map[string]TeamBudget { return f.budget }

// TestTeamMetricsBounded: 40 teams give DefaultTeamSeries + 1 series
// whose sum is every team's cost; budgets are served per budgeted team;
// the ledger is not read at every scrape.
func TestTeamMetricsBounded(t *testing.T) {
	m := New(nil)
	src := &fakeTeams{n: 40, budget: map[string]TeamBudget{"team-00": {BudgetUSD: 5, SpentUSD: 7, Held: true}}}
	m.WatchTeams(src, 0)
	if _, err := m.Registry.Gather(); err != nil {
		t.Fatal(err)
	}
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum, other, idle := 0.0, 0.0, -1.0
	for _, f := range fams {
		switch f.GetName() {
		case "sparkpack_idle_cost_usd_total":
			idle = f.Metric[0].GetCounter().GetValue()
		case "sparkpack_team_cost_usd_total":
			if len(f.Metric) != DefaultTeamSeries+1 {
				t.Fatalf("%d team cost series, want %d", len(f.Metric), DefaultTeamSeries+1)
			}
			for _, s := range f.Metric {
				sum += s.GetCounter().GetValue()
				if s.Label[0].GetValue() == OtherTeam {
					other = s.GetCounter().GetValue()
				}
			}
		case "sparkpack_team_budget_held":
			if len(f.Metric) != 1 || f.Metric[0].GetGauge().GetValue() != 1 {
				t.Errorf("held %v", f.Metric)
			}
		}
	}
	// 1 + ... + 40 = 820; the 30 smallest (1..30) = 465 are "other".
	if math.Abs(sum-820) > 1e-9 || math.Abs(other-465) > 1e-9 {
		t.Fatalf("sum %v other %v", sum, other)
	}
	if idle != 0.25 {
		t.Errorf("idle %v, want 0.25", idle)
	}
	if src.calls != 1 {
		t.Errorf("the ledger was read %d times for 2 scrapes within %s", src.calls, teamCacheFor)
	}
}

// TestTeamMetricsNamesCannotCollide: a team named "default" or "other"
// beside the default team and the summed rest, each with a budget, gives
// distinct series (with "default" as the default team's label, /metrics
// answered 500 for two series of one label set).
func TestTeamMetricsNamesCannotCollide(t *testing.T) {
	m := New(nil)
	src := &fakeTeams{n: 0, budget: map[string]TeamBudget{
		"": {BudgetUSD: 1}, "default": {BudgetUSD: 2}, "other": {BudgetUSD: 3}}}
	m.WatchTeams(src, 1)
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		if f.GetName() == "sparkpack_team_budget_usd" {
			for _, s := range f.Metric {
				got[s.Label[0].GetValue()] = s.GetGauge().GetValue()
			}
		}
	}
	if len(got) != 3 || got["(default)"] != 1 || got["default"] != 2 || got["other"] != 3 {
		t.Fatalf("budget series %v", got)
	}
	folded := FoldTeams(map[string]TeamTotal{"": {CostUSD: 1}, "default": {CostUSD: 2}, "other": {CostUSD: 3}, "x": {CostUSD: 0.5}}, 3)
	if len(folded) != 4 || folded["(default)"].CostUSD != 1 || folded["default"].CostUSD != 2 || folded["other"].CostUSD != 3 || folded[OtherTeam].CostUSD != 0.5 {
		t.Fatalf("folded %v", folded)
	}
}
