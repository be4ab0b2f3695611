package realmesos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvBin names the environment variable pointing at a folder holding
// mesos-master and mesos-agent ("off" disables the real-Mesos tests).
const EnvBin = "MESOS_BIN"

// RuntimePackages are the Debian 12 packages the Mesos build of
// ../shared/mesos needs at run time (its README); scripts/deps.sh installs
// them when that build is present.
const RuntimePackages = "libapr1 libarchive13 libcurl4 libgrpc29 libgrpc++1.51 libprotobuf32 libsasl2-2 libsasl2-modules libsvn1 libunwind8 zlib1g libzookeeper-mt2"

// EnableHint is the one line a skipped test prints.
const EnableHint = "set " + EnvBin + " to a folder with mesos-master and mesos-agent (a Mesos 1.12 build such as ../shared/mesos/bin) to run them"

// RepoRoot is the root of the sparkpack repository this file belongs to.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// DefaultBin looks for shared/mesos/bin beside the repository, or beside
// one of its ancestors (a git worktree sits deeper than a clone); "" when
// there is none.
func DefaultBin() string {
	dir := filepath.Dir(RepoRoot())
	for {
		cand := filepath.Join(dir, "shared", "mesos", "bin")
		if isMesosBin(cand) {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isMesosBin(dir string) bool {
	for _, f := range []string{"mesos-master", "mesos-agent"} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// Find returns the folder of a usable Mesos build. When there is none it
// returns skip, a one-line reason that says how to enable the tests. err
// is set when MESOS_BIN names a folder that does not work: an explicit
// request that cannot be met is a failure, not a skip.
func Find() (dir, skip string, err error) {
	env, set := os.LookupEnv(EnvBin)
	env = strings.TrimSpace(env)
	switch {
	case set && (env == "off" || env == "none"):
		return "", "real Mesos tests disabled (" + EnvBin + "=" + env + ")", nil
	case set && env != "":
		if !isMesosBin(env) {
			return "", "", fmt.Errorf("%s=%s has no executable mesos-master and mesos-agent; point it at a Mesos build's bin folder or unset it", EnvBin, env)
		}
		if why := runs(env); why != "" {
			return "", "", fmt.Errorf("%s=%s: %s", EnvBin, env, why)
		}
		return env, "", nil
	}
	dir = DefaultBin()
	if dir == "" {
		return "", "real Mesos tests skipped: no Mesos build found; " + EnableHint, nil
	}
	if why := runs(dir); why != "" {
		return "", "real Mesos tests skipped: " + dir + ": " + why, nil
	}
	return dir, "", nil
}

// runs checks that the master starts far enough to print its version.
func runs(dir string) string {
	out, err := exec.Command(filepath.Join(dir, "mesos-master"), "--version").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if strings.Contains(msg, "shared libraries") {
			return fmt.Sprintf("mesos-master cannot load its libraries (%s); install them with: apt-get install -y %s (scripts/deps.sh does)", firstLine(msg), RuntimePackages)
		}
		return fmt.Sprintf("mesos-master --version failed: %v %s", err, firstLine(msg))
	}
	return ""
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}
