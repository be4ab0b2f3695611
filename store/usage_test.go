package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/scheduler"
)

// usageFixture stores three jobs with known times and ledger entries
// (two writers, idle, and a pruned job) and returns their ids.
//
//	A team a, env prod: submitted 10:00, started 10:10, FINISHED 10:50, deadline 11:00 (met)
//	  ledger $1 at 10:05, $2 at 10:30 (writer 1), $4 at 11:10 (writer 2)
//	B team b: submitted 10:00, started 10:30, FAILED 11:30, deadline 11:00 (missed)
//	  ledger $3 at 11:00 (writer 2), 2 cpus x 3600 s, 4096 MiB x 3600 s
//	C team a: submitted 11:00, REJECTED 11:00
//	idle $0.5 at 10:20 (writer 1), $0.25 at 11:20 (writer 2); a pruned job $0.125 at 10:40
func usageFixture(t *testing.T, s *Store) (a, b, c string) {
	t.Helper()
	ctx := context.Background()
	at := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.UTC) }
	mk := func(team string, labels map[string]string, state string, sub time.Time, start, end, deadline *time.Time) string {
		j := newJob(t, func(sp *scheduler.Spec) {
			sp.Labels = map[string]string{"team": team}
			for k, v := range labels {
				sp.Labels[k] = v
			}
		})
		j.SubmittedAt = sub
		j.Team = team
		if _, _, err := s.CreateJob(ctx, j, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET state = $2, submitted_at = $3, started_at = $4, finished_at = $5, deadline_at = $6 WHERE id = $1`,
			j.ID, state, sub, start, end, deadline); err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	p := func(t time.Time) *time.Time { return &t }
	a = mk("a", map[string]string{"env": "prod"}, "FINISHED", at(10, 0), p(at(10, 10)), p(at(10, 50)), p(at(11, 0)))
	b = mk("b", nil, "FAILED", at(10, 0), p(at(10, 30)), p(at(11, 30)), p(at(11, 0)))
	c = mk("a", nil, "REJECTED", at(11, 0), nil, p(at(11, 0)), nil)
	w1, w2 := uuid.NewString(), uuid.NewString()
	e := func(ts time.Time, job string, usd float64) scheduler.LedgerEntry {
		return scheduler.LedgerEntry{Bucket: ts, JobID: job, Usage: scheduler.Usage{CostUSD: usd}}
	}
	if err := s.SaveCost(ctx, w1, 3.625, []scheduler.LedgerEntry{
		e(at(10, 5), a, 1), e(at(10, 30), a, 2), e(at(10, 20), "", 0.5), e(at(10, 40), uuid.NewString(), 0.125),
	}); err != nil {
		t.Fatal(err)
	}
	bEntry := e(at(11, 0), b, 3)
	bEntry.CPUSeconds, bEntry.MemMBSeconds = 2*3600, 4096*3600
	if err := s.SaveCost(ctx, w2, 10.875, []scheduler.LedgerEntry{e(at(11, 10), a, 4), bEntry, e(at(11, 20), "", 0.25)}); err != nil {
		t.Fatal(err)
	}
	return a, b, c
}

func TestUsageByTeam(t *testing.T) {
	s, _ := openStore(t)
	usageFixture(t, s)
	from := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	rows, err := s.Usage(context.Background(), UsageQuery{By: UsageByTeam, From: from, To: from.Add(2 * time.Hour), Step: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		cost                   float64
		outcomes               map[string]int
		met, missed, started   int
		pct, waitMean, waitP90 float64 // -1: absent
		cpuHours, memGiBHours  float64
	}
	wants := map[string]want{
		"10 a":      {cost: 3, outcomes: map[string]int{"FINISHED": 1}, met: 1, pct: 100, started: 1, waitMean: 600, waitP90: 600},
		"10 b":      {started: 1, pct: -1, waitMean: 1800, waitP90: 1800},
		"10 ":       {cost: 0.125, pct: -1, waitMean: -1, waitP90: -1},
		"10 (idle)": {cost: 0.5, pct: -1, waitMean: -1, waitP90: -1},
		"11 a":      {cost: 4, outcomes: map[string]int{"REJECTED": 1}, pct: -1, waitMean: -1, waitP90: -1},
		"11 b":      {cost: 3, outcomes: map[string]int{"FAILED": 1}, missed: 1, pct: 0, waitMean: -1, waitP90: -1, cpuHours: 2, memGiBHours: 4},
		"11 (idle)": {cost: 0.25, pct: -1, waitMean: -1, waitP90: -1},
	}
	order := []string{"10 ", "10 a", "10 b", "10 (idle)", "11 a", "11 b", "11 (idle)"}
	if len(rows) != len(order) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(order), rows)
	}
	sum := 0.0
	for i, r := range rows {
		key := r.From.Format("15") + " " + r.Group
		if key != order[i] {
			t.Fatalf("row %d is %q, want %q", i, key, order[i])
		}
		w := wants[key]
		sum += r.CostUSD
		if r.CostUSD != w.cost || r.DeadlineMet != w.met || r.DeadlineMissed != w.missed || r.Started != w.started ||
			math.Abs(r.CPUHours-w.cpuHours) > 1e-9 || math.Abs(r.MemoryGiBHours-w.memGiBHours) > 1e-9 {
			t.Errorf("%s: %+v, want %+v", key, r, w)
		}
		for _, st := range UsageOutcomes {
			if r.Jobs[string(st)] != w.outcomes[string(st)] {
				t.Errorf("%s: %d %s, want %d", key, r.Jobs[string(st)], st, w.outcomes[string(st)])
			}
		}
		for _, f := range []struct {
			name string
			got  *float64
			want float64
		}{{"deadline met %", r.DeadlineMetPct, w.pct}, {"mean wait", r.WaitMeanSeconds, w.waitMean}, {"p90 wait", r.WaitP90Seconds, w.waitP90}} {
			switch {
			case f.want < 0 && f.got != nil:
				t.Errorf("%s: %s %v, want none", key, f.name, *f.got)
			case f.want >= 0 && (f.got == nil || math.Abs(*f.got-f.want) > 1e-9):
				t.Errorf("%s: %s %v, want %v", key, f.name, f.got, f.want)
			}
		}
		if r.Idle != (r.Group == UsageIdleGroup) {
			t.Errorf("%s: idle flag %v", key, r.Idle)
		}
	}
	// The rows add up to the meter's total (both writers).
	if total, _ := s.CostTotal(context.Background()); math.Abs(sum-total) > 1e-9 {
		t.Errorf("rows add up to $%v, the meter says $%v", sum, total)
	}
}

func TestUsageByJobAndLabel(t *testing.T) {
	s, _ := openStore(t)
	a, b, _ := usageFixture(t, s)
	from := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	ctx := context.Background()
	rows, err := s.Usage(ctx, UsageQuery{By: UsageByJob, From: from, To: from.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	cost := map[string]float64{}
	for _, r := range rows {
		cost[r.Group] += r.CostUSD
		if !r.From.Equal(from) || !r.To.Equal(from.Add(2*time.Hour)) {
			t.Errorf("one period asked, row %s-%s", r.From, r.To)
		}
	}
	if cost[a] != 7 || cost[b] != 3 || cost[UsageIdleGroup] != 0.75 {
		t.Fatalf("by job %v; want a $7, b $3, idle $0.75", cost)
	}
	rows, err = s.Usage(ctx, UsageQuery{By: UsageByLabel, Label: "env", From: from, To: from.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	cost = map[string]float64{}
	for _, r := range rows {
		cost[r.Group] += r.CostUSD
	}
	if cost["prod"] != 7 || cost[""] != 3.125 {
		t.Fatalf("by label env %v; want prod $7, none $3.125 (b and the pruned job)", cost)
	}
	// A window that holds only part of it.
	rows, err = s.Usage(ctx, UsageQuery{By: UsageByTeam, From: from.Add(30 * time.Minute), To: from.Add(70 * time.Minute), Step: 20 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range rows {
		got[r.From.Format("15:04")+" "+r.Group] += r.CostUSD
	}
	// [10:30, 10:50) and [10:50, 11:10): a's $4 at 11:10 is out.
	want := map[string]float64{"10:30 a": 2, "10:30 ": 0.125, "10:50 b": 3, "10:50 a": 0, "10:30 b": 0} // b started at 10:30, a ended at 10:50
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: $%v, want $%v (all %v)", k, got[k], v, got)
		}
	}
	if len(got) != len(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
	if _, err := s.Usage(ctx, UsageQuery{By: UsageByTeam, From: from, To: from}); err == nil {
		t.Error("an empty window was accepted")
	}
}

func TestTeamSpend(t *testing.T) {
	s, _ := openStore(t)
	usageFixture(t, s)
	day := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC) // a "day" starting 10:30 for the test
	month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	spend, err := s.TeamSpend(context.Background(), day, month)
	if err != nil {
		t.Fatal(err)
	}
	// a: $2 at 10:30 and $4 at 11:10 since 10:30, $7 in the month; b: $3;
	// idle and the pruned job belong to no team.
	if a := spend["a"]; a.DayUSD != 6 || a.MonthUSD != 7 {
		t.Errorf("a %+v, want $6 today and $7 this month", a)
	}
	if b := spend["b"]; b.DayUSD != 3 || b.MonthUSD != 3 {
		t.Errorf("b %+v", b)
	}
	if len(spend) != 2 {
		t.Errorf("spend %+v, want teams a and b only", spend)
	}
}

func TestTeamTotals(t *testing.T) {
	s, _ := openStore(t)
	usageFixture(t, s)
	totals, idle, err := s.TeamTotals(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if totals["a"].CostUSD != 7 || totals["b"].CostUSD != 3 || totals["b"].CPUSeconds != 7200 || totals[""].CostUSD != 0.125 || idle != 0.75 {
		t.Fatalf("totals %+v idle %v; want a $7, b $3 (7200 cpu-s), no team $0.125 (pruned), idle $0.75", totals, idle)
	}
}
