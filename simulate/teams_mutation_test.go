package simulate

// Tests of the simulator's per-team results (issue 33); expected values by
// hand.

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestTeamResultsByHand: four jobs of team a, two of team b (created first:
// the result is in team order all the same), on a run that cost $5.40.
//
//	b1: done, waits 0 s, runs 0-50 s on 1 x 2 cpus = 100 cpu-s, deadline 60 s: met.
//	b2: done, waits 20 s, runs 20-60 s on 1 x 1 cpu = 40 cpu-s, deadline 60 s: met (ends at it).
//	a1: done, waits 10 s, runs 10-110 s on 2 x 2 cpus = 400 cpu-s, deadline 100 s: missed.
//	a2: rejected, deadline 100 s: missed.
//	a3: running, no deadline.
//
// 540 cpu-s in all, $0.01 each: a $4.00, b $1.40. a: 3 jobs, 1 done, 1
// rejected, 0 of 2 deadlines met, waits [10]: mean and p95 10 s, 400/3600
// cpu-h. b: 2 jobs, 2 done, 2 of 2 met, waits [0, 20]: mean 10 s, p95 20 s
// (rank ceil(0.95 x 2) = 2), 140/3600 cpu-h.
func TestTeamResultsByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	dl := func(s int) *time.Time { d := at(s); return &d }
	prof := func(ex, cores int) workload.Profile { return workload.Profile{Executors: ex, ExecutorCores: cores} }
	store := NewMemStore(nil)
	info := map[string]*jobInfo{
		"b1": {profile: prof(1, 2), submit: at(0), start: at(0), end: at(50), done: true, deadline: dl(60)},
		"b2": {profile: prof(1, 1), submit: at(0), start: at(20), end: at(60), done: true, deadline: dl(60)},
		"a1": {profile: prof(2, 2), submit: at(0), start: at(10), end: at(110), done: true, deadline: dl(100)},
		"a2": {profile: prof(2, 2), submit: at(0), deadline: dl(100)},
		"a3": {profile: prof(2, 2), submit: at(0), start: at(5)},
	}
	for _, id := range []string{"b1", "b2", "a1", "a2", "a3"} {
		if _, err := store.Create(teamJob(id, id[:1])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.Transition(context.Background(), "a2", scheduler.Submitted, scheduler.Rejected, "no room", nil); err != nil {
		t.Fatal(err)
	}
	got := teamResults(store, info, 5.4)
	want := []TeamResult{
		{Team: "a", Jobs: 3, Completed: 1, Rejected: 1, DeadlineJobs: 2, DeadlineMissed: 2, DeadlineMetPct: 0, WaitMeanS: 10, WaitP95S: 10, CPUHours: 400.0 / 3600, CostUSD: 4},
		{Team: "b", Jobs: 2, Completed: 2, Rejected: 0, DeadlineJobs: 2, DeadlineMissed: 0, DeadlineMetPct: 100, WaitMeanS: 10, WaitP95S: 20, CPUHours: 140.0 / 3600, CostUSD: 1.4},
	}
	if len(got) != len(want) {
		t.Fatalf("%d teams: %+v", len(got), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Team != w.Team || g.Jobs != w.Jobs || g.Completed != w.Completed || g.Rejected != w.Rejected ||
			g.DeadlineJobs != w.DeadlineJobs || g.DeadlineMissed != w.DeadlineMissed {
			t.Errorf("team %d: %+v, want %+v", i, g, w)
		}
		near(t, w.Team+" met %", g.DeadlineMetPct, w.DeadlineMetPct)
		near(t, w.Team+" wait mean", g.WaitMeanS, w.WaitMeanS)
		near(t, w.Team+" wait p95", g.WaitP95S, w.WaitP95S)
		near(t, w.Team+" cpu-h", g.CPUHours, w.CPUHours)
		near(t, w.Team+" cost", g.CostUSD, w.CostUSD)
	}
	// One team (not the default): reported. A run of nothing but
	// completed-nothing jobs costs nothing to split: $0, no division.
	one := NewMemStore(nil)
	if _, err := one.Create(teamJob("x1", "x")); err != nil {
		t.Fatal(err)
	}
	r := teamResults(one, map[string]*jobInfo{"x1": {profile: prof(1, 1), submit: at(0)}}, 3)
	if len(r) != 1 || r[0].Team != "x" || r[0].Jobs != 1 || r[0].CostUSD != 0 || r[0].DeadlineMetPct != 0 {
		t.Errorf("one team: %+v", r)
	}
	// Jobs without a team only: no teams.
	none := NewMemStore(nil)
	if _, err := none.Create(teamJob("y1", "")); err != nil {
		t.Fatal(err)
	}
	if r := teamResults(none, map[string]*jobInfo{"y1": {profile: prof(1, 1), submit: at(0)}}, 3); r != nil {
		t.Errorf("no teams: %+v", r)
	}
}

// TestWriteTeamsByHand: the per-team table, the default policy marked and
// "-" for a team without deadline jobs; nothing without teams.
func TestWriteTeamsByHand(t *testing.T) {
	var buf bytes.Buffer
	if err := writeTeams(&buf, []Result{{Policy: "bfd"}}, "", false); err != nil || buf.Len() != 0 {
		t.Fatalf("no teams: %v %q", err, buf.String())
	}
	rs := []Result{
		{Policy: "bfd"},
		{Policy: "dap", Default: true, Teams: []TeamResult{
			{Team: "", Jobs: 3, Completed: 2, Rejected: 1, DeadlineJobs: 4, DeadlineMissed: 1, DeadlineMetPct: 75, WaitMeanS: 1.25, WaitP95S: 9.75, CPUHours: 0.125, CostUSD: 4.5},
			{Team: "ml", Jobs: 1, Completed: 1, WaitMeanS: 0, WaitP95S: 0, CPUHours: 2, CostUSD: 0.25},
		}},
	}
	if err := writeTeams(&buf, rs, "", false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := [][]string{
		{"By", "team", "(cost:", "the", "run's", "agent", "cost", "split", "by", "the", "teams'", "executor", "cpu-hours):"},
		{"policy", "team", "jobs", "done", "rejected", "deadlines", "met", "wait", "mean", "s", "wait", "p95", "s", "cpu-h", "cost", "$"},
		{"dap", "(default)", "(default)", "3", "2", "1", "3/4", "(75%)", "1.2", "9.8", "0.12", "4.50"},
		{"dap", "(default)", "ml", "1", "1", "0", "-", "0.0", "0.0", "2.00", "0.25"},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	for i, w := range want {
		if got := strings.Fields(lines[i]); strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("line %d: %q, want %q", i, got, w)
		}
	}
}

// TestAssignTeamsShares: the draw follows the shares (normalised: 3 and 1
// are 75% and 25%), the same for the same seed; no mix leaves jobs alone.
func TestAssignTeamsShares(t *testing.T) {
	jobs := make([]scheduler.Job, 4000)
	assignTeams(jobs, []TeamShare{{"a", 3}, {"b", 1}}, 9)
	n := map[string]int{}
	for _, j := range jobs {
		n[j.Team]++
	}
	// 4000 draws at p = 0.25: sd sqrt(4000 x 0.25 x 0.75) = 27.4; 6 sd
	// is 164 (a fixed seed: the count is the same every run).
	if n["a"]+n["b"] != 4000 || n["b"] < 1000-164 || n["b"] > 1000+164 {
		t.Errorf("teams %v, want about 3000 a and 1000 b", n)
	}
	again := make([]scheduler.Job, 4000)
	assignTeams(again, []TeamShare{{"a", 3}, {"b", 1}}, 9)
	for i := range jobs {
		if jobs[i].Team != again[i].Team {
			t.Fatalf("job %d: %q then %q with the same seed", i, jobs[i].Team, again[i].Team)
		}
	}
	untouched := []scheduler.Job{{Team: "keep"}}
	assignTeams(untouched, nil, 9)
	if untouched[0].Team != "keep" {
		t.Errorf("no mix changed a team: %q", untouched[0].Team)
	}
}

func teamJob(id, team string) scheduler.Job {
	j := scheduler.Job{Team: team}
	j.ID = id
	return j
}
