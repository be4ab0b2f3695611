package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
)

// TestDecideRetry: which failed requests are tried again, after how long.
// Bounded by time (--retry-for): a refused connection and a 503 (its
// Retry-After when longer than the backoff) are, never past the bound;
// a 4xx is not (but a 429 that says when to come back). Bounded by count
// (the other commands), a refused connection is not.
func TestDecideRetry(t *testing.T) {
	refusedErr := &unreachable{base: "http://127.0.0.1:1", err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	dnsErr := &unreachable{base: "http://nohost:1", err: &net.DNSError{Err: "no such host", Name: "nohost"}}
	status := func(code int, after time.Duration) error {
		return &httpError{Status: code, Msg: "x", retryAfter: after}
	}
	timed := retryPolicy{retryFor: 30 * time.Second}
	counted := retryPolicy{retries: 2}
	for _, c := range []struct {
		name    string
		err     error
		attempt int
		elapsed time.Duration
		p       retryPolicy
		retry   bool
		wait    time.Duration
	}{
		{"success", nil, 0, 0, timed, false, 0},
		{"refused, first", refusedErr, 0, 0, timed, true, 500 * time.Millisecond},
		{"refused, backoff doubles", refusedErr, 2, 5 * time.Second, timed, true, 2 * time.Second},
		{"refused, backoff at most 5s", refusedErr, 9, 10 * time.Second, timed, true, 5 * time.Second},
		{"refused, not past the bound", refusedErr, 9, 28 * time.Second, timed, true, 2 * time.Second},
		{"refused, bound spent", refusedErr, 9, 30 * time.Second, timed, false, 0},
		{"refused, --retry-for 0", refusedErr, 0, 0, retryPolicy{}, false, 0},
		{"refused, by count", refusedErr, 0, 0, counted, false, 0},
		{"unknown host", dnsErr, 0, 0, timed, false, 0},
		{"503 with Retry-After", status(503, 3*time.Second), 0, 0, timed, true, 3 * time.Second},
		{"503 without", status(503, 0), 1, 0, timed, true, time.Second},
		{"502", status(502, 0), 0, 0, timed, true, 500 * time.Millisecond},
		{"400", status(400, 0), 0, 0, timed, false, 0},
		{"401", status(401, 0), 0, 0, timed, false, 0},
		{"403", status(403, 0), 0, 0, timed, false, 0},
		{"404", status(404, 0), 0, 0, timed, false, 0},
		{"409", status(409, 0), 0, 0, timed, false, 0},
		{"422", status(422, 0), 0, 0, timed, false, 0},
		{"429 without Retry-After (a cap)", status(429, 0), 0, 0, timed, false, 0},
		{"429 with Retry-After", status(429, 2*time.Second), 0, 0, timed, true, 2 * time.Second},
		{"500", status(500, 0), 0, 0, timed, false, 0},
		{"503 by count", status(503, 0), 1, 0, counted, true, time.Second},
		{"503 by count, spent", status(503, 0), 2, 0, counted, false, 0},
		{"reset", fmt.Errorf("talking: %w", syscall.ECONNRESET), 0, 0, timed, true, 500 * time.Millisecond},
		{"other", errors.New("boom"), 0, 0, timed, false, 0},
	} {
		retry, wait := decideRetry(c.err, c.attempt, c.elapsed, c.p)
		if retry != c.retry || wait != c.wait {
			t.Errorf("%s: retry %v after %s, want %v after %s", c.name, retry, wait, c.retry, c.wait)
		}
	}
}

// TestSubmitWaitsForALateServe: submit against a server that is not up
// yet (a serve restarting) says it tries again and, once serve listens,
// submits the job: exactly one job is stored. With --retry-for 0 it
// fails at once.
func TestSubmitWaitsForALateServe(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: connection refused
	server := "http://" + addr

	if code, _, errOut := runCmd(t, append([]string{"submit", "--server", server, "--retry-for", "0", "--executor-memory", "1g"}, jobFlags...)...); code == 0 ||
		!strings.Contains(errOut, "cannot reach sparkpack") || strings.Contains(errOut, "trying again") {
		t.Fatalf("--retry-for 0 against nothing: exit %d, %q; want a failure at once", code, errOut)
	}

	var stderr syncbuf.Buffer
	var stdout strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), append([]string{"submit", "--server", server, "--retry-for", "5m", "--executor-memory", "1g"}, jobFlags...), &stdout, &stderr)
	}()
	// serve starts once submit said it tries again.
	deadline := time.Now().Add(2 * time.Minute)
	for !strings.Contains(stderr.String(), "trying again") {
		if time.Now().After(deadline) {
			t.Fatalf("submit said nothing about trying again: %q", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() {
		served <- serve(ctx, serveConfig{databaseURL: pgtest.URL(t), listen: addr, policy: "bfd", logLevel: "info", shutdownTimeout: 5 * time.Second}, log, ln, nil)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	var code int
	select {
	case code = <-done:
	case <-time.After(5 * time.Minute):
		t.Fatalf("submit did not end; stderr %q", stderr.String())
	}
	errOut := stderr.String()
	if code != 0 || !strings.Contains(errOut, "is not answering (connect: connection refused); trying again in") || !strings.Contains(errOut, "left of --retry-for 5m0s") {
		t.Fatalf("submit to a late serve: exit %d, stdout %q, stderr %q", code, stdout.String(), errOut)
	}
	id := strings.TrimSpace(stdout.String())
	resp, err := http.Get(server + "/api/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if n := strings.Count(string(b), `"id":"`); n != 1 || !strings.Contains(string(b), `"id":"`+id+`"`) {
		t.Fatalf("%d jobs stored, want exactly %s: %s", n, id, b)
	}
}
