package store

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Usage groupings (UsageQuery.By).
const (
	UsageByTeam  = "team"
	UsageByJob   = "job"
	UsageByLabel = "label"
)

// UsageIdleGroup is the group of the idle remainder's rows.
const UsageIdleGroup = "(idle)"

// UsageQuery selects a usage report: [From, To) cut in periods of Step
// (0: one period), grouped By team, job or the value of a label.
type UsageQuery struct {
	By    string
	Label string // the label's key, for By == UsageByLabel
	From  time.Time
	To    time.Time
	Step  time.Duration
}

// UsageRow is one group's usage in one period. Cost, cpu and memory come
// from the cost ledger (what the meter attributed in the period); the job
// counts from the jobs that ended in the period (by final state; deadline
// met and missed as DeadlineOutcomes counts them); waiting times from the
// jobs whose first run started in the period (from submission to start).
type UsageRow struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Group string    `json:"group"`
	// Idle marks the idle remainder's row (Group UsageIdleGroup): the part
	// of the meter no job held.
	Idle           bool           `json:"idle,omitempty"`
	CostUSD        float64        `json:"costUSD"`
	CPUHours       float64        `json:"cpuHours"`
	MemoryGiBHours float64        `json:"memoryGiBHours"`
	Jobs           map[string]int `json:"jobs"`
	DeadlineMet    int            `json:"deadlineMet"`
	DeadlineMissed int            `json:"deadlineMissed"`
	// DeadlineMetPct is met / (met + missed) x 100; absent without any.
	DeadlineMetPct *float64 `json:"deadlineMetPct,omitempty"`
	Started        int      `json:"started"`
	// Waiting times of the jobs started; absent when none started.
	WaitMeanSeconds *float64 `json:"waitMeanSeconds,omitempty"`
	WaitP90Seconds  *float64 `json:"waitP90Seconds,omitempty"`
}

// UsageOutcomes are the final states UsageRow.Jobs counts, in order.
var UsageOutcomes = []scheduler.State{scheduler.Finished, scheduler.Failed, scheduler.Killed, scheduler.Rejected, scheduler.Cancelled}

// groupSQL is the SQL expression of a job's group (jobs as j; ledger as
// l, whose job may be pruned from jobs), and its argument.
func groupSQL(q UsageQuery, ledger bool) (string, []any) {
	switch q.By {
	case UsageByJob:
		if ledger {
			return "l.job_id::text", nil
		}
		return "j.id::text", nil
	case UsageByLabel:
		return "coalesce(j.labels->>$4, '')", []any{q.Label}
	}
	return teamSQL, nil
}

// Usage computes a usage report from the stored facts (the cost ledger and
// the jobs), the same on every instance. Rows are ordered by period, then
// group (the idle row last in its period).
func (s *Store) Usage(ctx context.Context, q UsageQuery) ([]UsageRow, error) {
	if !q.To.After(q.From) {
		return nil, fmt.Errorf("usage: the window [%s, %s) is empty", q.From, q.To)
	}
	step := q.Step
	if step <= 0 {
		step = q.To.Sub(q.From)
	}
	n := int((q.To.Sub(q.From) + step - 1) / step)
	type key struct {
		k     int
		group string
		idle  bool
	}
	rows := map[key]*UsageRow{}
	row := func(k int, group string, idle bool) *UsageRow {
		kk := key{k, group, idle}
		r := rows[kk]
		if r == nil {
			from := q.From.Add(time.Duration(k) * step)
			to := from.Add(step)
			if to.After(q.To) {
				to = q.To
			}
			r = &UsageRow{From: from.UTC(), To: to.UTC(), Group: group, Idle: idle, Jobs: map[string]int{}}
			if idle {
				r.Group = UsageIdleGroup
			}
			rows[kk] = r
		}
		return r
	}
	period := func(col string) string {
		return fmt.Sprintf("floor(extract(epoch FROM (%s - $1::timestamptz)) / $3)::int", col)
	}
	base := []any{q.From, q.To, step.Seconds()}

	g, extra := groupSQL(q, true)
	lq := fmt.Sprintf(`SELECT %s, CASE WHEN l.job_id = '%s' THEN '' ELSE %s END, l.job_id = '%s',
			sum(l.cost_usd), sum(l.cpu_seconds), sum(l.mem_mb_seconds)
		FROM cost_ledger l LEFT JOIN jobs j ON j.id = l.job_id
		WHERE l.bucket >= $1 AND l.bucket < $2 GROUP BY 1, 2, 3`, period("l.bucket"), IdleJobID, g, IdleJobID)
	if err := s.scanUsage(ctx, lq, append(base, extra...), func(sc func(...any) (int, string, error)) error {
		var idle bool
		var cost, cpu, mem float64
		k, group, err := sc(&idle, &cost, &cpu, &mem)
		if err != nil {
			return err
		}
		r := row(k, group, idle)
		r.CostUSD += cost
		r.CPUHours += cpu / 3600
		r.MemoryGiBHours += mem / 1024 / 3600
		return nil
	}); err != nil {
		return nil, fmt.Errorf("usage: read the cost ledger: %w", err)
	}

	g, extra = groupSQL(q, false)
	eq := fmt.Sprintf(`SELECT %s, %s, j.state, count(*),
			count(*) FILTER (WHERE j.deadline_at IS NOT NULL AND j.state = 'FINISHED' AND j.finished_at <= j.deadline_at),
			count(*) FILTER (WHERE j.deadline_at IS NOT NULL AND j.finished_at > j.deadline_at AND j.state IN ('FINISHED', 'FAILED', 'KILLED'))
		FROM jobs j
		WHERE j.finished_at >= $1 AND j.finished_at < $2 AND j.state IN ('FINISHED','FAILED','KILLED','REJECTED','CANCELLED')
		GROUP BY 1, 2, 3`, period("j.finished_at"), g)
	if err := s.scanUsage(ctx, eq, append(base, extra...), func(sc func(...any) (int, string, error)) error {
		var state string
		var count, met, missed int
		k, group, err := sc(&state, &count, &met, &missed)
		if err != nil {
			return err
		}
		r := row(k, group, false)
		r.Jobs[state] += count
		r.DeadlineMet += met
		r.DeadlineMissed += missed
		return nil
	}); err != nil {
		return nil, fmt.Errorf("usage: count the jobs that ended: %w", err)
	}

	wq := fmt.Sprintf(`SELECT %s, %s, count(*),
			avg(extract(epoch FROM (j.started_at - j.submitted_at))),
			percentile_cont(0.9) WITHIN GROUP (ORDER BY extract(epoch FROM (j.started_at - j.submitted_at)))
		FROM jobs j
		WHERE j.started_at >= $1 AND j.started_at < $2
		GROUP BY 1, 2`, period("j.started_at"), g)
	if err := s.scanUsage(ctx, wq, append(base, extra...), func(sc func(...any) (int, string, error)) error {
		var count int
		var mean, p90 float64
		k, group, err := sc(&count, &mean, &p90)
		if err != nil {
			return err
		}
		r := row(k, group, false)
		r.Started += count
		mean, p90 = max(mean, 0), max(p90, 0)
		r.WaitMeanSeconds, r.WaitP90Seconds = &mean, &p90
		return nil
	}); err != nil {
		return nil, fmt.Errorf("usage: read the waiting times: %w", err)
	}

	out := make([]UsageRow, 0, len(rows))
	for kk, r := range rows {
		if kk.k < 0 || kk.k >= n {
			continue
		}
		for _, st := range UsageOutcomes {
			if _, ok := r.Jobs[string(st)]; !ok {
				r.Jobs[string(st)] = 0
			}
		}
		if d := r.DeadlineMet + r.DeadlineMissed; d > 0 {
			pct := 100 * float64(r.DeadlineMet) / float64(d)
			r.DeadlineMetPct = &pct
		}
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if !a.From.Equal(b.From) {
			return a.From.Before(b.From)
		}
		if a.Idle != b.Idle {
			return b.Idle
		}
		return a.Group < b.Group
	})
	return out, nil
}

// scanUsage runs a usage query whose first two columns are the period and
// the group; f scans each row's other columns with sc, which returns the
// row's period and group.
func (s *Store) scanUsage(ctx context.Context, query string, args []any, f func(sc func(...any) (int, string, error)) error) error {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		err := f(func(dst ...any) (int, string, error) {
			var k int
			var group string
			err := rows.Scan(append([]any{&k, &group}, dst...)...)
			return k, group, err
		})
		if err != nil {
			return err
		}
	}
	return rows.Err()
}

// TeamSpend is what each team's jobs were attributed (the cost ledger)
// since dayStart and since monthStart: the spend budgets are weighed
// against (package chargeback).
func (s *Store) TeamSpend(ctx context.Context, dayStart, monthStart time.Time) (map[string]chargeback.Spend, error) {
	since := dayStart
	if monthStart.Before(since) {
		since = monthStart
	}
	rows, err := s.db.QueryContext(ctx, `SELECT j.team,
			coalesce(sum(l.cost_usd) FILTER (WHERE l.bucket >= $1), 0),
			coalesce(sum(l.cost_usd) FILTER (WHERE l.bucket >= $2), 0)
		FROM cost_ledger l JOIN jobs j ON j.id = l.job_id
		WHERE l.bucket >= $3 GROUP BY j.team`, dayStart, monthStart, since)
	if err != nil {
		return nil, fmt.Errorf("read the teams' spend: %w", err)
	}
	defer rows.Close()
	out := map[string]chargeback.Spend{}
	for rows.Next() {
		var team string
		var sp chargeback.Spend
		if err := rows.Scan(&team, &sp.DayUSD, &sp.MonthUSD); err != nil {
			return nil, fmt.Errorf("read the teams' spend: %w", err)
		}
		out[team] = sp
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the teams' spend: %w", err)
	}
	return out, nil
}

// TeamTotals is what the whole ledger attributed to each team (a job pruned
// from jobs counts for no team: ""), and the idle remainder.
func (s *Store) TeamTotals(ctx context.Context) (map[string]scheduler.Usage, float64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT l.job_id = $1, coalesce(j.team, ''), sum(l.cost_usd), sum(l.cpu_seconds), sum(l.mem_mb_seconds)
		FROM cost_ledger l LEFT JOIN jobs j ON j.id = l.job_id GROUP BY 1, 2`, IdleJobID)
	if err != nil {
		return nil, 0, fmt.Errorf("sum the cost ledger by team: %w", err)
	}
	defer rows.Close()
	out := map[string]scheduler.Usage{}
	idle := 0.0
	for rows.Next() {
		var isIdle bool
		var team string
		var u scheduler.Usage
		if err := rows.Scan(&isIdle, &team, &u.CostUSD, &u.CPUSeconds, &u.MemMBSeconds); err != nil {
			return nil, 0, fmt.Errorf("sum the cost ledger by team: %w", err)
		}
		if isIdle {
			idle += u.CostUSD
			continue
		}
		out[team] = u
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("sum the cost ledger by team: %w", err)
	}
	return out, idle, nil
}
