package scheduler

// A test written from a mutant scripts/mutation.sh found alive in
// waiting.go (docs/testing.md, "Mutation testing").

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
)

// failWaiting is the test store whose waiting-reason writes fail.
type failWaiting struct{ *testStore }

func (failWaiting) SetWaitingMany(context.Context, []WaitingNote) error {
	return errors.New("injected failure: the store is away")
}

// TestWaitingWriterWarnsOnFailure: the writer of waiting reasons warns
// when a write fails, with the number of notes still pending (the note is
// kept for the next try). It waits for the warning (up to a generous 60 s
// on a loaded machine), then stops the writer and waits for it to end.
func TestWaitingWriterWarnsOnFailure(t *testing.T) {
	log, hook := logtest.NewNullLogger()
	core, err := New(Config{Log: log}, newTestCluster(agent("a1", 4, 16384, 0.24)), failWaiting{newTestStore()}, newManualClock(t0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		core.writeWaiting(ctx)
	}()
	defer func() {
		cancel()
		wg.Wait()
	}()
	core.waiting.put(WaitingNote{ID: "j", Reason: "does not fit now: short of cpus"})
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, e := range hook.AllEntries() {
			if e.Message == "could not store waiting reasons; retrying" {
				if n, _ := e.Data["pending"].(int); n != 1 {
					t.Fatalf("warning with %v pending, want 1", e.Data["pending"])
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no warning within 60 s of a failed write")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
