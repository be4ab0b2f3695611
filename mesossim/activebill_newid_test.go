package mesossim

import (
	"net/http"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// TestActiveBillEndsWithTheAgent: the active bill counts an agent while it
// holds a dynamic reservation; the reservation ends when the agent does.
// A machine stopped while it held one (a crash: power management never
// powers off an agent that holds work) that comes back under a new agent
// id (AgentsLoseWorkDir) comes back without it, and an agent removed
// (LoseAgent, RemoveAgent) takes its reservations with it: from then on
// the active bill must not grow while nothing is reserved anywhere. It
// grew for ever (the old id's busy interval was never closed).
func TestActiveBillEndsWithTheAgent(t *testing.T) {
	res := `"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":2},"reservations":[{"type":"DYNAMIC","role":"r1"}]}]`
	for _, c := range []struct {
		name string
		end  func(m *Master) error
	}{
		{"back under a new id", func(m *Master) error {
			if err := m.PowerOff("one-S0"); err != nil {
				return err
			}
			return m.PowerOn("one-S0")
		}},
		{"lost", func(m *Master) error { return m.LoseAgent("one-S0") }},
		{"removed", func(m *Master) error { return m.RemoveAgent("one-S0") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, base := testMaster(t, Config{Cluster: clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{
				{ID: "one-S0", Hostname: "agent-1", CPUs: 4, MemMB: 8192, PricePerHour: 3600}}},
				TimeScale: 0.001, BootTime: 10 * time.Second, UnreachableAfter: time.Hour, AgentsLoseWorkDir: true})
			if st := postOperator(t, base, `{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"one-S0"},`+res+`}}`); st != http.StatusAccepted {
				t.Fatalf("reserve: %d", st)
			}
			if err := c.end(m); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the agent to be gone or back under a new id", func() bool {
				for _, a := range m.Agents() {
					if a.ID == "one-S0" {
						return false
					}
				}
				return true
			})
			for _, r := range m.Reservations() {
				if r.Role == "r1" {
					t.Fatalf("reservation left: %+v", r)
				}
			}
			before := m.Bill().ActiveUSD
			if before <= 0 {
				t.Fatalf("active bill $%v: the reservation was not billed", before)
			}
			time.Sleep(20 * time.Millisecond)
			if after := m.Bill().ActiveUSD; after != before {
				t.Errorf("with nothing reserved the active bill went from $%v to $%v", before, after)
			}
		})
	}
}
