package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// demoProc is a running `sparkpack demo`.
type demoProc struct {
	API, SparkREST string
	mu             sync.Mutex
	out            bytes.Buffer
	// stop sends SIGINT and waits for the demo to end (once; the test's
	// cleanup calls it too).
	stop func(t *testing.T)
}

func (d *demoProc) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// startDemo runs `sparkpack demo` on free ports with the test's database
// (the scratch-PostgreSQL path of the demo is the same recipe as the
// test's own server) and the given extra flags.
func startDemo(t *testing.T, extra ...string) *demoProc {
	t.Helper()
	args := append([]string{"demo", "--listen", "127.0.0.1:0", "--mesos-listen", "127.0.0.1:0", "--spark-rest-listen", "127.0.0.1:0",
		"--database-url", e2eDB(t), "--log-level", "warn"}, extra...)
	cmd := exec.Command(sparkpackBinary(t), args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	d := &demoProc{}
	cmd.Stderr = &lockedWriter{mu: &d.mu, w: &d.out}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		var once sync.Once
		for sc.Scan() {
			line := sc.Text()
			d.mu.Lock()
			d.out.WriteString(line + "\n")
			if v, ok := strings.CutPrefix(line, "demo: dashboard  "); ok {
				d.API = strings.TrimSuffix(strings.TrimSpace(v), "/")
			}
			if v, ok := strings.CutPrefix(line, "demo: spark-submit --master mesos://"); ok {
				d.SparkREST = "http://" + strings.Fields(v)[0]
			}
			d.mu.Unlock()
			if strings.HasPrefix(line, "demo: press Ctrl-C") {
				once.Do(func() { close(ready) })
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("sparkpack demo exited (%v):\n%s", err, d.output())
	case <-time.After(90 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("sparkpack demo not ready after 90 s:\n%s", d.output())
	}
	var once sync.Once
	d.stop = func(t *testing.T) {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGINT)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("sparkpack demo did not stop cleanly on SIGINT: %v", err)
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Error("sparkpack demo did not stop within 30 s of SIGINT")
			}
		})
	}
	t.Cleanup(func() {
		d.stop(t)
		if t.Failed() {
			t.Logf("demo output:\n%s", tail(d.output(), 80))
		}
	})
	return d
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestDemoRunsTheSampleAndSparkSubmit: the demo comes up with the 14
// thesis agents, runs its SWIM sample to the end, and takes a job through
// Spark's REST submission protocol as spark-submit --deploy-mode cluster
// sends it.
func TestDemoRunsTheSampleAndSparkSubmit(t *testing.T) {
	d := startDemo(t, "--sim-speed", "20", "--sample-jobs", "4", "--sample-max-gap", "100ms")
	var cluster struct {
		Agents []struct {
			ID    string  `json:"id"`
			CPUs  float64 `json:"cpus"`
			Price float64 `json:"pricePerHour"`
		} `json:"agents"`
	}
	getJSON(t, d.API+"/api/v1/cluster", &cluster)
	if len(cluster.Agents) != 14 {
		t.Fatalf("/api/v1/cluster shows %d agents, want the 14 of thesis14", len(cluster.Agents))
	}

	body := `{"action":"CreateSubmissionRequest","appArgs":["100"],"appResource":"local:///opt/spark/examples/jars/spark-examples.jar",
	  "clientSparkVersion":"3.5.8","environmentVariables":{"SPARK_SCALA_VERSION":"2.12"},"mainClass":"org.apache.spark.examples.SparkPi",
	  "sparkProperties":{"spark.app.name":"SparkPi","spark.submit.deployMode":"cluster","spark.master":"mesos://sparkpack:7077",
	  "spark.executor.instances":"2","spark.executor.cores":"1","spark.executor.memory":"1g","spark.driver.supervise":"false"}}`
	resp, err := http.Post(d.SparkREST+"/v1/submissions/create", "application/json;charset=UTF-8", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var created struct {
		SubmissionID string `json:"submissionId"`
		Success      bool   `json:"success"`
		Message      string `json:"message"`
	}
	json.NewDecoder(resp.Body).Decode(&created)
	resp.Body.Close()
	if !created.Success || created.SubmissionID == "" {
		t.Fatalf("CreateSubmissionRequest: %d %+v", resp.StatusCode, created)
	}

	// Every job (the sample's four and the spark-submit one) ends FINISHED.
	deadline := time.Now().Add(90 * time.Second)
	for {
		var list struct {
			Jobs []struct {
				ID, Name, State string
			} `json:"jobs"`
		}
		getJSON(t, d.API+"/api/v1/jobs", &list)
		finished, states := 0, []string{}
		for _, j := range list.Jobs {
			states = append(states, j.Name+"="+j.State)
			if j.State == "FINISHED" {
				finished++
			}
		}
		if len(list.Jobs) == 5 && finished == 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 90 s: %v, want 5 jobs FINISHED", states)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var st struct {
		DriverState string `json:"driverState"`
	}
	getJSON(t, d.SparkREST+"/v1/submissions/status/"+created.SubmissionID, &st)
	if st.DriverState != "FINISHED" {
		t.Fatalf("spark REST status of %s: %q, want FINISHED", created.SubmissionID, st.DriverState)
	}
	var cost struct {
		TotalUSD float64 `json:"totalUSD"`
	}
	getJSON(t, d.API+"/api/v1/cost", &cost)
	if cost.TotalUSD <= 0 {
		t.Fatalf("cost after 5 jobs is %g, want > 0", cost.TotalUSD)
	}
	if out := d.output(); !strings.Contains(out, "demo: the sample's 4 jobs are submitted") {
		t.Fatalf("the demo did not report its sample submissions:\n%s", out)
	}
}

// TestDemoStartsAndRemovesItsOwnPostgreSQL: without --database-url the
// demo starts a scratch PostgreSQL, and deletes it when stopped.
func TestDemoStartsAndRemovesItsOwnPostgreSQL(t *testing.T) {
	var dir string
	t.Run("run", func(t *testing.T) {
		d := startDemo(t, "--database-url", "", "--no-sample")
		for _, line := range strings.Split(d.output(), "\n") {
			if v, ok := strings.CutPrefix(line, "scratch-pg: initdb in "); ok {
				dir = strings.TrimSuffix(v, "/data")
			}
		}
		if dir == "" {
			t.Fatalf("the demo did not start a scratch PostgreSQL:\n%s", d.output())
		}
		// The demo's emulator runs a job for its performance truth (docs/
		// simulation.md): a small input keeps this one short (SparkPi's
		// truth on the default 1 GB can take two minutes).
		job := sparkJob("on-scratch-db", 1, 1, 1024, 1)
		job["app"].(map[string]any)["sparkConf"] = map[string]any{mesossim.SimInputGBConf: "0.01"}
		job["inputSizeGB"] = 0.01
		id := submit(t, d.API, job)
		waitState(t, d.API, id, 60*time.Second, "FINISHED")
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("scratch PostgreSQL directory %s still exists after the demo stopped (stat: %v)", dir, err)
	}
}
