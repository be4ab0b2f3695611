package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

func TestUntilDoneTriesUntilTheDatabaseAnswers(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := untilDone(ctx, scheduler.DiscardLogger(), "reading", func() error {
		calls++
		if calls < 3 {
			return errors.New("connection refused")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("untilDone = %v after %d calls, want nil after 3", err, calls)
	}

	// The term ends while the database is away: it gives up with ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	done := make(chan error, 1)
	go func() {
		done <- untilDone(ctx, scheduler.DiscardLogger(), "reading", func() error {
			calls++
			return errors.New("connection refused")
		})
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("untilDone = %v, want context.Canceled", err)
		}
		if calls < 1 {
			t.Fatalf("untilDone never tried")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("untilDone did not stop when its context ended")
	}
}
