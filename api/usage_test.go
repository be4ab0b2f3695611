package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/scheduler"
)

var usageNow = time.Date(2026, 11, 26, 12, 0, 30, 0, time.UTC)

func usageEnv(t *testing.T) *testEnv {
	t.Helper()
	return newEnv(t, func(c *Config) {
		c.Now = func() time.Time { return usageNow }
		c.Usage = c.Store.(UsageSource)
	})
}

func TestUsageBadParams(t *testing.T) {
	e := usageEnv(t)
	cases := []struct{ query, field string }{
		{"by=tenant", "by"},
		{"by=label:", "by"},
		{"by=label:" + strings.Repeat("k", 64), "by"},
		{"by=label:bad%20key", "by"}, // no job can carry it
		{"by=label:-env", "by"},
		{"from=yesterday", "from"},
		{"to=2026-13-01T00:00:00Z", "to"},
		{"from=2026-11-26T12:00:00Z&to=2026-11-26T11:00:00Z", "from"},
		{"from=2020-01-01T00:00:00Z", "from"},
		{"step=90s", "step"},
		{"step=0", "step"},
		{"step=-1h", "step"},
		{"step=fast", "step"},
		{"step=1m&from=2026-11-20T00:00:00Z", "step"},
		{"team=a", "team"},
		{"by=team&by=job", "by"},
		{"from=9999-12-31T00:00:00Z&to=9999-12-31T23:59:30Z", "to"},
	}
	for _, c := range cases {
		resp, body := e.do(t, "GET", "/api/v1/usage?"+c.query, "", "", nil)
		if resp.StatusCode != http.StatusBadRequest || body["field"] != c.field || body["error"] == "" {
			t.Errorf("%s: %d %v; want 400 naming %q", c.query, resp.StatusCode, body, c.field)
		}
	}
}

func TestUsageJSONAndCSV(t *testing.T) {
	e := usageEnv(t)
	ctx := context.Background()
	// Two jobs of two teams that ran, and their attributed cost.
	ids := map[string]string{}
	resp0, body := e.post(t, withField(goodJob, "labels", map[string]string{"team": "analytics"}))
	if resp0.StatusCode != http.StatusCreated {
		t.Fatalf("submit: %d %v", resp0.StatusCode, body)
	}
	ids["analytics"] = body["id"].(string)
	// A team named like a spreadsheet formula: the API refuses such a team
	// label (labels.team), so it is stored directly, as a row of an older
	// schema could be; the CSV must still not hand it to a spreadsheet.
	if resp, body := e.post(t, withField(goodJob, "labels", map[string]string{"team": "=cmd"})); resp.StatusCode != http.StatusBadRequest || body["field"] != "labels.team" {
		t.Fatalf("team label =cmd: %d %v; want 400 naming labels.team", resp.StatusCode, body)
	}
	cmd := scheduler.Job{Spec: scheduler.Spec{ID: uuid.NewString(), Name: "formula", App: scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
		Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}, Team: "=cmd", State: scheduler.Queued, SubmittedAt: usageNow}
	if _, _, err := e.store.CreateJob(ctx, cmd, ""); err != nil {
		t.Fatal(err)
	}
	ids["=cmd"] = cmd.ID
	b := usageNow.Add(-2 * time.Hour).Truncate(time.Minute)
	err := e.store.SaveCost(ctx, uuid.NewString(), 3.5, []scheduler.LedgerEntry{
		{Bucket: b, JobID: ids["analytics"], Usage: scheduler.Usage{CostUSD: 2, CPUSeconds: 7200}},
		{Bucket: b.Add(time.Hour), JobID: ids["=cmd"], Usage: scheduler.Usage{CostUSD: 1}},
		{Bucket: b, JobID: "", Usage: scheduler.Usage{CostUSD: 0.5}},
	})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(e.srv.URL + "/api/v1/usage?by=team&step=1h&from=" + b.Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	var v UsageView
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %v", resp.StatusCode, err)
	}
	resp.Body.Close()
	if v.By != "team" || v.StepSeconds != 3600 || !v.From.Equal(b) || !v.To.Equal(usageNow.Truncate(time.Minute).Add(time.Minute)) {
		t.Fatalf("view %+v", v)
	}
	cost := map[string]float64{}
	for _, r := range v.Rows {
		cost[r.Group] += r.CostUSD
	}
	if cost["analytics"] != 2 || cost["=cmd"] != 1 || cost["(idle)"] != 0.5 {
		t.Fatalf("by team %v", cost)
	}

	req, _ := http.NewRequest("GET", e.srv.URL+"/api/v1/usage?by=team&from="+b.Format(time.RFC3339), nil)
	req.Header.Set("Accept", "text/csv")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("content type %q", ct)
	}
	raw, _ := io.ReadAll(resp.Body)
	recs, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
	if err != nil {
		t.Fatalf("not CSV: %v\n%s", err, raw)
	}
	if strings.Join(recs[0], ",") != strings.Join(UsageCSVHeader, ",") {
		t.Fatalf("header %v", recs[0])
	}
	byGroup := map[string][]string{}
	for _, r := range recs[1:] {
		byGroup[r[2]] = r
	}
	if r := byGroup["analytics"]; r == nil || r[4] != "2" || r[5] != "2" || r[3] != "false" {
		t.Fatalf("analytics row %v (all %v)", r, recs)
	}
	// A group name a spreadsheet would run as a formula is defused.
	if r := byGroup["'=cmd"]; r == nil || r[4] != "1" {
		t.Fatalf("the =cmd team's row %v (all %v)", r, recs)
	}
	if r := byGroup["(idle)"]; r == nil || r[3] != "true" || r[4] != "0.5" {
		t.Fatalf("idle row %v", r)
	}
}

// TestBudgetRefusal: a team over a reject budget has its new jobs refused
// with 403 naming the budget; other teams submit as before.
func TestBudgetRefusal(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.BudgetRefusal = func(team string) (string, bool) {
			if team == "analytics" {
				return "team analytics is over its daily budget $50.00: it spent $52.13", true
			}
			return "", false
		}
	})
	resp, body := e.post(t, goodJob) // labels team=analytics
	if resp.StatusCode != http.StatusForbidden || body["field"] != "team" || !strings.Contains(body["error"].(string), "daily budget $50.00") {
		t.Fatalf("over budget: %d %v", resp.StatusCode, body)
	}
	resp, body = e.post(t, withField(goodJob, "labels", map[string]string{"team": "search"}))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("another team: %d %v", resp.StatusCode, body)
	}
}

// TestBudgetRefusalLetsResubmissionThrough: resending a job that was
// stored (a client retrying after a 503 whose commit went through) answers
// the job, not 403, once its team went over a reject budget, as the team
// caps do: the resubmission creates nothing.
func TestBudgetRefusalLetsResubmissionThrough(t *testing.T) {
	var over atomic.Bool
	e := newEnv(t, func(c *Config) {
		c.BudgetRefusal = func(team string) (string, bool) {
			return "team analytics is over its daily budget $50.00", team == "analytics" && over.Load()
		}
	})
	body := withField(goodJob, "id", "0b6f3a52-1f0e-4d4b-9a57-2f5c4f1b7d10") // labels team=analytics
	if resp, m := e.post(t, body); resp.StatusCode != http.StatusCreated {
		t.Fatalf("first submission: %d %v", resp.StatusCode, m)
	}
	over.Store(true)
	if resp, m := e.post(t, body); resp.StatusCode != http.StatusOK || m["id"] != "0b6f3a52-1f0e-4d4b-9a57-2f5c4f1b7d10" {
		t.Fatalf("resubmission over the budget: %d %v, want 200 with the stored job", resp.StatusCode, m)
	}
	if resp, m := e.post(t, withField(goodJob, "id", "5d0c8e4e-3d53-4c39-8a43-93a0a3f0d2c1")); resp.StatusCode != http.StatusForbidden || m["field"] != "team" {
		t.Fatalf("a new job over the budget: %d %v, want 403", resp.StatusCode, m)
	}
}
