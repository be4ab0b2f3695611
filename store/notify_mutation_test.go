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
