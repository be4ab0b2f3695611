package realmesos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// ThreeAgents is the cluster the real-Mesos tests run: three agents of
// different sizes, prices, instance types and locations. The emulator
// tests that compare against recordings of the real master use it too
// (the IDs are the emulator's agent ids; a real master makes its own).
func ThreeAgents() clusterspec.Cluster {
	return clusterspec.Cluster{Name: "realmesos", Agents: []clusterspec.Agent{
		{ID: "rm-S0", Hostname: "rm-a1", CPUs: 4, MemMB: 16384, DiskMB: 10240, PricePerHour: 0.24, InstanceType: "m1.large", Location: "local"},
		{ID: "rm-S1", Hostname: "rm-a2", CPUs: 8, MemMB: 32768, DiskMB: 10240, PricePerHour: 0.48, InstanceType: "m1.xlarge", Location: "cloud"},
		{ID: "rm-S2", Hostname: "rm-a3", CPUs: 4, MemMB: 8192, DiskMB: 10240, PricePerHour: 0.17, InstanceType: "c1.xlarge", Location: "cloud"},
	}}
}

func goTool() string {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// GoBuild builds a package of this repository (e.g. "./cmd/sparkpack")
// into out.
func GoBuild(pkg, out string, extra ...string) error {
	args := append([]string{"build", "-o", out}, extra...)
	cmd := exec.Command(goTool(), append(args, pkg)...)
	cmd.Dir = RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// BuildFakeSpark builds the Spark stand-in (package fakespark) into
// dir/spark-submit: the name a driver command has (the emulator, too,
// plays a Spark driver for commands named spark-submit).
func BuildFakeSpark(dir string) (string, error) {
	out := filepath.Join(dir, "spark-submit")
	return out, GoBuild("./integration/realmesos/fakespark", out)
}

// mesosGoModule is mesos-go's version in go.mod.
const mesosGoModule = "github.com/mesos/mesos-go@v0.0.11"

// BuildMesosGoExamples builds mesos-go v0.0.11's example scheduler and
// example executor (api/v1/cmd) from the module cache into dir, offline,
// with this repository's dependency versions. Nothing of mesos-go is kept
// in the repository: the build happens in a scratch module under dir.
// Two adaptations are made there, because v0.0.11 predates Go modules and
// its old dependencies are not in go.sum: the example scheduler's metrics
// handler uses promhttp.Handler (prometheus.Handler left client_golang
// long ago), and github.com/pborman/uuid, which the example executor uses
// for one random status uuid, is replaced by a 5-line local module.
func BuildMesosGoExamples(dir string) (scheduler, executor string, err error) {
	gomodcache, err := exec.Command(goTool(), "env", "GOMODCACHE").Output()
	if err != nil {
		return "", "", fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	src := filepath.Join(strings.TrimSpace(string(gomodcache)), mesosGoModule, "api", "v1", "cmd", "example-scheduler")
	if !fileExists(src) {
		return "", "", fmt.Errorf("%s is not in the module cache; run go mod download", mesosGoModule)
	}
	mod := filepath.Join(dir, "mesos-go-examples")
	if err := os.MkdirAll(filepath.Join(mod, "pbuuid"), 0o755); err != nil {
		return "", "", err
	}
	goMod, err := os.ReadFile(filepath.Join(RepoRoot(), "go.mod"))
	if err != nil {
		return "", "", err
	}
	var reqs []string
	in := false
	for _, l := range strings.Split(string(goMod), "\n") {
		switch {
		case strings.HasPrefix(l, "require ("):
			in = true
		case in && strings.TrimSpace(l) == ")":
			in = false
		case in:
			reqs = append(reqs, l)
		}
	}
	files := map[string]string{
		"go.mod": "module sparkpack.test/mesosgoexamples\n\ngo 1.26\n\nrequire (\n" + strings.Join(reqs, "\n") +
			"\n\tgithub.com/pborman/uuid v0.0.0\n)\n\nreplace github.com/pborman/uuid => ./pbuuid\n",
		"pbuuid/go.mod": "module github.com/pborman/uuid\n\ngo 1.26\n",
		"pbuuid/uuid.go": "// Package uuid replaces github.com/pborman/uuid for mesos-go's example executor.\npackage uuid\n\n" +
			"import \"crypto/rand\"\n\n// NewRandom returns a random (version 4) UUID.\nfunc NewRandom() []byte {\n\tb := make([]byte, 16)\n\t_, _ = rand.Read(b)\n" +
			"\tb[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80\n\treturn b\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(mod, name), []byte(text), 0o644); err != nil {
			return "", "", err
		}
	}
	sum, err := os.ReadFile(filepath.Join(RepoRoot(), "go.sum"))
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		return "", "", err
	}
	// The example scheduler: its package tree, with its own import path
	// rewritten to the scratch module and the metrics handler adapted.
	dst := filepath.Join(mod, "examplescheduler")
	err = filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := strings.ReplaceAll(string(b), "github.com/mesos/mesos-go/api/v1/cmd/example-scheduler/app",
			"sparkpack.test/mesosgoexamples/examplescheduler/app")
		if strings.Contains(text, "prometheus.Handler()") {
			text = strings.Replace(text, "prometheus.Handler()", "promhttp.Handler()", 1)
			text = strings.Replace(text, "\t\"github.com/prometheus/client_golang/prometheus\"\n",
				"\t\"github.com/prometheus/client_golang/prometheus\"\n\t\"github.com/prometheus/client_golang/prometheus/promhttp\"\n", 1)
		}
		return os.WriteFile(target, []byte(text), 0o644)
	})
	if err != nil {
		return "", "", fmt.Errorf("copy the example scheduler to the scratch module: %w", err)
	}
	build := func(out, pkg string) error {
		cmd := exec.Command(goTool(), "build", "-o", out, pkg)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s (in %s): %v\n%s", pkg, mod, err, b)
		}
		return nil
	}
	scheduler = filepath.Join(dir, "example-scheduler")
	executor = filepath.Join(dir, "example-executor")
	if err := build(scheduler, "./examplescheduler"); err != nil {
		return "", "", err
	}
	if err := build(executor, "github.com/mesos/mesos-go/api/v1/cmd/example-executor"); err != nil {
		return "", "", err
	}
	return scheduler, executor, nil
}
