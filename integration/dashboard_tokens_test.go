package integration

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
)

const (
	adminToken  = "admin-token-0123456789abcdef"
	readerToken = "reader-token-0123456789abcd"
)

func tokenAPI(t *testing.T, protectReads bool) string {
	t.Helper()
	tokens, err := api.ParseTokens(strings.NewReader("admin:" + adminToken + ":admin\nreader:" + readerToken + ":read\n"))
	if err != nil {
		t.Fatal(err)
	}
	return startAPIWith(t, func(c *api.Config) {
		c.Guard = &api.Guard{Tokens: tokens, ProtectReads: protectReads}
	})
}

// postAs submits a job with a token.
func postAs(t *testing.T, base, token, name string) string {
	t.Helper()
	body := `{"name":"` + name + `","app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024,"deadline":3600}`
	req, _ := http.NewRequest("POST", base+"/api/v1/jobs", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	json.Unmarshal(b, &m)
	if resp.StatusCode != 201 {
		t.Fatalf("POST job: %d %s", resp.StatusCode, b)
	}
	return m["id"].(string)
}

// textOf reads the text of sel, once there and non-empty, in the page
// (pageText).
func textOf(t *testing.T, b *browser, sel string) string {
	t.Helper()
	var s string
	b.run(t, 20*time.Second, pageText(sel, &s, 15*time.Second))
	return s
}

// TestDashboardTokenEntry, with tokens on: the page reads without a
// token, but a kill asks for one (after a confirmation); a token without
// the cancel scope is refused with the reason; an admin token entered in
// the page kills the job, and stays for the tab (session storage only)
// across a reload.
func TestDashboardTokenEntry(t *testing.T) {
	b := newBrowser(t)
	base := tokenAPI(t, false)
	id := postAs(t, base, adminToken, "token-target")
	confirmCancel := func() {
		b.run(t, 20*time.Second,
			chromedp.Click(`#job-cancel`, chromedp.ByQuery),
			chromedp.WaitVisible(`#job-confirm`, chromedp.ByQuery),
		)
		if txt := textOf(t, b, `#job-confirm-text`); !strings.Contains(txt, "token-target") || !strings.Contains(txt, "cannot be undone") {
			t.Fatalf("confirmation says %q", txt)
		}
		b.run(t, 20*time.Second, chromedp.Click(`#job-confirm-yes`, chromedp.ByQuery))
	}
	b.run(t, 30*time.Second,
		chromedp.Navigate(base+"/#/jobs/"+id),
		chromedp.WaitVisible(`#job-events li`, chromedp.ByQuery),
		chromedp.WaitVisible(`#live:not(.off)`, chromedp.ByQuery),
	)
	// Asking first: "No" leaves the job alone.
	b.run(t, 20*time.Second,
		chromedp.Click(`#job-cancel`, chromedp.ByQuery),
		chromedp.WaitVisible(`#job-confirm`, chromedp.ByQuery),
		chromedp.Click(`#job-confirm-no`, chromedp.ByQuery),
		chromedp.WaitNotVisible(`#job-confirm`, chromedp.ByQuery),
	)
	if v, err := getJob(base, id); err != nil || v.State != "SUBMITTED" {
		t.Fatalf("after No: %+v %v", v, err)
	}
	// Without a token: refused, and the token form opens.
	confirmCancel()
	b.run(t, 20*time.Second, chromedp.WaitVisible(`#token-form`, chromedp.ByQuery))
	if msg := textOf(t, b, `#job-cancel-msg`); !strings.Contains(msg, "Not allowed") || !strings.Contains(msg, "token") {
		t.Fatalf("cancel without a token says %q", msg)
	}
	b.screenshot(t, "dashboard-token-needed")
	// A read-only token: refused for its scope.
	b.run(t, 20*time.Second,
		chromedp.SendKeys(`#token-input`, readerToken, chromedp.ByQuery),
		chromedp.Click(`#token-save`, chromedp.ByQuery),
		chromedp.WaitNotVisible(`#token-form`, chromedp.ByQuery),
	)
	confirmCancel()
	b.run(t, 20*time.Second, chromedp.WaitVisible(`#token-form`, chromedp.ByQuery))
	if msg := textOf(t, b, `#job-cancel-msg`); !strings.Contains(msg, "scope cancel") {
		t.Fatalf("cancel with a read token says %q", msg)
	}
	// The admin token kills it.
	b.run(t, 20*time.Second,
		chromedp.SendKeys(`#token-input`, adminToken, chromedp.ByQuery),
		chromedp.Click(`#token-save`, chromedp.ByQuery),
	)
	confirmCancel()
	// Polled in the page: the facts are drawn anew at every update, so a
	// node read from outside may be gone by the time its text is asked for.
	var cancelledShown bool
	b.run(t, 30*time.Second,
		chromedp.WaitVisible(`#job-facts dd[data-fact="state"]`, chromedp.ByQuery),
		chromedp.Poll(`(document.querySelector('#job-facts dd[data-fact="state"]') || {}).textContent === "CANCELLED"`, &cancelledShown, chromedp.WithPollingTimeout(20*time.Second)),
	)
	if !cancelledShown {
		t.Fatalf("job page shows %q after the kill", textOf(t, b, `#job-facts`))
	}
	if v, err := getJob(base, id); err != nil || v.State != "CANCELLED" {
		t.Fatalf("after the kill: %+v %v", v, err)
	}
	// Kept for the tab, not beyond it.
	var inSession, inLocal string
	var button string
	b.run(t, 30*time.Second,
		chromedp.Reload(),
		chromedp.WaitVisible(`#live:not(.off)`, chromedp.ByQuery),
		chromedp.Evaluate(`sessionStorage.getItem("sparkpack.token") || ""`, &inSession),
		chromedp.Evaluate(`JSON.stringify(localStorage)`, &inLocal),
		pageText(`#token-btn`, &button, 15*time.Second),
	)
	if inSession != adminToken || strings.Contains(inLocal, adminToken) || !strings.Contains(button, "✓") {
		t.Fatalf("after a reload: session %q, local %q, button %q", inSession, inLocal, button)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

// TestDashboardProtectedReads, with --protect-reads: without a token the
// page says it needs one (and loads nothing); with a read token entered
// in the page it lists the jobs and its event stream connects with a
// ticket, so that a job submitted afterwards shows up by itself.
func TestDashboardProtectedReads(t *testing.T) {
	b := newBrowser(t)
	base := tokenAPI(t, true)
	first := postAs(t, base, adminToken, "protected-first")
	b.run(t, 30*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#jobs-error`, chromedp.ByQuery),
		chromedp.WaitVisible(`#token-form`, chromedp.ByQuery),
	)
	deadline := time.Now().Add(20 * time.Second)
	for textOf(t, b, `#live`) != "token needed" {
		if time.Now().After(deadline) {
			t.Fatalf("live badge says %q without a token", textOf(t, b, `#live`))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if msg := textOf(t, b, `#jobs-error`); !strings.Contains(msg, "needs a token") {
		t.Fatalf("jobs view says %q", msg)
	}
	var rows int
	b.run(t, 10*time.Second, chromedp.Evaluate(`document.querySelectorAll("#jobs-table tbody tr").length`, &rows))
	if rows != 0 {
		t.Fatalf("%d jobs shown without a token", rows)
	}
	b.screenshot(t, "dashboard-protected-no-token")
	b.run(t, 30*time.Second,
		chromedp.SendKeys(`#token-input`, readerToken, chromedp.ByQuery),
		chromedp.Click(`#token-save`, chromedp.ByQuery),
		chromedp.WaitVisible(`tr[data-job="`+first+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#live:not(.off)`, chromedp.ByQuery),
	)
	second := postAs(t, base, adminToken, "protected-second")
	b.run(t, 30*time.Second, chromedp.WaitVisible(`tr[data-job="`+second+`"]`, chromedp.ByQuery))
	b.screenshot(t, "dashboard-protected-with-token")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
