package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The dashboard is served under a Content-Security-Policy that allows only
// its own scripts (script-src 'self'): an inline event handler in the page
// is blocked (and reported by the browser as a violation on every load).
// The job search form's submit must be stopped by the page's script, not by
// an inline onsubmit: otherwise pressing Enter in the search box submits the
// form, which the policy's form-action 'none' then refuses with another
// violation, and the search waits for the typing pause.
func TestDashboardSearchFormStaysOnThePage(t *testing.T) {
	b := newBrowser(t)
	base := startAPI(t)
	var prevented bool
	b.run(t, 30*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#job-search`, chromedp.ByQuery),
		// A listener on window runs after the form's own: it sees whether
		// the page stopped the submission. requestSubmit is what pressing
		// Enter in the search box does (implicit submission).
		chromedp.Evaluate(`(() => {
			let seen = null;
			window.addEventListener("submit", e => { seen = e.defaultPrevented; }, { once: true });
			document.querySelector("#job-filter").requestSubmit();
			return seen === true;
		})()`, &prevented),
	)
	if !prevented {
		t.Error("the page does not stop the job search form's submission (Enter in the search box): the browser is left to refuse it")
	}
	for _, e := range b.consoleErrors() {
		if strings.Contains(e, "Content Security Policy") {
			t.Errorf("the dashboard breaks its own Content-Security-Policy: %s", e)
		}
	}
}
