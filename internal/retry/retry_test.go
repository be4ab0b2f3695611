package retry

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

func TestUntilDoneTriesUntilItSucceeds(t *testing.T) {
	ctx := context.Background()
	calls := 0
	err := UntilDone(ctx, quiet(), "reading", func() error {
		calls++
		if calls < 3 {
			return errors.New("connection refused")
		}
		return nil
	})
	if err != nil || calls != 3 {
		t.Fatalf("UntilDone = %v after %d calls, want nil after 3", err, calls)
	}

	// The term ends while the database is away: it gives up with ctx's error.
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	done := make(chan error, 1)
	go func() {
		done <- UntilDone(ctx, quiet(), "reading", func() error {
			calls++
			return errors.New("connection refused")
		})
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("UntilDone = %v, want context.Canceled", err)
		}
		if calls < 1 {
			t.Fatalf("UntilDone never tried")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("UntilDone did not stop when its context ended")
	}
}

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}
