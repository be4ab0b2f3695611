package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
)

// TestRequestLogSaysWhyARequestWasRefused: the access log line of a 4xx
// carries the error the client was answered and the field it names (a
// "status=400" alone sends the operator to reproduce the request); a
// request that succeeded carries none.
func TestRequestLogSaysWhyARequestWasRefused(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	srv := httptest.NewServer(New(Config{Models: NewBookModels(nil), Log: log}).Handler())
	defer srv.Close()
	for _, path := range []string{"/api/v1/models?executors=0", "/api/v1/models"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	var lines []*logrus.Entry
	for _, e := range hook.AllEntries() {
		if e.Message == "request" {
			lines = append(lines, e)
		}
	}
	if len(lines) != 2 {
		t.Fatalf("%d request lines", len(lines))
	}
	if bad := lines[0]; bad.Data["status"] != 400 || bad.Data["field"] != "executors" || !strings.Contains(bad.Data["error"].(string), "executor count") {
		t.Errorf("the refusal's line: %v", bad.Data)
	}
	if ok := lines[1]; ok.Data["status"] != 200 || ok.Data["error"] != nil {
		t.Errorf("a success's line: %v", ok.Data)
	}
}

// unavailableViews answers every panel "not now" (a standby, the cost
// meter resuming after a restart).
type unavailableViews struct{ fixedViews }

func (unavailableViews) Cost(context.Context) (CostView, error) { return CostView{}, ErrNoScheduler }

// TestRequestLogA503IsNotAWarning: a 503 (retry later) is logged at info,
// not as a warning: the dashboard polls /api/v1/cost every few seconds
// while a restarted meter resumes, and the demo, which shows warnings,
// printed each poll (its test caught it). A 500 stays a warning.
func TestRequestLogA503IsNotAWarning(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	srv := httptest.NewServer(New(Config{Views: unavailableViews{}, Log: log}).Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/api/v1/cost")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	seen := false
	for _, e := range hook.AllEntries() {
		if e.Message == "request" {
			seen = true
			if e.Level != logrus.InfoLevel || e.Data["status"] != 503 {
				t.Errorf("the 503's request line: level %s, %v; want info", e.Level, e.Data)
			}
		}
	}
	if !seen {
		t.Fatal("no request line")
	}
}
