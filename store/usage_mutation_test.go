package store

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants of usage.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md). Expected values are
// worked out by hand from the fixture (usage_test.go) and one more job.

// TestUsageLastPeriodAndMixedDeadlines: a window that is not a whole
// number of steps ends with a shorter period (its To is the window's end),
// and a group with one deadline met and one missed is at 50%.
//
// usageFixture plus D, team b: submitted 11:00, started 11:05, FINISHED
// 11:20, deadline 11:30 (met). Window [10:00, 11:40), step 1 h:
//
//	[10:00, 11:00): as in TestUsageByTeam
//	[11:00, 11:40): a $4 (11:10), REJECTED C (11:00);
//	                b $3 (11:00), FAILED B (11:30, deadline 11:00: missed),
//	                FINISHED D (met): 1 met, 1 missed = 50%; D started,
//	                waited 5 min = 300 s; idle $0.25 (11:20)
func TestUsageLastPeriodAndMixedDeadlines(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	usageFixture(t, s)
	at := func(h, m int) time.Time { return time.Date(2026, 11, 26, h, m, 0, 0, time.UTC) }
	d := newJob(t, func(sp *scheduler.Spec) { sp.Labels = map[string]string{"team": "b"} })
	d.SubmittedAt, d.Team = at(11, 0), "b"
	if _, _, err := s.CreateJob(ctx, d, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE jobs SET state = 'FINISHED', started_at = $2, finished_at = $3, deadline_at = $4 WHERE id = $1`,
		d.ID, at(11, 5), at(11, 20), at(11, 30)); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Usage(ctx, UsageQuery{By: UsageByTeam, From: at(10, 0), To: at(11, 40), Step: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		to      time.Time
		cost    float64
		pct     float64 // -1: absent
		started int
	}
	wants := map[string]want{
		"10:00 ":       {at(11, 0), 0.125, -1, 0},
		"10:00 a":      {at(11, 0), 3, 100, 1},
		"10:00 b":      {at(11, 0), 0, -1, 1},
		"10:00 (idle)": {at(11, 0), 0.5, -1, 0},
		"11:00 a":      {at(11, 40), 4, -1, 0},
		"11:00 b":      {at(11, 40), 3, 50, 1},
		"11:00 (idle)": {at(11, 40), 0.25, -1, 0},
	}
	order := []string{"10:00 ", "10:00 a", "10:00 b", "10:00 (idle)", "11:00 a", "11:00 b", "11:00 (idle)"}
	if len(rows) != len(order) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(order), rows)
	}
	for i, r := range rows {
		key := r.From.Format("15:04") + " " + r.Group
		if key != order[i] {
			t.Fatalf("row %d is %q, want %q", i, key, order[i])
		}
		w := wants[key]
		if !r.To.Equal(w.to) || r.CostUSD != w.cost || r.Started != w.started {
			t.Errorf("%s: to %s, $%v, %d started; want to %s, $%v, %d started", key, r.To.Format("15:04"), r.CostUSD, r.Started, w.to.Format("15:04"), w.cost, w.started)
		}
		switch {
		case w.pct < 0 && r.DeadlineMetPct != nil:
			t.Errorf("%s: deadline met %v%%, want none", key, *r.DeadlineMetPct)
		case w.pct >= 0 && (r.DeadlineMetPct == nil || math.Abs(*r.DeadlineMetPct-w.pct) > 1e-9):
			t.Errorf("%s: deadline met %v, want %v%%", key, r.DeadlineMetPct, w.pct)
		}
	}
	if b := rows[5]; b.Jobs["FINISHED"] != 1 || b.Jobs["FAILED"] != 1 || b.DeadlineMet != 1 || b.DeadlineMissed != 1 ||
		b.WaitMeanSeconds == nil || *b.WaitMeanSeconds != 300 {
		t.Errorf("11:00 b: %+v; want 1 finished (met), 1 failed (missed), a 300 s wait", b)
	}
}
