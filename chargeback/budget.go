package chargeback

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/teams"
)

// Budget is what a team may spend in a period: the teams file's budget
// (package teams owns the type, its periods and its actions).
type Budget = teams.Budget

// Period is the span a budget covers (UTC calendar days and months).
type Period = teams.Period

// Action is what happens to a team's new jobs once its budget is spent:
// Hold keeps its waiting jobs waiting (with the reason) until the period
// ends or the budget is raised; Reject also refuses its new jobs (403).
type Action = teams.Action

// Budget periods and actions.
const (
	PerDay   = teams.PerDay
	PerMonth = teams.PerMonth
	Hold     = teams.Hold
	Reject   = teams.Reject
)

// Budgets gives the teams' budgets (only teams that have one). The teams
// configuration implements it with a few lines; Static is a fixed table.
type Budgets interface {
	TeamBudgets() map[string]Budget
}

// Static is a fixed table of budgets.
type Static map[string]Budget

// TeamBudgets implements Budgets.
func (s Static) TeamBudgets() map[string]Budget { return s }

// Label is how messages name a team ("" is the default team).
func Label(team string) string {
	if team == "" {
		return "(default)"
	}
	return team
}

// PeriodStart is when the period holding now began (UTC).
func PeriodStart(p Period, now time.Time) time.Time {
	now = now.UTC()
	if p == PerMonth {
		return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// PeriodEnd is when the period holding now ends (UTC).
func PeriodEnd(p Period, now time.Time) time.Time {
	s := PeriodStart(p, now)
	if p == PerMonth {
		return s.AddDate(0, 1, 0)
	}
	return s.AddDate(0, 0, 1)
}

// Spend is what a team spent in the current day and month.
type Spend struct {
	DayUSD   float64 `json:"dayUSD"`
	MonthUSD float64 `json:"monthUSD"`
}

// Of is the spend over the budget's period.
func (s Spend) Of(p Period) float64 {
	if p == PerMonth {
		return s.MonthUSD
	}
	return s.DayUSD
}

// Verdict is what a team's budget says of its spend.
type Verdict struct {
	Team     string  `json:"team"`
	Budget   Budget  `json:"budget"`
	SpentUSD float64 `json:"spentUSD"`
	// LeftUSD is what is left of the budget (0 once spent).
	LeftUSD float64 `json:"leftUSD"`
	// Over: the team spent its budget for the period.
	Over bool `json:"over"`
	// PeriodStart and PeriodEnd bound the current period.
	PeriodStart time.Time `json:"periodStart"`
	PeriodEnd   time.Time `json:"periodEnd"`
}

func periodWord(p Period) string {
	if p == PerMonth {
		return "monthly"
	}
	return "daily"
}

// Reason is the waiting reason of an over-budget team's jobs: "team
// analytics over its daily budget $50.00 (held until 2026-11-27 00:00
// UTC)". It stays the same while the team spends on (its running jobs go
// on), so the stored waiting reasons are not written again.
func (v Verdict) Reason() string {
	return fmt.Sprintf("team %s over its %s budget $%.2f (held until %s)", Label(v.Team), periodWord(v.Budget.Period),
		v.Budget.USD, v.PeriodEnd.Format("2006-01-02 15:04 UTC"))
}

// Refusal is the answer to a new job of a team over a reject budget.
func (v Verdict) Refusal() string {
	return fmt.Sprintf("team %s is over its %s budget $%.2f: it spent $%.2f since %s; new jobs are refused until %s (budget-action reject)",
		Label(v.Team), periodWord(v.Budget.Period), v.Budget.USD, v.SpentUSD,
		v.PeriodStart.Format("2006-01-02 15:04 UTC"), v.PeriodEnd.Format("2006-01-02 15:04 UTC"))
}

// Check weighs a team's spend against its budget at now. A team is over
// once it spent the whole budget (a $0 budget is always over).
func Check(team string, b Budget, s Spend, now time.Time) Verdict {
	spent := s.Of(b.Period)
	v := Verdict{Team: team, Budget: b, SpentUSD: spent, LeftUSD: math.Max(b.USD-spent, 0), Over: spent >= b.USD,
		PeriodStart: PeriodStart(b.Period, now), PeriodEnd: PeriodEnd(b.Period, now)}
	return v
}

// Decide weighs every budgeted team (sorted by team).
func Decide(budgets map[string]Budget, spend map[string]Spend, now time.Time) []Verdict {
	out := make([]Verdict, 0, len(budgets))
	for team, b := range budgets {
		out = append(out, Check(team, b, spend[team], now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Team < out[j].Team })
	return out
}

// teamNameRE is teams.NameRE (a budget names a team a teams file or a
// token could; kept here so that this package imports no teams policy).
var teamNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ParseStatic reads "team=USD/day[:hold|reject],..." (e.g.
// "analytics=50/day:reject,etl=1000/month"; hold is the default action;
// "(default)" names the default team). Errors name the entry.
func ParseStatic(s string) (Static, error) {
	out := Static{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		team, rest, ok := strings.Cut(part, "=")
		team = strings.TrimSpace(team)
		if !ok || team == "" {
			return nil, fmt.Errorf("budget %q: want team=dollars/day or team=dollars/month, optionally :hold or :reject", part)
		}
		if team == "(default)" {
			team = ""
		} else if !teamNameRE.MatchString(team) {
			return nil, fmt.Errorf("budget %q: %q is not a team name (letters, digits, '.', '_' and '-', at most 64, starting with a letter or digit; (default) for the default team)", part, team)
		}
		amount, action, _ := strings.Cut(rest, ":")
		usd, per, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(amount), "$"), "/")
		f, err := strconv.ParseFloat(strings.TrimSpace(usd), 64)
		if !ok || err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("budget %q: the amount must be dollars/day or dollars/month, such as 50/day", part)
		}
		if f == 0 {
			f = 0 // "-0/day" is a $0 budget, not $-0.00 in its reason
		}
		b := Budget{USD: f, Action: Hold}
		switch strings.TrimSpace(per) {
		case "day":
			b.Period = PerDay
		case "month":
			b.Period = PerMonth
		default:
			return nil, fmt.Errorf("budget %q: the period must be day or month", part)
		}
		switch strings.TrimSpace(action) {
		case "", "hold":
		case "reject":
			b.Action = Reject
		default:
			return nil, fmt.Errorf("budget %q: the action must be hold or reject", part)
		}
		if _, dup := out[team]; dup {
			return nil, fmt.Errorf("budget %q: team %s has two budgets", part, Label(team))
		}
		out[team] = b
	}
	return out, nil
}
