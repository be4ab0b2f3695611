package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestWaitedIsTheTimeInTheQueue: WAITED (jobs) and "waited" (job) are the
// server's queuedSeconds, plus the time since queuedSince for a job that
// waits now: not its last start minus its submission, which counted a
// lost launch and a failed run (here 1m15s for 14s in the queue).
func TestWaitedIsTheTimeInTheQueue(t *testing.T) {
	sub := time.Now().Add(-2 * time.Hour).UTC()
	started, end := sub.Add(75*time.Second), sub.Add(85*time.Second)
	fourteen, one := 14.0, 1.0
	since := time.Now().Add(-time.Hour).UTC()
	retried := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-000000000021", Name: "retried"},
		State: scheduler.Finished, SubmittedAt: sub, StartedAt: &started, LastStartedAt: &started, FinishedAt: &end}, QueuedSeconds: &fourteen}
	waiting := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-000000000022", Name: "waiting"},
		State: scheduler.Queued, SubmittedAt: sub}, QueuedSeconds: &one, QueuedSince: &since}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v1/jobs":
			json.NewEncoder(w).Encode(api.ListResponse{Jobs: []api.JobView{retried, waiting}})
		case "/api/v1/jobs/" + retried.ID:
			json.NewEncoder(w).Encode(retried)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	code, out, errOut := runCmd(t, "jobs", "--server", srv.URL)
	if code != 0 {
		t.Fatalf("jobs: exit %d %q", code, errOut)
	}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) > 5 && f[1] == "retried" && f[5] != "14s":
			t.Errorf("retried job waited %q, want 14s: %q", f[5], l)
		case len(f) > 5 && f[1] == "waiting" && !strings.HasPrefix(f[5], "1h0m"):
			t.Errorf("waiting job waited %q, want 1h0m1s (1s, then queued for an hour): %q", f[5], l)
		}
	}
	if !strings.Contains(out, "retried") || !strings.Contains(out, "waiting") {
		t.Fatalf("jobs: %q", out)
	}
	code, out, errOut = runCmd(t, "job", "--server", srv.URL, retried.ID)
	if code != 0 || !strings.Contains(out, "waited") || !strings.Contains(out, "14s") || strings.Contains(out, "1m15s") {
		t.Fatalf("job: exit %d, %q %q; want waited 14s", code, out, errOut)
	}
}
