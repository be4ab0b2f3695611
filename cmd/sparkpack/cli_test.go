package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// startServe runs serve (API and store, no Mesos) on a free port.
func startServe(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- serve(ctx, serveConfig{databaseURL: pgtest.URL(t), listen: ln.Addr().String(), policy: "bfd", logLevel: "info", shutdownTimeout: 5 * time.Second}, log, ln, ready)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return "http://" + addr
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start")
	}
	return ""
}

var jobFlags = []string{"--app-resource", "local:///a.jar", "--main-class", "a.B", "--executors", "2", "--executor-cores", "1"}

func TestCLIManagesJobs(t *testing.T) {
	server := startServe(t)
	sub := func(extra ...string) (int, string, string) {
		return runCmd(t, append(append([]string{"submit", "--server", server}, jobFlags...), extra...)...)
	}
	// Memory with a unit, in MiB, or as the old flag: all the same job size.
	code, out, errOut := sub("--executor-memory", "4g", "--name", "four-g", "--label", "team=a")
	if code != 0 || !strings.Contains(errOut, "SUBMITTED") {
		t.Fatalf("submit 4g: %d %q %q", code, out, errOut)
	}
	id := strings.TrimSpace(out)
	var v struct {
		ExecutorMemoryMB int    `json:"executorMemoryMB"`
		State            string `json:"state"`
	}
	code, out, _ = runCmd(t, "job", "--server", server, "--json", id)
	if code != 0 || json.Unmarshal([]byte(out), &v) != nil || v.ExecutorMemoryMB != 4096 {
		t.Fatalf("job --json: %d %q", code, out)
	}
	for _, mem := range []string{"4096m", "4096"} {
		if code, _, errOut := sub("--executor-memory", mem); code != 0 {
			t.Fatalf("--executor-memory %s: %d %s", mem, code, errOut)
		}
	}
	if code, _, errOut := sub("--executor-memory-mb", "2g"); code != 0 {
		t.Fatalf("--executor-memory-mb 2g: %d %s", code, errOut)
	}
	code, _, errOut = sub("--executor-memory", "4.5g")
	if code != 2 || !strings.Contains(errOut, "give MiB as a whole number (e.g. 4096) or with a unit (4096m, 4g)") || strings.Contains(errOut, "-conf value") {
		t.Fatalf("fractional memory: %d %q", code, errOut)
	}

	// Stored REJECTED (deadline past): the reason, and a non-zero exit.
	code, out, errOut = sub("--executor-memory", "1g", "--deadline", "2020-01-01T00:00:00Z")
	if code != 1 || len(strings.TrimSpace(out)) != 36 || !strings.Contains(errOut, "REJECTED: deadline 2020-01-01T00:00:00Z is already past") {
		t.Fatalf("rejected: %d %q %q", code, out, errOut)
	}
	rejected := strings.TrimSpace(out)

	// jobs: filters by state and label.
	code, out, _ = runCmd(t, "jobs", "--server", server, "--state", "rejected")
	if code != 0 || !strings.Contains(out, rejected) || strings.Contains(out, id) || !strings.Contains(out, "already past") {
		t.Fatalf("jobs --state rejected: %d\n%s", code, out)
	}
	code, out, _ = runCmd(t, "jobs", "--server", server, "--label", "team=a")
	if code != 0 || !strings.Contains(out, id) || !strings.Contains(out, "four-g") || strings.Count(out, "\n") != 2 {
		t.Fatalf("jobs --label: %d\n%s", code, out)
	}
	code, _, errOut = runCmd(t, "jobs", "--server", server, "--state", "bogus")
	if code != 1 || !strings.Contains(errOut, `"BOGUS" is not a state`) {
		t.Fatalf("jobs --state bogus: %d %q", code, errOut)
	}

	// job: facts and timeline; a job that does not exist says where to look.
	code, out, _ = runCmd(t, "job", "--server", server, id)
	if code != 0 || !strings.Contains(out, "four-g") || !strings.Contains(out, "timeline:") || !strings.Contains(out, "4096 MiB") {
		t.Fatalf("job: %d\n%s", code, out)
	}
	code, _, errOut = runCmd(t, "job", "--server", server, "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f")
	if code != 1 || !strings.Contains(errOut, "list the jobs with sparkpack jobs") {
		t.Fatalf("job unknown: %d %q", code, errOut)
	}
	code, _, errOut = runCmd(t, "job", "--server", server, "nope")
	if code != 1 || !strings.Contains(errOut, `no job has an id starting with "nope" or the name "nope"`) {
		t.Fatalf("job nope: %d %q", code, errOut)
	}
	// A job is found by the start of its id, or by its name.
	code, out, errOut = runCmd(t, "job", "--server", server, id[:8])
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("job by id prefix: %d %q %q", code, out, errOut)
	}
	code, out, errOut = runCmd(t, "job", "--server", server, "four-g")
	if code != 0 || !strings.Contains(out, id) {
		t.Fatalf("job by name: %d %q %q", code, out, errOut)
	}
	// An empty name is refused; a name that fits several jobs is refused
	// with the candidates.
	if code, _, errOut = runCmd(t, "job", "--server", server, ""); code == 0 {
		t.Fatalf("job with an empty name: %d %q", code, errOut)
	}
	for range 2 {
		if code, out, errOut = sub("--executor-memory", "1g", "--name", "twin"); code != 0 {
			t.Fatalf("submit twin: %d %q %q", code, out, errOut)
		}
	}
	code, _, errOut = runCmd(t, "job", "--server", server, "twin")
	if code != 1 || !strings.Contains(errOut, `"twin" fits 2 jobs`) {
		t.Fatalf("job twin: %d %q", code, errOut)
	}

	// cancel: waiting jobs are cancelled; an ended one is left alone.
	code, out, errOut = runCmd(t, "cancel", "--server", server, id, "--wait")
	if code != 0 || !strings.Contains(out, "CANCELLED") {
		t.Fatalf("cancel: %d %q %q", code, out, errOut)
	}
	code, _, errOut = runCmd(t, "cancel", "--server", server, rejected)
	if code != 0 || !strings.Contains(errOut, "already ended") {
		t.Fatalf("cancel ended: %d %q", code, errOut)
	}
	code, _, errOut = runCmd(t, "cancel", "--server", server)
	if code != 2 || !strings.Contains(errOut, "give at least one job id") {
		t.Fatalf("cancel without id: %d %q", code, errOut)
	}
}

func TestCLIErrorsSayWhatToDo(t *testing.T) {
	// Nothing listens there: with --retry-for 0, said at once, without
	// retries (by default submit tries again for 30s, saying so, as a
	// serve restarting refuses connections: TestSubmitWaitsForALateServe).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + ln.Addr().String()
	ln.Close()
	start := time.Now()
	code, _, errOut := runCmd(t, append([]string{"submit", "--server", down, "--retry-for", "0", "--executor-memory", "1g"}, jobFlags...)...)
	if code != 1 || !strings.Contains(errOut, "is sparkpack running there?") || !strings.Contains(errOut, "SPARKPACK_SERVER") ||
		strings.Contains(errOut, "trying again") || time.Since(start) > 5*time.Second {
		t.Fatalf("server down: %d %q after %s", code, errOut, time.Since(start))
	}
	// Bounded: it gives up after --retry-for, with the same advice.
	code, _, errOut = runCmd(t, append([]string{"submit", "--server", down, "--retry-for", "1s", "--executor-memory", "1g"}, jobFlags...)...)
	if code != 1 || !strings.Contains(errOut, "trying again") || !strings.Contains(errOut, "is sparkpack running there?") || !strings.Contains(errOut, "(tried for --retry-for 1s)") {
		t.Fatalf("server down, --retry-for 1s: %d %q", code, errOut)
	}
	for _, cmd := range [][]string{{"jobs"}, {"job", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"}, {"cancel", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"}} {
		code, _, errOut := runCmd(t, append(cmd, "--server", down)...)
		if code != 1 || !strings.Contains(errOut, "is sparkpack running there?") {
			t.Errorf("%v with the server down: %d %q", cmd, code, errOut)
		}
	}
	// Every missing required flag, at once, by name.
	code, _, errOut = runCmd(t, "submit", "--server", down, "--executors", "2")
	if code != 1 || !strings.Contains(errOut, "missing required flags: --app-resource, --main-class, --executor-cores, --executor-memory") {
		t.Fatalf("missing flags: %d %q", code, errOut)
	}
	// A bad value names the flag that set it.
	code, _, errOut = runCmd(t, append([]string{"submit", "--server", down, "--executor-memory", "1g", "--label", "bad key=x"}, jobFlags...)...)
	if code != 1 || !strings.HasPrefix(errOut, "sparkpack submit: --label: ") {
		t.Fatalf("bad label: %d %q", code, errOut)
	}
	code, _, errOut = runCmd(t, append([]string{"submit", "--server", "localhost:8080", "--executor-memory", "1g"}, jobFlags...)...)
	if code != 1 || !strings.Contains(errOut, "not a URL such as http://127.0.0.1:8080") {
		t.Fatalf("bad --server: %d %q", code, errOut)
	}
	// --help marks the required flags, on standard output.
	code, out, errOut := runCmd(t, "submit", "--help")
	if code != 0 || errOut != "" || strings.Count(out, "(required unless -f gives it)") != len(requiredFlags) {
		t.Fatalf("submit --help: %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
