package offers

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSubscribesAnewAfterMesosRemovedTheFramework: an operator tears
// sparkpack's framework down (or its failover timeout passes); the master
// then refuses its stored id for ever ("Framework has been removed"). The
// framework forgets the id and subscribes as a new framework, instead of
// retrying the dead id until someone clears the database by hand.
func TestSubscribesAnewAfterMesosRemovedTheFramework(t *testing.T) {
	m, quiet := emulator(t)
	_, addr := listenOn(t, m.Handler(), "127.0.0.1:0")
	ep, err := NewEndpoint(addr, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	_, ids, obs, ctx := runFramework(t, ep, FrameworkConfig{}, quiet)
	waitUp(t, obs.ups, "http://"+addr)
	old, _ := ids.FrameworkID(ctx)
	if old == "" {
		t.Fatal("no framework id stored after the first subscription")
	}
	if err := NewOperator(ep).Teardown(ctx, old); err != nil {
		t.Fatal(err)
	}
	waitUp(t, obs.ups, "http://"+addr)
	deadline := time.Now().Add(90 * time.Second)
	for {
		now, _ := ids.FrameworkID(ctx)
		if now != "" && now != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("framework id %q 90 s after the teardown of %q: want a new one", now, old)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestFrameworkRemoved: only the master's refusal of a removed framework
// makes sparkpack forget its id; any other error (a refusal for another
// reason, a lost connection) keeps it.
func TestFrameworkRemoved(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("SUBSCRIBE %w: %s", errRefused, "Framework has been removed"), true},
		{fmt.Errorf("Mesos sent ERROR (%w): %s", errRefused, "Framework has been removed"), true},
		{fmt.Errorf("SUBSCRIBE %w: %s", errRefused, "Not authorized to use roles"), false},
		{errors.New("Framework has been removed"), false}, // not the master's refusal
		{errors.New("connection reset by peer"), false},
		{nil, false},
	} {
		if got := FrameworkRemoved(c.err); got != c.want {
			t.Errorf("FrameworkRemoved(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
