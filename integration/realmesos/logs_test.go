package realmesos

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// logChunk is GET /api/v1/jobs/{id}/logs.
type logChunk struct {
	Data       string `json:"data"`
	Size       int64  `json:"size"`
	Ended      bool   `json:"ended"`
	AgentID    string `json:"agentId"`
	SandboxURL string `json:"sandboxUrl"`
	Error      string `json:"error"`
}

// requireDriverLog reads a finished job's driver stderr through sparkpack,
// which reads it from the driver's sandbox on the agent that ran it: on a
// real agent the real command executor's lines and what the driver (here
// fakespark) wrote; on the emulator its simulated ones. Both hold the
// executor's "Starting task <driver task id>".
func requireDriverLog(t *testing.T, tg *target, api, jobID, driverSays string) {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/jobs/" + jobID + "/logs?file=stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var c logChunk
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatalf("%s: logs of job %s: not JSON: %s", tg.name, jobID, b)
	}
	if resp.StatusCode != 200 || !c.Ended || c.AgentID == "" || c.Size == 0 ||
		!strings.Contains(c.Data, "Starting task sparkpack-driver-"+jobID) || !strings.Contains(c.SandboxURL, "/files/browse?path=") {
		t.Errorf("%s: logs of job %s: %d %+v", tg.name, jobID, resp.StatusCode, c)
	}
	if driverSays != "" && tg.name == "real" && !strings.Contains(c.Data, driverSays) {
		t.Errorf("%s: the driver's stderr lacks %q:\n%s", tg.name, driverSays, c.Data)
	}
}
