package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestPlanOfARejectedJobFails: plan exits non-zero for a job the server
// would reject, as submit does, saying why and what to change; a job
// that would run or wait still plans with exit 0.
func TestPlanOfARejectedJobFails(t *testing.T) {
	var answer scheduler.Preview
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/plan" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
	}))
	defer srv.Close()
	job := []string{"--server", srv.URL, "--app-resource", "local:///a.jar", "--main-class", "a.B", "--executors", "500", "--executor-cores", "1", "--executor-memory", "1g"}
	const why = "does not fit even on the empty cluster: it needs 500 executors of 1 cpus and 1024 MiB"

	answer = scheduler.Preview{Rejected: why}
	for _, args := range [][]string{{"plan"}, {"plan", "-o", "json"}, {"submit", "--dry-run"}} {
		code, out, errOut := runCmd(t, append(args, job...)...)
		if code == 0 {
			t.Errorf("%v of a job that would be rejected: exit 0\n%s%s", args, out, errOut)
		}
		for _, want := range []string{"would be REJECTED", why, "change"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: stderr lacks %q: %q", args, want, errOut)
			}
		}
	}
	if _, out, _ := runCmd(t, append([]string{"plan", "-o", "json"}, job...)...); !strings.Contains(out, `"rejected"`) {
		t.Errorf("plan -o json of a rejected job printed no answer: %q", out)
	}

	// A refusal at submission (here --max-waiting-per-token) is not a
	// REJECTED job: plan says which status and reason the submission
	// would be refused with.
	const waiting = `token "ci" already has 2 jobs waiting (SUBMITTED or QUEUED), the most the operator allows (--max-waiting-per-token 2); submit again when some have started, or cancel some`
	answer = scheduler.Preview{Rejected: waiting, RefusedStatus: http.StatusTooManyRequests, RefusedReason: "too_many_waiting"}
	for _, args := range [][]string{{"plan"}, {"plan", "-o", "json"}, {"submit", "--dry-run"}} {
		code, out, errOut := runCmd(t, append(args, job...)...)
		if code == 0 || strings.Contains(errOut, "REJECTED") || !strings.Contains(errOut, "a submission would be refused (429 too_many_waiting): "+waiting) {
			t.Errorf("%v of a job a submission of which would be refused: exit %d, stderr %q\n%s", args, code, errOut, out)
		}
	}

	for _, p := range []scheduler.Preview{{Queue: "regular", StartsNow: true}, {Queue: "regular", WaitingReason: "waiting for resources"}} {
		answer = p
		if code, out, errOut := runCmd(t, append([]string{"plan"}, job...)...); code != 0 {
			t.Errorf("plan of a job that would run or wait (%+v): exit %d\n%s%s", p, code, out, errOut)
		}
	}
}

// TestPlanShowsTheTeamsBefore: plan's queue line names the teams the fair
// share between teams offers the room first (teamsBefore).
func TestPlanShowsTheTeamsBefore(t *testing.T) {
	answer := scheduler.Preview{Queue: "regular", Ahead: 3, TeamsBefore: []string{"etl", "reporting"},
		WaitingReason: "behind 3 waiting jobs in the regular queue (it fits now, but they are tried first; ...)"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
	}))
	defer srv.Close()
	job := []string{"plan", "--server", srv.URL, "--app-resource", "local:///a.jar", "--main-class", "a.B", "--executors", "2", "--executor-cores", "1", "--executor-memory", "1g"}
	code, out, errOut := runCmd(t, job...)
	if code != 0 || !strings.Contains(out, "regular, behind 3 jobs (fair share between teams: teams etl, reporting first)") {
		t.Errorf("plan: exit %d, stdout %q, stderr %q; want the teams offered the room first", code, out, errOut)
	}
	answer.TeamsBefore = []string{"etl"}
	if _, out, _ := runCmd(t, job...); !strings.Contains(out, "(fair share between teams: team etl first)") {
		t.Errorf("plan with one team before: %q", out)
	}
}

// TestPlanSaysWhereTheFinishCameFrom: plan's finish line names where the
// run time came from (estimateSource: the learned model, its default, the
// estimated duration given), not always "its estimated duration".
func TestPlanSaysWhereTheFinishCameFrom(t *testing.T) {
	end := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	const src = "the learned model's default for its input size (no estimated duration given, no runs learned yet)"
	answer := scheduler.Preview{Queue: "regular", StartsNow: true, EstimatedFinish: &end, EstimateSource: src}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
	}))
	defer srv.Close()
	job := []string{"plan", "--server", srv.URL, "--app-resource", "local:///a.jar", "--main-class", "a.B", "--executors", "2", "--executor-cores", "1", "--executor-memory", "1g"}
	code, out, errOut := runCmd(t, job...)
	if code != 0 || !strings.Contains(out, "("+src+")") || strings.Contains(out, "estimated duration)") {
		t.Errorf("plan: exit %d, stdout %q, stderr %q; want the finish from %q", code, out, errOut, src)
	}
}
