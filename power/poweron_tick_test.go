package power

import (
	"context"
	"testing"
	"time"
)

// slowOffProvider blocks a power-off of agent slow until release is
// closed (a provider call that takes long: an exec, a webhook).
type slowOffProvider struct {
	fakeProvider
	slow             string
	entered, release chan struct{}
}

func (p *slowOffProvider) PowerOff(ctx context.Context, t Target) error {
	if t.AgentID == p.slow {
		close(p.entered)
		<-p.release
	}
	return p.fakeProvider.PowerOff(ctx, t)
}

// TestPowerOnDoesNotWaitForTheTick: the scheduler's power-on of an agent
// that is off does not wait for a Tick's provider calls on other agents:
// PowerOn took the Tick's lock, so a pass that powered an agent on stalled
// (holding every start) while a Tick powered other agents off, up to the
// provider's timeout for each.
func TestPowerOnDoesNotWaitForTheTick(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	prov := &slowOffProvider{entered: make(chan struct{}), release: make(chan struct{})}
	m, err := NewManager(Config{OffAfter: time.Minute, Provider: prov, Log: quiet(), Now: func() time.Time { return now }}, newMemStore(), &fakeMesos{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a1, a2 := idle("a1", 4), idle("a2", 4)
	_ = m.Tick(ctx, []Agent{a1}, nil)
	now = now.Add(2 * time.Minute)
	_ = m.Tick(ctx, []Agent{a1}, nil)
	_ = m.Tick(ctx, []Agent{drained(a1)}, nil)
	if got := m.StateOf("a1"); got != StateOff {
		t.Fatalf("a1 is %s, want off", got)
	}
	_ = m.Tick(ctx, []Agent{a2}, nil)
	now = now.Add(2 * time.Minute)
	_ = m.Tick(ctx, []Agent{a2}, nil) // draining
	prov.slow = "a2"
	tickDone := make(chan struct{})
	go func() {
		defer close(tickDone)
		_ = m.Tick(ctx, []Agent{drained(a2)}, nil) // powers a2 off: blocks in the provider
	}()
	<-prov.entered
	powered := make(chan error, 1)
	go func() { powered <- m.PowerOn(ctx, "a1") }()
	select {
	case err := <-powered:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		close(prov.release)
		<-tickDone
		t.Fatal("PowerOn waited for the Tick's provider call on another agent")
	}
	if got := m.StateOf("a1"); got != StateBooting {
		t.Errorf("a1 is %s, want booting", got)
	}
	close(prov.release)
	<-tickDone
	if got := m.StateOf("a2"); got != StateOff {
		t.Errorf("a2 is %s, want off", got)
	}
	if got := m.StateOf("a1"); got != StateBooting {
		t.Errorf("after the Tick a1 is %s, want booting", got)
	}
}
