package power

// Tests written from the mutants scripts/mutation.sh found alive in
// views.go (docs/testing.md, "Mutation testing"); expected values by hand.

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// recordsRig is a rig whose manager starts from the given records (as
// after a restart).
func recordsRig(t *testing.T, cfg Config, recs ...Record) *rig {
	t.Helper()
	r := newRig(t, cfg)
	for _, rec := range recs {
		r.store.recs[rec.AgentID] = rec
	}
	r.restart()
	return r
}

func rec(id string, st State, cpus float64, loc string) Record {
	return Record{AgentID: id, Hostname: "host-" + id, CPUs: cpus, MemMB: 16384, PricePerHour: 0.24,
		Attributes: map[string]string{"location": loc}, State: st, Since: registered, RegisteredAt: registered}
}

// TestStandbyAgentsView: the standby agents come sorted by id (whatever
// order the records are kept in), with the location their attribute
// names (local only for "local"; anything else is the cloud), and a
// record whose size is unknown (0 cpus, never seen registered) is not
// listed.
func TestStandbyAgentsView(t *testing.T) {
	r := recordsRig(t, Config{},
		rec("c3", StateOff, 4, "local"), rec("a1", StateOff, 8, "cloud"), rec("b2", StateOff, 2, "onprem"),
		rec("d4", StateOff, 0, "cloud"))
	var got []string
	for _, a := range r.m.StandbyAgents() {
		got = append(got, fmt.Sprintf("%s %g %s", a.ID, a.FreeCPUs, a.Location))
	}
	want := []string{"a1 8 " + string(placement.LocationCloud), "b2 2 " + string(placement.LocationCloud), "c3 4 " + string(placement.LocationLocal)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("standby agents %q, want %q", got, want)
	}
}

// TestBootStateView: with no boot time configured the pass is told
// nothing, even of an agent booting now; with one, booting agents of
// unknown size (0 cpus) are left out and the others come sorted by id,
// each ready a boot time after its power-on (Since + 45 s).
func TestBootStateView(t *testing.T) {
	recs := []Record{rec("b2", StateBooting, 4, "cloud"), rec("a1", StateBooting, 8, "cloud"), rec("c3", StateBooting, 0, "cloud")}
	if bs := recordsRig(t, Config{}, recs...).m.BootState(); bs.BootTime != 0 || bs.Booting != nil {
		t.Fatalf("without a boot time: %+v", bs)
	}
	bs := recordsRig(t, Config{BootTime: 45 * time.Second}, recs...).m.BootState()
	var got []string
	for _, b := range bs.Booting {
		got = append(got, fmt.Sprintf("%s %g %s", b.Agent.ID, b.Agent.CPUs, b.ReadyAt.Sub(registered)))
	}
	if want := []string{"a1 8 45s", "b2 4 45s"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("booting %q, want %q", got, want)
	}
}

// TestRecordsSorted: Records come sorted by agent id.
func TestRecordsSorted(t *testing.T) {
	r := recordsRig(t, Config{}, rec("c3", StateOff, 4, "cloud"), rec("a1", StateOff, 4, "cloud"), rec("b2", StateOff, 4, "cloud"))
	var got []string
	for _, x := range r.m.Records() {
		got = append(got, x.AgentID)
	}
	if want := []string{"a1", "b2", "c3"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("records %v, want %v", got, want)
	}
}

// TestNextIdleExpiryOnlyAgentsOn: the next idle expiry is that of the
// agents on and idle: b1 came back from a boot at 10:00 (its idle timer
// starts then) but Mesos refused to reactivate it, so it is still
// booting and does not count; a1 idle from 10:00:30 reaches OffAfter
// (1 min) at 10:01:30. Before a1 is seen idle nothing is due.
func TestNextIdleExpiryOnlyAgentsOn(t *testing.T) {
	r := recordsRig(t, Config{OffAfter: time.Minute}, rec("b1", StateBooting, 4, "cloud"))
	r.mesos.fail = errors.New("master unavailable")
	start := r.now
	r.tick(nil, rebooted(drained(idle("b1", 4))))
	if st := r.m.StateOf("b1"); st != StateBooting {
		t.Fatalf("b1 %s, want still booting (reactivation failed)", st)
	}
	if at, ok := r.m.NextIdleExpiry(); ok {
		t.Fatalf("next idle expiry %s with no agent on and idle", at)
	}
	r.now = start.Add(30 * time.Second)
	r.tick(nil, rebooted(drained(idle("b1", 4))), idle("a1", 4))
	at, ok := r.m.NextIdleExpiry()
	if want := start.Add(90 * time.Second); !ok || !at.Equal(want) {
		t.Fatalf("next idle expiry %s (%v), want %s", at, ok, want)
	}
}
