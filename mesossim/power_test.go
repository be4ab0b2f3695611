package mesossim

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sparkpack/sparkpack/clusterspec"
)

func oneAgent(id string) clusterspec.Cluster {
	return clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: id, Hostname: "agent-1", CPUs: 4, MemMB: 16384,
		PricePerHour: 0.24, InstanceType: "m1.large", Location: "cloud"}}}
}

// TestDeactivateReactivateMatchTheRealMaster replays transcript 17's
// DEACTIVATE/DRAIN/REACTIVATE calls (up to the agent's power cycle) against
// the emulator: same status codes, same bodies.
func TestDeactivateReactivateMatchTheRealMaster(t *testing.T) {
	exs := parseTranscript(t, "17-agent-deactivate-drain-reactivate.txt")
	realID := regexp.MustCompile(`"value": "([0-9a-f-]+-S0)"`).FindStringSubmatch(exs[0].RespBody)
	if realID == nil {
		t.Fatal("no agent id in the transcript's first GET_AGENTS")
	}
	_, base := testMaster(t, Config{Cluster: oneAgent("emu-S0")})
	checked := 0
	for _, ex := range exs {
		if strings.Contains(ex.Body, `"GET_AGENTS"`) {
			continue
		}
		if strings.Contains(ex.Title, "unreachable") {
			break // the power cycle: TestPowerCycleAndBill
		}
		body := strings.ReplaceAll(ex.Body, realID[1], "emu-S0")
		req, _ := http.NewRequest(http.MethodPost, base+"/api/v1", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != ex.Status || strings.TrimSpace(string(b)) != ex.RespBody {
			t.Errorf("%s: emulator %d %q, real master %d %q", ex.Title, resp.StatusCode, b, ex.Status, ex.RespBody)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("only %d exchanges checked", checked)
	}
}

type agentsView struct {
	GetAgents struct {
		Agents []struct {
			AgentInfo struct {
				ID struct {
					Value string `json:"value"`
				} `json:"id"`
			} `json:"agent_info"`
			Active      bool `json:"active"`
			Deactivated bool `json:"deactivated"`
			DrainInfo   *struct {
				State string `json:"state"`
			} `json:"drain_info"`
			Rereg *struct {
				Nanoseconds int64 `json:"nanoseconds"`
			} `json:"reregistered_time"`
		} `json:"agents"`
	} `json:"get_agents"`
}

func getAgentsView(t *testing.T, base string) agentsView {
	t.Helper()
	var v agentsView
	if err := json.Unmarshal(mustJSON(t, operatorJSON(t, base, `{"type":"GET_AGENTS"}`)), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestPowerCycleAndBill: a powered-off agent stops being billed, stays
// listed (inactive) until it is unreachable, registers again after the
// boot time still deactivated (as on a real master), and the bill is
// below the always-on bill.
func TestPowerCycleAndBill(t *testing.T) {
	cl := oneAgent("emu-S0")
	cl.Agents = append(cl.Agents, clusterspec.Agent{ID: "emu-S1", Hostname: "agent-2", CPUs: 8, MemMB: 32768, PricePerHour: 0.48})
	m, base := testMaster(t, Config{Cluster: cl, TimeScale: 0.001, BootTime: 100 * time.Second, UnreachableAfter: 300 * time.Millisecond})
	if st := postOperator(t, base, `{"type":"DRAIN_AGENT","drain_agent":{"agent_id":{"value":"emu-S0"}}}`); st != 200 {
		t.Fatalf("DRAIN_AGENT %d", st)
	}
	if err := m.PowerOff("emu-S0"); err != nil {
		t.Fatal(err)
	}
	if err := m.PowerOff("emu-S0"); err != nil {
		t.Fatalf("powering off an agent that is off: %v", err)
	}
	v := getAgentsView(t, base)
	if len(v.GetAgents.Agents) != 2 || v.GetAgents.Agents[0].Active || !v.GetAgents.Agents[0].Deactivated {
		t.Fatalf("right after the power-off: %+v", v.GetAgents.Agents)
	}
	b0 := m.Bill()
	time.Sleep(50 * time.Millisecond)
	b1 := m.Bill()
	if b1.Agents[0].PoweredOnSeconds != b0.Agents[0].PoweredOnSeconds || b1.Agents[1].PoweredOnSeconds <= b0.Agents[1].PoweredOnSeconds || b1.Agents[0].PoweredOn {
		t.Fatalf("the powered-off agent is still billed: %+v then %+v", b0.Agents, b1.Agents)
	}
	waitFor(t, "the agent to become unreachable", func() bool { return len(getAgentsView(t, base).GetAgents.Agents) == 1 })
	body := `{"type":"REACTIVATE_AGENT","reactivate_agent":{"agent_id":{"value":"emu-S0"}}}`
	if st := postOperator(t, base, body); st != http.StatusBadRequest {
		t.Fatalf("REACTIVATE_AGENT of a drained unreachable agent: %d, want 400 (still DRAINING)", st)
	}
	if err := m.PowerOn("emu-S0"); err != nil {
		t.Fatal(err)
	}
	if err := m.PowerOn("emu-S0"); err != nil {
		t.Fatalf("powering on a booting agent: %v", err)
	}
	if !m.Agents()[0].Booting {
		t.Fatal("not booting after the power-on")
	}
	if !m.Bill().Agents[0].PoweredOn {
		t.Fatal("a booting machine is not billed")
	}
	waitFor(t, "the agent to register again", func() bool { return len(getAgentsView(t, base).GetAgents.Agents) == 2 })
	a := getAgentsView(t, base).GetAgents.Agents[0]
	if a.Active || !a.Deactivated || a.DrainInfo == nil || a.DrainInfo.State != "DRAINED" || a.Rereg == nil {
		t.Fatalf("back after the power-on: %+v; want inactive, deactivated, DRAINED, with a reregistered_time", a)
	}
	if st := postOperator(t, base, body); st != 200 {
		t.Fatalf("REACTIVATE_AGENT: %d", st)
	}
	if a := getAgentsView(t, base).GetAgents.Agents[0]; !a.Active || a.Deactivated || a.DrainInfo != nil {
		t.Fatalf("after REACTIVATE_AGENT: %+v", a)
	}
	bill := m.Bill()
	if bill.TotalUSD <= 0 || bill.TotalUSD >= bill.AlwaysOnUSD {
		t.Fatalf("bill %+v: want 0 < total < always-on", bill)
	}
	resp, err := http.Get(base + "/sim/bill")
	if err != nil {
		t.Fatal(err)
	}
	var wire Bill
	if err := json.NewDecoder(resp.Body).Decode(&wire); err != nil || len(wire.Agents) != 2 || wire.AlwaysOnUSD <= 0 {
		t.Fatalf("GET /sim/bill: %+v %v", wire, err)
	}
	resp.Body.Close()
}

// TestDeactivatedAgentGetsNoOffers: no offer comes from a deactivated
// agent; after REACTIVATE_AGENT offers come again.
func TestDeactivatedAgentGetsNoOffers(t *testing.T) {
	_, base := testMaster(t, Config{Cluster: oneAgent("emu-S0")})
	f := subscribeRole(t, base, "r")
	o := f.next(scheduler.Event_OFFERS, 5*time.Second).Offers.Offers[0]
	if st := postOperator(t, base, `{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":"emu-S0"}}}`); st != 200 {
		t.Fatalf("DEACTIVATE_AGENT %d", st)
	}
	if r := f.next(scheduler.Event_RESCIND, 5*time.Second).Rescind; r.OfferID.Value != o.ID.Value {
		t.Fatalf("rescinded %s, want the outstanding offer %s", r.OfferID.Value, o.ID.Value)
	}
	f.none(scheduler.Event_OFFERS, 500*time.Millisecond)
	if st := postOperator(t, base, `{"type":"REACTIVATE_AGENT","reactivate_agent":{"agent_id":{"value":"emu-S0"}}}`); st != 200 {
		t.Fatalf("REACTIVATE_AGENT %d", st)
	}
	f.next(scheduler.Event_OFFERS, 5*time.Second)
}

// TestUnreserveWhileDisconnectedIsLost: an operator's UNRESERVE on a
// deactivated agent is applied (202, gone from GET_AGENTS) while it is
// connected, and stays so; on one whose machine is off (still listed) it
// is answered 202 and shown, but the agent re-registers with the
// reservation it checkpointed. Seen on a real Mesos 1.12.0 master
// (2026-11-26, one agent of cpus:4;mem:4096, role "test"): RESERVE 202;
// DEACTIVATE_AGENT 200; GET_AGENTS active false, deactivated true, the
// reservation listed; UNRESERVE 202, GET_AGENTS without it; the agent's
// process killed and UNRESERVE again after a new RESERVE: 202, GET_AGENTS
// without it; the agent started again: GET_AGENTS lists the reservation.
// Reservations() (the agents' side) lists it all along.
func TestUnreserveWhileDisconnectedIsLost(t *testing.T) {
	m, base := testMaster(t, Config{Cluster: oneAgent("emu-S0"), TimeScale: 0.001, BootTime: 100 * time.Second, UnreachableAfter: time.Hour})
	const res = `"resources":[{"type":"SCALAR","name":"cpus","scalar":{"value":1},"reservations":[{"type":"DYNAMIC","role":"test"}]}]`
	reserve := `{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"emu-S0"},` + res + `}}`
	unreserve := `{"type":"UNRESERVE_RESOURCES","unreserve_resources":{"agent_id":{"value":"emu-S0"},` + res + `}}`
	reserved := func() bool {
		return strings.Contains(string(mustJSON(t, operatorJSON(t, base, `{"type":"GET_AGENTS"}`))), `"role":"test"`)
	}
	call := func(body string, want int) {
		t.Helper()
		if st := postOperator(t, base, body); st != want {
			t.Fatalf("%.40s...: %d, want %d", body, st, want)
		}
	}
	call(reserve, http.StatusAccepted)
	call(`{"type":"DEACTIVATE_AGENT","deactivate_agent":{"agent_id":{"value":"emu-S0"}}}`, http.StatusOK)
	if !reserved() {
		t.Fatal("the reservation is not listed on the deactivated agent")
	}
	call(unreserve, http.StatusAccepted)
	if reserved() {
		t.Fatal("UNRESERVE on a connected deactivated agent left the reservation")
	}
	call(reserve, http.StatusAccepted)
	if err := m.PowerOff("emu-S0"); err != nil {
		t.Fatal(err)
	}
	call(unreserve, http.StatusAccepted)
	if reserved() {
		t.Fatal("the master's view still lists the reservation after the UNRESERVE")
	}
	// What the agents hold (/sim/reservations, the chaos suite's leak
	// check) is what the agent keeps: it comes back with it.
	if rs := m.Reservations(); len(rs) != 1 || rs[0].Role != "test" || rs[0].CPUs != 1 {
		t.Fatalf("Reservations() %+v while the agent is off; want its checkpointed 1 cpu in role test", rs)
	}
	if err := m.PowerOn("emu-S0"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the agent to register again", func() bool {
		a := getAgentsView(t, base).GetAgents.Agents
		return len(a) == 1 && a[0].Rereg != nil
	})
	if !reserved() {
		t.Fatal("the agent came back without the reservation it checkpointed")
	}
}
