package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// TestDashboardUsagePage: the Usage page (#/usage, api/web/usage.js) shows
// each team's cost over the window with its share, the idle remainder,
// a chart line per team, and the budgets (over, left); a hostile team name
// is shown as text.
func TestDashboardUsagePage(t *testing.T) {
	var st *store.Store
	now := time.Now().UTC()
	base := startAPIWith(t, func(c *api.Config) {
		st = c.Store.(*store.Store)
		c.Usage = st
		tc, err := teams.Parse(strings.NewReader("analytics guaranteed-cpus=8 max-cpus=16\n"))
		if err != nil {
			t.Fatal(err)
		}
		c.Teams = &teams.Holder{}
		c.Teams.Set(tc)
		c.TeamUsage = func() map[string]teams.Usage { return map[string]teams.Usage{"analytics": {CPUs: 3, MemMB: 3072}} }
		c.Budgets = func() []chargeback.Verdict {
			return []chargeback.Verdict{
				chargeback.Check("analytics", chargeback.Budget{USD: 2, Period: chargeback.PerDay, Action: chargeback.Hold}, chargeback.Spend{DayUSD: 3}, now),
				chargeback.Check("search", chargeback.Budget{USD: 10, Period: chargeback.PerDay, Action: chargeback.Reject}, chargeback.Spend{DayUSD: 1}, now),
			}
		}
	})
	job := func(team string) string {
		return postJob(t, base, `{"name":"j","app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"labels":{"team":`+quote(team)+`}}`)
	}
	hostile := `<img src=x onerror="window.__pwned=1">`
	a, s := job("analytics"), job("search")
	// The API refuses such a team label (labels.team must be a team name);
	// a row stored otherwise (an older schema, a direct write) must still
	// reach the page as text.
	hj := scheduler.Job{Spec: scheduler.Spec{ID: uuid.NewString(), Name: "j", App: scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
		Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}, Team: hostile, State: scheduler.Queued, SubmittedAt: now}
	if _, _, err := st.CreateJob(context.Background(), hj, ""); err != nil {
		t.Fatal(err)
	}
	h := hj.ID
	if resp, err := http.Post(base+"/api/v1/jobs", "application/json", strings.NewReader(`{"name":"j","app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"labels":{"team":`+quote(hostile)+`}}`)); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a job labelled with team %q: %v %v, want 400", hostile, resp, err)
	} else {
		resp.Body.Close()
	}
	b0 := now.Add(-3 * time.Hour).Truncate(time.Minute)
	var entries []scheduler.LedgerEntry
	for i := 0; i < 3; i++ {
		at := b0.Add(time.Duration(i) * time.Hour)
		entries = append(entries,
			scheduler.LedgerEntry{Bucket: at, JobID: a, Usage: scheduler.Usage{CostUSD: 1, CPUSeconds: 7200}},
			scheduler.LedgerEntry{Bucket: at, JobID: s, Usage: scheduler.Usage{CostUSD: 0.5}},
			scheduler.LedgerEntry{Bucket: at, JobID: "", Usage: scheduler.Usage{CostUSD: 0.25}})
	}
	entries = append(entries, scheduler.LedgerEntry{Bucket: b0, JobID: h, Usage: scheduler.Usage{CostUSD: 0.125}})
	if err := st.SaveCost(context.Background(), uuid.NewString(), 5.375, entries); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t)
	var analytics, search, idle, total, hostileShown string
	var lines int
	var pwned bool
	b.run(t, 45*time.Second,
		chromedp.Navigate(base+"/#/usage"),
		// The table and the chart are rebuilt at every refresh: the rows,
		// the total and the chart of one drawing, in one evaluation.
		pageTexts(40*time.Second,
			textRead{sel: `#usage-table tbody tr[data-team="analytics"]`, out: &analytics},
			textRead{sel: `#usage-table tbody tr[data-team="search"]`, out: &search},
			textRead{sel: `#usage-table tbody tr.idle`, out: &idle},
			textRead{sel: `#usage-total`, out: &total},
			textRead{sel: `#usage-table tbody tr[data-team^="<img"] th`, out: &hostileShown}),
		chromedp.Evaluate(`document.querySelectorAll("#usage-chart .key").length`, &lines),
		chromedp.Evaluate(`window.__pwned !== undefined || document.querySelectorAll("#usage-table img").length > 0`, &pwned),
	)
	for _, c := range []struct{ row, want string }{
		{analytics, "$3.00"}, {analytics, "55.8%"}, {analytics, "3 cpus of 8 guaranteed (max 16) — below its guarantee"}, {analytics, "6.00"}, {analytics, "over: new jobs held"},
		{search, "$1.50"}, {search, "$9.00 left"},
		{idle, "$0.75"},
		{total, "Total $5.38"},
	} {
		if !strings.Contains(c.row, c.want) {
			t.Errorf("%q lacks %q", c.row, c.want)
		}
	}
	if hostileShown != hostile || pwned {
		t.Errorf("hostile team name shown as %q; payload ran: %v", hostileShown, pwned)
	}
	if lines != 4 { // analytics, search, the hostile team, idle
		t.Errorf("%d chart lines, want 4", lines)
	}
	b.screenshot(t, "dashboard-usage")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
