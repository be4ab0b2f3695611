package integration

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestCLIOutputFormatsAndViews runs the CLI binary, as a user would, against
// sparkpack on the emulator: -o json|yaml|name|wide on jobs and job, the
// cluster, queue and cost views, and --watch following a job to its end
// (issue 28, item 8).
func TestCLIOutputFormatsAndViews(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	sp := startSparkpack(t, emu.URL, e2eDB(t))
	bin := sparkpackBinary(t)
	cli := func(args ...string) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append(args, "--server", sp.API)...)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("sparkpack %v: %v\nstdout:\n%s\nstderr:\n%s", args, err, out.String(), errb.String())
		}
		return out.String(), errb.String()
	}

	id := submit(t, sp.API, sparkJob("cli-views", 2, 1, 1024, 40))
	// --watch on the job prints its timeline as it goes and returns when
	// the job ends: its output must reach FINISHED.
	watched, _ := cli("job", id, "--watch", "--interval", "200ms")
	if !strings.Contains(watched, "FINISHED") || !strings.Contains(watched, "timeline:") {
		t.Fatalf("job --watch did not follow the job to its end:\n%s", watched)
	}
	waitState(t, sp.API, id, 60*time.Second, "FINISHED")

	// -o name: the ids, one a line.
	names, _ := cli("jobs", "-o", "name")
	if strings.TrimSpace(names) != id {
		t.Fatalf("jobs -o name = %q, want %q", names, id)
	}
	// -o json: the API's list shape, with the job's fields.
	out, _ := cli("jobs", "-o", "json")
	var list struct {
		Jobs []struct {
			ID, State string
			Placement []struct{ AgentID string }
		}
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list.Jobs) != 1 || list.Jobs[0].ID != id || list.Jobs[0].State != "FINISHED" || len(list.Jobs[0].Placement) == 0 {
		t.Fatalf("jobs -o json: %v\n%s", err, out)
	}
	// -o yaml: the same content, as YAML, with the API's field names.
	out, _ = cli("job", id, "-o", "yaml")
	var y map[string]any
	if err := yaml.Unmarshal([]byte(out), &y); err != nil || y["id"] != id || y["state"] != "FINISHED" || y["executorMemoryMB"] == nil {
		t.Fatalf("job -o yaml: %v\n%s", err, out)
	}
	// wide adds columns.
	out, _ = cli("jobs", "-o", "wide")
	if !strings.Contains(out, "EXECUTORS") || !strings.Contains(out, "2×(1 cpu, 1024 MiB)") {
		t.Fatalf("jobs -o wide:\n%s", out)
	}

	// The views.
	out, _ = cli("cluster")
	if !strings.Contains(out, "HOST") || !strings.Contains(out, "by state:") || len(strings.Split(strings.TrimSpace(out), "\n")) < 2+len(emu.Agents()) {
		t.Fatalf("cluster: want a summary and one row per agent (%d):\n%s", len(emu.Agents()), out)
	}
	out, _ = cli("cluster", "-o", "name")
	if n := len(strings.Fields(out)); n != len(emu.Agents()) {
		t.Fatalf("cluster -o name: %d ids, want %d:\n%s", n, len(emu.Agents()), out)
	}
	out, _ = cli("queue")
	if !strings.Contains(out, "deadline queue: 0 jobs waiting") {
		t.Fatalf("queue:\n%s", out)
	}
	out, _ = cli("cost", "-o", "json")
	var cost struct{ TotalUSD float64 }
	if err := json.Unmarshal([]byte(out), &cost); err != nil || cost.TotalUSD <= 0 {
		t.Fatalf("cost -o json: the job ran, so the meter is above 0: %v\n%s", err, out)
	}
	out, _ = cli("cost")
	if !strings.Contains(out, "meter") || !strings.Contains(out, "burn rate") {
		t.Fatalf("cost:\n%s", out)
	}
}

// TestPlanSaysWhereAJobWouldGo: sparkpack plan (submit --dry-run) answers
// where a job would go, what it would add to the bill and when it would
// start, for a job that fits, one that never could, and stores nothing
// (issue 28, item 8).
func TestPlanSaysWhereAJobWouldGo(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	sp := startSparkpack(t, emu.URL, e2eDB(t))
	bin := sparkpackBinary(t)
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var out, errb strings.Builder
		cmd := exec.CommandContext(ctx, bin, append(args, "--server", sp.API)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("sparkpack %v: %v\n%s%s", args, err, out.String(), errb.String())
		}
		return out.String()
	}
	job := []string{"--app-resource", "local:///opt/spark/examples/jars/spark-examples.jar", "--main-class", "org.apache.spark.examples.SparkPi",
		"--executors", "3", "--executor-cores", "2", "--executor-memory", "2g", "--estimated-duration", "120", "--deadline", "30m"}
	// The leader needs a moment to see the agents.
	var p struct {
		StartsNow bool
		Queue     string
		Plan      *struct {
			Assignments []struct{ Executors int }
			Activated   []string
		}
		EstimatedFinish       *time.Time
		DeadlineMarginSeconds *float64
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out := run(append([]string{"plan", "-o", "json"}, job...)...)
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatalf("plan -o json: %v\n%s", err, out)
		}
		if p.Plan != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(300 * time.Millisecond)
	}
	n := 0
	if p.Plan != nil {
		for _, a := range p.Plan.Assignments {
			n += a.Executors
		}
	}
	if !p.StartsNow || p.Queue != "deadline" || n != 3 || len(p.Plan.Activated) == 0 || p.EstimatedFinish == nil ||
		p.DeadlineMarginSeconds == nil || *p.DeadlineMarginSeconds < 27*60 {
		t.Fatalf("plan of a job that fits an idle cluster: %+v", p)
	}
	out := run(append([]string{"submit", "--dry-run"}, job...)...)
	for _, want := range []string{"start", "now", "placement", "cost", "+$", "deadline", "would be met by"} {
		if !strings.Contains(out, want) {
			t.Errorf("submit --dry-run lacks %q:\n%s", want, out)
		}
	}
	{
		// A plan the server would reject fails, as submit does.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, bin, "plan", "--app-resource", "local:///a.jar", "--main-class", "a.B", "--executors", "500",
			"--executor-cores", "8", "--executor-memory", "1g", "--server", sp.API).CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), "would be REJECTED") {
			t.Errorf("plan of a job the cluster could never hold (%v):\n%s", err, out)
		}
	}
	// Nothing was stored.
	var list struct{ Jobs []any }
	getJSON(t, sp.API+"/api/v1/jobs", &list)
	if len(list.Jobs) != 0 {
		t.Fatalf("plan stored %d jobs", len(list.Jobs))
	}
}
