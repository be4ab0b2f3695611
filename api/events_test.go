package api

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
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

// TestEventStreamTickets: under --protect-reads the stream needs a token
// or a ticket; a ticket comes only with a read token, works once, and
// expires; a stream opened with one hears events.
func TestEventStreamTickets(t *testing.T) {
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	b := NewBroker()
	e, ref := authEnv(t, true, func(c *Config) { c.Broker = b; c.Now = clock })
	get := func(path, token string) *http.Response {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, "GET", e.srv.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	ticket := func(token string) (int, TicketResponse) {
		resp, m := e.do(t, "POST", "/api/v1/events/ticket", "", token, nil)
		var tr TicketResponse
		tr.Ticket, _ = m["ticket"].(string)
		tr.URL, _ = m["url"].(string)
		return resp.StatusCode, tr
	}
	if r := get("/api/v1/events", ""); r.StatusCode != 401 {
		t.Fatalf("stream without a token: %d", r.StatusCode)
	}
	if r := get("/api/v1/events", "reader-token-0123456789ab"); r.StatusCode != 200 {
		t.Fatalf("stream with a read token in the header: %d", r.StatusCode)
	}
	for token, want := range map[string]int{"": 401, "wrong-token-0123456789abcdef": 403, "ci-token-0123456789abcdef": 403} {
		if code, _ := ticket(token); code != want {
			t.Errorf("ticket for %q: %d, want %d", token, code, want)
		}
	}
	code, tr := ticket("reader-token-0123456789ab")
	if code != 200 || len(tr.Ticket) != 64 || tr.URL != "/api/v1/events?ticket="+tr.Ticket {
		t.Fatalf("ticket: %d %+v", code, tr)
	}
	r := get(tr.URL, "")
	if r.StatusCode != 200 {
		t.Fatalf("stream with a ticket: %d", r.StatusCode)
	}
	lines := bufio.NewScanner(r.Body)
	for lines.Scan() && lines.Text() != "event: hello" {
	}
	for b.Clients() < 2 {
		time.Sleep(10 * time.Millisecond)
	}
	resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ci-token-0123456789abcdef", strings.NewReader(goodJob))
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "data: ") && strings.Contains(lines.Text(), m["id"].(string)) {
			break
		}
	}
	if lines.Err() != nil {
		t.Fatal(lines.Err())
	}
	// Used once: a second connection with it is refused, as is an unknown one.
	before := ref.get("api/" + RefusedBadTicket)
	if r := get(tr.URL, ""); r.StatusCode != 401 {
		t.Fatalf("reused ticket: %d", r.StatusCode)
	}
	if r := get("/api/v1/events?ticket=feedface", ""); r.StatusCode != 401 {
		t.Fatalf("unknown ticket: %d", r.StatusCode)
	}
	// Expired.
	_, tr = ticket("alice-token-0123456789abc")
	mu.Lock()
	now = now.Add(TicketTTL + time.Second)
	mu.Unlock()
	if r := get(tr.URL, ""); r.StatusCode != 401 {
		t.Fatalf("expired ticket: %d", r.StatusCode)
	}
	if got := ref.get("api/" + RefusedBadTicket); got != before+3 {
		t.Fatalf("%d bad tickets counted, want 3", got-before)
	}
	if strings.Contains(e.logs.String(), tr.Ticket) {
		t.Fatal("a ticket reached the log")
	}
}
