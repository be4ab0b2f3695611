package offers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/master"
)

// transcriptBody returns the JSON body of the response of the exchange
// titled title in a real Mesos 1.12 transcript under ../../shared.
func transcriptBody(t *testing.T, file, title string) []byte {
	t.Helper()
	path := filepath.Join("..", "mesossim", "testdata", "transcripts", file)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("transcript %s: %v", path, err)
	}
	text := string(b)
	i := strings.Index(text, "=== "+title)
	if i < 0 {
		t.Fatalf("no exchange %q in %s", title, file)
	}
	text = text[i:]
	j := strings.Index(text, "<<< RESPONSE")
	text = text[j:]
	k := strings.Index(text, "\n{")
	end := strings.Index(text, "\n}\n")
	return []byte(text[k+1 : end+2])
}

func TestAgentsFromRealGetAgents(t *testing.T) {
	body := transcriptBody(t, "04-operator-reserve.txt", "GET_AGENTS after the first reservation")
	var resp master.Response
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("decode the real GET_AGENTS: %v", err)
	}
	agents, warnings := AgentsFromMesos(resp.GetAgents.Agents, nil)
	if len(agents) != 2 || len(warnings) != 0 {
		t.Fatalf("%d agents, warnings %v", len(agents), warnings)
	}
	var s0 Agent
	for _, a := range agents {
		if strings.HasSuffix(a.ID, "-S0") {
			s0 = a
		}
	}
	if s0.CPUs != 4 || s0.MemMB != 16384 || s0.FreeCPUs != 2 || s0.FreeMemMB != 12288 {
		t.Errorf("S0 sizes: %+v", s0)
	}
	if s0.PricePerHour != 0.24 || s0.Location != "local" || s0.Attributes["instance_type"] != "m1.large" {
		t.Errorf("S0 attributes: %+v", s0)
	}
	if len(s0.Reservations) != 1 {
		t.Fatalf("S0 reservations: %+v", s0.Reservations)
	}
	r := s0.Reservations[0]
	if r.JobID != "1" || r.Role != "sparkpack-job-1" || r.CPUs != 2 || r.MemMB != 4096 {
		t.Errorf("reservation %+v", r)
	}
	for _, res := range forUnreserve(r.Resources) {
		if res.Role != nil || res.Reservation != nil || len(res.Reservations) != 1 {
			t.Errorf("unreserve form keeps legacy fields: %+v", res)
		}
	}
	snap := Snapshot(agents)
	for _, a := range snap.Agents {
		if a.ID == s0.ID && (!a.Active || a.PriceMicroUSDPerHour != 240000) {
			t.Errorf("snapshot agent %+v", a)
		}
	}
}

func TestParsePriceTable(t *testing.T) {
	pt, err := ParsePriceTable("m1.large=0.24, m1.xlarge=0.48")
	if err != nil || pt["m1.xlarge"] != 0.48 || len(pt) != 2 {
		t.Fatalf("%v %v", pt, err)
	}
	for _, bad := range []string{"x", "a=-1", "=1", "a=NaN", "a=b"} {
		if _, err := ParsePriceTable(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
