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

// TestJobsNotesWhyAJobFailed: the jobs table's NOTE of a FAILED job is
// why it failed (the list's failedReason), not empty.
func TestJobsNotesWhyAJobFailed(t *testing.T) {
	const why = "driver TASK_LOST: agent lost; no retries left"
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	end := at.Add(time.Minute)
	failed := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-000000000011", Name: "etl"},
		State: scheduler.Failed, SubmittedAt: at, FinishedAt: &end}, FailedReason: why}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/jobs" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(api.ListResponse{Jobs: []api.JobView{failed}})
	}))
	defer srv.Close()
	code, out, errOut := runCmd(t, "jobs", "--server", srv.URL)
	if code != 0 || !strings.Contains(out, why) {
		t.Fatalf("jobs: exit %d, stdout %q, stderr %q; want the FAILED job's note %q", code, out, errOut, why)
	}
}
