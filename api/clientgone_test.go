package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
)

// TestClientGoneIsNotAServerError: a client that gives up while the store
// reads for it (its timeout, a closed page) cancels the read; that is not
// a server fault. It was answered 500 and logged at error level ("read
// the leadership: context canceled", seen in the chaos suite's split
// brains, where the harness' 2 s timeout gave up on a stopped leader):
// an operator's 5xx alerts and error logs then fire for clients that went
// away. It is now logged as such, without an error, and the access log
// says 499 (the client closed the request). A database timeout stays a
// 503 with Retry-After.
func TestClientGoneIsNotAServerError(t *testing.T) {
	var logs syncbuf.Buffer
	log := logrus.New()
	log.SetOutput(&logs)
	log.SetFormatter(&logrus.JSONFormatter{})
	started := make(chan struct{}, 1)
	leader := func(ctx context.Context) (any, error) {
		started <- struct{}{}
		<-ctx.Done() // as a store query does: cancelled with its context
		return nil, fmt.Errorf("read the leadership lease: %w", context.Cause(ctx))
	}
	srv := httptest.NewServer(New(Config{Log: log, DBTimeout: time.Hour, Leader: leader}).Handler())
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/leader", nil)
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	<-errc
	var access map[string]any
	for deadline := time.Now().Add(time.Minute); access == nil && time.Now().Before(deadline); {
		for _, line := range strings.Split(logs.String(), "\n") {
			var e map[string]any
			if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == "request" {
				access = e
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if access == nil {
		t.Fatalf("no access log line:\n%s", logs.String())
	}
	if st, _ := access["status"].(float64); st >= 500 || st < 400 {
		t.Errorf("access log status %v, want a 4xx (the client closed the request)", access["status"])
	}
	if strings.Contains(logs.String(), `"level":"error"`) {
		t.Errorf("a client that went away logged an error:\n%s", logs.String())
	}

	// A database that does not answer within --db-timeout is still a 503.
	slow := httptest.NewServer(New(Config{Log: log, DBTimeout: 50 * time.Millisecond, Leader: func(ctx context.Context) (any, error) {
		<-ctx.Done()
		return nil, fmt.Errorf("read the leadership lease: %w", context.Cause(ctx))
	}}).Handler())
	defer slow.Close()
	resp, err := http.Get(slow.URL + "/api/v1/leader")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("database timeout: %d (Retry-After %q), want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
