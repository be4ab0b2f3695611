package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/scratchpg"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/sparkrest"
	"github.com/sparkpack/sparkpack/store"
)

// TestDBWaitDecision: which errors of serve's start are waited out
// (the database is not there yet) and which fail at once (waiting cannot
// mend them), and how long serve pauses between attempts.
func TestDBWaitDecision(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	wrap := func(err error) error { // as store.Open wraps the driver's error
		return fmt.Errorf("connect to database: %w (is PostgreSQL running and --database-url right?)", err)
	}
	notFound := &net.DNSError{Err: "no such host", Name: "postgres", IsNotFound: true}
	timeout := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "i/o timeout", IsTimeout: true}}
	transient := []struct {
		name string
		err  error
	}{
		{"connection refused", wrap(refused)},
		{"name not resolving yet", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: notFound})},
		{"attempt timed out", wrap(context.DeadlineExceeded)},
		{"dial timed out", wrap(timeout)},
		{"starting up", wrap(&pq.Error{Code: "57P03", Message: "the database system is starting up"})},
		{"shutting down", wrap(&pq.Error{Code: "57P01"})},
		{"no connection slot", wrap(&pq.Error{Code: "53300"})},
		{"connection exception", wrap(&pq.Error{Code: "08006"})},
		{"reset while connecting", wrap(&net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)})},
		{"closed while connecting", wrap(io.EOF)},
		{"host unreachable", wrap(&net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EHOSTUNREACH)})},
		{"one host of several refused", wrap(fmt.Errorf("pq: could not connect to any of the hosts:\n%w", errors.Join(refused, refused)))},
	}
	fatal := []struct {
		name string
		err  error
	}{
		{"wrong password", wrap(&pq.Error{Code: "28P01", Message: "password authentication failed"})},
		{"no such role / hba", wrap(&pq.Error{Code: "28000"})},
		{"missing database", wrap(&pq.Error{Code: "3D000", Message: `database "nope" does not exist`})},
		{"failed migration", fmt.Errorf("migrate 0007: %w", &pq.Error{Code: "42P01"})},
		{"bad URL", wrap(errors.New(`missing "=" after "postgres:/x" in connection info string"`))},
		{"server without TLS", wrap(pq.ErrSSLNotSupported)},
		{"stopped", context.Canceled},
		{"anything else", errors.New("something unexpected")},
	}
	for _, c := range transient {
		if v := decideDBWait(c.err, 1, 0, time.Minute); v.Kind != dbRetry || v.Check == "" || v.Wait != dbRetryFirst {
			t.Errorf("%s: %+v, want a retry in %s saying what to check", c.name, v, dbRetryFirst)
		}
		if v := decideDBWait(c.err, 1, 0, 0); v.Kind != dbFail {
			t.Errorf("%s with --database-wait 0: %+v, want to fail at once", c.name, v)
		}
		if v := decideDBWait(c.err, 9, time.Minute, time.Minute); v.Kind != dbGiveUp || v.Check == "" {
			t.Errorf("%s after the bound: %+v, want to give up saying what to check", c.name, v)
		}
	}
	for _, c := range fatal {
		if v := decideDBWait(c.err, 1, 0, time.Hour); v.Kind != dbFail {
			t.Errorf("%s: %+v, want to fail at once", c.name, v)
		}
	}
	// The pause: 1 s, doubling, at most 5 s, and the next attempt starts
	// with at least dbAttemptMin (1 s) of the bound left.
	for _, c := range []struct {
		attempt        int
		elapsed, bound time.Duration
		want           time.Duration
	}{
		{1, 0, time.Minute, time.Second},
		{2, 0, time.Minute, 2 * time.Second},
		{3, 0, time.Minute, 4 * time.Second},
		{4, 0, time.Minute, 5 * time.Second},
		{40, 0, time.Minute, 5 * time.Second},
		{4, 55 * time.Second, time.Minute, 4 * time.Second},
		{4, 57 * time.Second, time.Minute, 2 * time.Second},
		{4, 59 * time.Second, time.Minute, 0},
		{1, 0, 3 * time.Second, time.Second},
		{2, time.Second, 3 * time.Second, time.Second},
		{3, 2 * time.Second, 3 * time.Second, 0},
	} {
		if v := decideDBWait(wrap(refused), c.attempt, c.elapsed, c.bound); v.Kind != dbRetry || v.Wait != c.want {
			t.Errorf("attempt %d at %s of %s: %+v, want a retry in %s", c.attempt, c.elapsed, c.bound, v, c.want)
		}
	}
	// Less than dbAttemptMin left: give up rather than start an attempt
	// that could not finish by the bound.
	for _, elapsed := range []time.Duration{59*time.Second + time.Millisecond, 59500 * time.Millisecond, time.Minute, 2 * time.Minute} {
		if v := decideDBWait(wrap(refused), 9, elapsed, time.Minute); v.Kind != dbGiveUp {
			t.Errorf("at %s of 1m: %+v, want to give up", elapsed, v)
		}
	}
}

// TestDBAttemptLimit: an attempt never runs past --database-wait (the
// worst case was the bound plus a whole 30 s attempt), gets at least
// dbAttemptMin, and keeps the old 30 s without a bound.
func TestDBAttemptLimit(t *testing.T) {
	for _, c := range []struct {
		elapsed, bound, want time.Duration
	}{
		{0, 0, 30 * time.Second},                                    // --database-wait 0: as before the wait
		{0, 2 * time.Minute, 30 * time.Second},                      // plenty left
		{100 * time.Second, 2 * time.Minute, 20 * time.Second},      // 20 s left
		{118 * time.Second, 2 * time.Minute, 2 * time.Second},       // 2 s left
		{119 * time.Second, 2 * time.Minute, time.Second},           // dbAttemptMin left: the last attempt
		{0, 10 * time.Second, 10 * time.Second},                     // a short bound
		{0, 500 * time.Millisecond, time.Second},                    // a bound under dbAttemptMin
		{2*time.Minute + time.Second, 2 * time.Minute, time.Second}, // (decideDBWait gives up first)
	} {
		if got := dbAttemptLimit(c.elapsed, c.bound); got != c.want {
			t.Errorf("dbAttemptLimit(%s, %s) = %s, want %s", c.elapsed, c.bound, got, c.want)
		}
	}
	// Over a whole wait, as openStoreWaiting runs it with attempts that
	// each time out (no answer): the last one ends by the bound.
	for _, bound := range []time.Duration{3 * time.Second, 10 * time.Second, 2 * time.Minute, 10 * time.Minute} {
		var elapsed time.Duration
		for attempt := 1; ; attempt++ {
			elapsed += dbAttemptLimit(elapsed, bound)
			v := decideDBWait(context.DeadlineExceeded, attempt, elapsed, bound)
			if v.Kind == dbGiveUp {
				break
			}
			if v.Kind != dbRetry || attempt > 1000 {
				t.Fatalf("bound %s, attempt %d: %+v", bound, attempt, v)
			}
			elapsed += v.Wait
		}
		if elapsed > bound {
			t.Errorf("--database-wait %s: gave up after %s of timed-out attempts, past the bound", bound, elapsed)
		}
	}
	// With attempts refused at once (1 ms), serve tries until the bound:
	// it gives up with less than dbAttemptMin of it left.
	for _, bound := range []time.Duration{3 * time.Second, 10 * time.Second, 2 * time.Minute} {
		var elapsed time.Duration
		for attempt := 1; ; attempt++ {
			elapsed += min(time.Millisecond, dbAttemptLimit(elapsed, bound))
			v := decideDBWait(context.DeadlineExceeded, attempt, elapsed, bound)
			if v.Kind == dbGiveUp {
				break
			}
			elapsed += v.Wait
		}
		if elapsed > bound || elapsed < bound-dbAttemptMin {
			t.Errorf("--database-wait %s: gave up after %s of refused attempts, want within %s before the bound", bound, elapsed, dbAttemptMin)
		}
	}
}

// TestDBWaitClassifiesTheDriversErrors: the errors store.Open really
// returns (not built by hand) fall on the right side: nothing listening
// is waited out; a malformed URL fails at once.
func TestDBWaitClassifiesTheDriversErrors(t *testing.T) {
	port := closedPort(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := store.Open(ctx, fmt.Sprintf("postgres://sparkpack@127.0.0.1:%d/sparkpack?sslmode=disable", port))
	if ok, _ := dbTransient(err); !ok {
		t.Errorf("nothing listening: %v is not waited out", err)
	}
	_, err = store.Open(ctx, "postgres://sparkpack@127.0.0.1:notaport/sparkpack?sslmode=disable")
	if ok, _ := dbTransient(err); err == nil || ok {
		t.Errorf("a malformed URL: %v is waited out (or no error)", err)
	}
}

// closedPort is a local TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// TestServeGivesUpWaitingForPostgreSQL: nothing answers at the database's
// address; serve logs each attempt with what it waits for and, once
// --database-wait has passed, exits non-zero saying what to do.
func TestServeGivesUpWaitingForPostgreSQL(t *testing.T) {
	db := fmt.Sprintf("postgres://sparkpack@127.0.0.1:%d/sparkpack?sslmode=disable", closedPort(t))
	code, _, errOut := runCmd(t, "serve", "--database-url", db, "--listen", "127.0.0.1:0", "--log-format", "json", "--database-wait", "3s")
	if code != 1 {
		t.Fatalf("serve exited %d, want 1; stderr:\n%s", code, errOut)
	}
	for _, want := range []string{"still not reachable after --database-wait 3s", "connection refused",
		"check that PostgreSQL is started", "raise --database-wait (env SPARKPACK_DATABASE_WAIT)"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	waits := logLines(errOut, "waiting for PostgreSQL")
	if len(waits) < 2 {
		t.Fatalf("%d attempts logged, want at least 2 (1 s, 2 s, ... within 3 s); stderr:\n%s", len(waits), errOut)
	}
	for i, l := range waits {
		if l["attempt"] != float64(i+1) || l["next_try_in"] == nil || l["gives_up_in"] == nil || l["database"] == nil || l["error"] == nil {
			t.Errorf("attempt line %d lacks its fields: %v", i+1, l)
		}
	}
}

// TestServeFailsAtOnceOnAMissingDatabase: PostgreSQL answers that the
// database does not exist: waiting cannot mend that, so serve fails at
// once (no attempt is retried) even with a long --database-wait.
func TestServeFailsAtOnceOnAMissingDatabase(t *testing.T) {
	u, err := url.Parse(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/no_such_database_here"
	code, _, errOut := runCmd(t, "serve", "--database-url", u.String(), "--listen", "127.0.0.1:0", "--log-format", "json", "--database-wait", "1m")
	if code != 1 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("serve exited %d, want 1 naming the missing database; stderr:\n%s", code, errOut)
	}
	if w := logLines(errOut, "waiting for PostgreSQL"); len(w) > 0 {
		t.Fatalf("a missing database was waited for: %v", w)
	}
}

// TestServeWaitsForPostgreSQLThatStartsLater: serve starts while its
// PostgreSQL is down (as under docker-compose, the database's container
// still starting); it waits, and comes up once the database does. Before
// --database-wait, serve exited at the first refused connection.
func TestServeWaitsForPostgreSQLThatStartsLater(t *testing.T) {
	if _, err := scratchpg.FindBinDir(); err != nil {
		t.Skip(err)
	}
	script, err := filepath.Abs("../../scripts/scratch-pg.sh")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sp-dbwait-") // short: the socket path must be
	if err != nil {
		t.Fatal(err)
	}
	scratch := func(verb string) string {
		t.Helper()
		out, err := exec.Command("bash", script, verb, dir).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				t.Fatalf("scratch-pg.sh %s: %v\n%s", verb, err, ee.Stderr)
			}
			t.Fatalf("scratch-pg.sh %s: %v", verb, err)
		}
		return strings.TrimSpace(string(out))
	}
	os.RemoveAll(dir) // the script makes it
	db := scratch("start")
	t.Cleanup(func() { _ = exec.Command("bash", script, "stop", dir).Run() })
	scratch("kill") // down, its port kept: the database is not up yet

	// Fixed ports (free a moment ago), so that the requests below know
	// where to go even where serve logs nothing before it serves.
	listen := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	sparkListen := fmt.Sprintf("127.0.0.1:%d", closedPort(t))
	var stderr syncbuf.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--database-url", db, "--listen", listen, "--spark-rest-listen", sparkListen,
			"--log-format", "json", "--database-wait", "5m"}, io.Discard, &stderr)
	}()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Minute)
		for !ok() {
			select {
			case code := <-done:
				t.Fatalf("serve exited %d while %s; stderr:\n%s", code, what, stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: not after 3 minutes; stderr:\n%s", what, stderr.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// serve has tried, found nothing, and says so; then the database starts.
	waitFor("waiting for the first refused attempt", func() bool { return len(logLines(stderr.String(), "waiting for PostgreSQL")) > 0 })
	first := logLines(stderr.String(), "waiting for PostgreSQL")[0]
	if !strings.Contains(fmt.Sprint(first["error"]), "connection refused") || first["attempt"] != float64(1) {
		t.Fatalf("first attempt line: %v", first)
	}
	// While it waits, every request gets an answer at once (before, the
	// port was open but nothing answered: clients hung until their own
	// timeout, and the image's HEALTHCHECK marked the container
	// unhealthy). 10 s is generous: the answer takes milliseconds.
	assertWaitingAnswers(t, listen, sparkListen)
	scratch("resume")
	var addr string
	waitFor("serving once PostgreSQL is up", func() bool {
		for _, l := range logLines(stderr.String(), "sparkpack is serving") {
			addr, _ = l["listen"].(string)
		}
		return addr != ""
	})
	if len(logLines(stderr.String(), "PostgreSQL answers; starting")) != 1 {
		t.Errorf("no line says PostgreSQL answered after the wait; stderr:\n%s", stderr.String())
	}
	resp, err := http.Get("http://" + addr + "/api/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/jobs: %d, want 200", resp.StatusCode)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d after SIGTERM's context ended; stderr:\n%s", code, stderr.String())
	}
}

// assertWaitingAnswers checks the answers of a serve waiting for
// PostgreSQL, on its API listener and its Spark REST listener.
func assertWaitingAnswers(t *testing.T, listen, sparkListen string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	get := func(method, url string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest(method, url, strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s while serve waits for PostgreSQL: %v after %s (want an answer at once)", method, url, err, time.Since(start).Round(time.Millisecond))
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, body
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{http.MethodGet, "/api/v1/jobs", http.StatusServiceUnavailable},
		{http.MethodPost, "/api/v1/jobs", http.StatusServiceUnavailable},
		{http.MethodGet, "/", http.StatusServiceUnavailable},
		{http.MethodGet, "/metrics", http.StatusServiceUnavailable},
		{http.MethodGet, "/readyz", http.StatusServiceUnavailable},
		{http.MethodGet, "/healthz", http.StatusOK},
	} {
		resp, body := get(c.method, "http://"+listen+c.path)
		var b waitingBody
		if err := json.Unmarshal(body, &b); err != nil || resp.StatusCode != c.status {
			t.Errorf("%s %s: %d %s (%v), want %d with a JSON body", c.method, c.path, resp.StatusCode, body, err, c.status)
			continue
		}
		if b.WaitingFor != "postgresql" || b.Ready || b.Attempts < 1 || b.WaitingSince == "" || b.GivesUpAt == "" ||
			!strings.Contains(b.Check, "check that PostgreSQL is started") {
			t.Errorf("%s %s: body %s lacks what serve waits for, since when, or what to check", c.method, c.path, body)
		}
		if c.status == http.StatusServiceUnavailable {
			ra, err := strconv.Atoi(resp.Header.Get("Retry-After"))
			if err != nil || ra < 1 || ra > 5 || !strings.Contains(b.Error, "waiting for PostgreSQL") {
				t.Errorf("%s %s: Retry-After %q, error %q; want 1-5 s and a message saying it waits for PostgreSQL", c.method, c.path, resp.Header.Get("Retry-After"), b.Error)
			}
		}
	}
	// The image's HEALTHCHECK (sparkpack health --path /healthz) passes:
	// the container waits as it should; its readiness does not.
	_, port, _ := net.SplitHostPort(listen)
	t.Setenv("SPARKPACK_HEALTH_PORT", port)
	t.Setenv("SPARKPACK_TLS_CERT", "")
	if err := runHealth(context.Background(), []string{"--path", "/healthz", "--timeout", "10s"}, io.Discard, io.Discard); err != nil {
		t.Errorf("the image's HEALTHCHECK while serve waits for PostgreSQL: %v, want it to pass (alive)", err)
	}
	if err := runHealth(context.Background(), []string{"--path", "/readyz", "--timeout", "10s"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("sparkpack health --path /readyz while serve waits for PostgreSQL: %v, want 503", err)
	}
	// spark-submit's create: Spark's ErrorResponse, as when the database
	// is down.
	resp, body := get(http.MethodPost, "http://"+sparkListen+"/v1/submissions/create")
	var e sparkrest.ErrorResponse
	if err := json.Unmarshal(body, &e); err != nil || resp.StatusCode != http.StatusServiceUnavailable || e.Action != sparkrest.ActionErrorResponse ||
		!strings.Contains(e.Message, "waiting for PostgreSQL") || resp.Header.Get("Retry-After") == "" {
		t.Errorf("Spark REST create while waiting: %d %s (Retry-After %q), want 503 with an ErrorResponse saying it waits for PostgreSQL",
			resp.StatusCode, body, resp.Header.Get("Retry-After"))
	}
}

// logLines returns the JSON log lines whose message starts with prefix.
func logLines(out, prefix string) []map[string]any {
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) != nil {
			continue
		}
		if msg, _ := l["msg"].(string); strings.HasPrefix(msg, prefix) {
			lines = append(lines, l)
		}
	}
	return lines
}
