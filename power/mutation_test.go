package power

// Tests written from the mutants scripts/mutation.sh found alive in
// manager.go (docs/testing.md, "Mutation testing"): each checks a
// behaviour the Config comments and docs/power.md state, derived by hand.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

// TestDefaultDrainTimeout: with DrainTimeout unset, an agent that Mesos
// does not show deactivated is re-asked every tick and left to drain for
// 2 minutes (the Config comment's default): still draining at exactly
// 2 minutes, reactivated and on one second later.
func TestDefaultDrainTimeout(t *testing.T) {
	r := newRig(t, Config{}) // DrainTimeout and MaxFailures left at their defaults
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(61 * time.Second)
	r.tick(nil, a)
	if st := r.m.StateOf("a1"); st != StateDraining {
		t.Fatalf("after 61 s idle: %s, want draining", st)
	}
	drainStart := r.now
	r.mesos.took()
	// Mesos keeps showing it active: every tick sends DEACTIVATE_AGENT
	// again (6 ticks, more than the default 5 failures: a success is not
	// a failure).
	for s := 20; s <= 120; s += 20 {
		r.now = drainStart.Add(time.Duration(s) * time.Second)
		r.tick(nil, a)
		if st := r.m.StateOf("a1"); st != StateDraining {
			t.Fatalf("%d s into the drain: %s, want still draining", s, st)
		}
	}
	if calls := r.mesos.took(); len(calls) != 6 {
		t.Fatalf("Mesos calls while draining: %v, want 6 x drain a1", calls)
	}
	r.now = drainStart.Add(121 * time.Second)
	r.tick(nil, a)
	if st := r.m.StateOf("a1"); st != StateOn {
		t.Fatalf("121 s into the drain: %s, want on again", st)
	}
}

// deactivateFails fails DEACTIVATE_AGENT only.
type deactivateFails struct {
	mu             sync.Mutex
	deact, reactiv int
}

func (d *deactivateFails) DeactivateAgent(context.Context, string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.deact++
	return errors.New("master unavailable")
}

func (d *deactivateFails) ReactivateAgent(context.Context, string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.reactiv++
	return nil
}

// TestDeactivateFailuresGiveUp: MaxFailures failed DEACTIVATE_AGENT calls
// in a row give the power-off up: the agent is reactivated and on.
func TestDeactivateFailuresGiveUp(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	mesos := &deactivateFails{}
	m, err := NewManager(Config{OffAfter: time.Minute, MaxFailures: 3, DrainTimeout: time.Hour, Provider: &fakeProvider{}, Log: quiet(),
		Now: func() time.Time { return now }}, newMemStore(), mesos)
	if err != nil {
		t.Fatal(err)
	}
	a := idle("a1", 4)
	ctx := context.Background()
	_ = m.Tick(ctx, []Agent{a}, nil)
	now = now.Add(61 * time.Second)
	_ = m.Tick(ctx, []Agent{a}, nil) // draining: the first DEACTIVATE_AGENT fails
	for i := 2; i <= 3; i++ {
		if st := m.StateOf("a1"); st != StateDraining || mesos.deact != i-1 {
			t.Fatalf("after %d failed deactivations: %s, want draining", mesos.deact, st)
		}
		now = now.Add(time.Second)
		_ = m.Tick(ctx, []Agent{a}, nil)
	}
	if st := m.StateOf("a1"); st != StateOn || mesos.deact != 3 || mesos.reactiv != 1 {
		t.Fatalf("after %d failed deactivations: %s (%d reactivations), want on, reactivated once", mesos.deact, st, mesos.reactiv)
	}
}

// TestTickReturnsTheFirstError: a step that fails is reported by Tick
// (the first failing agent in id order); a tick where nothing fails
// returns nil.
func TestTickReturnsTheFirstError(t *testing.T) {
	r := newRig(t, Config{MaxFailures: 10})
	a1, a2 := idle("a1", 4), idle("a2", 4)
	ctx := context.Background()
	if err := r.m.Tick(ctx, []Agent{a2, a1}, nil); err != nil {
		t.Fatalf("idle tick: %v", err)
	}
	r.now = r.now.Add(61 * time.Second)
	if err := r.m.Tick(ctx, []Agent{a2, a1}, nil); err != nil {
		t.Fatalf("draining tick: %v", err)
	}
	r.prov.failures = 100
	err := r.m.Tick(ctx, []Agent{drained(a2), drained(a1)}, nil)
	if err == nil || !strings.Contains(err.Error(), "agent a1 ") || strings.Contains(err.Error(), "a2") {
		t.Fatalf("both power-offs failed: Tick returned %v, want a1's error", err)
	}
}

// TestOnChangeOnlyOnStateChanges: OnChange sees each state change once
// and nothing else (a record saved in the same state is not a change).
func TestOnChangeOnlyOnStateChanges(t *testing.T) {
	var seen []State
	r := newRig(t, Config{OnChange: func(rec Record) { seen = append(seen, rec.State) }})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(61 * time.Second)
	r.tick(nil, a)
	r.prov.failures = 1
	r.tick(nil, drained(a)) // RegisteredAt saved (no change), powering off, the power-off fails (no change)
	r.tick(nil, drained(a)) // off
	want := []State{StateDraining, StatePoweringOff, StateOff}
	if strings.Join(states(seen), ",") != strings.Join(states(want), ",") {
		t.Fatalf("OnChange saw %v, want %v", seen, want)
	}
}

func states(s []State) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = string(x)
	}
	return out
}

func recordOf(t *testing.T, m *Manager, id string) Record {
	t.Helper()
	for _, r := range m.Records() {
		if r.AgentID == id {
			return r
		}
	}
	t.Fatalf("no record of %s", id)
	return Record{}
}

// TestRecordSaysWhy: a state change records why (LastError) and is logged
// with it; a booting agent that came back is on with no power-on pending.
func TestRecordSaysWhy(t *testing.T) {
	r, hook := newLoggedRig(t, Config{})
	a := idle("a1", 4)
	r.tick(nil, a)
	r.now = r.now.Add(61 * time.Second)
	r.tick(nil, a)
	if rec := recordOf(t, r.m, "a1"); rec.State != StateDraining || !strings.Contains(rec.LastError, "idle for 1m1s") {
		t.Fatalf("draining record %+v, want LastError naming the 61 s idle", rec)
	}
	found := false
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.InfoLevel && e.Message == "agent power: draining" && e.Data["reason"] == "idle for 1m1s" {
			found = true
		}
	}
	if !found {
		t.Fatalf("no info log 'agent power: draining' with reason 'idle for 1m1s' among %d entries", len(hook.AllEntries()))
	}
	r.tick(nil, drained(a)) // off
	if err := r.m.PowerOn(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	r.tick(nil)
	if rec := recordOf(t, r.m, "a1"); rec.State != StateBooting || !rec.Requested {
		t.Fatalf("after the power-on call: %+v, want booting, requested", rec)
	}
	r.tick(nil, rebooted(a))
	if rec := recordOf(t, r.m, "a1"); rec.State != StateOn || rec.Requested {
		t.Fatalf("back: %+v, want on with no power-on pending", rec)
	}
}

// TestSizeKeptWhenUnknown: an agent listed without its size (0 cpus, 0
// MiB) keeps the size last seen (the standby view offers it by that).
func TestSizeKeptWhenUnknown(t *testing.T) {
	r := newRig(t, Config{})
	r.tick(nil, idle("a1", 4))
	r.tick(nil, Agent{ID: "a1", Listed: true, Active: true, RegisteredAt: registered})
	if rec := recordOf(t, r.m, "a1"); rec.CPUs != 4 || rec.MemMB != 16384 || rec.PricePerHour != 0.24 {
		t.Fatalf("record %+v, want the size first seen (4 cpus, 16384 MiB, $0.24/h)", rec)
	}
}

// TestStoreFailuresAreReported: a step whose record cannot be saved
// reports the store's error through Tick, with the provider's when both
// failed, and is tried again at the next tick.
func TestStoreFailuresAreReported(t *testing.T) {
	ctx := context.Background()
	t.Run("boot timeout", func(t *testing.T) {
		r := newRig(t, Config{PowerOnTimeout: time.Minute})
		a := idle("a1", 4)
		r.tick(nil, a)
		r.now = r.now.Add(61 * time.Second)
		r.tick(nil, a)
		r.tick(nil, drained(a))
		if err := r.m.PowerOn(ctx, "a1"); err != nil {
			t.Fatal(err)
		}
		r.tick(nil)
		r.now = r.now.Add(61 * time.Second)
		r.store.failNext = true
		if err := r.m.Tick(ctx, nil, nil); err == nil || !strings.Contains(err.Error(), "store down") {
			t.Fatalf("boot timeout not saved: Tick returned %v, want the store's error", err)
		}
		if st := r.m.StateOf("a1"); st != StateBooting {
			t.Fatalf("boot timeout not saved: %s, want still booting", st)
		}
		if err := r.m.Tick(ctx, nil, nil); err != nil || r.m.StateOf("a1") != StateOff {
			t.Fatalf("next tick: %v, %s, want off", err, r.m.StateOf("a1"))
		}
	})
	t.Run("power-off", func(t *testing.T) {
		r := newRig(t, Config{})
		a := idle("a1", 4)
		r.tick(nil, a)
		r.now = r.now.Add(61 * time.Second)
		r.tick(nil, a)
		r.prov.failures = 2
		r.tick(nil, drained(a)) // first failure saved
		r.store.failNext = true
		err := r.m.Tick(ctx, []Agent{drained(a)}, nil)
		if err == nil || !strings.Contains(err.Error(), "store down") || !strings.Contains(err.Error(), "cloud API unavailable") {
			t.Fatalf("power-off and store failed: Tick returned %v, want both errors", err)
		}
	})
	t.Run("power-on", func(t *testing.T) {
		r := newRig(t, Config{})
		a := idle("a1", 4)
		r.tick(nil, a)
		r.now = r.now.Add(61 * time.Second)
		r.tick(nil, a)
		r.tick(nil, drained(a))
		if err := r.m.PowerOn(ctx, "a1"); err != nil {
			t.Fatal(err)
		}
		r.prov.failures = 1
		r.store.failNext = true
		err := r.m.Tick(ctx, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "store down") || !strings.Contains(err.Error(), "cloud API unavailable") {
			t.Fatalf("power-on and store failed: Tick returned %v, want both errors", err)
		}
	})
}

// TestNilLogUsesTheStandardLogger: a Config without a logger works.
func TestNilLogUsesTheStandardLogger(t *testing.T) {
	m, err := NewManager(Config{OffAfter: time.Minute, Provider: &fakeProvider{}}, newMemStore(), &fakeMesos{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Tick(context.Background(), []Agent{idle("a1", 4)}, nil); err != nil {
		t.Fatal(err)
	}
}
