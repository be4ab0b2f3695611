package power

import (
	"fmt"
	"testing"
	"time"
)

// TestReplacementsNewAgentsOwnState: the agent on the hostname takes over
// an off record only when power management has no other state for it (on,
// or no record at all); one it is draining or powering off is an agent of
// its own, not the machine back under a new id.
func TestReplacementsNewAgentsOwnState(t *testing.T) {
	back := registered.Add(2 * time.Hour)
	for _, c := range []struct {
		own     State // the new agent's record ("" none)
		adopted bool
	}{
		{"", true},
		{StateOn, true},
		{StateDraining, false},
		{StatePoweringOff, false},
	} {
		t.Run(fmt.Sprintf("record %q", c.own), func(t *testing.T) {
			recs := map[string]*Record{"a1": {AgentID: "a1", Hostname: "host-a1", State: StateOff, RegisteredAt: registered}}
			if c.own != "" {
				recs["a9"] = &Record{AgentID: "a9", Hostname: "host-a1", State: c.own, RegisteredAt: back}
			}
			seen := map[string]Agent{"a9": {ID: "a9", Hostname: "host-a1", Listed: true, Active: true, CPUs: 4, MemMB: 16384, RegisteredAt: back}}
			out, ambiguous := replacements(recs, seen)
			if len(ambiguous) != 0 {
				t.Fatalf("ambiguous %v", ambiguous)
			}
			n, ok := out["a1"]
			if ok != c.adopted || (ok && n.ID != "a9") {
				t.Errorf("replacements %v, want a1 taken over by a9: %v", out, c.adopted)
			}
		})
	}
}

// TestAdoptKeepsTheSizeAListingLacks: as for any agent (record), a
// listing without cpus and memory does not erase the machine's size its
// record already has. a9 is first listed beside a8 on a1's hostname
// (ambiguous: nothing adopted, a9's record is on with 4 cpus and 16384
// MiB); then a8 is gone and a9 is listed without resources: it takes a1's
// record over and keeps its size.
func TestAdoptKeepsTheSizeAListingLacks(t *testing.T) {
	r := newRig(t, Config{OffAfter: time.Minute})
	powerOffA1(t, r)
	fresh := newcomer
	r.tick(nil, fresh("a8"), busy(fresh("a9")))
	if r.m.ReplacedBy("a1") != "" {
		t.Fatalf("a1 replaced by %q with two agents on its hostname", r.m.ReplacedBy("a1"))
	}
	bare := busy(fresh("a9"))
	bare.CPUs, bare.MemMB, bare.PricePerHour = 0, 0, 0
	r.tick(nil, bare)
	if r.m.ReplacedBy("a1") != "a9" {
		t.Fatalf("a1 replaced by %q, want a9", r.m.ReplacedBy("a1"))
	}
	for _, rec := range r.m.Records() {
		if rec.AgentID == "a9" && (rec.CPUs != 4 || rec.MemMB != 16384 || rec.PricePerHour != 0.24) {
			t.Errorf("a9's record %+v: want the 4 cpus, 16384 MiB and 0.24/h it had", rec)
		}
	}
	if rec := r.store.recs["a9"]; rec.State != StateOn || rec.CPUs != 4 || rec.MemMB != 16384 {
		t.Errorf("stored a9: %+v, want on with 4 cpus and 16384 MiB", rec)
	}
}
