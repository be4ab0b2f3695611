package power

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// onHost is an idle 4-cpu agent id on host, registered at.
func onHost(id, host string, at time.Time) Agent {
	a := idle(id, 4)
	a.Hostname, a.RegisteredAt = host, at
	return a
}

// newcomer is a new agent id on a1's machine, registered an hour in.
func newcomer(id string) Agent { return onHost(id, "host-a1", registered.Add(time.Hour)) }

// powerOffA1 lists an idle a1 until power management has powered it off.
func powerOffA1(t *testing.T, r *rig) Agent {
	t.Helper()
	a1 := idle("a1", 4)
	r.tick(nil, a1)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a1)
	r.tick(nil, drained(a1))
	if r.store.state("a1") != StateOff {
		t.Fatalf("a1 %s, want off", r.store.state("a1"))
	}
	return a1
}

// TestAgentBackUnderANewID: a machine powered off by power management
// comes back as Mesos shows it on a real 1.12 master (docs/power.md, "An
// agent that comes back with a new agent id"). With its work dir kept it
// registers under its old id; with the work dir wiped it registers as a
// new agent, and the old id is removed at once (same address) or stays
// listed inactive until marked unreachable (new address). A new agent on
// the same machine (its hostname) is then the machine: its record is on,
// the old id is forgotten (no longer booting or standby, a plan waiting
// for it is told it failed) and never powered on again; anything else
// keeps today's behaviour (the old record times out and is avoided).
func TestAgentBackUnderANewID(t *testing.T) {
	back := registered.Add(2 * time.Hour)
	fresh := onHost
	oldListed := drained(idle("a1", 4)) // a new address: the old id listed inactive, not registered again
	oldListed.Active = false
	sibling := fresh("a7", "host-a1", registered.Add(-time.Hour))
	for _, c := range []struct {
		name    string
		from    State   // off: powered on by someone else; booting: by a plan
		listing []Agent // GET_AGENTS once the machine is up (a2 is an always-on agent)
		on      string  // the id whose record is on ("" none)
		adopted bool    // a1's record was carried over and forgotten
	}{
		{"work dir kept: the same id", StateBooting, []Agent{rebooted(drained(idle("a1", 4))), idle("a2", 4)}, "a1", false},
		{"work dir wiped, same address: old id removed", StateBooting, []Agent{fresh("a9", "host-a1", back), idle("a2", 4)}, "a9", true},
		{"work dir wiped, new address: old id still listed", StateBooting, []Agent{oldListed, fresh("a9", "host-a1", back), idle("a2", 4)}, "a9", true},
		{"powered on by someone else, new id", StateOff, []Agent{fresh("a9", "host-a1", back), idle("a2", 4)}, "a9", true},
		{"a new hostname too (fresh instance): not the same machine", StateBooting, []Agent{fresh("a9", "ip-10-0-0-9", back), idle("a2", 4)}, "", false},
		{"two new agents on the hostname: ambiguous", StateBooting, []Agent{fresh("a8", "host-a1", back), fresh("a9", "host-a1", back)}, "", false},
		{"an agent on the hostname registered before the power-off", StateBooting, []Agent{sibling}, "", false},
		// An older agent shares the hostname: hostnames do not tell these
		// machines apart, so the new agent may be another machine's.
		{"an older agent on the hostname and a new one: ambiguous", StateBooting, []Agent{sibling, fresh("a9", "host-a1", back)}, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var changed []Record
			r := newRig(t, Config{OffAfter: time.Minute, BootTime: time.Minute, OnChange: func(rec Record) { changed = append(changed, rec) }})
			ctx := context.Background()
			a1, a2 := idle("a1", 4), idle("a2", 4)
			r.tick(nil, a1, busy(a2))
			r.now = r.now.Add(2 * time.Minute)
			r.tick(nil, a1, busy(a2))
			r.tick(nil, drained(a1), busy(a2))
			if st := r.store.state("a1"); st != StateOff {
				t.Fatalf("a1 %s before the power-on, want off", st)
			}
			if c.from == StateBooting {
				if err := r.m.PowerOn(ctx, "a1"); err != nil {
					t.Fatal(err)
				}
				r.tick(nil, busy(a2)) // the provider is asked
				if got := r.prov.took(); !slices.Equal(got, []string{"off a1", "on a1"}) {
					t.Fatalf("provider calls %v", got)
				}
			}
			r.prov.took()
			changed = nil
			r.now = r.now.Add(30 * time.Second)
			r.tick(nil, c.listing...)

			if c.on != "" && r.m.StateOf(c.on) != StateOn {
				t.Errorf("%s is %s, want on", c.on, r.m.StateOf(c.on))
			}
			stored, kept := r.store.recs["a1"]
			var ids []string
			for _, rec := range r.m.Records() {
				ids = append(ids, rec.AgentID)
			}
			if c.adopted {
				// The store keeps a1 only as replaced (for a restart).
				if stored.ReplacedBy != c.on || slices.Contains(ids, "a1") {
					t.Errorf("a1's record kept (store %+v, records %v) after its machine came back as %s", stored, ids, c.on)
				}
				if rec := r.store.recs[c.on]; rec.State != StateOn || rec.Hostname != "host-a1" {
					t.Errorf("stored record of %s: %+v, want on", c.on, rec)
				}
				if !r.m.Failed("a1") || !r.m.Unavailable("a1") || r.m.ReplacedBy("a1") != c.on {
					t.Errorf("a plan waiting for a1 is not told it failed (failed %v, unavailable %v, replaced by %q)",
						r.m.Failed("a1"), r.m.Unavailable("a1"), r.m.ReplacedBy("a1"))
				}
				if len(changed) != 1 || changed[0].AgentID != c.on || changed[0].State != StateOn {
					t.Errorf("state changes told: %+v, want %s on", changed, c.on)
				}
			} else if !kept {
				t.Error("a1's record dropped")
			}
			if c.adopted || c.on == "a1" {
				if bs := r.m.BootState(); len(bs.Booting) != 0 {
					t.Errorf("still booting: %+v", bs.Booting)
				}
				if sb := r.m.StandbyAgents(); len(sb) != 0 {
					t.Errorf("standby agents %+v: the machine counts twice", sb)
				}
			}

			// Long after any timeout and avoidance, a plan that still
			// names the old id powers nothing on.
			for range 3 {
				r.now = r.now.Add(r.m.cfg.PowerOnTimeout + r.m.cfg.AvoidFor + time.Minute)
				r.tick(nil, c.listing...)
				if err := r.m.PowerOn(ctx, "a1"); err != nil {
					t.Fatal(err)
				}
				r.tick(nil, c.listing...)
			}
			got := r.prov.took()
			if c.adopted || c.on == "a1" {
				if len(got) != 0 {
					t.Errorf("provider calls after the machine was back: %v", got)
				}
			} else if len(got) == 0 {
				t.Error("no power-on of a1 again: the old behaviour changed where nothing could be matched")
			}
		})
	}
}

// TestReplacementsAfterARestart: the carried-over record is written
// before the old one is forgotten; a restart between the two (or a store
// that cannot delete) finds the replacement again and finishes it.
func TestReplacementsAfterARestart(t *testing.T) {
	r := newRig(t, Config{OffAfter: time.Minute})
	powerOffA1(t, r)
	if err := r.m.PowerOn(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	r.tick(nil)
	n := newcomer("a9")
	// The store fails the put of the new record: nothing changes yet.
	r.store.failNext = true
	r.tick(nil, n)
	if r.store.state("a1") != StateBooting || r.m.StateOf("a1") != StateBooting {
		t.Fatalf("after a failed write: a1 stored %s, in memory %s; want booting", r.store.state("a1"), r.m.StateOf("a1"))
	}
	// A crash after the new record was written, before the old was forgotten.
	r.store.recs["a9"] = Record{AgentID: "a9", Hostname: "host-a1", State: StateOn, RegisteredAt: n.RegisteredAt}
	r.restart()
	r.tick(nil, n)
	if rec := r.store.recs["a1"]; rec.ReplacedBy != "a9" || r.m.StateOf("a9") != StateOn || r.m.ReplacedBy("a1") != "a9" {
		t.Fatalf("after a restart: a1 stored %+v, a9 %s, replaced by %q", rec, r.m.StateOf("a9"), r.m.ReplacedBy("a1"))
	}
}

// TestReplacedIDRegistersAgain: a record was carried over to a new agent
// on the same hostname (hostnames that do not tell machines apart: the new
// agent was another machine's), and then the old id registers again (its
// machine powered on with its work dir). It is an agent like any other
// again: power management follows it (on, available to plans, not a failed
// power-on), instead of skipping it for ever while Unavailable keeps plans
// off it and nothing ever powers it off.
func TestReplacedIDRegistersAgain(t *testing.T) {
	r := newRig(t, Config{OffAfter: time.Minute})
	a1 := powerOffA1(t, r)
	other := newcomer("a9")
	r.tick(nil, other)
	if r.m.ReplacedBy("a1") != "a9" {
		t.Fatalf("a1 replaced by %q, want a9", r.m.ReplacedBy("a1"))
	}
	// The old listing (inactive, not registered again) is still skipped.
	r.tick(nil, drained(a1), other)
	if r.m.ReplacedBy("a1") != "a9" || !r.m.Failed("a1") {
		t.Fatalf("the old id's stale listing ended the replacement")
	}
	r.now = r.now.Add(time.Hour)
	back := rebooted(a1)
	if err := r.m.Tick(context.Background(), []Agent{back, other}, nil); err != nil {
		t.Fatalf("the Tick that finds a1 registered again: %v", err)
	}
	r.tick(nil, back, other)
	if r.m.ReplacedBy("a1") != "" || r.m.Unavailable("a1") || r.m.Failed("a1") || r.m.StateOf("a1") != StateOn {
		t.Fatalf("a1 registered again: replaced by %q, unavailable %v, failed %v, %s; want an agent on like any other",
			r.m.ReplacedBy("a1"), r.m.Unavailable("a1"), r.m.Failed("a1"), r.m.StateOf("a1"))
	}
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, back, busy(other))
	if got := r.mesos.took(); !slices.Contains(got, "drain a1") {
		t.Fatalf("a1 idle past OffAfter is not drained (Mesos calls %v): power management does not follow it", got)
	}
}

// TestReplacementSurvivesARestart: the old id's replacement is kept in
// the store, so that a new Manager over it (sparkpack restarted, or a
// standby that took over) still tells a plan that names the old id that it
// will not come (Failed, at once), keeps plans off it, and skips its stale
// listing, instead of letting the plan wait for it until its agent wait
// ends (it was in memory only).
func TestReplacementSurvivesARestart(t *testing.T) {
	r := newRig(t, Config{OffAfter: time.Minute})
	a1 := powerOffA1(t, r)
	if err := r.m.PowerOn(context.Background(), "a1"); err != nil {
		t.Fatal(err)
	}
	r.tick(nil)
	n := newcomer("a9")
	r.tick(nil, n)
	if r.m.ReplacedBy("a1") != "a9" {
		t.Fatalf("a1 replaced by %q before the restart, want a9", r.m.ReplacedBy("a1"))
	}
	r.restart()
	if r.m.ReplacedBy("a1") != "a9" || !r.m.Failed("a1") || !r.m.Unavailable("a1") {
		t.Fatalf("after a restart: a1 replaced by %q, failed %v, unavailable %v; want a9, true, true",
			r.m.ReplacedBy("a1"), r.m.Failed("a1"), r.m.Unavailable("a1"))
	}
	for _, rec := range r.m.Records() {
		if rec.AgentID == "a1" {
			t.Errorf("a1 is an agent again after the restart: %+v", rec)
		}
	}
	// Its stale listing (a new address: inactive until unreachable) is
	// still no agent.
	stale := drained(a1)
	stale.Active = false
	r.tick(nil, stale, n)
	if r.m.ReplacedBy("a1") != "a9" || len(r.m.Records()) != 1 {
		t.Errorf("after the stale listing: records %+v, a1 replaced by %q", r.m.Records(), r.m.ReplacedBy("a1"))
	}
	// Registered again after all (a wrong match): an agent again, also
	// for the next restart.
	r.now = r.now.Add(time.Hour)
	r.tick(nil, rebooted(a1), n)
	r.restart()
	if r.m.ReplacedBy("a1") != "" || r.m.Failed("a1") || r.m.Unavailable("a1") {
		t.Errorf("a1 registered again, then a restart: replaced by %q, failed %v, unavailable %v; want an agent",
			r.m.ReplacedBy("a1"), r.m.Failed("a1"), r.m.Unavailable("a1"))
	}
}

// TestReplacedIsForgotten: a replaced old id is kept only while something
// may refer to it: while the master still lists it (its listing must be
// skipped), and for the power-on timeout (a plan's agent wait) after this
// process learnt it, counted again from a restart's Load. Then it is
// dropped, in memory and in the store, so the map and the table do not
// grow with every power cycle of a machine that loses its work dir.
func TestReplacedIsForgotten(t *testing.T) {
	r := newRig(t, Config{OffAfter: time.Minute, PowerOnTimeout: 10 * time.Minute})
	ctx := context.Background()
	host := "host-a1"
	cur := powerOffA1(t, r)
	var old []string
	for cycle := 1; cycle <= 3; cycle++ {
		// The machine, off under cur.ID, is powered on and comes back
		// under a new id.
		if err := r.m.PowerOn(ctx, cur.ID); err != nil {
			t.Fatal(err)
		}
		r.tick(nil)
		r.now = r.now.Add(time.Minute)
		n := onHost(fmt.Sprintf("a1-%d", cycle), host, r.now)
		stale := drained(cur)
		stale.Active = false
		r.tick(nil, stale, n)
		if r.m.ReplacedBy(cur.ID) != n.ID {
			t.Fatalf("cycle %d: %s replaced by %q, want %s", cycle, cur.ID, r.m.ReplacedBy(cur.ID), n.ID)
		}
		old = append(old, cur.ID)
		// Past the timeout but still listed: kept (its listing is skipped).
		r.now = r.now.Add(11 * time.Minute)
		r.tick(nil, stale, busy(n))
		if r.m.ReplacedBy(cur.ID) != n.ID || len(r.m.Records()) != 1 {
			t.Fatalf("cycle %d: %s, still listed, replaced by %q (records %+v)", cycle, cur.ID, r.m.ReplacedBy(cur.ID), r.m.Records())
		}
		// No longer listed, and a restart: the timeout counts from the Load.
		r.restart()
		r.now = r.now.Add(9 * time.Minute)
		r.tick(nil, busy(n))
		if r.m.ReplacedBy(cur.ID) != n.ID || !r.m.Failed(cur.ID) {
			t.Fatalf("cycle %d: %s forgotten %s after a restart, within the power-on timeout", cycle, cur.ID, 9*time.Minute)
		}
		r.now = r.now.Add(2 * time.Minute)
		r.tick(nil, busy(n))
		if r.m.ReplacedBy(cur.ID) != "" || r.m.Failed(cur.ID) || r.m.Unavailable(cur.ID) {
			t.Fatalf("cycle %d: %s still replaced by %q past the power-on timeout, no longer listed", cycle, cur.ID, r.m.ReplacedBy(cur.ID))
		}
		if len(r.m.replaced) != 0 {
			t.Fatalf("cycle %d: replaced %v, want none", cycle, r.m.replaced)
		}
		r.store.mu.Lock()
		ids := slices.Sorted(maps.Keys(r.store.recs))
		r.store.mu.Unlock()
		if !slices.Equal(ids, []string{n.ID}) {
			t.Fatalf("cycle %d: stored records %v, want %s only (old ids %v forgotten)", cycle, ids, n.ID, old)
		}
		// Idle again: powered off under its new id.
		r.now = r.now.Add(time.Minute)
		r.tick(nil, n)
		r.now = r.now.Add(2 * time.Minute)
		r.tick(nil, n)
		r.tick(nil, drained(n))
		if r.m.StateOf(n.ID) != StateOff {
			t.Fatalf("cycle %d: %s %s, want off", cycle, n.ID, r.m.StateOf(n.ID))
		}
		cur = n
	}
}

// TestCrashWhileDrainingIsNotPoweredOff: a machine that crashes while power
// management drains it (or powers it off) and comes back under a new agent
// id runs a live agent: it is never powered off. Matched (one new agent on
// its hostname, registered after it), its record follows the new id, on;
// unmatched (an older agent shares the hostname and is in use), the
// power-off waits (a1 may register again, still deactivated: only
// powering-off brings it back on, reactivated). Before, the old id, no longer listed, was powered
// off by hostname: the providers power machines, so the live agent went
// down with it.
func TestCrashWhileDrainingIsNotPoweredOff(t *testing.T) {
	back := registered.Add(time.Hour)
	for _, c := range []struct {
		name    string
		from    State
		listing []Agent
		on      string // the id whose record is on afterwards
		a1      State  // a1's record afterwards ("" forgotten)
	}{
		{"draining, back under a new id", StateDraining, []Agent{busy(onHost("a9", "host-a1", back))}, "a9", ""},
		{"powering off, back under a new id", StatePoweringOff, []Agent{busy(onHost("a9", "host-a1", back))}, "a9", ""},
		{"draining, an older agent on the hostname at work", StateDraining, []Agent{busy(onHost("a7", "host-a1", registered.Add(-time.Hour)))}, "a7", StatePoweringOff},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, Config{})
			a1 := idle("a1", 4)
			r.tick(nil, a1)
			r.now = r.now.Add(2 * time.Minute)
			r.tick(nil, a1) // draining
			if c.from == StatePoweringOff {
				// The provider fails once: the record stays powering off.
				r.prov.failures = 1
				r.tick(nil, drained(a1))
			}
			if st := r.store.state("a1"); st != c.from {
				t.Fatalf("a1 %s before the crash, want %s", st, c.from)
			}
			r.prov.took()
			r.tick(nil, c.listing...)
			r.tick(nil, c.listing...)
			if got := r.prov.took(); len(got) != 0 {
				t.Fatalf("provider calls %v: the machine runs a live agent", got)
			}
			if st := r.m.StateOf(c.on); st != StateOn {
				t.Errorf("%s: %s, want on", c.on, st)
			}
			if got, ok := r.m.RecordOf("a1"); ok != (c.a1 != "") || (ok && got.State != c.a1) {
				t.Errorf("a1's record: %+v (%v), want state %q", got, ok, c.a1)
			}
		})
	}
}

// TestSharedMachineIdleGoesOff: a machine that runs two agents, both idle
// but not from the same moment (one ran a job a while longer), is powered
// off. Neither agent is in use: the first one drained waits in
// powering-off for the other (on, idle: not in use), which drains in turn
// and powers the machine off. Before, each agent's power-off was given up
// while the other was on, and the two took turns draining and coming back
// on: the idle machine was never powered off.
func TestSharedMachineIdleGoesOff(t *testing.T) {
	r := newRig(t, Config{OffAfter: 10 * time.Minute})
	a1, a2 := onHost("a1", "host-x", registered), onHost("a2", "host-x", registered)
	deact := map[string]bool{}
	list := func(busyA2 bool) []Agent {
		var out []Agent
		for _, a := range []Agent{a1, a2} {
			if deact[a.ID] {
				a = drained(a)
			}
			if busyA2 && a.ID == "a2" {
				a = busy(a)
			}
			out = append(out, a)
		}
		return out
	}
	follow := func() {
		for _, c := range r.mesos.took() {
			if id, ok := strings.CutPrefix(c, "drain "); ok {
				deact[id] = true
			} else if id, ok := strings.CutPrefix(c, "reactivate "); ok {
				deact[id] = false
			}
		}
	}
	// a2 runs a job for the first 5 minutes; then both are idle.
	var calls []string
	for i := 0; i < 12*60; i++ { // two hours, one tick per 10 s
		r.tick(nil, list(i < 30)...)
		follow()
		calls = append(calls, r.prov.took()...)
		if len(calls) > 0 {
			break
		}
		r.now = r.now.Add(10 * time.Second)
	}
	if len(calls) == 0 {
		t.Fatalf("the idle machine was never powered off in two hours: a1 %s, a2 %s", r.m.StateOf("a1"), r.m.StateOf("a2"))
	}
}

// TestDrainingBesideABusyAgentSurvivesMasterFailover: a machine runs two
// agents; a1 drains while a2 is at work. The Mesos master fails over: its
// agents are listed again only as they register, with new registration
// times, a2 first. a2, an agent power management knew beside a1, is not
// a1's machine back under a new id: a1 keeps its record and, once it
// registers again (still deactivated), goes back on, reactivated. Before,
// a2 took a1's record (a1 "replaced"), and a1, back, got a new on record
// while Mesos kept it deactivated: no one reactivated it.
func TestDrainingBesideABusyAgentSurvivesMasterFailover(t *testing.T) {
	r := newRig(t, Config{})
	a1 := onHost("a1", "host-x", registered)
	a2 := busy(onHost("a2", "host-x", registered.Add(time.Hour)))
	r.tick(nil, a1, a2)
	r.now = r.now.Add(2 * time.Minute)
	r.tick(nil, a1, a2)
	if st := r.store.state("a1"); st != StateDraining {
		t.Fatalf("a1 %s, want draining", st)
	}
	r.mesos.took()
	// Failover: a2 registers first, a1 later (both with new times).
	again := registered.Add(3 * time.Hour)
	a2.RegisteredAt = again
	r.now = r.now.Add(10 * time.Second)
	r.tick(nil, a2)
	r.now = r.now.Add(10 * time.Second)
	a1.RegisteredAt = again.Add(time.Second)
	for range 3 {
		r.tick(nil, drained(a1), a2)
		r.now = r.now.Add(10 * time.Second)
	}
	if got := r.prov.took(); len(got) != 0 {
		t.Fatalf("provider calls %v: a2 is at work on the machine", got)
	}
	if st := r.m.StateOf("a2"); st != StateOn {
		t.Errorf("a2 %s, want on", st)
	}
	if got := r.mesos.took(); !slices.Contains(got, "reactivate a1") || r.m.StateOf("a1") != StateOn {
		t.Errorf("a1 %s, Mesos calls %v: want it on and reactivated", r.m.StateOf("a1"), got)
	}
}

// TestSharedMachineWaitIsBounded: a1 drained for a power-off while the
// other agent on its machine stays on and idle (kept on for the warm pool)
// does not stay deactivated for good: after OffAfter + DrainTimeout it is
// back on, reactivated, and the machine is never powered off.
func TestSharedMachineWaitIsBounded(t *testing.T) {
	r := newRig(t, Config{OffAfter: 10 * time.Minute, MinWarmCPUs: 4})
	a1, a2 := onHost("a1", "host-x", registered), onHost("a2", "host-x", registered)
	deact := false
	var mesos []string
	for i := 0; i < 6*40; i++ { // 40 minutes, one tick per 10 s
		l1 := a1
		if deact {
			l1 = drained(a1)
		}
		r.tick(nil, l1, a2)
		for _, c := range r.mesos.took() {
			mesos = append(mesos, c)
			deact = c == "drain a1" || (deact && c != "reactivate a1")
		}
		if got := r.prov.took(); len(got) != 0 {
			t.Fatalf("provider calls %v: a2 is on", got)
		}
		r.now = r.now.Add(10 * time.Second)
	}
	if !slices.Contains(mesos, "reactivate a1") {
		t.Errorf("a1 never reactivated (Mesos calls %v); a1 %s", mesos, r.m.StateOf("a1"))
	}
}

// TestSharedMachineWaitEndsOnTime: the power-off of a1, waiting for the
// other agent on its machine (kept on and idle), waits exactly OffAfter +
// DrainTimeout from when it began: still waiting at that instant, given up
// (a1 back on, reactivated) just after.
func TestSharedMachineWaitEndsOnTime(t *testing.T) {
	r := newRig(t, Config{OffAfter: 10 * time.Minute, MinWarmCPUs: 4})
	a1, a2 := onHost("a1", "host-x", registered), onHost("a2", "host-x", registered)
	r.tick(nil, a1, a2)
	r.now = r.now.Add(11 * time.Minute)
	r.tick(nil, a1, a2) // a1 drains; a2 is kept for the warm floor
	r.tick(nil, drained(a1), a2)
	rec, _ := r.m.RecordOf("a1")
	if rec.State != StatePoweringOff || len(r.prov.took()) != 0 {
		t.Fatalf("a1 %s, want powering off and waiting for a2", rec.State)
	}
	r.mesos.took()
	limit := r.m.cfg.OffAfter + r.m.cfg.DrainTimeout
	r.now = rec.Since.Add(limit)
	r.tick(nil, drained(a1), a2)
	if st := r.m.StateOf("a1"); st != StatePoweringOff || slices.Contains(r.mesos.took(), "reactivate a1") {
		t.Fatalf("at OffAfter + DrainTimeout (%s): a1 %s, want still waiting", limit, st)
	}
	r.now = r.now.Add(time.Second)
	r.tick(nil, drained(a1), a2)
	if st := r.m.StateOf("a1"); st != StateOn || !slices.Contains(r.mesos.took(), "reactivate a1") {
		t.Fatalf("past OffAfter + DrainTimeout: a1 %s, want back on, reactivated", st)
	}
}

// TestForgettableAtTheHorizon: a replaced id is forgotten once this
// process has known its replacement for the horizon, at that instant.
func TestForgettableAtTheHorizon(t *testing.T) {
	known := registered
	rep := map[string]replacement{"a1": {by: "a9", known: known}}
	if got := forgettable(rep, nil, known.Add(time.Minute-time.Nanosecond), time.Minute); len(got) != 0 {
		t.Fatalf("before the horizon: %v", got)
	}
	if got := forgettable(rep, nil, known.Add(time.Minute), time.Minute); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("at the horizon: %v, want [a1]", got)
	}
}
