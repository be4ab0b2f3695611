package integration

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardOnTheDemo drives the dashboard of a running `sparkpack
// demo` in headless Chromium: the 14 agents of thesis14, a job that waits
// in its queue (a blocker holds most of the cluster), then shows on its
// agents, then finishes, all pushed live; its HTML/script name stays text.
func TestDashboardOnTheDemo(t *testing.T) {
	b := newBrowser(t)
	d := startDemo(t, "--no-sample")
	var agents int
	b.run(t, 30*time.Second,
		chromedp.Navigate(d.API+"/#/"),
		chromedp.WaitVisible(`#live:not(.off)`, chromedp.ByQuery),
		chromedp.WaitVisible(`#cluster article.agent`, chromedp.ByQuery),
	)
	// The cards are rebuilt at every refresh, and a refresh the emulator
	// answers while agents still register shows fewer: wait for all 14,
	// then say how many there were if they never came.
	ctx, cancel := context.WithTimeout(b.ctx, 25*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Poll(`document.querySelectorAll("#cluster article.agent").length === 14`, nil,
		chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		b.run(t, 10*time.Second, chromedp.Evaluate(`document.querySelectorAll("#cluster article.agent").length`, &agents))
		t.Fatalf("the dashboard shows %d agents, want the 14 of thesis14 (%v)", agents, err)
	}
	b.screenshot(t, "demo-cluster-idle")

	// 24 executors of 4 cpus hold 96 of the 100 cpus for a while.
	blocker := submit(t, d.API, sparkJob("blocker", 24, 4, 1024, 12))
	waitState(t, d.API, blocker, 30*time.Second, "RUNNING")
	job := sparkJob(xssName, 4, 4, 1024, 2)
	id := submit(t, d.API, job)

	var queued, reason string
	// The queues are rebuilt at every refresh: both read in one evaluation.
	b.run(t, 30*time.Second, pageTexts(25*time.Second,
		textRead{sel: `#queue-regular li[data-job="` + id + `"] a`, out: &queued},
		textRead{sel: `#queue-regular li[data-job="` + id + `"] .reason`, out: &reason}))
	if queued != xssName || reason == "" {
		t.Fatalf("queue shows the job as %q waiting for %q; want its name as text and a reason", queued, reason)
	}
	b.screenshot(t, "demo-queued")

	// Then on its agents, from the live stream alone (no reload).
	// The cards are rebuilt at every refresh: the blocks and the label are
	// read in one evaluation of one drawing.
	var shown struct {
		Blocks int
		Label  string
	}
	b.run(t, 60*time.Second,
		chromedp.Poll(`(() => {
			const b = document.querySelector('#cluster .block[data-job="`+id+`"]');
			return b && { blocks: document.querySelectorAll('#cluster .bar:first-of-type .block:not(.driver)[data-job="`+id+`"]').length, label: b.getAttribute("aria-label") || "" };
		})()`, &shown, chromedp.WithPollingTimeout(55*time.Second)),
	)
	blocks, label := shown.Blocks, shown.Label
	v, err := getJob(d.API, id)
	if err != nil {
		t.Fatal(err)
	}
	if blocks != len(v.Placement) || !strings.Contains(label, xssName) {
		t.Fatalf("%d cpu blocks for the job, placement on %d agents; block label %q", blocks, len(v.Placement), label)
	}
	b.screenshot(t, "demo-running")

	// Finished: it leaves the agents and shows FINISHED in the jobs table.
	var state string
	b.run(t, 60*time.Second,
		chromedp.WaitNotPresent(`#cluster .block[data-job="`+id+`"]`, chromedp.ByQuery),
		chromedp.Evaluate(`location.hash = "#/jobs"`, nil),
		chromedp.WaitVisible(`tr[data-job="`+id+`"]`, chromedp.ByQuery),
	)
	// The table is rebuilt at every refresh: read in the page until the row
	// says FINISHED (on a timeout the error shows what the row said).
	b.run(t, 40*time.Second, pageTexts(30*time.Second, textRead{sel: `tr[data-job="` + id + `"] td:nth-child(2)`, out: &state, until: "FINISHED"}))
	if !strings.Contains(state, "FINISHED") {
		t.Fatalf("jobs table shows the job as %q, want FINISHED", state)
	}
	var imgs int
	var pwned bool
	b.run(t, 10*time.Second,
		chromedp.Evaluate(`document.querySelectorAll("main img").length`, &imgs),
		chromedp.Evaluate(`window.__pwned !== undefined`, &pwned),
	)
	if imgs != 0 || pwned {
		t.Fatalf("the job's name was rendered as HTML: %d img elements, payload ran: %v", imgs, pwned)
	}
	b.screenshot(t, "demo-finished")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

// TestDashboardShowsPower: with power management on (as in the demo),
// idle agents show as powered off on their cards, and the emulator's bill
// shows next to sparkpack's own cost meter; the header names the leading
// instance.
func TestDashboardShowsPower(t *testing.T) {
	b := newBrowser(t)
	d := startDemo(t, "--no-sample", "--power-off-after", "2s")
	var off int
	var bill, leader, cost, meterFact, billFact string
	b.run(t, 60*time.Second,
		chromedp.Navigate(d.API+"/#/"),
		chromedp.WaitVisible(`#cluster article.agent[data-power="off"] .badge.power-off`, chromedp.ByQuery),
		// Both stay hidden (read as "") until filled in. The header and the
		// cost facts are read in one evaluation: one refresh wrote them.
		pageTexts(50*time.Second, textRead{sel: `#bill-total`, out: &bill}, textRead{sel: `#leader-name`, out: &leader},
			textRead{sel: `#total-cost`, out: &cost, until: "$"},
			textRead{sel: `#cost-explain dd[data-fact="meter"]`, out: &meterFact},
			textRead{sel: `#cost-explain dd[data-fact="bill"]`, out: &billFact}),
		chromedp.Evaluate(`document.querySelectorAll('#cluster article.agent[data-power="off"]').length`, &off),
	)
	if off == 0 || !strings.Contains(bill, "$") || !strings.Contains(bill, "always on") {
		t.Fatalf("%d agents shown off, bill %q", off, bill)
	}
	// The header shows the cost and the bill as the facts below do: a
	// small demo's cents-only "$0.00" read as nothing spent next to a
	// fact of $0.0028.
	first := func(s string) string { return strings.Fields(s + " ")[0] }
	if first(cost) != first(meterFact) || first(bill) != first(billFact) {
		t.Errorf("header: cost %q, bill %q; facts: meter %q, bill %q: want the same figures", cost, bill, meterFact, billFact)
	}
	// And as an operator reads them: cents, or, under a cent, two
	// significant digits (fmtCost; TestDashboardCostFigures).
	for _, v := range []string{first(cost), first(bill)} {
		if !costFigure.MatchString(v) {
			t.Errorf("header figure %q: want cents ($0.25, $12.40), or two significant digits under a cent ($0.0056)", v)
		}
	}
	if !strings.Contains(leader, "(this instance)") {
		t.Fatalf("the header shows the leader as %q; the demo's one instance leads", leader)
	}
	b.screenshot(t, "demo-power-off")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

// costFigure is a cost as the dashboard shows it: cents, or under a cent
// (not zero) two significant digits at most.
var costFigure = regexp.MustCompile(`^-?\$(\d+\.\d\d|0\.000*[1-9]\d?)$`)

// TestDashboardCostFigures: the dashboard's one cost format (fmtCost, the
// header's and the cost facts'): cents, or, under a cent and not zero,
// two significant digits, so that a small demo's cost never reads $0.00
// and a cost of $0.50 does not read $0.5000.
func TestDashboardCostFigures(t *testing.T) {
	base := startAPI(t)
	b := newBrowser(t)
	in := []float64{0, 0.5, 0.01, 0.0099999, 0.0056, 0.005, 0.00042, 1.234, 123.456, 1e-7, -0.0012, -2.5}
	want := []string{"$0.00", "$0.50", "$0.01", "$0.01", "$0.0056", "$0.005", "$0.00042", "$1.23", "$123.46", "$0.0000001", "-$0.0012", "-$2.50"}
	var got []string
	b.run(t, 45*time.Second,
		chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(`#total-cost`, chromedp.ByQuery),
		chromedp.Evaluate(`[0, 0.5, 0.01, 0.0099999, 0.0056, 0.005, 0.00042, 1.234, 123.456, 1e-7, -0.0012, -2.5].map(fmtCost)`, &got))
	if len(got) != len(in) {
		t.Fatalf("fmtCost of %v: %q", in, got)
	}
	for i := range in {
		if got[i] != want[i] {
			t.Errorf("fmtCost(%g) = %q, want %q", in[i], got[i], want[i])
		}
		if in[i] != 0 && !costFigure.MatchString(got[i]) {
			t.Errorf("fmtCost(%g) = %q: not a figure the header's check (costFigure) takes", in[i], got[i])
		}
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
