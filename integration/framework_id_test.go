package integration

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/offers"
)

// flakyIDs is a framework id store whose reads fail while failures > 0
// (a database that does not answer for a while).
type flakyIDs struct {
	memIDs
	mu       sync.Mutex
	failures int
	reads    int
}

func (f *flakyIDs) FrameworkID(ctx context.Context) (string, error) {
	f.mu.Lock()
	f.reads++
	failing := f.failures > 0
	if failing {
		f.failures--
	}
	f.mu.Unlock()
	if failing {
		return "", errors.New("injected failure: connection refused")
	}
	return f.memIDs.FrameworkID(ctx)
}

// TestFrameworkResubscribesAsItselfAfterTheIDReadFails: sparkpack
// subscribes once and stores its framework id; after a restart the first
// reads of the stored id fail. It waits for the id rather than
// subscribing as a new framework (which would leave the first one's
// drivers running out of its sight), and subscribes as the same framework.
func TestFrameworkResubscribesAsItselfAfterTheIDReadFails(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	ep, err := offers.NewEndpoint(emu.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ids := &flakyIDs{}
	run := func() (*offers.Framework, func()) {
		ctx, cancel := context.WithCancel(context.Background())
		fw := offers.NewFramework(offers.FrameworkConfig{}, offers.NewSchedClient(ep, log), ids, &statusLog{}, log)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = fw.Run(ctx, offers.RunOptions{MinBackoff: 20 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
		}()
		return fw, func() { cancel(); <-done }
	}
	subscribed := func(fw *offers.Framework) string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			if id := fw.Sched.FrameworkID(); id != "" && fw.Connected() {
				return id
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatal("the framework did not subscribe within 30 s")
		return ""
	}
	fw, stop := run()
	first := subscribed(fw)
	stop()
	if stored, _ := ids.memIDs.FrameworkID(context.Background()); stored != first {
		t.Fatalf("stored framework id %q, want %q", stored, first)
	}

	ids.mu.Lock()
	ids.failures, ids.reads = 3, 0
	ids.mu.Unlock()
	fw, stop = run()
	defer stop()
	if again := subscribed(fw); again != first {
		t.Fatalf("subscribed as framework %q after the failed reads, want the same framework %q", again, first)
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.reads < 4 {
		t.Fatalf("the stored id was read %d times, want the 3 failures and a success", ids.reads)
	}
}
