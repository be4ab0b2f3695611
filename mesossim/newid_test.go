package mesossim

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// TestPowerCycleWithALostWorkDir: with AgentsLoseWorkDir, a powered-on
// agent registers as a new agent, as a real Mesos 1.12 master showed it
// (2026-11-27, docs/power.md): a new id on the same hostname, registered
// anew (no reregistered_time), active, without the reservation the old
// agent had; the old id is unknown at once (UNRESERVE: 400 "No agent found
// with specified ID", DEACTIVATE_AGENT: 400 "Unknown agent",
// REACTIVATE_AGENT: 400 "Agent is not deactivated"). The power API still
// takes the old id (it names the machine), and the machine's bill goes on
// under the new id. Without the option the same id comes back with its
// reservation (TestPowerCycleAndBill).
func TestPowerCycleWithALostWorkDir(t *testing.T) {
	m, base := testMaster(t, Config{Cluster: oneAgent("emu-S0"), TimeScale: 0.001, BootTime: 50 * time.Second,
		UnreachableAfter: time.Hour, AgentsLoseWorkDir: true})
	call := func(body string) (int, string) {
		t.Helper()
		return postOperatorBody(t, base, body)
	}
	res := `[{"name":"cpus","type":"SCALAR","scalar":{"value":1},"reservations":[{"type":"DYNAMIC","role":"r1"}]}]`
	if st, b := call(`{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"emu-S0"},"resources":` + res + `}}`); st != http.StatusAccepted {
		t.Fatalf("RESERVE_RESOURCES: %d %s", st, b)
	}
	if st, _ := call(`{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":"emu-S0"}}}`); st != http.StatusOK {
		t.Fatalf("DEACTIVATE_AGENT: %d", st)
	}
	if err := m.PowerOff("emu-S0"); err != nil {
		t.Fatal(err)
	}
	before := m.Bill().Agents[0].PoweredOnSeconds
	if err := m.PowerOn("emu-S0"); err != nil {
		t.Fatal(err)
	}
	var newID string
	waitFor(t, "the agent to register again", func() bool {
		for _, a := range m.Agents() {
			if !a.PoweredOff {
				newID = a.ID
			}
		}
		return newID != ""
	})
	if newID == "emu-S0" {
		t.Fatal("the agent kept its id although its work dir was lost")
	}
	ags := m.Agents()
	if len(ags) != 1 || ags[0].Hostname != "agent-1" || ags[0].Deactivated || strings.Contains(ags[0].Total, "r1") {
		t.Fatalf("agents after the power-on %+v; want one, %s, on agent-1, not deactivated, without the reservation", ags, newID)
	}
	if rs := m.Reservations(); len(rs) != 0 {
		t.Fatalf("reservations after the power-on: %+v; want none (checkpointed in the lost work dir)", rs)
	}
	v := getAgentsView(t, base).GetAgents.Agents
	if len(v) != 1 || v[0].AgentInfo.ID.Value != newID || !v[0].Active || v[0].Rereg != nil {
		t.Fatalf("GET_AGENTS %+v; want %s only, active, registered anew", v, newID)
	}
	for _, c := range []struct{ body, want string }{
		{`{"type":"UNRESERVE_RESOURCES","unreserve_resources":{"agent_id":{"value":"emu-S0"},"resources":` + res + `}}`, "No agent found with specified ID"},
		{`{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":"emu-S0"}}}`, "Unknown agent"},
		{`{"type":"REACTIVATE_AGENT","reactivate_agent":{"agent_id":{"value":"emu-S0"}}}`, "Agent is not deactivated"},
	} {
		if st, b := call(c.body); st != http.StatusBadRequest || b != c.want {
			t.Errorf("%s on the old id: %d %q, want 400 %q", c.body[9:30], st, b, c.want)
		}
	}
	// The power API names the machine: the old id powers the new agent.
	if err := m.PowerOn("emu-S0"); err != nil {
		t.Fatalf("power-on by the old id of a machine that is on: %v", err)
	}
	bill := m.Bill()
	if len(bill.Agents) != 1 || bill.Agents[0].ID != newID || !bill.Agents[0].PoweredOn || bill.Agents[0].PoweredOnSeconds < before {
		t.Fatalf("bill %+v; want one line, %s, on, carrying the %v s before the power cycle", bill.Agents, newID, before)
	}
	if err := m.PowerOff("emu-S0"); err != nil {
		t.Fatal(err)
	}
	if a := m.Agents(); len(a) != 1 || !a[0].PoweredOff {
		t.Fatalf("power-off by the old id: %+v", a)
	}
}

// TestLostWorkDirNewIDs: the new id keeps the old one's prefix up to its
// last -S<n> and takes the next number not used by an agent, a bill line
// or an old id (from the bill's length on), other agents keep their ids
// and order, and the power API follows a machine through two new ids.
func TestLostWorkDirNewIDs(t *testing.T) {
	cl := clusterspec.Cluster{Name: "three"}
	for i, id := range []string{"emu-S0", "emu-S3", "-S9"} {
		cl.Agents = append(cl.Agents, clusterspec.Agent{ID: id, Hostname: fmt.Sprintf("agent-%d", i+1), CPUs: 4, MemMB: 16384,
			PricePerHour: 0.24, InstanceType: "m1.large", Location: "cloud"})
	}
	m, _ := testMaster(t, Config{Cluster: cl, TimeScale: 0.001, BootTime: 50 * time.Second,
		UnreachableAfter: time.Hour, AgentsLoseWorkDir: true})
	cycle := func(id, host string) string {
		t.Helper()
		if err := m.PowerOff(id); err != nil {
			t.Fatal(err)
		}
		if err := m.PowerOn(id); err != nil {
			t.Fatal(err)
		}
		var newID string
		waitFor(t, host+" to register again", func() bool {
			for _, a := range m.Agents() {
				if a.Hostname == host && !a.PoweredOff {
					newID = a.ID
				}
			}
			return newID != ""
		})
		return newID
	}
	ids := func() string {
		var out []string
		for _, a := range m.Agents() {
			out = append(out, a.ID)
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct{ id, host, want, all string }{
		// 3 bill lines: -S3 is the first number tried, taken by the agent itself.
		{"emu-S3", "agent-2", "emu-S4", "-S9 emu-S0 emu-S4"},
		// An id that is only "-S<n>" has the empty prefix.
		{"-S9", "agent-3", "-S3", "-S3 emu-S0 emu-S4"},
		// The old id names the machine (now emu-S4); emu-S3 is an old id.
		{"emu-S3", "agent-2", "emu-S5", "-S3 emu-S0 emu-S5"},
	} {
		if got := cycle(c.id, c.host); got != c.want {
			t.Fatalf("power cycle of %s: new id %q, want %q", c.id, got, c.want)
		}
		if got := ids(); got != c.all {
			t.Fatalf("after the power cycle of %s: agents %q, want %q", c.id, got, c.all)
		}
	}
}
