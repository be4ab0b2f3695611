package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "Commands:"},
		{[]string{"bogus"}, 2, `unknown command "bogus"`},
		{[]string{"serve"}, 1, "--database-url"},
		{[]string{"serve", "--database-url", "postgres://x", "--policy", "nope"}, 1, "--policy"},
		{[]string{"serve", "--database-url", "postgres://x", "--listen", "nohost"}, 1, "--listen"},
		{[]string{"serve", "--no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"serve", "--database-url", "postgres://x", "--queue", "lifo"}, 1, "--queue"},
		{[]string{"serve", "--database-url", "postgres://x", "--power-off-after", "1m"}, 1, "--power-provider"},
		{[]string{"serve", "--database-url", "postgres://x", "--power-off-after", "1m", "--power-provider", "ipmi"}, 1, "--power-provider"},
		{[]string{"serve", "--database-url", "postgres://x", "--power-off-after", "1m", "--power-provider", "exec"}, 1, "--power-exec"},
		{[]string{"serve", "--database-url", "postgres://x", "--power-off-after", "1m", "--power-provider", "webhook"}, 1, "--power-webhook-url"},
		{[]string{"serve", "--database-url", "postgres://x", "--power-off-after", "1m", "--power-provider", "emulator", "--power-selector", "hostname=["}, 1, "--power-selector"},
		{[]string{"serve", "--database-url", "postgres://x", "--power-off-after", "1m", "--power-provider", "emulator", "--power-min-warm-cpus", "NaN"}, 1, "--power-min-warm-cpus"},
		{[]string{"serve", "--database-url", "postgres://x", "--preemption", "lru"}, 1, "--preemption"},
		{[]string{"serve", "--database-url", "postgres://x", "--preemption", "mdf", "--preempt-max-share", "1.5"}, 1, "--preempt-max-share"},
		{[]string{"serve", "--database-url", "postgres://x", "--preemption", "mdf", "--max-preemptions", "-1"}, 1, "--max-preemptions"},
		{[]string{"serve", "--database-url", "postgres://x", "--preempt-protect", "-1s"}, 1, "--preempt-protect"},
		{[]string{"submit", "--executors", "0", "--app-resource", "x", "--main-class", "a.B", "--executor-cores", "1", "--executor-memory-mb", "1024"}, 1, "executors"},
		{[]string{"version"}, 0, ""},
		{[]string{"health", "--timeout", "0"}, 1, "--timeout 0s: want a positive duration"},
		{[]string{"health", "--path", "readyz"}, 1, `--path "readyz": want a path`},
		{[]string{"health", "--path", "http://elsewhere/"}, 1, "want a path on the local sparkpack"},
		{[]string{"kill"}, 2, "give at least one job id"},
		{[]string{"kill", "--server", "http://127.0.0.1:1", "-"}, 1, `"-" is not a job`},
	}
	for _, tc := range cases {
		code, out, errOut := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: code %d, output %q%q; want %d and %q", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
}

// TestSimulateErrorsCarryOnePrefix: run prefixes a command's error with
// "sparkpack <command>: "; the simulate and mesossim packages used to add
// their own "simulate: " and "mesos-sim: " as well, so their errors read
// "sparkpack simulate: simulate: ...".
func TestSimulateErrorsCarryOnePrefix(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"simulate", "--jobs", "-1"}, "sparkpack simulate: --jobs -1 must be >= 0\n"},
		{[]string{"simulate", "--hour", "24"}, "sparkpack simulate: --hour 24 not in 0..23\n"},
		{[]string{"simulate", "--jobs", "2", "--sample", "3"}, "sparkpack simulate: use --jobs 2 (the first jobs of each window) or --sample 3 (jobs drawn across the window), not both\n"},
		// mesos-sim's errors too.
		{[]string{"mesos-sim", "--cluster", "/nonexistent/c.json", "--listen", "127.0.0.1:0"}, "sparkpack mesos-sim: cluster \"/nonexistent/c.json\" is neither a built-in cluster (thesis14) nor a readable file: open /nonexistent/c.json: no such file or directory\n"},
		{[]string{"mesos-sim", "--listen", "nohostport"}, "sparkpack mesos-sim: --listen: address nohostport: missing port in address\n"},
	} {
		code, _, errOut := runCmd(t, c.args...)
		if code != 1 || errOut != c.want {
			t.Errorf("%v: code %d, stderr %q; want 1 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestServeAndSubmit(t *testing.T) {
	url := pgtest.URL(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, serveConfig{databaseURL: url, listen: ln.Addr().String(), policy: "bfd", logLevel: "info", shutdownTimeout: 5 * time.Second}, log, ln, ready)
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	file := filepath.Join(t.TempDir(), "job.json")
	os.WriteFile(file, []byte(`{"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":2,"executorCores":1,"executorMemoryMB":1024}`), 0o644)
	code, out, errOut := runCmd(t, "submit", "--server", "http://"+addr, "-f", file, "--label", "team=x", "--name", "from-cli")
	if code != 0 {
		t.Fatalf("submit: %d %s", code, errOut)
	}
	id := strings.TrimSpace(out)
	if len(id) != 36 {
		t.Fatalf("submit printed %q, want a job id", out)
	}
	// --follow with a timeout: the job waits (no framework yet), so it times out, naming the state.
	code, _, errOut = runCmd(t, "submit", "--server", "http://"+addr, "--app-resource", "local:///a.jar", "--main-class", "a.B",
		"--executors", "1", "--executor-cores", "1", "--executor-memory-mb", "1024", "--follow", "--poll", "100ms", "--timeout", "300ms")
	if code != 1 || !strings.Contains(errOut, "SUBMITTED") {
		t.Fatalf("follow: %d %q", code, errOut)
	}
	// Each state once: submit's own line, not again as "SUBMITTED after 0s".
	if n := strings.Count(errOut, ": SUBMITTED"); n != 1 {
		t.Fatalf("follow printed the state %d times, want once: %q", n, errOut)
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `sparkpack_jobs{state="SUBMITTED"} 2`) {
		t.Fatalf("/metrics lacks the job count:\n%s", body)
	}
	// sparkpack kill takes the DELETE path: a waiting job is cancelled;
	// a second kill finds it ended (said, not an error); an unknown job
	// is an error.
	code, out, errOut = runCmd(t, "kill", "--server", "http://"+addr, id)
	if code != 0 || !strings.Contains(out, "job "+id+": CANCELLED") {
		t.Fatalf("kill: %d %q %q", code, out, errOut)
	}
	code, _, errOut = runCmd(t, "kill", "--server", "http://"+addr, id, "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f")
	if code != 1 || !strings.Contains(errOut, "already ended (CANCELLED); nothing to cancel (409)") || !strings.Contains(errOut, "no job 6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f") || !strings.Contains(errOut, "1 of 2 jobs") {
		t.Fatalf("kill of an ended and an unknown job: %d %q", code, errOut)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:secret@h/db":        "postgres://u:xxxxx@h/db",
		"postgres://u@h/db":               "postgres://u@h/db",
		"host=h user=u password=secret x": "host=h user=u password=xxxxx x",
	} {
		if got := redactURL(in); got != want {
			t.Errorf("redactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestNaturalLess(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"agent-2", "agent-10", true},
		{"agent-10", "agent-2", false},
		{"agent-01", "agent-02", true},
		{"a", "a", false},
		{"a", "ab", true},
		{"b1", "a2", false},
	} {
		if got := naturalLess(c.a, c.b); got != c.want {
			t.Errorf("naturalLess(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

// TestServeRefusesAMissingPowerProgram: a power program that does not
// exist is an error at start, naming it, not a failure of every
// leadership term later.
func TestServeRefusesAMissingPowerProgram(t *testing.T) {
	code, _, errOut := runCmd(t, "serve", "--database-url", pgtest.URL(t), "--listen", "127.0.0.1:0",
		"--mesos-master", "http://127.0.0.1:1", "--power-off-after", "1m", "--power-provider", "exec",
		"--power-exec", "/nonexistent/power-program")
	if code != 1 || !strings.Contains(errOut, "/nonexistent/power-program") {
		t.Fatalf("%d %q: want an error naming the program", code, errOut)
	}
}

// Help that was asked for goes to standard output with exit 0; help
// printed because of a mistake goes to standard error (issue 28, item 5).
func TestHelpGoesToStdout(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"-h"}, {"jobs", "--help"}, {"serve", "-h"}, {"simulate", "--help"}, {"cancel", "--help"}} {
		code, out, errOut := runCmd(t, args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "sparkpack") {
			t.Errorf("%v: code %d, stdout %q, stderr %q; want 0 and the help on stdout only", args, code, out, errOut)
		}
	}
	code, out, errOut := runCmd(t)
	if code != 2 || out != "" || !strings.Contains(errOut, "Commands:") {
		t.Errorf("no command: code %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = runCmd(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "sparkpack ") {
		t.Errorf("--version: code %d, stdout %q", code, out)
	}
}

// TestServeRefusesAMalformedEnvironmentValue: an environment variable
// standing in for a flag, with a value the flag cannot take, is an error
// naming the variable and the flag. It used to fall back to the default
// silently: SPARKPACK_LEADER_LEASE=10 ran with a 4 s lease, and
// SPARKPACK_PROTECT_READS=yes left every read open.
func TestServeRefusesAMalformedEnvironmentValue(t *testing.T) {
	for _, c := range []struct{ env, value, flag string }{
		{"SPARKPACK_LEADER_LEASE", "10", "--leader-lease"},
		{"SPARKPACK_PROTECT_READS", "yes", "--protect-reads"},
		{"SPARKPACK_POWER_MIN_WARM_CPUS", "eight", "--power-min-warm-cpus"},
		{"SPARKPACK_MAX_PREEMPTIONS", "3.5", "--max-preemptions"},
		{"SPARKPACK_POWER_WARM_POOL", "off", "--power-warm-pool"},
	} {
		t.Run(c.env, func(t *testing.T) {
			t.Setenv(c.env, c.value)
			code, _, errOut := runCmd(t, "serve", "--database-url", "postgres://127.0.0.1:1/none", "--listen", "127.0.0.1:0")
			if code != 2 || !strings.Contains(errOut, c.env+`="`+c.value+`"`) || !strings.Contains(errOut, c.flag) {
				t.Fatalf("%s=%s: code %d, stderr %q; want 2 and an error naming the variable and %s", c.env, c.value, code, errOut, c.flag)
			}
		})
	}
	// The same variable, well formed or overridden on the command line,
	// is no error (the run then fails later, on the unreachable database).
	t.Setenv("SPARKPACK_LEADER_LEASE", "10")
	if code, _, errOut := runCmd(t, "serve", "--database-url", "postgres://127.0.0.1:1/none", "--listen", "127.0.0.1:0",
		"--leader-lease", "10s", "--log-level", "error", "--database-wait", "0"); strings.Contains(errOut, "SPARKPACK_LEADER_LEASE") {
		t.Fatalf("a flag given on the command line overrides the variable: code %d, stderr %q", code, errOut)
	}
	t.Setenv("SPARKPACK_LEADER_LEASE", "")
	if code, _, errOut := runCmd(t, "serve", "--database-url", "postgres://127.0.0.1:1/none", "--listen", "127.0.0.1:0",
		"--log-level", "error", "--database-wait", "0"); strings.Contains(errOut, "SPARKPACK_LEADER_LEASE") {
		t.Fatalf("an empty variable counts as unset: code %d, stderr %q", code, errOut)
	}
}

// TestServeWarnsOfPowerSettingsWithoutPowerManagement: power settings
// given without --power-off-after (a provider and its program, say) are
// named in a warning that says how to turn power management on. They
// were accepted and did nothing, without a word.
func TestServeWarnsOfPowerSettingsWithoutPowerManagement(t *testing.T) {
	var c serveConfig
	fs := serveFlags("serve", io.Discard, &c)
	if err := parseFlags(fs, []string{"--database-url", pgtest.URL(t), "--listen", "127.0.0.1:0",
		"--power-provider", "exec", "--power-exec", "/bin/true"}); err != nil {
		t.Fatal(err)
	}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", c.listen)
	if err != nil {
		t.Fatal(err)
	}
	log, hook := test.NewNullLogger()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan string, 1), make(chan error, 1)
	go func() { done <- serve(ctx, c, log, ln, ready) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("serve did not start")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.WarnLevel && strings.Contains(e.Message, "--power-off-after") {
			if got := fmt.Sprint(e.Data["flags"]); got != "[--power-provider --power-exec]" {
				t.Fatalf("the warning names %s, want --power-provider and --power-exec", got)
			}
			return
		}
	}
	t.Fatal("no warning that the power settings do nothing without --power-off-after")
}

// TestMetricsSayTheDatabaseIsDown: /metrics of a serve whose PostgreSQL
// went away has sparkpack_database_up 0 (1 before, and again after it
// is back). An outage used to show only as sparkpack_jobs missing from
// the scrape, which no alert can tell from an instance not scraped.
func TestMetricsSayTheDatabaseIsDown(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL server of its own")
	}
	pg := pgtest.Private(t)
	base := startServeOn(t, pg.URL)
	up := func() string {
		t.Helper()
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "sparkpack_database_up "); ok {
				return v
			}
		}
		t.Fatalf("/metrics (%d) has no sparkpack_database_up", resp.StatusCode)
		return ""
	}
	if v := up(); v != "1" {
		t.Fatalf("with the database up: sparkpack_database_up %s, want 1", v)
	}
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	if v := up(); v != "0" {
		t.Fatalf("with the database down: sparkpack_database_up %s, want 0", v)
	}
	if err := pg.Resume(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for up() != "1" {
		if time.Now().After(deadline) {
			t.Fatal("sparkpack_database_up not 1 within 60 s of the database's return")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestServeRefusesNegativeDurations: a negative interval or timeout is an
// error naming the flag; it was taken as the default (or as off) silently.
func TestServeRefusesNegativeDurations(t *testing.T) {
	for _, flag := range []string{"--agents-refresh", "--launch-timeout", "--offer-hold", "--leak-sweep", "--tls-reload-interval",
		"--leader-lease", "--leader-renew", "--leader-retry", "--model-refresh", "--lost-job-rescan", "--shutdown-timeout", "--database-wait"} {
		code, _, errOut := runCmd(t, "serve", "--database-url", "postgres://127.0.0.1:1/none", "--listen", "127.0.0.1:0", flag, "-5s")
		if code != 1 || !strings.Contains(errOut, flag+" -5s") {
			t.Errorf("%s -5s: code %d, stderr %q; want 1 and an error naming the flag", flag, code, errOut)
		}
	}
}
