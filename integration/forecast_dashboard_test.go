package integration

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
)

// TestDashboardForecastWithoutAModel: before the history teaches a
// forecast (model.ok false, its bands all zeros), the forecast panel says
// why and draws only the actual arrivals, not three forecast lines at 0
// that read as "nothing will arrive".
func TestDashboardForecastWithoutAModel(t *testing.T) {
	now := time.Now().UTC().Truncate(15 * time.Minute)
	var steps []map[string]any
	zero := map[string]float64{"p10": 0, "p50": 0, "p90": 0, "mean": 0}
	for k := -2; k < 2; k++ {
		s := map[string]any{"from": now.Add(time.Duration(k) * 15 * time.Minute), "to": now.Add(time.Duration(k+1) * 15 * time.Minute),
			"jobs": zero, "cpus": zero, "memMB": zero, "deadlineJobs": zero}
		if k < 0 {
			s["actual"] = map[string]float64{"jobs": 3, "cpus": 6, "memMB": 1024, "deadlineJobs": 1}
		}
		steps = append(steps, s)
	}
	view, _ := json.Marshal(map[string]any{"at": time.Now().UTC(), "stepSeconds": 900, "horizonSeconds": 1800,
		"model": map[string]any{"ok": false, "reason": "empty history", "level": "none"}, "steps": steps})
	base := startAPIWith(t, func(c *api.Config) {
		c.Forecast = func(context.Context, time.Duration, time.Duration) (any, error) { return json.RawMessage(view), nil }
	})
	b := newBrowser(t)
	var shown struct {
		Keys, Model string
		Paths       int
	}
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/"),
		chromedp.WaitVisible(`#chart-forecast svg`, chromedp.ByQuery),
		// The chart is redrawn at every refresh: its keys, its lines and the
		// model's text of one drawing, in one evaluation.
		chromedp.Poll(`(() => {
			const keys = document.querySelector("#chart-forecast .keys"), model = document.getElementById("forecast-model");
			return keys && model.innerText !== "" && {keys: keys.innerText, paths: document.querySelectorAll("#chart-forecast svg path").length, model: model.innerText};
		})()`, &shown, chromedp.WithPollingTimeout(50*time.Second)),
	)
	keys, paths, model := shown.Keys, shown.Paths, shown.Model
	if strings.Contains(keys, "forecast") || !strings.Contains(keys, "actual") || paths != 1 || !strings.Contains(model, "No forecast: empty history") {
		t.Fatalf("forecast panel without a model: keys %q, %d lines, text %q; want the actual arrivals alone and why", keys, paths, model)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
