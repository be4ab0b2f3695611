package store

import (
	"context"
	"testing"
	"time"
)

// Tests for the code of teams.go that only other packages' tests ran
// (mutants "not covered" by this package's tests; docs/testing.md).

// TestCountTeamJobs: a team's waiting jobs, and its deadline jobs not
// ended; other teams' jobs and ended ones do not count.
func TestCountTeamJobs(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mk := func(team string, deadline bool, reject string) {
		t.Helper()
		j := newJob(t, nil)
		j.Team = team
		if deadline {
			d := j.SubmittedAt.Add(time.Hour)
			j.DeadlineAt = &d
		}
		if _, _, err := s.CreateJob(ctx, j, reject); err != nil {
			t.Fatal(err)
		}
	}
	mk("red", false, "")
	mk("red", true, "")
	mk("red", true, "too late") // rejected: ended
	mk("blue", true, "")
	waiting, deadline, err := s.CountTeamJobs(ctx, "red")
	if err != nil || waiting != 2 || deadline != 1 {
		t.Fatalf("red: %d waiting, %d deadline, %v; want 2 and 1", waiting, deadline, err)
	}
	if w, d, err := s.CountTeamJobs(ctx, "green"); err != nil || w != 0 || d != 0 {
		t.Fatalf("green: %d, %d, %v; want 0 and 0", w, d, err)
	}
}
