package realmesos

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/deps.sh installs the packages RuntimePackages names (the skip
// message tells people to install those).
func TestDepsScriptInstallsTheRuntimePackages(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(RepoRoot(), "scripts", "deps.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), RuntimePackages) {
		t.Errorf("scripts/deps.sh does not install %q", RuntimePackages)
	}
}

// scripts/mesos-bin.sh (used by make test and CI) and Find agree on where
// the Mesos build is, and both honour MESOS_BIN.
func TestMesosBinScriptAgreesWithFind(t *testing.T) {
	script := filepath.Join(RepoRoot(), "scripts", "mesos-bin.sh")
	run := func(env ...string) (string, bool) {
		cmd := exec.Command(script)
		cmd.Env = append(cleanEnv(), env...)
		out, err := cmd.Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	got, ok := run()
	if want := DefaultBin(); got != want || ok != (want != "") {
		t.Errorf("mesos-bin.sh says %q (ok %v), DefaultBin %q", got, ok, want)
	}
	if got, ok := run("MESOS_BIN=/some/where"); !ok || got != "/some/where" {
		t.Errorf("with MESOS_BIN set: %q %v", got, ok)
	}
	if got, ok := run("MESOS_BIN=off"); ok || got != "" {
		t.Errorf("with MESOS_BIN=off: %q %v, want nothing and a failure", got, ok)
	}
	t.Setenv(EnvBin, "off")
	if dir, skip, err := Find(); dir != "" || err != nil || !strings.Contains(skip, "disabled") {
		t.Errorf("Find with MESOS_BIN=off: %q %q %v", dir, skip, err)
	}
	t.Setenv(EnvBin, t.TempDir())
	if _, _, err := Find(); err == nil {
		t.Error("Find accepted a MESOS_BIN without mesos-master")
	}
}
