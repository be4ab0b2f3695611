package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/perfmodel"
)

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
