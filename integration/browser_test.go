package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds Chromium, installing Debian's package when running as
// root. It skips the test, loudly, only where it cannot.
func chromiumPath(t *testing.T) string {
	t.Helper()
	find := func() string {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
			if p, err := exec.LookPath(name); err == nil {
				return p
			}
		}
		return ""
	}
	if p := find(); p != "" {
		return p
	}
	if os.Geteuid() == 0 {
		t.Log("Chromium not found; installing Debian's chromium package")
		cmd := exec.Command("bash", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("apt-get install chromium failed: %v\n%s", err, out)
		}
		if p := find(); p != "" {
			return p
		}
	}
	t.Skip("\n\n*** SKIPPING BROWSER TEST: no Chromium, and it cannot be installed here. Run as root, or: sudo apt-get install -y chromium ***\n")
	return ""
}

// browser starts a headless Chromium with the flags this sandbox needs and
// collects console errors, uncaught exceptions and the security errors
// (Content-Security-Policy violations) the browser reports.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	profile, err := os.MkdirTemp("", "sparkpack-chromium")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancelC()
		cancelA()
		// Chromium may still be flushing its profile; a later attempt or
		// the OS cleans what is left.
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	b := &browser{ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value))
				}
				b.mu.Lock()
				b.errors = append(b.errors, "console.error: "+strings.Join(parts, " "))
				b.mu.Unlock()
			}
		case *cdplog.EventEntryAdded:
			// What the browser itself reports as an error of the page's
			// security (a Content-Security-Policy violation: an inline
			// handler or script it blocked). Network errors (a 401 the
			// page handles) are not counted.
			if e.Entry.Level == cdplog.LevelError && (e.Entry.Source == cdplog.SourceSecurity || e.Entry.Source == cdplog.SourceViolation) {
				b.mu.Lock()
				b.errors = append(b.errors, "browser ("+string(e.Entry.Source)+"): "+e.Entry.Text)
				b.mu.Unlock()
			}
		case *runtime.EventExceptionThrown:
			b.mu.Lock()
			b.errors = append(b.errors, "exception: "+e.ExceptionDetails.Error())
			b.mu.Unlock()
		}
	})
	if err := chromedp.Run(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return b
}

func (b *browser) run(t *testing.T, timeout time.Duration, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// screenshot saves a PNG under $SPARKPACK_ARTIFACTS (default artifacts/ at
// the repository root) and returns its path.
func (b *browser) screenshot(t *testing.T, name string) string {
	t.Helper()
	dir := os.Getenv("SPARKPACK_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var png []byte
	b.run(t, 20*time.Second, chromedp.FullScreenshot(&png, 100))
	path := filepath.Join(dir, fmt.Sprintf("%s.png", name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// textRead names one element whose text pageTexts reads.
type textRead struct {
	sel string  // CSS selector; the first match is read
	out *string // where its innerText goes
	// until: wait until the text contains this; "" waits for any non-empty
	// text.
	until string
	// mayBeEmpty: the element being there is enough; an empty text (or
	// the element not rendered, which chromedp.Text also reads as "") is an
	// answer too. For a message element that is legitimately empty.
	mayBeEmpty bool
}

// readTextsJS reads the elements of reads in one evaluation, so that they
// are consistent with each other and with one state of the page. It
// returns false (poll again) until each element is there and its text is
// what the read waits for; with report, it returns what the page shows
// now (null for a missing element), whatever it is.
const readTextsJS = `(reads, report) => {
	const out = [];
	for (const r of reads) {
		const e = document.querySelector(r.sel);
		if (!e) { if (report) { out.push(null); continue; } return false; }
		const rendered = !!(e.offsetWidth || e.offsetHeight || e.getClientRects().length);
		const text = rendered ? e.innerText : "";
		if (!report && !r.mayBeEmpty && (text === "" || !text.includes(r.until))) return false;
		out.push(text);
	}
	return out;
}`

// pageTexts reads the innerText of several elements (the text
// chromedp.Text gives) in ONE in-page evaluation, polled until each read
// is satisfied or timeout passes. chromedp.Text resolves a node, then reads
// its text in a second round trip: the dashboard rebuilds its containers
// at every refresh, and a node replaced in between reads as "" (or fails
// the run). On a timeout the error says what the page showed then.
func pageTexts(timeout time.Duration, reads ...textRead) chromedp.Action {
	return chromedp.ActionFunc(func(ctx context.Context) error {
		type arg struct {
			Sel        string `json:"sel"`
			Until      string `json:"until"`
			MayBeEmpty bool   `json:"mayBeEmpty"`
		}
		args := make([]arg, len(reads))
		for i, r := range reads {
			args[i] = arg{Sel: r.sel, Until: r.until, MayBeEmpty: r.mayBeEmpty}
		}
		var got []string
		err := chromedp.PollFunction(readTextsJS, &got, chromedp.WithPollingArgs(args, false),
			chromedp.WithPollingTimeout(timeout)).Do(ctx)
		if err == nil && len(got) != len(reads) {
			err = fmt.Errorf("%d texts for %d elements", len(got), len(reads))
		}
		if err != nil {
			want, _ := json.Marshal(args)
			var now []*string
			if rerr := chromedp.PollFunction(readTextsJS, &now, chromedp.WithPollingArgs(args, true),
				chromedp.WithPollingTimeout(5*time.Second)).Do(ctx); rerr != nil {
				return fmt.Errorf("read the text of %s: %w", want, err)
			}
			shown, _ := json.Marshal(now)
			return fmt.Errorf("read the text of %s: %w; the page shows %s", want, err, shown)
		}
		for i, r := range reads {
			*r.out = got[i]
		}
		return nil
	})
}

// pageText reads the innerText of the first element matching sel in one
// in-page evaluation, once it is there, rendered and its text non-empty
// (see pageTexts).
func pageText(sel string, out *string, timeout time.Duration) chromedp.Action {
	return pageTexts(timeout, textRead{sel: sel, out: out})
}
