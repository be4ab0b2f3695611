package integration

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2EHAFollowerForwardsTheEventStream: with --protect-reads and two
// instances, a dashboard served by the follower gets its event stream
// ticket from the leader (the follower forwards the request) and opens the
// stream through the follower with it, once; the follower's /metrics
// shows it does not lead and zeroes the gauges only the leader knows.
func TestE2EHAFollowerForwardsTheEventStream(t *testing.T) {
	const token = "ha-events-token-0123456789"
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("ops:"+token+":read,metrics\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	emu := startEmulator(t, mesossim.Config{})
	c := &haCluster{t: t, emu: emu, db: e2eDB(t), procs: map[string]*sparkpackProc{},
		args: []string{"--tokens-file", file, "--protect-reads"}}
	a, b := c.start("ev-a"), c.start("ev-b")

	do := func(method, url string, auth bool) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if auth {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			return resp, "" // the caller reads and closes it
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	// Which one leads.
	var leader, follower *sparkpackProc
	waitUntil(t, 30*time.Second, "a leader", func() bool {
		for _, p := range []*sparkpackProc{a, b} {
			resp, body := do(http.MethodGet, p.API+"/api/v1/leader", true)
			var s leaderStatus
			if resp.StatusCode == http.StatusOK && json.Unmarshal([]byte(body), &s) == nil && s.Leader {
				leader = p
			}
		}
		if leader == a {
			follower = b
		} else if leader == b {
			follower = a
		}
		return leader != nil
	})

	// Without a token or ticket the stream is refused, on the follower too.
	if resp, body := do(http.MethodGet, follower.API+"/api/v1/events", false); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("follower's stream without credentials: %d %s", resp.StatusCode, body)
	}
	// A ticket through the follower, redeemed through the follower.
	resp, body := do(http.MethodPost, follower.API+"/api/v1/events/ticket", true)
	var tk struct {
		Ticket, URL string
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &tk) != nil || tk.URL == "" {
		t.Fatalf("ticket from the follower: %d %s", resp.StatusCode, body)
	}
	stream, _ := do(http.MethodGet, follower.API+tk.URL, false)
	if stream.StatusCode != http.StatusOK || !strings.HasPrefix(stream.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("the follower's stream with the ticket: %d %s", stream.StatusCode, stream.Header.Get("Content-Type"))
	}
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stream.Body).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line == "" {
			t.Fatal("the forwarded stream ended at once")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nothing on the forwarded stream within 30 s")
	}
	stream.Body.Close()
	// The ticket was used.
	if resp, body := do(http.MethodGet, follower.API+tk.URL, false); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "ticket") {
		t.Fatalf("a used ticket: %d %s", resp.StatusCode, body)
	}

	// The follower's metrics: not leading, no queues, no cost.
	_, fm := do(http.MethodGet, follower.API+"/metrics", true)
	_, lm := do(http.MethodGet, leader.API+"/metrics", true)
	for _, want := range []string{"sparkpack_leader 0", "sparkpack_active_agents 0", "sparkpack_burn_rate_usd_per_hour 0"} {
		if !strings.Contains(fm, "\n"+want+"\n") {
			t.Errorf("the follower's /metrics lacks %q", want)
		}
	}
	if strings.Contains(fm, "sparkpack_queue_length{") || strings.Contains(fm, "sparkpack_agents_power{") {
		t.Error("the follower's /metrics shows queue or power gauges it cannot know")
	}
	if !strings.Contains(lm, "\nsparkpack_leader 1\n") || !strings.Contains(lm, `sparkpack_queue_length{queue="deadline"} 0`) {
		t.Errorf("the leader's /metrics: want sparkpack_leader 1 and its queue lengths")
	}
}
