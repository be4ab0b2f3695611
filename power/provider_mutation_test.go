package power

// Tests written from the mutants scripts/mutation.sh found alive in
// provider.go (docs/testing.md, "Mutation testing"); expected values by
// hand.

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEnvName: an attribute's name in the environment keeps A-Z (after
// upper-casing) and 0-9, both ends included, and turns everything else
// into '_': the characters just outside the ranges ('@' before A, '['
// after Z, '/' before 0, ':' after 9) and '-', '.' below '0'.
func TestEnvName(t *testing.T) {
	for in, want := range map[string]string{
		"instance_type": "INSTANCE_TYPE",
		"AZaz09":        "AZAZ09",
		"@[/:":          "____",
		"zone-0.9":      "ZONE_0_9",
		"a9Z0b":         "A9Z0B",
	} {
		if got := envName(in); got != want {
			t.Errorf("envName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTailString: a string of at most n characters (trimmed) comes back
// whole; a longer one is cut to its last n, after "...".
func TestTailString(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abcde", 5, "abcde"},
		{"  abcde\n", 5, "abcde"},
		{"abcdef", 5, "...bcdef"},
		{"abcd", 5, "abcd"},
		{"", 5, ""},
	} {
		if got := tailString(c.s, c.n); got != c.want {
			t.Errorf("tailString(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// TestExecProviderDoesNotWaitForOrphans: a program that exits but leaves
// a process holding its output (a background job of the script) does not
// hold the power call until that process ends: the pipes are closed a few
// seconds (WaitDelay, 5 s) after the program exited, and the call fails
// ("WaitDelay expired"). The orphan sleeps 60 s; the call must return
// well before (40 s, a bound far from both figures).
func TestExecProviderDoesNotWaitForOrphans(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	prog := script(t, "sleep 60 &\necho $! > "+pidFile+"\nexit 0\n")
	t.Cleanup(func() {
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	p, err := NewExecProvider(prog, nil, time.Minute, quiet())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = p.PowerOff(context.Background(), target)
	if took := time.Since(start); took > 40*time.Second {
		t.Fatalf("the call waited %s for the program's orphan", took)
	}
	if err == nil || !strings.Contains(err.Error(), "WaitDelay") {
		t.Fatalf("err %v, want the pipes closed after WaitDelay", err)
	}
}

// TestWebhookDefaultTimeout: a webhook provider built without a timeout
// waits 30 s (the documented default), and a call to an answering server
// succeeds (a timeout of 0 would fail every call at once).
func TestWebhookDefaultTimeout(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	p, err := NewWebhookProvider(srv.URL, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p.Timeout != 30*time.Second || p.Client.Timeout != 30*time.Second {
		t.Fatalf("timeouts %s, %s; want 30s", p.Timeout, p.Client.Timeout)
	}
	if err := p.PowerOn(context.Background(), target); err != nil {
		t.Fatal(err)
	}
}

// TestProviderNames: a webhook's name shows its URL without the user's
// credentials and the query (where tokens hide); the emulator's is fixed.
func TestProviderNames(t *testing.T) {
	p, err := NewWebhookProvider("https://ops:s3cret@power.example.com/hooks/spark?token=abc", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := p.Name(), "webhook https://power.example.com/hooks/spark"; got != want {
		t.Fatalf("Name() = %q, want %q", got, want)
	}
	if got := redact("http://[::1"); got != "(bad url)" {
		t.Fatalf("redact of a bad url = %q", got)
	}
}

// TestEmulatorProviderURL: the emulator is reached over http or https
// only, at a host; a trailing slash is dropped; its calls have a time
// limit (a hung emulator does not hold the power manager forever).
func TestEmulatorProviderURL(t *testing.T) {
	for _, ok := range []string{"http://sim:5050", "https://sim:5050/"} {
		p, err := NewEmulatorProvider(ok)
		if err != nil {
			t.Errorf("%q: %v", ok, err)
			continue
		}
		if p.BaseURL != strings.TrimSuffix(ok, "/") {
			t.Errorf("%q: base %q", ok, p.BaseURL)
		}
		if p.Client.Timeout <= 0 || p.Client.Timeout > time.Minute {
			t.Errorf("%q: client timeout %s, want a limit of at most a minute", ok, p.Client.Timeout)
		}
	}
	for _, bad := range []string{"", "ftp://sim", "http://", "://", "sim:5050"} {
		if _, err := NewEmulatorProvider(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestExecDefaultTimeout: an exec provider built without a timeout gives
// its program 2 minutes (the documented default), so a quick program
// succeeds (a timeout of 0 would fail every call at once).
func TestExecDefaultTimeout(t *testing.T) {
	p, err := NewExecProvider(script(t, "exit 0\n"), nil, 0, quiet())
	if err != nil {
		t.Fatal(err)
	}
	if p.Timeout != 2*time.Minute {
		t.Fatalf("timeout %s, want 2m", p.Timeout)
	}
	if err := p.PowerOn(context.Background(), target); err != nil {
		t.Fatal(err)
	}
}

// TestProgramErrorExit: a failed run's ProgramError has the program's exit
// status when it exited by itself, and -1 when it did not (it could not
// start, was killed, or timed out: Exit's comment); its log fields have an
// exit field only in the first case. The timeout (200 ms) is far below
// the hanging program's 30 s.
func TestProgramErrorExit(t *testing.T) {
	for _, c := range []struct {
		name    string
		body    string // "" for a program removed before the run
		timeout time.Duration
		exit    int
		err     string // in the error
	}{
		{"exits 3", "exit 3\n", time.Minute, 3, "exit status 3"},
		{"exits 1", "exit 1\n", time.Minute, 1, "exit status 1"},
		{"cannot start", "", time.Minute, -1, "no such file"},
		{"killed by a signal", "kill -9 $$\n", time.Minute, -1, "signal: killed"},
		{"timed out", "exec sleep 30\n", 200 * time.Millisecond, -1, "timed out after 200ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prog := script(t, c.body)
			p, err := NewExecProvider(prog, nil, c.timeout, quiet())
			if err != nil {
				t.Fatal(err)
			}
			if c.body == "" {
				if err := os.Remove(prog); err != nil {
					t.Fatal(err)
				}
			}
			err = p.PowerOn(context.Background(), target)
			pe, ok := err.(*ProgramError)
			if !ok {
				t.Fatalf("err %v (%T), want a *ProgramError", err, err)
			}
			if pe.Exit != c.exit || !strings.Contains(pe.Error(), c.err) {
				t.Errorf("exit %d, error %q; want exit %d, an error saying %q", pe.Exit, pe.Error(), c.exit, c.err)
			}
			exit, has := pe.Fields()["exit"]
			if has != (c.exit >= 0) || (has && exit != c.exit) {
				t.Errorf("log fields %v: exit %v (present %v), want it only for an exit status (%d)", pe.Fields(), exit, has, c.exit)
			}
		})
	}
}

// TestProgramErrorOutputTails: a failed run's error carries the last 300
// bytes of the program's output (after "..."), its log fields the last
// 2000: an output of 2500 bytes, each a digit of its position so that a
// cut in the wrong place shows.
func TestProgramErrorOutputTails(t *testing.T) {
	var b strings.Builder
	for i := range 2500 {
		b.WriteByte(byte('0' + i%10))
	}
	out := b.String()
	pe := &ProgramError{Program: "/p", Action: "on", AgentID: "S1", Exit: 3, Output: out, Err: errors.New("exit status 3")}
	if want := "/p on S1: exit status 3; output: ..." + out[2200:]; pe.Error() != want {
		t.Errorf("error %q (%d bytes), want the last 300 bytes of the output (%d bytes)", pe.Error(), len(pe.Error()), len(want))
	}
	if got, want := pe.Fields()["output"], "..."+out[500:]; got != want {
		t.Errorf("output field of %d bytes, want the last 2000 bytes after \"...\"", len(got.(string)))
	}
}
