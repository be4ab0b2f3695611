package main

import (
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// startServeTeams runs serve in-process with a teams file; it returns the
// API's URL, or the error serve stopped with at start.
func startServeTeams(t *testing.T, teamsFile string) (string, error) {
	t.Helper()
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
		done <- serve(ctx, serveConfig{databaseURL: pgtest.URL(t), listen: ln.Addr().String(), policy: "bfd", logLevel: "info",
			shutdownTimeout: 5 * time.Second, teamsFile: teamsFile}, log, ln, ready)
	}()
	select {
	case addr := <-ready:
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
		})
		return "http://" + addr, nil
	case err := <-done:
		cancel()
		return "", err
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve did not start")
	}
	return "", nil
}

// TestServeTeams: serve --teams refuses a bad file naming the line; with a
// good one, a team's max-waiting refuses its next job (the CLI says why)
// and sparkpack jobs --team lists one team's jobs.
func TestServeTeams(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("analytics max-waiting=1\nml max-cpus=-3\n"), 0o644)
	if _, err := startServeTeams(t, bad); err == nil || !strings.Contains(err.Error(), "line 2: team ml: max-cpus=-3: must not be negative") {
		t.Fatalf("serve with a bad teams file: %v", err)
	}
	good := filepath.Join(dir, "teams")
	os.WriteFile(good, []byte("analytics max-waiting=1\n"), 0o644)
	server, err := startServeTeams(t, good)
	if err != nil {
		t.Fatal(err)
	}
	sub := func(extra ...string) (int, string, string) {
		return runCmd(t, append(append([]string{"submit", "--server", server, "--executor-memory", "1g"}, jobFlags...), extra...)...)
	}
	code, out, errOut := sub("--label", "team=analytics")
	if code != 0 {
		t.Fatalf("first analytics job: %d %s", code, errOut)
	}
	analytics := strings.TrimSpace(out)
	if code, _, errOut := sub("--label", "team=analytics"); code != 1 || !strings.Contains(errOut, "team analytics already has 1 jobs waiting") {
		t.Fatalf("second analytics job: %d %q", code, errOut)
	}
	code, out, _ = sub()
	if code != 0 {
		t.Fatal("a job without a team")
	}
	none := strings.TrimSpace(out)
	code, out, _ = runCmd(t, "jobs", "--server", server, "--team", "analytics")
	if code != 0 || !strings.Contains(out, analytics) || strings.Contains(out, none) {
		t.Fatalf("jobs --team analytics: %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "jobs", "--server", server, "--team=")
	if code != 0 || strings.Contains(out, analytics) || !strings.Contains(out, none) {
		t.Fatalf("jobs --team=: %d\n%s", code, out)
	}
}
