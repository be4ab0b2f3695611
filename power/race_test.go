package power

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestConcurrentReadsDuringTicks: the scheduler's pass asks Unavailable,
// Failed, StateOf, Records and StandbyAgents (through the cluster snapshot)
// while the power loop ticks an agent through every state and PowerOn marks
// it booting. Under -race this reports any state written outside m.mu
// (the defect: Tick wrote a record's State holding only tickMu).
func TestConcurrentReadsDuringTicks(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	advance := func(d time.Duration) { clock.Add(int64(d)) }
	m, err := NewManager(Config{OffAfter: time.Minute, Provider: &fakeProvider{}, Log: quiet(), Now: now}, newMemStore(), &fakeMesos{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const cycles = 50
	done := make(chan struct{})
	var wg sync.WaitGroup
	stop := sync.OnceFunc(func() { close(done); wg.Wait() })
	defer stop()
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				_ = m.Unavailable("a1")
				_ = m.Failed("a1")
				_ = m.StateOf("a1")
				_ = m.Records()
				_ = m.StandbyAgents()
				_, _ = m.NextIdleExpiry()
			}
		}()
	}
	a := idle("a1", 4)
	for i := 0; i < cycles; i++ {
		_ = m.Tick(ctx, []Agent{a}, nil) // idle timer starts
		advance(2 * time.Minute)
		_ = m.Tick(ctx, []Agent{a}, nil) // draining
		_ = m.Tick(ctx, []Agent{drained(a)}, nil)
		if got := m.StateOf("a1"); got != StateOff {
			stop()
			t.Fatalf("cycle %d: after the drain the agent is %s, want off", i, got)
		}
		if err := m.PowerOn(ctx, "a1"); err != nil {
			t.Fatal(err)
		}
		_ = m.Tick(ctx, nil, nil) // the provider is asked to power it on
		a = rebooted(a)
		_ = m.Tick(ctx, []Agent{a}, nil) // back on
		if got := m.StateOf("a1"); got != StateOn {
			stop()
			t.Fatalf("cycle %d: after the reboot the agent is %s, want on", i, got)
		}
	}
	stop()
}
