package integration

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
)

// readmeMarker comes just before each README shell block that
// TestREADMEExamples runs.
const readmeMarker = "<!-- TestREADMEExamples runs the blocks marked like this one against a demo, in order -->"

// repoRoot is the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// fencedAfter returns the body of the first fenced block after index i.
func fencedAfter(text string, i int) (lang, body string) {
	start := strings.Index(text[i:], "```")
	if start < 0 {
		return "", ""
	}
	start += i + 3
	nl := strings.IndexByte(text[start:], '\n')
	lang = text[start : start+nl]
	rest := text[start+nl+1:]
	end := strings.Index(rest, "```")
	return lang, rest[:end]
}

// TestREADMEPointsInsideTheRepository: what a user needs is in the
// repository. The README names no file outside it, every path it names
// exists, and its job example is examples/job.json.
func TestREADMEPointsInsideTheRepository(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	if strings.Contains(readme, "../") || strings.Contains(readme, "/work/") {
		t.Error("the README points outside the repository (../ or /work/)")
	}
	// Paths in links and backticks: docs/x.md, scripts/x.sh, examples/x, ...
	paths := regexp.MustCompile("(?:\\]\\(|`)((?:docs|scripts|examples|integration|api|cmd|offers|placement|scheduler|store|power|metrics|sparksubmit|sparkrest|workload|simulate|docker|internal|clusterspec)/[A-Za-z0-9_./-]*[A-Za-z0-9_])").FindAllStringSubmatch(readme, -1)
	if len(paths) < 10 {
		t.Fatalf("found only %d repository paths in the README", len(paths))
	}
	for _, p := range paths {
		if _, err := os.Stat(filepath.Join(root, p[1])); err != nil {
			t.Errorf("the README names %s, which is not in the repository", p[1])
		}
	}
	i := strings.Index(readme, "`examples/job.json`:")
	if i < 0 {
		t.Fatal("the README does not show examples/job.json")
	}
	lang, body := fencedAfter(readme, i)
	file, err := os.ReadFile(filepath.Join(root, "examples", "job.json"))
	if err != nil {
		t.Fatal(err)
	}
	if lang != "json" || body != string(file) {
		t.Errorf("the README's job example (%s) differs from examples/job.json:\n%s", lang, body)
	}
}

// TestREADMEExamples runs the README's marked shell blocks, in order, in
// one bash, against a running demo, from a directory laid out like a
// fresh clone after make demo (bin/sparkpack, examples/): every command
// must succeed, and the jobs they submit must end as the README says.
func TestREADMEExamples(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	var blocks []string
	for i := 0; ; {
		j := strings.Index(readme[i:], readmeMarker)
		if j < 0 {
			break
		}
		i += j + len(readmeMarker)
		lang, body := fencedAfter(readme, i)
		if lang != "sh" {
			t.Fatalf("a marked README block is %q, want sh", lang)
		}
		blocks = append(blocks, body)
	}
	if len(blocks) < 2 {
		t.Fatalf("found %d marked shell blocks in the README, want at least 2", len(blocks))
	}

	d := startDemo(t, "--sim-speed", "8", "--no-sample")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(sparkpackBinary(t), filepath.Join(dir, "bin", "sparkpack")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(dir, "examples")); err != nil {
		t.Fatal(err)
	}
	script := strings.ReplaceAll(strings.Join(blocks, "\n"), "http://127.0.0.1:8080", d.API)
	if !strings.Contains(script, d.API) {
		t.Fatal("the README's examples do not name the demo's address http://127.0.0.1:8080")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+script)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SPARKPACK_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	t.Logf("README examples:\n%s", out)
	if err != nil {
		t.Fatalf("the README's examples failed: %v", err)
	}

	byName := map[string]demoJob{}
	for _, j := range listJobs(t, d.API) {
		byName[j.Name] = j
	}
	if j := byName["pi"]; j.State != "FINISHED" || j.DeadlineAt == nil {
		t.Errorf("pi: %+v; want FINISHED with a deadline (submit --follow waits for the end)", j)
	}
	if j := byName["big"]; j.State != "KILLED" && j.State != "CANCELLED" {
		t.Errorf("big: %s; want KILLED or CANCELLED (cancel --wait)", j.State)
	}
	for _, name := range []string{"wordcount-20g", "wordcount-again"} {
		j, ok := byName[name]
		if !ok || j.State == "REJECTED" || j.Labels["team"] != "analytics" || j.DeadlineAt == nil {
			t.Errorf("%s: %+v; want it stored and admitted with its label and deadline", name, j)
		}
	}
	for _, want := range []string{"FINISHED", "sparkpack_offers_received_total", "sparkpack_jobs{state=", `"name":"wordcount-20g"`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the examples' output lacks %q", want)
		}
	}
}
