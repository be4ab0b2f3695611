package integration

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// rebuildingPage rebuilds its nodes as fast as the page can, as the
// dashboard does at every refresh: #box's item and the pair #a/#b (both
// showing the same counter) are replaced by new nodes at every turn; #msg
// stays empty.
const rebuildingPage = `<!doctype html><html><body>
<div id="box"></div><p id="a"></p><p id="b"></p><p id="msg"></p><p id="hidden" hidden>not shown</p>
<script>
let n = 0;
function rebuild() {
  n++;
  const item = document.createElement("span"); item.className = "item"; item.textContent = "item text";
  document.getElementById("box").replaceChildren(item);
  for (const id of ["a", "b"]) {
    const old = document.getElementById(id), p = document.createElement("p");
    p.id = id; p.textContent = "turn " + n;
    old.replaceWith(p);
  }
  if (n === 50) document.getElementById("box").dataset.ready = "";
  setTimeout(rebuild, 0);
}
rebuild();
</script></body></html>`

// TestPageTextReadsNodesThePageRebuilds: pageText reads a node the page
// replaces at every turn as its text, never "" (chromedp.Text, which
// resolves the node and reads it in two round trips, read "" or failed
// here), pageTexts reads two nodes from one state of the page, an empty
// message is read as "" without waiting, and a read waits for its text.
func TestPageTextReadsNodesThePageRebuilds(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, rebuildingPage)
	}))
	defer srv.Close()
	b := newBrowser(t)
	b.run(t, 30*time.Second, chromedp.Navigate(srv.URL))
	for i := range 200 {
		var item, a, bb string
		b.run(t, 30*time.Second,
			pageText(`#box .item`, &item, 20*time.Second),
			pageTexts(20*time.Second, textRead{sel: `#a`, out: &a}, textRead{sel: `#b`, out: &bb}))
		if item != "item text" {
			t.Fatalf("read %d: a rebuilt node read as %q", i, item)
		}
		if a != bb || !strings.HasPrefix(a, "turn ") {
			t.Fatalf("read %d: #a %q and #b %q read from different states of the page", i, a, bb)
		}
	}
	var msg, hidden, until string
	b.run(t, 30*time.Second,
		pageTexts(20*time.Second, textRead{sel: `#msg`, out: &msg, mayBeEmpty: true}, textRead{sel: `#hidden`, out: &hidden, mayBeEmpty: true}),
		pageTexts(20*time.Second, textRead{sel: `#a`, out: &until, until: "turn 1"}))
	if msg != "" || hidden != "" {
		t.Errorf("an empty message read as %q, a hidden element as %q; want both empty, as chromedp.Text reads them", msg, hidden)
	}
	if !strings.HasPrefix(until, "turn 1") {
		t.Errorf("read until it says %q: %q", "turn 1", until)
	}
	// A read that cannot be satisfied says what the page shows.
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	var never string
	err := chromedp.Run(ctx, pageTexts(time.Second, textRead{sel: `#msg`, out: &never}, textRead{sel: `#nowhere`, out: &never}))
	if err == nil || !strings.Contains(err.Error(), `the page shows ["",null]`) {
		t.Errorf("an empty message and a missing element: error %v", err)
	}
}
