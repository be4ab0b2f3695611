package power_test

import (
	"fmt"
	"testing"

	"github.com/sparkpack/sparkpack/power"
)

// TestStandbyCountsAgentsInPassing: every agent plans cannot use now is a
// standby agent, so the core's picture of what the cluster could hold
// never misses one: agents draining, powering off or booting are listed
// with no room (a job must not be rejected as too big for the cluster
// while one of its agents is on its way off); an agent on is not (it is
// in the snapshot).
func TestStandbyCountsAgentsInPassing(t *testing.T) {
	now := start
	var recs []power.Record
	for i, st := range []power.State{power.StateOn, power.StateDraining, power.StatePoweringOff, power.StateOff, power.StateBooting} {
		r := offRecord(now)
		r.AgentID, r.Hostname, r.State = fmt.Sprintf("a%d", i), fmt.Sprintf("host-a%d", i), st
		recs = append(recs, r)
	}
	m := defaultsManager(t, okCloud{}, &now, recs...)
	got := map[string]float64{}
	for _, a := range m.StandbyAgents() {
		if a.CPUs != 4 {
			t.Errorf("standby %s has %g cpus, want its whole 4", a.ID, a.CPUs)
		}
		got[a.ID] = a.FreeCPUs
	}
	want := map[string]float64{"a1": 0, "a2": 0, "a3": 4, "a4": 0}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("standby agents (free cpus) %v, want %v", got, want)
	}
}
