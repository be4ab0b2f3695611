package offers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// realGetAgents returns every GET_AGENTS answer of the real Mesos 1.12
// transcripts, decoded from their JSON.
func realGetAgents(t *testing.T) map[string]master.Response {
	t.Helper()
	dir := filepath.Join("..", "mesossim", "testdata", "transcripts")
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("transcripts in %s: %v", dir, err)
	}
	out := map[string]master.Response{}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, block := range strings.Split(string(b), "\n=== ")[1:] {
			if !strings.HasPrefix(block, "GET_AGENTS") {
				continue
			}
			j := strings.Index(block, "<<< RESPONSE")
			if j < 0 {
				continue
			}
			text := block[j:]
			k, end := strings.Index(text, "\n{"), strings.Index(text, "\n}\n")
			if k < 0 || end < k {
				continue
			}
			var resp master.Response
			if err := json.Unmarshal([]byte(text[k+1:end+2]), &resp); err != nil {
				t.Fatalf("%s, exchange %d: %v", filepath.Base(path), i, err)
			}
			out[filepath.Base(path)+"#"+block[:strings.Index(block, "\n")]+"#"+string(rune('a'+i))] = resp
		}
	}
	if len(out) < 10 {
		t.Fatalf("%d GET_AGENTS answers in the transcripts, want at least 10", len(out))
	}
	return out
}

// TestDecodeAgentsKeepsWhatIsRead: every real GET_AGENTS answer, encoded
// as protobuf, gives the same agents, statuses, labelled reservations and
// agent addresses decoded lean as decoded in full, and the lean decode
// leaves out what sparkpack does not read.
func TestDecodeAgentsKeepsWhatIsRead(t *testing.T) {
	cases := realGetAgents(t)
	cases["generated"] = generatedGetAgents()
	for name, resp := range cases {
		b, err := resp.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		var full master.Response
		if err := full.Unmarshal(b); err != nil {
			t.Fatal(err)
		}
		lean, err := decodeAgents(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		fa := full.GetAgents.Agents
		if len(lean) != len(fa) {
			t.Fatalf("%s: %d agents lean, %d in full", name, len(lean), len(fa))
		}
		prices := PriceTable{"m1.large": 0.3}
		la, lw := AgentsFromMesos(lean, prices)
		ga, gw := AgentsFromMesos(fa, prices)
		if !reflect.DeepEqual(la, ga) || !reflect.DeepEqual(lw, gw) {
			t.Errorf("%s: agents differ:\nlean %+v\nfull %+v", name, la, ga)
		}
		if ls, gs := StatusesFromMesos(lean, prices), StatusesFromMesos(fa, prices); !reflect.DeepEqual(ls, gs) {
			t.Errorf("%s: statuses differ:\nlean %+v\nfull %+v", name, ls, gs)
		}
		for i := range fa {
			l, f := lean[i], fa[i]
			id := f.AgentInfo.GetID().GetValue()
			if l.AgentInfo.GetID().GetValue() != id || l.GetPID() != f.GetPID() || l.AgentInfo.GetPort() != f.AgentInfo.GetPort() ||
				l.AgentInfo.Hostname != f.AgentInfo.Hostname {
				t.Errorf("%s: agent %s: address differs: lean %q %q:%d, full %q %q:%d", name, id,
					l.GetPID(), l.AgentInfo.Hostname, l.AgentInfo.GetPort(), f.GetPID(), f.AgentInfo.Hostname, f.AgentInfo.GetPort())
			}
			if lr, fr := LabelledReservations(id, l.TotalResources), LabelledReservations(id, f.TotalResources); !reflect.DeepEqual(lr, fr) {
				t.Errorf("%s: agent %s: labelled reservations differ: lean %+v, full %+v", name, id, lr, fr)
			}
			if len(l.OfferedResources) > 0 || len(l.Capabilities) > 0 || l.Version != "" || l.AgentInfo.Domain != nil {
				t.Errorf("%s: agent %s: the lean decode kept offered resources, capabilities, version or domain", name, id)
			}
			for _, r := range append(l.TotalResources, l.AllocatedResources...) {
				if r.Name != "cpus" && r.Name != "mem" && len(r.Reservations) == 0 && r.Reservation == nil &&
					(r.Role == nil || *r.Role == "*") {
					t.Errorf("%s: agent %s: the lean decode kept unreserved %s", name, id, r.Name)
				}
			}
		}
	}
}

// generatedGetAgents: what the transcripts lack: an agent without
// total_resources (its AgentInfo's resources count), reserved disk (the
// agent is busy), a legacy role-only reservation, a recovered agent.
func generatedGetAgents() master.Response {
	scalar := func(name string, v float64) mesos.Resource {
		return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
	}
	role := func(r mesos.Resource, role string) mesos.Resource {
		r.Role = &role
		return r
	}
	reserved := func(r mesos.Resource, role string) mesos.Resource {
		r.Reservations = []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: &role}}
		return r
	}
	ports := mesos.Resource{Name: "ports", Type: mesos.RANGES.Enum(), Ranges: &mesos.Value_Ranges{Range: []mesos.Value_Range{{Begin: 31000, End: 32000}}}}
	text := func(name, v string) mesos.Attribute {
		return mesos.Attribute{Name: name, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: v}}
	}
	pid, port := "slave(1)@10.0.0.2:5051", int32(5052)
	return master.Response{Type: master.Response_GET_AGENTS, GetAgents: &master.Response_GetAgents{
		Agents: []master.Response_GetAgents_Agent{
			{AgentInfo: mesos.AgentInfo{Hostname: "no-total", ID: &mesos.AgentID{Value: "A1"},
				Resources:  []mesos.Resource{scalar("cpus", 4), scalar("mem", 8192), ports},
				Attributes: []mesos.Attribute{text("instance_type", "m1.large")}},
				Active: true, Version: "1.12.0", PID: &pid},
			{AgentInfo: mesos.AgentInfo{Hostname: "busy", ID: &mesos.AgentID{Value: "A2"}, Port: &port,
				Resources: []mesos.Resource{scalar("cpus", 8), scalar("mem", 16384)}, Domain: &mesos.DomainInfo{}},
				Active: true, Version: "1.12.0",
				TotalResources: []mesos.Resource{scalar("cpus", 8), scalar("mem", 16384), reserved(scalar("disk", 100), "other"),
					role(scalar("disk", 5), "legacy"), scalar("disk", 1000), ports},
				AllocatedResources: []mesos.Resource{scalar("cpus", 1), scalar("disk", 10)},
				OfferedResources:   []mesos.Resource{scalar("cpus", 7)},
				Capabilities:       []mesos.AgentInfo_Capability{{Type: mesos.AgentInfo_Capability_MULTI_ROLE}}},
			// busy only for a reservation of disk, resp. a legacy one
			{AgentInfo: mesos.AgentInfo{Hostname: "reserved-disk", ID: &mesos.AgentID{Value: "A3"}}, Active: true, Version: "1.12.0",
				TotalResources: []mesos.Resource{scalar("cpus", 2), scalar("mem", 4096), reserved(scalar("disk", 100), "other")}},
			{AgentInfo: mesos.AgentInfo{Hostname: "legacy-disk", ID: &mesos.AgentID{Value: "A4"}}, Active: true, Version: "1.12.0",
				TotalResources: []mesos.Resource{scalar("cpus", 2), scalar("mem", 4096), role(scalar("disk", 5), "legacy")}},
		},
		RecoveredAgents: []mesos.AgentInfo{{Hostname: "recovered"}},
	}}
}

// TestDecodeAgentsMalformed: a cut answer is an error, never a panic.
func TestDecodeAgentsMalformed(t *testing.T) {
	resp := generatedGetAgents()
	b, err := resp.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := decodeAgents(b); err != nil {
		t.Fatal(err)
	}
	for n := 1; n < len(b); n++ {
		_, _ = decodeAgents(b[:n]) // must not panic
	}
	if _, err := decodeAgents(b[:len(b)/2]); err == nil {
		t.Error("half an answer decoded without an error")
	}
	if _, err := decodeAgents(nil); err == nil {
		t.Error("an answer without get_agents decoded without an error")
	}
}

// TestDecodeAgentsReusing: the next answer decodes (and converts) again
// only the agents that changed, and gives exactly what a full decode and
// conversion give.
func TestDecodeAgentsReusing(t *testing.T) {
	first := generatedGetAgents()
	second := generatedGetAgents()
	a2 := &second.GetAgents.Agents[1]
	a2.AllocatedResources = append(a2.AllocatedResources, scalarRes("cpus", 2, "other")) // a task started on A2
	second.GetAgents.Agents = append(second.GetAgents.Agents, getAgent("A5", 8, 16384))  // an agent came
	second.GetAgents.Agents = append(second.GetAgents.Agents[:2], second.GetAgents.Agents[3:]...)
	prices := PriceTable{"m1.large": 0.3}

	b1, err := first.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got1, sums1, prev, err := decodeAgentsReusing(b1, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, conv := convertReusing(got1, sums1, prices, nil)
	b2, err := second.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got2, sums2, _, err := decodeAgentsReusing(b2, prev)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := decodeAgents(b2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got2, fresh) {
		t.Fatalf("reusing decode differs from a fresh one:\n%+v\n%+v", got2, fresh)
	}
	shared := map[string]bool{}
	for i, a := range got2 {
		id := a.AgentInfo.GetID().GetValue()
		for j, b := range got1 {
			same := len(a.TotalResources) > 0 && len(b.TotalResources) > 0 && &a.TotalResources[0] == &b.TotalResources[0] ||
				len(a.AgentInfo.Resources) > 0 && len(b.AgentInfo.Resources) > 0 && &a.AgentInfo.Resources[0] == &b.AgentInfo.Resources[0]
			if b.AgentInfo.GetID().GetValue() == id && sums1[j] == sums2[i] && same {
				shared[id] = true
			}
		}
	}
	if want := map[string]bool{"A1": true, "A4": true}; !reflect.DeepEqual(shared, want) {
		t.Fatalf("agents reused from the last answer: %v, want %v (A2 changed, A3 left, A5 is new)", shared, want)
	}
	agents, warnings, statuses, _ := convertReusing(got2, sums2, prices, conv)
	wantAgents, wantWarnings := AgentsFromMesos(fresh, prices)
	if !reflect.DeepEqual(agents, wantAgents) || !reflect.DeepEqual(warnings, wantWarnings) {
		t.Fatalf("converted agents differ:\n%+v %v\n%+v %v", agents, warnings, wantAgents, wantWarnings)
	}
	if want := StatusesFromMesos(fresh, prices); !reflect.DeepEqual(statuses, want) {
		t.Fatalf("converted statuses differ:\n%+v\n%+v", statuses, want)
	}
}

// TestDecodeRecoveredRealMaster: the GET_AGENTS answer of a real Mesos
// 1.12 master just after a failover (testdata/get_agents_recovered_mesos1.12.md)
// lists its agent only in recovered_agents: decodeRecovered gives its id,
// and decodeAgents no agent.
func TestDecodeRecoveredRealMaster(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "get_agents_recovered_mesos1.12.pb"))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := decodeRecovered(b)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"3b8ed774-56e4-4d66-976f-d5b2f4daebec-S0"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("recovered %q, want %q", ids, want)
	}
	agents, err := decodeAgents(b)
	if err != nil || len(agents) != 0 {
		t.Fatalf("agents %v (%v), want none", agents, err)
	}
	// The answers of the transcripts (a master that did not fail over)
	// list none; a malformed one is an error, not a panic.
	for name, resp := range realGetAgents(t) {
		pb, err := resp.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if ids, err := decodeRecovered(pb); err != nil || len(ids) != 0 {
			t.Errorf("%s: recovered %q (%v), want none", name, ids, err)
		}
	}
	for n := range b {
		_, _ = decodeRecovered(b[:n]) // must not panic
	}
	if _, err := decodeRecovered(b[:len(b)-3]); err == nil {
		t.Error("a truncated answer decoded without error")
	}
}
