package power

import (
	"context"
	"slices"
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
			_, kept := r.store.recs["a1"]
			var ids []string
			for _, rec := range r.m.Records() {
				ids = append(ids, rec.AgentID)
			}
			if c.adopted {
				if kept || slices.Contains(ids, "a1") {
					t.Errorf("a1's record kept (store %v, records %v) after its machine came back as %s", kept, ids, c.on)
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
	if _, kept := r.store.recs["a1"]; kept || r.m.StateOf("a9") != StateOn || r.m.ReplacedBy("a1") != "a9" {
		t.Fatalf("after a restart: a1 kept %v, a9 %s, replaced by %q", kept, r.m.StateOf("a9"), r.m.ReplacedBy("a1"))
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
	r.tick(nil, back, other)
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
