package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/zktest"
)

// TestServeLeadsWhileZooKeeperIsSilent: with --mesos-master zk://... and
// a ZooKeeper that accepts connections and never answers, the leader's
// term started only once its first GET_AGENTS had given up waiting for
// ZooKeeper to name a Mesos master (15 s): until then the scheduler and
// the dashboard's views answered "no instance leads". Now the term starts
// at once, saying it waits for a leader, and the API answers; GET_AGENTS
// goes on asking in the background. The check is on the log's order (no
// GET_AGENTS failure before the term started), not on the clock.
func TestServeLeadsWhileZooKeeperIsSilent(t *testing.T) {
	zkAddr, accepted, release := zktest.Silent(t)
	var c serveConfig
	fs := serveFlags("serve", io.Discard, &c)
	if err := parseFlags(fs, []string{"--database-url", pgtest.URL(t), "--listen", "127.0.0.1:0",
		"--mesos-master", "zk://" + zkAddr + "/mesos"}); err != nil {
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
	defer func() {
		cancel()
		release()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	var addr string
	select {
	case addr = <-ready: // this instance leads (ha.settle), or 30 s passed
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(2 * time.Minute):
		t.Fatal("serve did not start")
	}
	select {
	case <-accepted:
	case <-time.After(time.Minute):
		t.Fatal("sparkpack never connected to ZooKeeper")
	}
	var waiting, failed, leading int // positions in the log, from 1
	for i, e := range hook.AllEntries() {
		switch {
		case waiting == 0 && strings.HasPrefix(e.Message, "waiting for ZooKeeper to name the leading Mesos master"):
			waiting = i + 1
		case failed == 0 && strings.HasPrefix(e.Message, "GET_AGENTS failed"):
			failed = i + 1
		case leading == 0 && strings.HasPrefix(e.Message, "leading: scheduler and Mesos framework started"):
			leading = i + 1
		}
	}
	if leading == 0 {
		t.Fatal("the instance does not lead")
	}
	if failed != 0 && failed < leading {
		t.Fatalf("the term started only after its first GET_AGENTS gave up waiting on ZooKeeper (log line %d before %d)", failed, leading)
	}
	if waiting == 0 || waiting > leading {
		t.Fatalf("nothing said, as the term started, that it waits for ZooKeeper to name a leader (at %d, leading at %d)", waiting, leading)
	}
	// The scheduler's views answer (an empty cluster) while ZooKeeper is silent.
	client := &http.Client{Timeout: time.Minute}
	for _, path := range []string{"/api/v1/cluster", "/api/v1/queues", "/api/v1/jobs", "/"} {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d while ZooKeeper is silent, want 200", path, resp.StatusCode)
		}
	}
}
