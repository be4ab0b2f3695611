package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// Tests written for the mutants of notify.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md).

// TestListenNeverHandsAnEmptyBatch: Submitted gets only batches of ids:
// not an empty one when a cancellation notice flushes the batch (the
// notice arrives with nothing pending), nor the empty names of "s:a,,b".
func TestListenNeverHandsAnEmptyBatch(t *testing.T) {
	url := pgtest.URL(t)
	s, err := Open(context.Background(), url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var batches [][]string
	cancelled := make(chan string, 2)
	ready := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, url, JobEvents{
			Submitted: func(ids []string) {
				mu.Lock()
				defer mu.Unlock()
				batches = append(batches, append([]string(nil), ids...))
			},
			Cancelled: func(id string, kill bool) { cancelled <- id },
			Resync:    func() { once.Do(func() { close(ready) }) },
		}, quietLog())
	}()
	// Bounds so that a broken Listen fails the test instead of hanging it.
	wait := func(c <-chan string) string {
		t.Helper()
		select {
		case id := <-c:
			return id
		case <-time.After(time.Minute):
			t.Fatal("no cancellation heard within a minute")
			return ""
		}
	}
	select {
	case <-ready:
	case <-time.After(time.Minute):
		t.Fatal("Listen did not start listening within a minute")
	}
	notify := func(payload string) {
		t.Helper()
		if _, err := s.db.Exec(`SELECT pg_notify($1, $2)`, JobsChannel, payload); err != nil {
			t.Fatal(err)
		}
	}
	// A cancellation with no submission pending.
	first := uuid.NewString()
	notify("c:" + first + ":0")
	if got := wait(cancelled); got != first {
		t.Fatalf("cancelled %s; want %s", got, first)
	}
	a, b := uuid.NewString(), uuid.NewString()
	notify("s:" + a + ",," + b)
	// The second notice comes after the submission (one connection, in
	// order): once it is heard, the batch before it was handed over.
	second := uuid.NewString()
	notify("c:" + second + ":1")
	if got := wait(cancelled); got != second {
		t.Fatalf("cancelled %s; want %s", got, second)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	var ids []string
	for _, batch := range batches {
		if len(batch) == 0 {
			t.Errorf("Submitted got an empty batch (all: %q)", batches)
		}
		ids = append(ids, batch...)
	}
	if len(ids) != 2 || ids[0] != a || ids[1] != b {
		t.Fatalf("heard %q; want [%s %s]", ids, a, b)
	}
}

// TestListenReconnectsWithoutResync: a listener without a Resync callback
// survives its connection being cut (PostgreSQL ends the session): it
// reconnects and hears the notifications sent afterwards.
func TestListenReconnectsWithoutResync(t *testing.T) {
	url := pgtest.URL(t)
	s, err := Open(context.Background(), url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	heard := make(chan string, 64)
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, url, JobEvents{Submitted: func(ids []string) {
			for _, id := range ids {
				heard <- id
			}
		}}, quietLog())
	}()
	// The listening session, once it is up.
	var pid int
	for pid == 0 {
		if err := s.db.QueryRow(`SELECT coalesce(max(pid), 0) FROM pg_stat_activity
			WHERE datname = current_database() AND query ILIKE 'listen%'`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := s.db.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatal(err)
	}
	for gone := false; !gone; time.Sleep(20 * time.Millisecond) {
		if err := s.db.QueryRow(`SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&gone); err != nil {
			t.Fatal(err)
		}
	}
	// Announce until the reconnected listener hears one (bounded).
	deadline := time.After(time.Minute)
	for {
		id := uuid.NewString()
		if _, err := s.db.Exec(`SELECT pg_notify($1, $2)`, JobsChannel, "s:"+id); err != nil {
			t.Fatal(err)
		}
		select {
		case <-heard:
			cancel()
			if err := <-done; err != context.Canceled {
				t.Fatalf("Listen ended with %v; want context.Canceled", err)
			}
			return
		case err := <-done:
			t.Fatalf("Listen ended after the cut: %v", err)
		case <-deadline:
			t.Fatal("nothing heard within a minute of the cut")
		case <-time.After(200 * time.Millisecond):
		}
	}
}
