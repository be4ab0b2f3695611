package integration

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/perfmodel"
)

// TestDashboardEmptyDemo: the dashboard of a demo with no job yet (an empty
// cluster, --no-sample) says what it shows: the waiting-jobs chart's value
// axis reads whole, distinct numbers (it read "0", "1", "1": a top of 1.05
// and a middle of 0.525, rounded), and the Usage page's table says the
// window has no usage (it was a row of headers alone).
func TestDashboardEmptyDemo(t *testing.T) {
	d := startDemo(t, "--no-sample", "--sim-speed", "8")
	b := newBrowser(t)
	var labels []string
	var usage string
	b.run(t, 120*time.Second,
		chromedp.Navigate(d.API+"/#/"),
		// The chart is redrawn at every refresh: its labels are read in one
		// evaluation of one drawing, once it has points.
		chromedp.Poll(`(() => {
			const c = document.getElementById("chart-queue");
			const ls = [...c.querySelectorAll("text.ylabel")].map((t) => t.textContent);
			return c.querySelector("path") && ls.length ? ls : false;
		})()`, &labels, chromedp.WithPollingTimeout(60*time.Second)),
	)
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] || strings.Contains(l, ".") {
			t.Errorf("waiting-jobs chart's value axis: %q; want whole, distinct numbers", labels)
			break
		}
		seen[l] = true
	}
	b.screenshot(t, "dashboard-empty-overview")
	b.run(t, 60*time.Second,
		chromedp.Evaluate(`location.hash = "#/usage"`, nil),
		pageTexts(45*time.Second, textRead{sel: `#usage-table tbody`, out: &usage, until: "No usage in this window"}),
	)
	b.screenshot(t, "dashboard-empty-usage")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

// TestDashboardModelSignaturesShownWhole: signatures of the same jar (an
// application and its main class) differ only at their end; each card of
// the models panel shows its whole signature (an ellipsis cut every card
// to the same "local:///opt/spark/examples/jars/spark-e…").
func TestDashboardModelSignaturesShownWhole(t *testing.T) {
	const jar = "local:///opt/spark/examples/jars/spark-examples.jar "
	sigs := []string{jar + "org.apache.spark.examples.JavaWordCount", jar + "org.apache.spark.examples.sql.SparkSQLExample"}
	m := api.NewBookModels(nil)
	for _, sig := range sigs {
		for _, e := range []int{1, 2, 4} {
			if err := m.Observe(sig, "", perfmodel.Run{Executors: e, Size: 1, Seconds: 60 / float64(e)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	base := startAPIWith(t, func(c *api.Config) { c.Models = m })
	b := newBrowser(t)
	var shown []struct {
		Text    string
		Clipped bool
	}
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/"),
		chromedp.Poll(`(() => {
			const ss = [...document.querySelectorAll("#models figure.model .model-sig")];
			return ss.length === 2 && ss.map((s) => ({text: s.innerText, clipped: s.scrollWidth > s.clientWidth + 1}));
		})()`, &shown, chromedp.WithPollingTimeout(30*time.Second)),
	)
	for i, s := range shown {
		if s.Clipped || !strings.Contains(strings.Join(strings.Fields(s.Text), " "), sigs[0][len(jar):]) && !strings.Contains(s.Text, sigs[1][len(jar):]) {
			t.Errorf("model card %d: signature %q clipped %v; want the whole signature shown", i, s.Text, s.Clipped)
		}
	}
	b.screenshot(t, "dashboard-models-signatures")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

// TestDashboardClusterMessageInsideItsPanel: when the cluster cannot be
// shown (here: an API server without the scheduler's views, "No cluster view
// in this server."; one needing a token says so in the same place), the
// message spans the panel, inside it (it sat in the first 150-pixel cell of
// the agents' grid, pulled out of the panel by the margin meant for a
// queue's item).
func TestDashboardClusterMessageInsideItsPanel(t *testing.T) {
	base := startAPI(t)
	b := newBrowser(t)
	var msg string
	var box struct {
		Inside, Wide bool
	}
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/"),
		pageTexts(30*time.Second, textRead{sel: `#cluster .empty`, out: &msg}),
		chromedp.Evaluate(`(() => {
			const m = document.querySelector("#cluster .empty").getBoundingClientRect();
			const c = document.getElementById("cluster").getBoundingClientRect();
			return {inside: m.left >= c.left - 0.5 && m.right <= c.right + 0.5, wide: m.width > c.width / 2};
		})()`, &box),
	)
	if !box.Inside || !box.Wide {
		t.Errorf("cluster message %q: inside the agents' box %v, wider than half of it %v; want both", msg, box.Inside, box.Wide)
	}
	b.screenshot(t, "dashboard-cluster-message")
}

// TestDashboardCostAxisLabelsWhole: the cost chart of a run's first
// seconds (fractions of a cent) labels its axis in decimals, whole: the
// labels were cut at the chart's left edge ("$0.000017" read ".000017") or,
// below a millionth, in exponent notation ("$8.3e-7"). The dashboard's own
// lineChart draws, in the browser, the series such a meter gives.
func TestDashboardCostAxisLabelsWhole(t *testing.T) {
	base := startAPI(t)
	b := newBrowser(t)
	var labels []struct {
		Text string
		X    float64
	}
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#jobs-table`, chromedp.ByQuery),
		chromedp.Evaluate(`(() => {
			const out = [];
			for (const top of [1.7e-5, 8e-7]) {
				const box = document.createElement("div");
				box.className = "chart"; box.style.width = "560px";
				document.getElementById("view-jobs").append(box);
				const t0 = Date.now();
				lineChart(box, [{ name: "meter", colour: "#0b63c4", points: [[t0, 0], [t0 + 1000, top / 2], [t0 + 2000, top]] }], { fmt: fmtAxisUSD });
				for (const l of box.querySelectorAll("text.ylabel")) out.push({ text: l.textContent, x: l.getBBox().x });
			}
			return out;
		})()`, &labels),
	)
	if len(labels) != 6 {
		t.Fatalf("labels %v; want 3 on each of 2 charts", labels)
	}
	for _, l := range labels {
		if l.X < 0 || strings.ContainsAny(l.Text, "eE") || !strings.HasPrefix(l.Text, "$") {
			t.Errorf("cost axis label %q starts at x=%.1f; want a decimal dollar amount inside the chart (x >= 0)", l.Text, l.X)
		}
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}

// TestDashboardNoMissingResources: the dashboard loads without a failed
// request for a file in the browser's console (the browser asked for
// /favicon.ico, a 404 at every load). API requests are left out: this
// server has no scheduler views, and the page says so itself.
func TestDashboardNoMissingResources(t *testing.T) {
	base := startAPI(t)
	b := newBrowser(t)
	var mu sync.Mutex
	var failed []string
	chromedp.ListenTarget(b.ctx, func(ev any) {
		if e, ok := ev.(*cdplog.EventEntryAdded); ok && e.Entry.Source == cdplog.SourceNetwork && e.Entry.Level == cdplog.LevelError && !strings.Contains(e.Entry.URL, "/api/") {
			mu.Lock()
			failed = append(failed, e.Entry.Text+" "+e.Entry.URL)
			mu.Unlock()
		}
	})
	var shown string
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		pageTexts(30*time.Second, textRead{sel: `#jobs-table tbody`, out: &shown, until: "No jobs yet"}),
		// The browser asks for its icon once the page has loaded.
		chromedp.Sleep(3*time.Second),
	)
	mu.Lock()
	defer mu.Unlock()
	if len(failed) > 0 {
		t.Fatalf("failed requests: %v", failed)
	}
}

// TestDashboardWarmPoolSaysWhen: the warm pool's part of the forecast
// panel is its last decision (every minute by default), which may be older
// than the cluster panel above it ("7 agents hold work" next to a cluster
// of idle agents): it says when it was decided.
func TestDashboardWarmPoolSaysWhen(t *testing.T) {
	at := time.Date(2026, 11, 27, 10, 47, 1, 0, time.UTC)
	view, _ := json.Marshal(map[string]any{"at": at, "stepSeconds": 900, "horizonSeconds": 1800,
		"model": map[string]any{"ok": false, "reason": "empty history", "level": "none"}, "steps": []any{},
		"warmPool": map[string]any{"at": at, "reason": "warm for the forecast", "warmCPUs": 38, "poweredOnAhead": 0,
			"keepOn":     []any{map[string]any{"agentId": "a1", "name": "agent-01", "reason": "holds work"}},
			"powerOnNow": []any{}, "mayPowerOff": []any{}, "config": map[string]any{"missCostUSD": 2}}})
	base := startAPIWith(t, func(c *api.Config) {
		c.Forecast = func(context.Context, time.Duration, time.Duration) (any, error) { return json.RawMessage(view), nil }
	})
	b := newBrowser(t)
	b.run(t, 60*time.Second, chromedp.Navigate(base+"/#/"))
	var warm, tz string
	b.run(t, 60*time.Second,
		pageTexts(50*time.Second, textRead{sel: `#forecast-warm`, out: &warm, until: "hold"}),
		chromedp.Evaluate(`fmtTime("2026-11-27T10:47:01Z")`, &tz),
	)
	if !strings.Contains(warm, "Last decided "+tz) {
		t.Fatalf("warm pool list %q; want it to say when it was decided (%s)", warm, tz)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
