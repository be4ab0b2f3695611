package metrics

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Per-team metrics with bounded label cardinality: the TeamSeries teams
// with the largest attributed cost have their own series, every other
// team is summed into team="(other)", which no team's name can be. The figures come from the cost ledger (cumulative since it
// began) and the budget tracker; they are read at most every
// teamCacheFor, since summing the ledger by team is a scan.

// DefaultTeamSeries is how many teams get their own series.
const DefaultTeamSeries = 10

// OtherTeam is the label of the teams beyond the top DefaultTeamSeries.
const OtherTeam = "(other)"

const teamCacheFor = 30 * time.Second

// TeamTotal is what the ledger attributed to one team so far.
type TeamTotal struct {
	CostUSD      float64
	CPUSeconds   float64
	MemMBSeconds float64
}

// TeamBudget is one budgeted team's state in its current period.
type TeamBudget struct {
	BudgetUSD float64
	SpentUSD  float64
	Held      bool
}

// TeamSource gives the teams' totals (team "" is the default team) and the
// idle remainder, and the budgeted teams' state (nil when none).
type TeamSource interface {
	TeamTotals(ctx context.Context) (map[string]TeamTotal, float64, error)
	TeamBudgets() map[string]TeamBudget
}

// FoldTeams keeps the n teams of largest cost (ties by name) and sums the
// rest into OtherTeam. The default team "" is named "(default)". Neither
// label can be a team's name (teams.NameRE has no parentheses), so no
// team's series can collide with them (two series of one label set make
// /metrics answer 500).
func FoldTeams(totals map[string]TeamTotal, n int) map[string]TeamTotal {
	names := make([]string, 0, len(totals))
	for t := range totals {
		names = append(names, t)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := totals[names[i]], totals[names[j]]
		if a.CostUSD != b.CostUSD {
			return a.CostUSD > b.CostUSD
		}
		return names[i] < names[j]
	})
	out := make(map[string]TeamTotal, min(len(names), n+1))
	for i, t := range names {
		v := totals[t]
		label := teamLabel(t)
		if i >= n {
			label = OtherTeam
		}
		o := out[label]
		o.CostUSD += v.CostUSD
		o.CPUSeconds += v.CPUSeconds
		o.MemMBSeconds += v.MemMBSeconds
		out[label] = o
	}
	return out
}

func teamLabel(t string) string {
	if t == "" {
		return "(default)"
	}
	return t
}

type teamCollector struct {
	src    TeamSource
	n      int
	cost   *prometheus.Desc
	cpu    *prometheus.Desc
	mem    *prometheus.Desc
	idle   *prometheus.Desc
	budget *prometheus.Desc
	spent  *prometheus.Desc
	held   *prometheus.Desc

	mu     sync.Mutex
	at     time.Time
	totals map[string]TeamTotal
	idleV  float64
	err    error
}

// WatchTeams adds the per-team metrics, read from src (n teams named, the
// rest "(other)"; n <= 0: DefaultTeamSeries).
func (m *Metrics) WatchTeams(src TeamSource, n int) {
	if m == nil || src == nil {
		return
	}
	if n <= 0 {
		n = DefaultTeamSeries
	}
	c := &teamCollector{src: src, n: n,
		cost:   prometheus.NewDesc("sparkpack_team_cost_usd_total", "Cost attributed to each team's jobs (their dominant share of the agents they held), from the cost ledger; the top teams by cost are named, the rest summed as team=\"(other)\"; the default team is team=\"(default)\".", []string{"team"}, nil),
		cpu:    prometheus.NewDesc("sparkpack_team_cpu_seconds_total", "Cpu-seconds held by each team's jobs (reservations and drivers), from the cost ledger.", []string{"team"}, nil),
		mem:    prometheus.NewDesc("sparkpack_team_memory_mib_seconds_total", "MiB-seconds held by each team's jobs, from the cost ledger.", []string{"team"}, nil),
		idle:   prometheus.NewDesc("sparkpack_idle_cost_usd_total", "The part of the cost meter no job held (capacity of active agents beyond their jobs' shares); the teams' costs plus this add up to the meter.", nil, nil),
		budget: prometheus.NewDesc("sparkpack_team_budget_usd", "Each budgeted team's budget for its period (day or month).", []string{"team"}, nil),
		spent:  prometheus.NewDesc("sparkpack_team_budget_spent_usd", "What each budgeted team spent in its budget's current period.", []string{"team"}, nil),
		held:   prometheus.NewDesc("sparkpack_team_budget_held", "1 while a budgeted team is over its budget (its waiting jobs held), else 0.", []string{"team"}, nil),
	}
	m.Registry.MustRegister(c)
}

func (c *teamCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.cost, c.cpu, c.mem, c.idle, c.budget, c.spent, c.held} {
		ch <- d
	}
}

func (c *teamCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	if c.totals == nil || time.Since(c.at) > teamCacheFor {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		totals, idle, err := c.src.TeamTotals(ctx)
		cancel()
		c.at, c.err = time.Now(), err
		if err == nil {
			c.totals, c.idleV = FoldTeams(totals, c.n), idle
		}
	}
	totals, idle, err := c.totals, c.idleV, c.err
	c.mu.Unlock()
	if err != nil && totals == nil {
		ch <- prometheus.NewInvalidMetric(c.cost, err)
	} else {
		for t, v := range totals {
			ch <- prometheus.MustNewConstMetric(c.cost, prometheus.CounterValue, v.CostUSD, t)
			ch <- prometheus.MustNewConstMetric(c.cpu, prometheus.CounterValue, v.CPUSeconds, t)
			ch <- prometheus.MustNewConstMetric(c.mem, prometheus.CounterValue, v.MemMBSeconds, t)
		}
		ch <- prometheus.MustNewConstMetric(c.idle, prometheus.CounterValue, idle)
	}
	// Budgeted teams are few (they are configured): each is named.
	for t, b := range c.src.TeamBudgets() {
		held := 0.0
		if b.Held {
			held = 1
		}
		ch <- prometheus.MustNewConstMetric(c.budget, prometheus.GaugeValue, b.BudgetUSD, teamLabel(t))
		ch <- prometheus.MustNewConstMetric(c.spent, prometheus.GaugeValue, b.SpentUSD, teamLabel(t))
		ch <- prometheus.MustNewConstMetric(c.held, prometheus.GaugeValue, held, teamLabel(t))
	}
}
