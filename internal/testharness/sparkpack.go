package testharness

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Sparkpack is a running `sparkpack serve`.
type Sparkpack struct {
	Cmd *exec.Cmd
	// API is the base URL of its REST API (http://127.0.0.1:port).
	API  string
	mu   sync.Mutex
	logs bytes.Buffer
	done chan error
}

// StartTimeout bounds the wait for `sparkpack serve` to say it serves.
const StartTimeout = 60 * time.Second

// Serve runs `sparkpack serve` (binary bin) against the Mesos master at
// masterURL (real or emulated) and the database at dbURL, with JSON logs
// at debug level, an ephemeral API port, a 200 ms agents refresh, no API
// tokens, and the extra flags after those. It returns once the process
// logs that it serves (and fails the test if it does not within
// StartTimeout). At the test's end the process is stopped (SIGTERM, then
// SIGKILL); the test fails if the race detector fired in it (a binary
// built with -race), and a failed test logs its last log lines.
func Serve(t testing.TB, bin, masterURL, dbURL string, extra ...string) *Sparkpack {
	t.Helper()
	args := append([]string{"serve", "--listen", "127.0.0.1:0", "--database-url", dbURL, "--mesos-master", masterURL,
		"--log-format", "json", "--log-level", "debug", "--agents-refresh", "200ms"}, extra...)
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "SPARKPACK_TOKENS=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Sparkpack{Cmd: cmd, done: make(chan error, 1)}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.logs.WriteString(line + "\n")
			p.mu.Unlock()
			if l, ok := servingAt(line); ok {
				select {
				case addr <- l:
				default:
				}
			}
		}
		p.done <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		p.API = "http://" + a
	case <-time.After(StartTimeout):
		p.Kill()
		t.Fatalf("sparkpack did not start within %s; its log:\n%s", StartTimeout, p.LogText())
	case err := <-p.done:
		t.Fatalf("sparkpack exited at start (%v); its log:\n%s", err, p.LogText())
	}
	t.Cleanup(func() {
		p.Stop()
		if strings.Contains(p.LogText(), "WARNING: DATA RACE") {
			t.Errorf("the race detector fired in sparkpack")
		}
		if t.Failed() {
			t.Logf("sparkpack log (last 150 lines but requests):\n%s", Tail(WithoutRequests(p.LogText()), 150))
		}
	})
	return p
}

// servingAt reads the API address from the log line that says sparkpack
// serves.
func servingAt(line string) (string, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return "", false
	}
	l, ok := m["listen"].(string)
	return l, ok && strings.Contains(fmt.Sprint(m["msg"]), "sparkpack is serving")
}

// LogText is everything the process logged so far.
func (p *Sparkpack) LogText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.logs.String()
}

// Kill is SIGKILL: no shutdown code runs.
func (p *Sparkpack) Kill() {
	if p.Cmd.ProcessState == nil {
		_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	}
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// Stop is SIGTERM (a graceful shutdown), then SIGKILL after 20 s.
func (p *Sparkpack) Stop() {
	if p.Cmd.ProcessState != nil {
		return
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(20 * time.Second):
		p.Kill()
	}
}

// WithoutRequests drops the access log lines from a JSON log.
func WithoutRequests(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, `"msg":"request"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// Warnings keeps the lines of a JSON log at level warning or error.
func Warnings(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, `"level":"warning"`) || strings.Contains(l, `"level":"error"`) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
