package integration

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2EPowerAgentsBackUnderNewIDs: every agent's work dir is lost when
// its machine stops (mesossim AgentsLoseWorkDir, as on a real Mesos 1.12
// master with a wiped work dir: a new agent id, the old agent removed at
// once). Two jobs that each need the two cheap machines powered on run one
// after the other: each time the machines come back under new ids, the
// jobs run there, and the machines go off again. Power management must not
// keep waiting for the old ids: the cluster view shows each machine once
// (no "booting" record of an old id, no old id as a lost agent), and the
// second job gets its machines powered on at once instead of waiting for
// old ids to boot until --power-on-timeout (10 minutes here, far beyond
// the test's waits).
func TestE2EPowerAgentsBackUnderNewIDs(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: powerCluster(), BootTime: 20 * time.Second, UnreachableAfter: 2 * time.Second,
		AgentsLoseWorkDir: true})
	watch := watchPower(emu.Master)
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--policy", "exact", "--power-off-after", "1s", "--power-provider", "emulator",
		"--power-tick", "100ms", "--power-on-timeout", "10m")
	waitUntil(t, 60*time.Second, "every idle agent to be powered off", func() bool { return allOff(emu.Master, 4) })

	seen := map[string]bool{"p-S0": true, "p-S1": true, "p-S2": true, "p-S3": true}
	for round := 1; round <= 2; round++ {
		id := submit(t, sp.API, sparkJob("needs-room", 3, 2, 1024, 20))
		v := waitState(t, sp.API, id, 3*time.Minute, "FINISHED", "FAILED", "KILLED")
		if v.State != "FINISHED" {
			t.Fatalf("round %d: job %s ended %s (%s)", round, id, v.State, v.WaitingReason)
		}
		var hosts []string
		for _, a := range v.Placement {
			hosts = append(hosts, a.Hostname)
			if seen[a.AgentID] {
				t.Errorf("round %d: the job ran on %s, an id its machine had before this power-on", round, a.AgentID)
			}
			seen[a.AgentID] = true
		}
		slices.Sort(hosts)
		if !slices.Equal(hosts, []string{"power-S0", "power-S1"}) {
			t.Errorf("round %d: the job ran on %v; want the two cheap machines", round, hosts)
		}
		waitUntil(t, 60*time.Second, "the agents to be powered off again after the job", func() bool { return allOff(emu.Master, 4) })
		// Until the master marks them unreachable they are still listed.
		waitUntil(t, 60*time.Second, "the master to stop listing the agents that are off", func() bool { return listedAgents(t, emu.URL) == 0 })
		var cv struct {
			Agents []struct {
				ID       string `json:"id"`
				Hostname string `json:"hostname"`
				Power    string `json:"power"`
			} `json:"agents"`
			Summary struct {
				Agents  int            `json:"agents"`
				ByPower map[string]int `json:"byPower"`
			} `json:"summary"`
		}
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			getJSON(t, sp.API+"/api/v1/cluster", &cv)
			if cv.Summary.Agents == 4 && cv.Summary.ByPower["off"] == 4 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("round %d: 30 s after the machines went off the cluster view shows %d agents, by power %v: %+v; want each machine once, off",
					round, cv.Summary.Agents, cv.Summary.ByPower, cv.Agents)
				break
			}
		}
		for _, a := range cv.Agents {
			if !strings.HasPrefix(a.Hostname, "power-") {
				t.Errorf("round %d: cluster view agent %+v", round, a)
			}
		}
	}
	violations, _ := watch.finish()
	if len(violations) > 0 {
		t.Fatalf("agents powered off while holding work: %v", violations)
	}
	if b := emulatorBill(t, emu.URL); len(b.Agents) != 4 {
		t.Errorf("the emulator bills %d agents, want the 4 machines", len(b.Agents))
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}

// listedAgents is how many agents the master's GET_AGENTS lists.
func listedAgents(t *testing.T, base string) int {
	t.Helper()
	resp, err := http.Post(base+"/api/v1", "application/json", strings.NewReader(`{"type":"GET_AGENTS"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		GetAgents struct {
			Agents []json.RawMessage `json:"agents"`
		} `json:"get_agents"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return len(v.GetAgents.Agents)
}
