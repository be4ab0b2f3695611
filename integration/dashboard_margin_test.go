package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestDashboardDeadlineMarginsInTenths: the jobs table tells a deadline
// met or missed by under 10 s in tenths, as the CLI does ("met by
// 400ms"), not "met by 0s".
func TestDashboardDeadlineMarginsInTenths(t *testing.T) {
	b := newBrowser(t)
	base := startAPI(t)
	var got []string
	b.run(t, 30*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#jobs-table`, chromedp.ByQuery),
		chromedp.Evaluate(`[9.6, 10.4, 8.5, 10, 10.03, 75].map((s) => deadlineText({state: "FINISHED",
			deadlineAt: "2026-01-01T00:00:10Z", finishedAt: new Date(Date.parse("2026-01-01T00:00:00Z") + s * 1000).toISOString()}).text)`, &got),
	)
	want := []string{"met by 400ms", "missed by 400ms", "met by 1.5s", "met by 0s", "missed by <0.1s", "missed by 1m5s"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("deadline margins read %q, want %q", got, want)
	}
}
