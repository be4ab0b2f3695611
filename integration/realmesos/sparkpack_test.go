package realmesos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/testharness"
)

// The tests run the real sparkpack binary, with fakespark as its
// spark-submit, both built once per test run.
var bins struct {
	once      sync.Once
	dir       string
	sparkpack string
	fakespark string
	err       error
}

// bins0 returns the test run's binary directory (building the binaries).
func bins0(t *testing.T) string {
	binaries(t)
	return bins.dir
}

func binaries(t *testing.T) (sparkpack, fakespark string) {
	t.Helper()
	bins.once.Do(func() {
		bins.dir, bins.err = os.MkdirTemp("", "sparkpack-realmesos-bin-")
		if bins.err != nil {
			return
		}
		bins.sparkpack = filepath.Join(bins.dir, "sparkpack")
		if bins.err = GoBuild("./cmd/sparkpack", bins.sparkpack); bins.err != nil {
			return
		}
		bins.fakespark, bins.err = BuildFakeSpark(bins.dir)
	})
	if bins.err != nil {
		t.Fatal(bins.err)
	}
	return bins.sparkpack, bins.fakespark
}

// sparkpackProc is a running `sparkpack serve` (internal/testharness).
type sparkpackProc struct {
	*testharness.Sparkpack
	cmd *exec.Cmd
}

func (p *sparkpackProc) logText() string { return p.LogText() }
func (p *sparkpackProc) kill()           { p.Kill() }
func (p *sparkpackProc) stop()           { p.Stop() }

// startSparkpack runs `sparkpack serve` against a master (real or
// emulated) with fakespark as spark-submit.
func startSparkpack(t *testing.T, masterURL, dbURL string, extra ...string) *sparkpackProc {
	t.Helper()
	bin, fake := binaries(t)
	sp := testharness.Serve(t, bin, masterURL, dbURL, append([]string{"--spark-submit", fake}, extra...)...)
	if os.Getenv("REALMESOS_LOGS") != "" {
		t.Cleanup(func() {
			if !t.Failed() {
				t.Logf("sparkpack log (warnings and errors):\n%s", testharness.Warnings(sp.LogText()))
			}
		})
	}
	return &sparkpackProc{Sparkpack: sp, cmd: sp.Cmd}
}

func withoutRequests(s string) string { return testharness.WithoutRequests(s) }
func tail(s string, n int) string     { return testharness.Tail(s, n) }

// ---- REST ----------------------------------------------------------------

type jobView struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	State         string     `json:"state"`
	WaitingReason string     `json:"waitingReason"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
	Placement     []struct {
		AgentID   string `json:"agentId"`
		Executors int    `json:"executors"`
	} `json:"placement"`
	Events []struct {
		To     string `json:"to"`
		Reason string `json:"reason"`
	} `json:"events"`
	DriverCommand []string `json:"driverCommand"`
}

// planned returns the job's placement: agent id -> executors.
func (v jobView) planned() map[string]int {
	out := map[string]int{}
	for _, a := range v.Placement {
		out[a.AgentID] += a.Executors
	}
	return out
}

func submit(t *testing.T, api string, body map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(api+"/api/v1/jobs", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/jobs: %d %s", resp.StatusCode, raw)
	}
	var v jobView
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// sparkJob is a job body: executors x cores x memory, running seconds
// (fakespark runs that long, the emulator's Spark that long in simulated
// time).
func sparkJob(name string, executors, cores, memMB int, seconds float64) map[string]any {
	return map[string]any{
		"name": name,
		"app": map[string]any{"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass": "org.apache.spark.examples.SparkPi", "args": []string{"100"}},
		"executors": executors, "executorCores": cores, "executorMemoryMB": memMB,
		"estimatedDurationSeconds": seconds,
	}
}

func getJob(api, id string) (jobView, error) {
	var v jobView
	resp, err := http.Get(api + "/api/v1/jobs/" + id)
	if err != nil {
		return v, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return v, fmt.Errorf("GET job %s: %d", id, resp.StatusCode)
	}
	return v, json.NewDecoder(resp.Body).Decode(&v)
}

func deleteJob(t *testing.T, api, id string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, api+"/api/v1/jobs/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// waitState polls until the job is in one of the states.
func waitState(t *testing.T, api, id string, timeout time.Duration, states ...string) jobView {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last jobView
	for time.Now().Before(deadline) {
		v, err := getJob(api, id)
		if err == nil {
			last = v
			for _, s := range states {
				if v.State == s {
					return v
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s (%s) is %s (%s) after %s, want one of %v; events %+v", id, last.Name, last.State, last.WaitingReason, timeout, states, last.Events)
	return last
}

// eventStates is the job's sequence of states ("to" of each event),
// without repeats. A reservation the real master refused (its allocator
// had just offered those resources; sparkpack gives them back to the queue
// and places the job again, a path the emulator's timing rarely takes)
// is left out: the outcome compared is the placement that held.
func eventStates(v jobView) []string {
	var out []string
	for _, e := range v.Events {
		if e.To == "QUEUED" && strings.HasPrefix(e.Reason, "reservation refused") {
			if i := slices.Index(out, "QUEUED"); i >= 0 {
				out = out[:i+1]
				continue
			}
		}
		if len(out) == 0 || out[len(out)-1] != e.To {
			out = append(out, e.To)
		}
	}
	return out
}

// agentState is an agent's state in GET /api/v1/cluster ("" when absent).
func agentState(t *testing.T, api, id string) string {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/cluster")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v struct {
		Agents []struct{ ID, State string } `json:"agents"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	for _, a := range v.Agents {
		if a.ID == id {
			return a.State
		}
	}
	return ""
}
