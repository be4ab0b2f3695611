package power

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRecoveredAgentIsHeld (after a real master failover the restarted
// master lists an agent only in GET_AGENTS' recovered_agents until it
// re-registers, up to 10 minutes; a draining agent missing from agents
// went "left Mesos while draining" and was powered off): an agent listed
// only as recovered, on a current view, is held in every state as on a
// stale view: no drain, no deactivation, no power-off, no timeout; only a
// power-on not yet asked for goes ahead. The same agent listed nowhere
// (it left Mesos) is what the last column says is done then.
func TestRecoveredAgentIsHeld(t *testing.T) {
	for _, c := range []struct {
		name      string
		state     State
		requested bool
		since     time.Duration // how long before the tick it entered state
		wantProv  []string      // provider calls on the recovered view
		gone      State         // the state when it is listed nowhere instead
	}{
		{"on", StateOn, false, time.Hour, nil, StateOn},
		{"draining", StateDraining, false, 10 * time.Second, nil, StateOff},
		{"draining past the drain timeout", StateDraining, false, time.Hour, nil, StateOff},
		{"powering off", StatePoweringOff, false, 10 * time.Second, nil, StateOff},
		{"off", StateOff, false, time.Hour, nil, StateOff},
		{"booting, asked for", StateBooting, true, 10 * time.Second, nil, StateBooting},
		{"booting past the power-on timeout", StateBooting, true, time.Hour, nil, StateOff},
		{"booting, not yet asked for", StateBooting, false, 10 * time.Second, []string{"on a1"}, StateBooting},
	} {
		for _, recovered := range []bool{true, false} {
			r := newRig(t, Config{})
			r.store.recs["a1"] = Record{AgentID: "a1", Hostname: "host-a1", CPUs: 4, MemMB: 16384, State: c.state,
				Since: r.now.Add(-c.since), Requested: c.requested, RegisteredAt: registered}
			r.restart()
			v := View{ReadAt: r.now}
			if recovered {
				v.Recovered = []string{"a1"}
			}
			if err := r.m.TickView(context.Background(), v, nil); err != nil {
				t.Errorf("%s (recovered %v): %v", c.name, recovered, err)
			}
			if !recovered {
				if s := r.store.state("a1"); s != c.gone {
					t.Errorf("%s, listed nowhere: %s, want %s (the test's premise)", c.name, s, c.gone)
				}
				continue
			}
			if s := r.store.state("a1"); s != c.state {
				t.Errorf("%s, recovered: %s, want it held", c.name, s)
			}
			if got := r.prov.took(); !slices.Equal(got, c.wantProv) {
				t.Errorf("%s, recovered: provider calls %v, want %v", c.name, got, c.wantProv)
			}
			if got := r.mesos.took(); len(got) != 0 {
				t.Errorf("%s, recovered: Mesos calls %v", c.name, got)
			}
		}
	}
}

// TestRecoveredThenReregistered: a draining agent held while recovered
// goes on draining once it re-registers (powered off when shown
// deactivated and idle), and an idle agent that was on is not drained at
// once: its idle time counts from when it is listed again.
func TestRecoveredThenReregistered(t *testing.T) {
	r, hook := newLoggedRig(t, Config{}) // OffAfter 1 minute
	a1, a2 := idle("a1", 4), idle("a2", 4)
	r.tick(nil, a1, a2) // idle timers start
	r.now = r.now.Add(61 * time.Second)
	r.tick(nil, a1)     // a1 drains; a2 is not listed (its idle timer ends)
	r.tick(nil, a1, a2) // a2 idle from here (a1 asked again to deactivate)
	r.mesos.took()
	r.now = r.now.Add(30 * time.Second)
	// The master fails over: for 5 minutes both are only recovered.
	for i := 0; i < 150; i++ {
		r.now = r.now.Add(2 * time.Second)
		_ = r.m.TickView(context.Background(), View{ReadAt: r.now, Recovered: []string{"a1", "a2"}}, nil)
	}
	if got := r.prov.took(); len(got) != 0 {
		t.Fatalf("provider calls while recovered: %v", got)
	}
	if got := r.mesos.took(); len(got) != 0 {
		t.Fatalf("Mesos calls while recovered: %v", got)
	}
	var held []string
	for _, e := range hook.AllEntries() {
		if strings.HasPrefix(e.Message, "agent power: held: ") {
			held = append(held, e.Data["agent"].(string)+" "+string(e.Data["state"].(State)))
		}
	}
	if want := []string{"a1 draining", "a2 on"}; !slices.Equal(held, want) {
		t.Errorf("held notices %q, want one per agent %q", held, want)
	}
	// They re-register (a1 deactivated: the master's registry kept it).
	r.tick(nil, drained(a1), a2)
	if s := r.store.state("a1"); s != StateOff {
		t.Errorf("a1 %s after it re-registered deactivated and idle, want off", s)
	}
	if s := r.m.StateOf("a2"); s != StateOn {
		t.Errorf("a2 %s at its re-registration: the time it was only recovered counted as idle", s)
	}
}
