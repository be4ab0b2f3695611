package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/internal/testharness"
	"github.com/sparkpack/sparkpack/mesossim"
)

// The end-to-end tests run the real sparkpack binary (built once per test
// run) against a real PostgreSQL and the Mesos emulator of package
// mesossim, in this process so that the tests can look inside it.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// sparkpackBinary builds cmd/sparkpack once.
func sparkpackBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Dir(filepath.Dir(file))
		dir, err := os.MkdirTemp("", "sparkpack-e2e-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "sparkpack")
		args := []string{"build", "-o", binPath}
		if os.Getenv("SPARKPACK_E2E_RACE") != "" {
			args = append(args, "-race") // the race detector in the binary too
		}
		cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), append(args, "./cmd/sparkpack")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/sparkpack: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// emulator runs a mesossim master on a free port for the test.
type emulator struct {
	*mesossim.Master
	URL string
}

func startEmulator(t *testing.T, cfg mesossim.Config) *emulator {
	t.Helper()
	if cfg.OfferInterval == 0 {
		cfg.OfferInterval = 100 * time.Millisecond
	}
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 0.05 // 20 simulated seconds run 1 s
	}
	if cfg.TaskStartDelay == 0 {
		cfg.TaskStartDelay = 20 * time.Millisecond
	}
	if cfg.SparkExecutorStartDelay == 0 {
		cfg.SparkExecutorStartDelay = 20 * time.Millisecond
	}
	if cfg.StatusUpdateRetry == 0 {
		cfg.StatusUpdateRetry = 500 * time.Millisecond
	}
	logs := &syncbuf.Buffer{}
	if cfg.Logger == nil {
		l := logrus.New()
		l.SetOutput(logs)
		l.SetLevel(logrus.DebugLevel)
		cfg.Logger = l
	}
	var mp *mesossim.Master
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("emulator log (last 150 lines):\n%s", tail(logs.String(), 150))
			if m := mp; m != nil {
				for _, a := range m.Agents() {
					t.Logf("emulator agent %s: used %g cpus, offered %s, tasks %d, off %v", a.ID, a.UsedCPUs, a.Offered, a.Tasks, a.PoweredOff)
				}
				for _, f := range m.Frameworks() {
					t.Logf("emulator framework %s %q roles %v connected %v offers %d tasks %d", f.ID, f.Name, f.Roles, f.Connected, f.Offers, f.Tasks)
				}
			}
		}
	})
	m, err := mesossim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mp = m
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() { done <- m.ListenAndServe(ctx, "127.0.0.1:0", func(a net.Addr) { ready <- a }) }()
	var addr net.Addr
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done })
	return &emulator{Master: m, URL: "http://" + addr.String()}
}

// sparkpackProc is a running `sparkpack serve` (internal/testharness).
type sparkpackProc struct {
	*testharness.Sparkpack
	cmd *exec.Cmd
}

func (p *sparkpackProc) logText() string { return p.LogText() }
func (p *sparkpackProc) kill()           { p.Kill() }
func (p *sparkpackProc) stop()           { p.Stop() }

// startSparkpack runs `sparkpack serve` against the emulator and database.
func startSparkpack(t *testing.T, emuURL, dbURL string, extra ...string) *sparkpackProc {
	t.Helper()
	if !slices.Contains(extra, "--instance-id") {
		// One instance per test, the same across its restarts: a restarted
		// process takes its own leadership lease back at once.
		extra = append(slices.Clip(extra), "--instance-id", "e2e-"+t.Name())
	}
	sp := testharness.Serve(t, sparkpackBinary(t), emuURL, dbURL, extra...)
	return &sparkpackProc{Sparkpack: sp, cmd: sp.Cmd}
}

func withoutRequests(s string) string { return testharness.WithoutRequests(s) }
func tail(s string, n int) string     { return testharness.Tail(s, n) }

// ---- REST helpers ----------------------------------------------------------

type jobView struct {
	ID            string     `json:"id"`
	Name          string     `json:"name"`
	State         string     `json:"state"`
	WaitingReason string     `json:"waitingReason"`
	StartedAt     *time.Time `json:"startedAt"`
	FinishedAt    *time.Time `json:"finishedAt"`
	Placement     []struct {
		AgentID   string `json:"agentId"`
		Hostname  string `json:"hostname"`
		Executors int    `json:"executors"`
	} `json:"placement"`
	Events []struct {
		To     string `json:"to"`
		Reason string `json:"reason"`
	} `json:"events"`
	DriverCommand []string `json:"driverCommand"`
}

func submit(t *testing.T, api string, body map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(api+"/api/v1/jobs", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v jobView
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/jobs: %d %s", resp.StatusCode, raw)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.ID
}

// sparkJob is a job body for the simulated Spark.
func sparkJob(name string, executors, cores, memMB int, simSeconds float64) map[string]any {
	return map[string]any{
		"name": name,
		"app": map[string]any{"appResource": "local:///opt/spark/examples/jars/spark-examples.jar",
			"mainClass": "org.apache.spark.examples.SparkPi", "args": []string{"100"}},
		"executors": executors, "executorCores": cores, "executorMemoryMB": memMB,
		"estimatedDurationSeconds": simSeconds,
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
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("job %s (%s) is %s (%s) after %s, want one of %v", id, last.Name, last.State, last.WaitingReason, timeout, states)
	return last
}

// ---- emulator checks --------------------------------------------------------

// leftovers lists sparkpack-labelled reservations and job-role quotas the
// emulated master still holds.
// Reservations on powered-off agents are not counted.
func leftovers(m *mesossim.Master) []string {
	var out []string
	off := map[string]bool{}
	for _, a := range m.Agents() {
		off[a.ID] = a.PoweredOff
	}
	for _, r := range m.Reservations() {
		if off[r.AgentID] {
			continue
		}
		if r.Labels["sparkpack-job"] != "" || strings.HasPrefix(r.Role, "sparkpack-job-") {
			out = append(out, fmt.Sprintf("reservation %s on %s: %g cpus %g MiB", r.Role, r.AgentID, r.CPUs, r.MemMB))
		}
	}
	for role, q := range m.Quotas() {
		if strings.HasPrefix(role, "sparkpack-job-") && q != "" {
			out = append(out, fmt.Sprintf("quota %s: %s", role, q))
		}
	}
	return out
}

// waitNoLeftovers waits until the emulator holds nothing of sparkpack's.
func waitNoLeftovers(t *testing.T, m *mesossim.Master, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		l := leftovers(m)
		if len(l) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Mesos still holds after %s:\n%s", timeout, strings.Join(l, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// executorWatch samples the emulator's tasks and records every Spark
// executor that runs outside its job's reservations or planned agents.
type executorWatch struct {
	mu         sync.Mutex
	violations []string
	executors  map[string]string // task -> agent, of every executor seen
	stop       chan struct{}
	done       chan struct{}
}

func watchExecutors(m *mesossim.Master, planned func(jobID string) map[string]bool) *executorWatch {
	w := &executorWatch{executors: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			for _, task := range m.Tasks() {
				if task.SparkExecutor == "" || !strings.HasPrefix(task.Role, "sparkpack-job-") {
					continue
				}
				jobID := strings.TrimPrefix(task.Role, "sparkpack-job-")
				w.mu.Lock()
				key := task.FrameworkID + "/" + task.TaskID
				if _, seen := w.executors[key]; !seen {
					w.executors[key] = task.AgentID
					if task.UnreservedCPUs > 0 {
						w.violations = append(w.violations, fmt.Sprintf("executor %s of job %s uses %g unreserved cpus on %s", task.TaskID, jobID, task.UnreservedCPUs, task.AgentID))
					}
					if p := planned(jobID); p != nil && !p[task.AgentID] {
						w.violations = append(w.violations, fmt.Sprintf("executor %s of job %s runs on %s, outside its placement %v", task.TaskID, jobID, task.AgentID, p))
					}
				}
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *executorWatch) finish() (violations []string, executors int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.violations, len(w.executors)
}

// smallCluster is a cluster of n agents of 4 cpus and 16 GiB.
func smallCluster(n int) clusterspec.Cluster {
	c := clusterspec.Cluster{Name: fmt.Sprintf("small%d", n)}
	for i := 0; i < n; i++ {
		c.Agents = append(c.Agents, clusterspec.Agent{ID: fmt.Sprintf("small-S%d", i), Hostname: fmt.Sprintf("small-%d", i),
			CPUs: 4, MemMB: 16384, PricePerHour: 0.24, InstanceType: "m.xlarge", Location: "cloud"})
	}
	return c
}

// e2eDB is a fresh database for one end-to-end test.
func e2eDB(t *testing.T) string { return pgtest.URL(t) }
