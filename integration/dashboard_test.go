package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// startAPI runs the REST API with the dashboard on a free port over a real
// PostgreSQL, as `sparkpack serve` does.
func startAPI(t *testing.T) string {
	t.Helper()
	return startAPIWith(t, nil)
}

// startAPIWith is startAPI with changes to the configuration (tokens).
func startAPIWith(t *testing.T, mod func(*api.Config)) string {
	t.Helper()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), pgtest.URL(t), store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := api.Config{Store: st, Log: log, Broker: api.NewBroker(), Dashboard: true}
	if mod != nil {
		mod(&cfg)
	}
	srv := api.New(cfg)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go hs.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		hs.Shutdown(ctx)
		hs.Close()
	})
	return "http://" + ln.Addr().String()
}

func postJob(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/jobs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	json.NewDecoder(resp.Body).Decode(&m)
	if resp.StatusCode != 201 {
		t.Fatalf("POST job: %d %v", resp.StatusCode, m)
	}
	return m["id"].(string)
}

const xssName = `<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>`

func TestDashboardJobsLiveAndEscaped(t *testing.T) {
	b := newBrowser(t)
	base := startAPI(t)
	b.run(t, 30*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#jobs-table`, chromedp.ByQuery),
		chromedp.WaitVisible(`#live:not(.off)`, chromedp.ByQuery),
	)
	// No job yet: the table says so and how to submit one (not a bare
	// header), and a search that matches nothing says that instead.
	var empty, noMatch string
	b.run(t, 30*time.Second,
		chromedp.Poll(`(document.querySelector("#jobs-table tbody tr.empty") || {}).textContent`, &empty, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`location.hash = "#/jobs?q=no-such-job"`, nil),
		chromedp.Poll(`((document.querySelector("#jobs-table tbody tr.empty") || {}).textContent || "").startsWith("No job matches") && document.querySelector("#jobs-table tbody tr.empty").textContent`, &noMatch, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`location.hash = "#/jobs"`, nil),
		chromedp.Poll(`((document.querySelector("#jobs-table tbody tr.empty") || {}).textContent || "").startsWith("No jobs yet")`, nil, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if !strings.Contains(empty, "No jobs yet") || !strings.Contains(empty, "sparkpack submit") || !strings.Contains(noMatch, "clear them") {
		t.Fatalf("empty jobs table: %q; no match: %q", empty, noMatch)
	}
	// Submitted over REST after the page loaded: it must appear by itself
	// (server-sent events), with its hostile name shown as text.
	nameJSON, _ := json.Marshal(xssName)
	id := postJob(t, base, `{"name":`+string(nameJSON)+`,"app":{"appResource":"local:///a.jar","mainClass":"a.B","args":["<b>x</b>"]},
		"executors":2,"executorCores":1,"executorMemoryMB":1024,"deadline":3600,"labels":{"owner":"<i>t</i>"}}`)
	var shown string
	var imgs, scripts int
	var pwned bool
	b.run(t, 30*time.Second,
		// The table is rebuilt at every refresh: read in the page.
		pageText(`tr[data-job="`+id+`"] td a`, &shown, 25*time.Second),
		chromedp.Evaluate(`document.querySelectorAll("#jobs-table img").length`, &imgs),
		chromedp.Evaluate(`document.querySelectorAll("main script").length`, &scripts),
		chromedp.Evaluate(`window.__pwned !== undefined`, &pwned),
	)
	if shown != xssName || imgs != 0 || scripts != 0 || pwned {
		t.Fatalf("name shown as %q; %d img, %d script elements; payload ran: %v", shown, imgs, scripts, pwned)
	}
	b.screenshot(t, "dashboard-jobs")

	// The search box filters on the server, and the filter is in the URL.
	var rows int
	var hash string
	b.run(t, 20*time.Second,
		chromedp.SendKeys(`#job-search`, "no-such-job", chromedp.ByQuery),
		chromedp.Poll(`location.hash === "#/jobs?q=no-such-job" && document.querySelectorAll("#jobs-table tbody tr[data-job]").length === 0`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`document.querySelectorAll("#jobs-table tbody tr[data-job]").length`, &rows),
	)
	if rows != 0 {
		t.Fatalf("search left %d rows", rows)
	}
	// The search covers every job, not only the 100 rows loaded: the first
	// job is found behind 100 newer ones.
	for i := range 100 {
		postJob(t, base, fmt.Sprintf(`{"name":"filler-%03d","app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`, i))
	}
	b.run(t, 20*time.Second,
		chromedp.Evaluate(`location.replace("#/jobs?q=`+id[:8]+`")`, nil),
		chromedp.WaitVisible(`tr[data-job="`+id+`"]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#jobs-table tbody tr[data-job]").length`, &rows),
	)
	if rows != 1 {
		t.Fatalf("searching the first job's id among 101: %d rows", rows)
	}
	// A column sorts when its header is clicked, and the order is in the URL.
	var names []string
	b.run(t, 20*time.Second,
		chromedp.Evaluate(`location.replace("#/jobs?q=filler-")`, nil),
		chromedp.Poll(`document.querySelectorAll("#jobs-table tbody tr[data-job]").length === 100`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Click(`#jobs-table th[data-sort="name"]`, chromedp.ByQuery),
		chromedp.Poll(`location.hash.includes("sort=name") && document.querySelector('#jobs-table th[data-sort="name"]').getAttribute("aria-sort") === "ascending"`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`[...document.querySelectorAll("#jobs-table tbody tr td:first-child")].slice(0, 3).map(td => td.textContent)`, &names),
		chromedp.Evaluate(`location.hash`, &hash),
	)
	if strings.Join(names, ",") != "filler-000,filler-001,filler-002" {
		t.Fatalf("sorted by name (%s): first rows %v", hash, names)
	}
	b.run(t, 10*time.Second, chromedp.Evaluate(`location.replace("#/jobs")`, nil))
	var timeline, facts string
	b.run(t, 30*time.Second,
		chromedp.Evaluate(`location.hash = "#/jobs/`+id+`"`, nil),
		// One evaluation: the timeline and the facts of one drawing.
		pageTexts(25*time.Second, textRead{sel: `#job-events`, out: &timeline}, textRead{sel: `#job-facts`, out: &facts}),
	)
	if !strings.Contains(timeline, "SUBMITTED") || !strings.Contains(facts, "owner=<i>t</i>") {
		t.Fatalf("job page: timeline %q, facts %q", timeline, facts)
	}
	b.screenshot(t, "dashboard-job")

	// Narrow screen: the page still lays out without horizontal overflow.
	var overflow bool
	b.run(t, 20*time.Second,
		chromedp.EmulateViewport(390, 844),
		chromedp.Evaluate(`location.hash = "#/jobs"`, nil),
		chromedp.WaitVisible(`#jobs-table tbody tr[data-job]`, chromedp.ByQuery),
		chromedp.Evaluate(`document.documentElement.scrollWidth > window.innerWidth + 1`, &overflow),
	)
	b.screenshot(t, "dashboard-narrow")
	if overflow {
		t.Error("the page overflows horizontally on a narrow screen")
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
