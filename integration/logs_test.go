package integration

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestJobLogsFromTheSandbox reads a job's driver output through sparkpack,
// which reads it from the driver's sandbox on the agent (the emulator's
// files API, which answers as a real agent does): the CLI follows stderr
// to the driver's end, stdout holds the application's output, the API
// names the agent and the sandbox, and bad requests are 4xx naming the
// parameter (issue 28, item 6).
func TestJobLogsFromTheSandbox(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	sp := startSparkpack(t, emu.URL, e2eDB(t))
	bin := sparkpackBinary(t)
	id := submit(t, sp.API, sparkJob("logs", 2, 1, 1024, 40))

	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "logs", "--server", sp.API, "--stderr", "--follow", "--interval", "200ms", id)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("logs --follow: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	for _, want := range []string{"Running Spark version 3.5", "Registered as framework ID", "Successfully stopped SparkContext", "Command exited with status 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("logs --stderr --follow lacks %q:\n%s", want, out.String())
		}
	}
	waitState(t, sp.API, id, 60*time.Second, "FINISHED")

	get := func(query string) (int, map[string]any) {
		t.Helper()
		resp, err := http.Get(sp.API + "/api/v1/jobs/" + id + "/logs" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: not JSON: %s", query, b)
		}
		return resp.StatusCode, m
	}
	code, m := get("")
	if code != 200 || !strings.Contains(m["data"].(string), "Pi is roughly") || m["ended"] != true || m["agentId"] == "" ||
		!strings.Contains(m["sandboxUrl"].(string), "/files/browse?path=") {
		t.Fatalf("GET logs: %d %v", code, m)
	}
	size, all := m["size"].(float64), m["data"].(string)
	code, m = get("?offset=-1")
	if code != 200 || m["data"] != "" || m["size"].(float64) != size {
		t.Fatalf("GET logs?offset=-1: %d %v", code, m)
	}
	code, m = get("?offset=3&length=4")
	if code != 200 || m["data"] != all[3:7] || m["nextOffset"].(float64) != 7 {
		t.Fatalf("GET logs?offset=3&length=4: %d %v", code, m)
	}
	for q, field := range map[string]string{"?file=stdin": "file", "?offset=x": "offset", "?length=-1": "length", "?attempt=0": "attempt", "?tail=3": "tail"} {
		code, m := get(q)
		if code != 400 || m["field"] != field {
			t.Errorf("GET logs%s: %d %v; want 400 naming %s", q, code, m, field)
		}
	}
	code, m = get("?attempt=7")
	if code != 404 || !strings.Contains(m["error"].(string), "has no driver launch 7") || m["field"] != "attempt" {
		t.Errorf("GET logs?attempt=7: %d %v; want 404 naming attempt", code, m)
	}
	// The CLI tells a job without that launch, or without a driver yet,
	// from a job that does not exist (it said "no job ... on this
	// server" for both), and --follow does not wait for a launch that
	// is not coming.
	waiting := sparkJob("later", 1, 1, 1024, 10)
	waiting["notBefore"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	later := submit(t, sp.API, waiting)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--attempt", "7", id}, "has no driver launch 7"},
		{[]string{"--attempt", "7", "--follow", id}, "has no driver launch 7"},
		{[]string{later}, "has launched no Spark driver yet"},
	} {
		cmd := exec.CommandContext(ctx, bin, append([]string{"logs", "--server", sp.API}, c.args...)...)
		outb, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(outb), c.want) || strings.Contains(string(outb), "no job") {
			t.Errorf("sparkpack logs %v: %v %q; want a failure saying %q", c.args, err, outb, c.want)
		}
	}
	// A job that ended without a driver has no log coming: the API says
	// so (not "yet"), and --follow stops instead of waiting for ever.
	del, _ := http.NewRequest(http.MethodDelete, sp.API+"/api/v1/jobs/"+later, nil)
	resp, err := http.DefaultClient.Do(del)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("cancel the waiting job: %d", resp.StatusCode)
	}
	for _, args := range [][]string{{later}, {"--follow", "--interval", "200ms", later}} {
		fctx, fcancel := context.WithTimeout(ctx, 60*time.Second)
		outb, err := exec.CommandContext(fctx, bin, append([]string{"logs", "--server", sp.API}, args...)...).CombinedOutput()
		timedOut := fctx.Err() != nil
		fcancel()
		if err == nil || timedOut || !strings.Contains(string(outb), "ended (CANCELLED) without launching a Spark driver") {
			t.Errorf("sparkpack logs %v of a job cancelled before its driver: %v (timed out: %v) %q; want a failure saying it ended without a driver", args, err, timedOut, outb)
		}
	}
	// A launch named by its number is read from its own record.
	code, m = get("?attempt=1")
	if code != 200 || m["attempt"] != float64(1) || m["agentId"] == "" {
		t.Errorf("GET logs?attempt=1: %d %v; want launch 1's log", code, m)
	}
	resp, err = http.Get(sp.API + "/api/v1/jobs/6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f/logs")
	if err != nil {
		t.Fatal(err)
	}
	var unknown map[string]any
	json.NewDecoder(resp.Body).Decode(&unknown)
	resp.Body.Close()
	if resp.StatusCode != 404 || unknown["field"] != "id" {
		t.Errorf("logs of an unknown job: %d %v, want 404 naming id (as GET /api/v1/jobs/{id} does)", resp.StatusCode, unknown)
	}
}
