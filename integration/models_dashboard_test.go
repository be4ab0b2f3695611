package integration

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestDashboardModelsPanel: the overview draws each signature's learned
// curve (p50 line, p50-p90 band, one point per executor count) with its
// runs and error, names shown as text; the job page shows the predicted
// run time next to the facts.
func TestDashboardModelsPanel(t *testing.T) {
	const sig = "local:///jobs/etl.jar#com.example.ETL"
	const hostile = `<img src=x onerror="window.__pwned=1">#Main`
	m := api.NewBookModels(nil)
	for i := 0; i < 12; i++ {
		e := 1 + i%6
		if err := m.Observe(sig, "", perfmodel.Run{Executors: e, Size: 1, Seconds: 240*math.Pow(float64(e), -0.85) + 20}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range []int{1, 2, 4} {
		if err := m.Observe(hostile, "", perfmodel.Run{Executors: e, Size: 1, Seconds: 60 / float64(e)}); err != nil {
			t.Fatal(err)
		}
	}
	base := startAPIWith(t, func(c *api.Config) {
		c.Models = m
		c.JobPrediction = func(j scheduler.Job) *api.JobPrediction {
			return &api.JobPrediction{P50Seconds: 120, P90Seconds: 150, Level: perfmodel.LevelSignature}
		}
	})
	b := newBrowser(t)
	var shown struct {
		Cards, Points, Bands int
		Captions             string
	}
	var pwned bool
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(`#models-panel figure.model`, chromedp.ByQuery),
		// The cards are redrawn at every refresh: counted and read in one
		// evaluation of one drawing.
		chromedp.Poll(`(() => {
			const cards = document.querySelectorAll("#models figure.model");
			return cards.length === 2 && {cards: cards.length, points: cards[0].querySelectorAll("circle.model-point").length,
				bands: document.querySelectorAll("#models polygon.model-band").length, captions: document.getElementById("models").innerText};
		})()`, &shown, chromedp.WithPollingTimeout(20*time.Second)),
		chromedp.Evaluate(`window.__pwned !== undefined || document.querySelectorAll("#models img").length > 0`, &pwned),
	)
	cards, points, bands, captions := shown.Cards, shown.Points, shown.Bands, shown.Captions
	// The most-run signature first, with its six executor counts.
	if cards != 2 || points != len(api.DefaultCurveExecutors) || bands != 2 || pwned ||
		!strings.HasPrefix(captions, sig) || !strings.Contains(captions, "12 runs") || !strings.Contains(captions, "error ") ||
		!strings.Contains(captions, hostile) {
		t.Fatalf("models panel: %d cards, %d points on the first, %d bands, payload ran %v; text %q", cards, points, bands, pwned, captions)
	}
	b.screenshot(t, "dashboard-models")

	id := postJob(t, base, `{"name":"etl","app":{"appResource":"local:///jobs/etl.jar","mainClass":"com.example.ETL"},"executors":2,"executorCores":1,"executorMemoryMB":1024,"labels":{"team":"analytics"}}`)
	var predicted, team string
	b.run(t, 30*time.Second,
		chromedp.Evaluate(`location.hash = "#/jobs/`+id+`"`, nil),
		// The facts are redrawn at every update of the job: read in one
		// evaluation (a node read between a query and its redraw reads "").
		pageTexts(20*time.Second, textRead{sel: `#job-facts dd[data-fact="predicted"]`, out: &predicted},
			textRead{sel: `#job-facts dd[data-fact="team"]`, out: &team}),
	)
	if team != "analytics" {
		t.Errorf("job page team: %q; want analytics (from the job's team label)", team)
	}
	if !strings.Contains(predicted, "2m0s") || !strings.Contains(predicted, "p90 2m30s") {
		t.Fatalf("job page predicted: %q", predicted)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
