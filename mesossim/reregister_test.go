package mesossim

import (
	"encoding/json"
	"testing"
	"time"
)

// registeredTimes is an agent's registered_time and reregistered_time
// (nanoseconds; 0 absent) as GET_AGENTS lists it (ok: listed).
func registeredTimes(t *testing.T, base, id string) (reg, rereg int64, ok bool) {
	t.Helper()
	var v struct {
		GetAgents struct {
			Agents []struct {
				AgentInfo struct {
					ID struct {
						Value string `json:"value"`
					} `json:"id"`
				} `json:"agent_info"`
				Reg *struct {
					Nanoseconds int64 `json:"nanoseconds"`
				} `json:"registered_time"`
				Rereg *struct {
					Nanoseconds int64 `json:"nanoseconds"`
				} `json:"reregistered_time"`
			} `json:"agents"`
		} `json:"get_agents"`
	}
	if err := json.Unmarshal(mustJSON(t, operatorJSON(t, base, `{"type":"GET_AGENTS"}`)), &v); err != nil {
		t.Fatal(err)
	}
	for _, a := range v.GetAgents.Agents {
		if a.AgentInfo.ID.Value != id {
			continue
		}
		if a.Reg != nil {
			reg = a.Reg.Nanoseconds
		}
		if a.Rereg != nil {
			rereg = a.Rereg.Nanoseconds
		}
		return reg, rereg, true
	}
	return 0, 0, false
}

// TestRegisteredTimeAfterACrash: as on a real 1.12 master
// (scripts/mesos-agent-crash.sh, docs/power.md), an agent restarted with
// its work dir before its ping timeouts keeps its registered_time and gets
// a reregistered_time; one restarted after it was marked unreachable is
// registered anew: registered_time moves too, to its reregistered_time;
// and so is one powered on again once unreachable.
func TestRegisteredTimeAfterACrash(t *testing.T) {
	const unreachable = 300 * time.Millisecond
	m, base := testMaster(t, Config{Cluster: oneAgent("a-S0"), UnreachableAfter: unreachable, BootTime: 50 * time.Millisecond, TimeScale: 1})
	reg0, rereg0, ok := registeredTimes(t, base, "a-S0")
	if !ok || reg0 == 0 || rereg0 != 0 {
		t.Fatalf("a new agent: registered %d, reregistered %d, listed %v; want a registered_time only", reg0, rereg0, ok)
	}
	if err := m.CrashAgent("a-S0"); err != nil {
		t.Fatal(err)
	}
	if err := m.RestartAgent("a-S0"); err != nil {
		t.Fatal(err)
	}
	reg, rereg, _ := registeredTimes(t, base, "a-S0")
	if reg != reg0 || rereg <= reg0 {
		t.Fatalf("restarted before its ping timeouts: registered %d, reregistered %d; want registered %d kept, a later reregistered", reg, rereg, reg0)
	}
	if err := m.CrashAgent("a-S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the crashed agent to be marked unreachable", func() bool { _, _, ok := registeredTimes(t, base, "a-S0"); return !ok })
	if err := m.RestartAgent("a-S0"); err != nil {
		t.Fatal(err)
	}
	reg2, rereg2, ok := registeredTimes(t, base, "a-S0")
	if !ok || reg2 <= rereg || rereg2 != reg2 {
		t.Fatalf("restarted once unreachable: registered %d, reregistered %d, listed %v; want both the same, after %d", reg2, rereg2, ok, rereg)
	}
	if err := m.PowerOff("a-S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the powered-off agent to be marked unreachable", func() bool { _, _, ok := registeredTimes(t, base, "a-S0"); return !ok })
	if err := m.PowerOn("a-S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent to register again", func() bool { _, _, ok := registeredTimes(t, base, "a-S0"); return ok })
	if reg3, rereg3, _ := registeredTimes(t, base, "a-S0"); reg3 <= rereg2 || rereg3 != reg3 {
		t.Fatalf("powered on once unreachable: registered %d, reregistered %d; want both the same, after %d", reg3, rereg3, rereg2)
	}
}
