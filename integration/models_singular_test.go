package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/perfmodel"
)

// TestDashboardModelsCountInTheSingular: a model measured on one run
// reads "MAPE over 1 run", not "1 runs" (the first MinRuns runs teach the
// model before any is predicted, so MinRuns+1 runs give one measured).
func TestDashboardModelsCountInTheSingular(t *testing.T) {
	const sig = "local:///jobs/one.jar#com.example.One"
	m := api.NewBookModels(nil)
	for i := 0; i <= perfmodel.MinRuns; i++ {
		e := 1 + i%3
		if err := m.Observe(sig, "", perfmodel.Run{Executors: e, Size: 1, Seconds: 60 / float64(e)}); err != nil {
			t.Fatal(err)
		}
	}
	base := startAPIWith(t, func(c *api.Config) { c.Models = m })
	b := newBrowser(t)
	var caption string
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/"),
		pageTexts(20*time.Second, textRead{sel: `#models figure.model .model-meta`, out: &caption, until: "MAPE"}),
	)
	if !strings.Contains(caption, "MAPE over 1 run,") || strings.Contains(caption, "1 runs") {
		t.Fatalf("model caption %q; want \"MAPE over 1 run,\"", caption)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
