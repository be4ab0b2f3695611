package api

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestEventStream reads the SSE stream over real HTTP: the hello event with
// a retry hint, then a job event published after a submission.
func TestEventStream(t *testing.T) {
	b := NewBroker()
	e := newEnv(t, func(c *Config) { c.Broker = b })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+"/api/v1/events", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		if !lines.Scan() {
			t.Fatalf("stream ended: %v", lines.Err())
		}
		return lines.Text()
	}
	if l := next(); l != "retry: 2000" {
		t.Fatalf("first line %q", l)
	}
	if l := next(); l != "event: hello" {
		t.Fatalf("second line %q", l)
	}
	for b.Clients() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	_, m := e.post(t, goodJob)
	id := m["id"].(string)
	for {
		l := next()
		if l == "event: job" {
			data := next()
			if !strings.HasPrefix(data, "data: ") || !strings.Contains(data, id) || !strings.Contains(data, "SUBMITTED") {
				t.Fatalf("job event data %q", data)
			}
			return
		}
	}
}

func TestBrokerSlowClientDoesNotBlock(t *testing.T) {
	b := NewBroker()
	c := b.subscribe()
	defer b.unsubscribe(c)
	done := make(chan struct{})
	go func() {
		for i := 0; i < 1000; i++ { // far more than the client's buffer
			b.Publish("job", map[string]int{"i": i})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish blocked on a client that does not read")
	}
	if len(c) != cap(c) {
		t.Fatalf("client buffer holds %d of %d", len(c), cap(c))
	}
}
