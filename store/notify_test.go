package store

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Every job stored, through group commits of many jobs at once, is
// announced exactly once on JobsChannel (ids travel many to a
// notification), and a cancellation arrives as its own notice.
func TestListenHearsEveryStoredJob(t *testing.T) {
	s, url := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	heard := map[string]int{}
	cancelled := make(chan string, 1)
	ready := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, url, JobEvents{
			Submitted: func(ids []string) {
				mu.Lock()
				defer mu.Unlock()
				for _, id := range ids {
					heard[id]++
				}
			},
			Cancelled: func(id string, kill bool) { cancelled <- id },
			Resync:    func() { once.Do(func() { close(ready) }) },
		}, quietLog())
	}()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("Listen did not start listening within 10 s")
	}
	const n = 400 // more than one notification's worth per group commit
	ids := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		j := newJob(t, nil)
		ids[i] = j.ID
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, _, err := s.CreateJob(ctx, j, ""); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		got := len(heard)
		mu.Unlock()
		if got >= n || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	mu.Lock()
	for _, id := range ids {
		if heard[id] != 1 {
			t.Errorf("job %s announced %d times, want 1", id, heard[id])
		}
	}
	if len(heard) != n {
		t.Errorf("heard %d distinct ids, want %d", len(heard), n)
	}
	mu.Unlock()

	// A resubmission (same id, same body) creates nothing and announces nothing.
	again := newJob(t, func(sp *scheduler.Spec) { sp.ID = ids[0] })
	if _, created, err := s.CreateJob(ctx, again, ""); err != nil || created {
		t.Fatalf("resubmission: created=%v err=%v", created, err)
	}
	if _, _, err := s.Cancel(ctx, ids[1], "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-cancelled:
		if id != ids[1] {
			t.Fatalf("cancelled %s, want %s", id, ids[1])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no cancellation notice within 10 s")
	}
	mu.Lock()
	if heard[ids[0]] != 1 {
		t.Errorf("the resubmitted job was announced %d times, want 1", heard[ids[0]])
	}
	mu.Unlock()
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Listen returned %v, want context.Canceled", err)
	}
}
