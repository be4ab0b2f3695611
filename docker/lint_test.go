package docker

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// lintDockerfile is the scripted stand-in for hadolint, which cannot be
// installed from any registry reachable here (npm's "hadolint" package is a
// wrapper that downloads the Haskell binary from GitHub releases). It
// returns one message per broken rule:
//
//	L1  multi-stage: a named build stage and a final stage that copies from it
//	L2  every FROM is pinned: an explicit tag or digest, never latest
//	    (ARG defaults are resolved, and must equal docker/.env)
//	L3  COPY, never ADD
//	L4  apt-get: update and install in the same RUN, -y,
//	    --no-install-recommends, and rm -rf /var/lib/apt/lists/* after
//	L5  no apt-get upgrade / dist-upgrade, no sudo, no "cd" in RUN (WORKDIR)
//	L6  WORKDIR paths are absolute
//	L7  the final stage runs as a non-root, numeric USER (so that
//	    Kubernetes' runAsNonRoot can verify it)
//	L8  a HEALTHCHECK in exec form probing /healthz, with a timeout
//	L9  EXPOSE 8080; ENTRYPOINT in exec form
//	L10 the build uses cgo with CBC (coinor-libcbc-dev, pkgconf,
//	    CGO_ENABLED=1, ./cmd/sparkpack); the runtime installs coinor-libcbc3
//	    and ca-certificates
func lintDockerfile(src string, env map[string]string) []string {
	var problems []string
	bad := func(line int, rule, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		problems = append(problems, "Dockerfile:"+strconv.Itoa(line)+": "+msg+" ("+rule+")")
	}
	type instr struct {
		line      int
		cmd, args string
		stage     int
	}
	var ins []instr
	stage := -1
	var cur strings.Builder
	start := 0
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (cur.Len() == 0 && trimmed == "") {
			continue
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		full := cur.String()
		cur.Reset()
		cmd, args, _ := strings.Cut(full, " ")
		cmd = strings.ToUpper(cmd)
		if cmd == "FROM" {
			stage++
		}
		ins = append(ins, instr{line: start, cmd: cmd, args: strings.TrimSpace(args), stage: stage})
	}
	if stage < 0 {
		return []string{"Dockerfile: no FROM"}
	}
	last := stage
	argDefaults := map[string]string{}
	var stageNames []string
	copiesFromBuild := false
	seen := map[string]bool{}
	var buildRuns, finalRuns strings.Builder
	for _, in := range ins {
		switch in.cmd {
		case "ARG":
			if k, v, ok := strings.Cut(in.args, "="); ok {
				argDefaults[k] = v
				if ev, inEnv := env[k]; inEnv && ev != v {
					bad(in.line, "L2", "ARG %s default %q differs from docker/.env %q", k, v, ev)
				}
			}
		case "FROM":
			f := strings.Fields(in.args)
			img := os.Expand(f[0], func(k string) string { return argDefaults[k] })
			if why := pinned(img); why != "" {
				bad(in.line, "L2", "FROM %s (%s) is not pinned: %s", f[0], img, why)
			}
			name := ""
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				name = f[2]
			}
			stageNames = append(stageNames, name)
		case "ADD":
			bad(in.line, "L3", "use COPY, not ADD")
		case "RUN":
			a := in.args
			if strings.Contains(a, "apt-get install") {
				if !strings.Contains(a, "apt-get update") {
					bad(in.line, "L4", "apt-get install without apt-get update in the same RUN")
				}
				if !strings.Contains(a, "--no-install-recommends") || !regexp.MustCompile(`apt-get install[^&;|]* (-y|--yes|-[a-z]*y)\b`).MatchString(a) {
					bad(in.line, "L4", "apt-get install needs -y and --no-install-recommends")
				}
				if !strings.Contains(a, "rm -rf /var/lib/apt/lists/*") {
					bad(in.line, "L4", "remove /var/lib/apt/lists/* in the same RUN")
				}
			}
			if regexp.MustCompile(`apt-get (dist-)?upgrade|\bsudo\b`).MatchString(a) {
				bad(in.line, "L5", "no apt-get upgrade and no sudo")
			}
			if regexp.MustCompile(`(^|&&|;)\s*cd\s`).MatchString(a) {
				bad(in.line, "L5", "use WORKDIR instead of cd")
			}
			if in.stage < last {
				buildRuns.WriteString(a + "\n")
			} else {
				finalRuns.WriteString(a + "\n")
			}
		case "WORKDIR":
			if !strings.HasPrefix(in.args, "/") {
				bad(in.line, "L6", "WORKDIR %s is not absolute", in.args)
			}
		case "COPY":
			if in.stage == last && strings.Contains(in.args, "--from=") {
				copiesFromBuild = true
			}
		}
		if in.stage != last {
			continue
		}
		seen[in.cmd] = true
		switch in.cmd {
		case "USER":
			user := strings.Split(in.args, ":")[0]
			if _, err := strconv.Atoi(user); err != nil || user == "0" {
				bad(in.line, "L7", "USER %s: the final stage must run as a numeric, non-root uid", in.args)
			}
		case "HEALTHCHECK":
			if !strings.Contains(in.args, "CMD [") || !strings.Contains(in.args, "/healthz") || !strings.Contains(in.args, "--timeout=") {
				bad(in.line, "L8", "HEALTHCHECK must be exec form, probe /healthz and set --timeout")
			}
		case "EXPOSE":
			if !regexp.MustCompile(`\b8080\b`).MatchString(in.args) {
				bad(in.line, "L9", "EXPOSE must include 8080")
			}
		case "ENTRYPOINT":
			var argv []string
			if json.Unmarshal([]byte(in.args), &argv) != nil || len(argv) == 0 {
				bad(in.line, "L9", "ENTRYPOINT must be in exec (JSON) form")
			}
		}
	}
	if len(stageNames) < 2 || stageNames[0] == "" || !copiesFromBuild {
		bad(0, "L1", "want a multi-stage build: a named build stage and a final stage that COPY --from it; stages %q", stageNames)
	}
	for _, need := range []string{"USER", "HEALTHCHECK", "EXPOSE", "ENTRYPOINT"} {
		if !seen[need] {
			rule := map[string]string{"USER": "L7", "HEALTHCHECK": "L8", "EXPOSE": "L9", "ENTRYPOINT": "L9"}[need]
			bad(0, rule, "the final stage has no %s", need)
		}
	}
	for _, want := range []string{"coinor-libcbc-dev", "pkgconf", "CGO_ENABLED=1", "./cmd/sparkpack"} {
		if !strings.Contains(buildRuns.String(), want) {
			bad(0, "L10", "the build stage lacks %s", want)
		}
	}
	for _, want := range []string{"coinor-libcbc3", "ca-certificates"} {
		if !strings.Contains(finalRuns.String(), want) {
			bad(0, "L10", "the runtime stage lacks %s", want)
		}
	}
	return problems
}

func TestDockerfileLint(t *testing.T) {
	src, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range lintDockerfile(string(src), envFile(t)) {
		t.Error(p)
	}
	// The Debian package names exist in bookworm (the runtime's release).
	if osr, err := os.ReadFile("/etc/os-release"); err == nil && strings.Contains(string(osr), "VERSION_CODENAME=bookworm") {
		if _, err := exec.LookPath("apt-cache"); err == nil {
			for _, p := range []string{"coinor-libcbc3", "coinor-libcbc-dev", "pkgconf", "ca-certificates"} {
				if out, err := exec.Command("apt-cache", "show", "--no-all-versions", p).Output(); err != nil || !bytes.Contains(out, []byte("Package: "+p)) {
					t.Errorf("apt-cache does not know the Debian bookworm package %s (L10)", p)
				}
			}
		}
	} else {
		t.Log("not a Debian bookworm machine: package names not checked with apt-cache")
	}
	if p, err := exec.LookPath("hadolint"); err == nil {
		if out, err := exec.Command(p, "Dockerfile").CombinedOutput(); err != nil {
			t.Errorf("hadolint: %v\n%s", err, out)
		}
	} else {
		t.Log("hadolint is not installed (no reachable registry has it); the scripted rules ran instead")
	}
}

// TestDockerfileLintCatches breaks the real Dockerfile one rule at a time
// and expects the lint to say so: the check cannot silently pass.
func TestDockerfileLintCatches(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	env := envFile(t)
	for _, c := range []struct{ rule, old, new string }{
		{"L1", "COPY --from=build", "COPY"},
		{"L2", "ARG RUNTIME_IMAGE=" + env["RUNTIME_IMAGE"], "ARG RUNTIME_IMAGE=debian:latest"},
		{"L2", "ARG GO_IMAGE=" + env["GO_IMAGE"], "ARG GO_IMAGE=golang"},
		{"L3", "COPY go.mod go.sum ./", "ADD go.mod go.sum ./"},
		{"L4", "--no-install-recommends coinor-libcbc3", "coinor-libcbc3"},
		{"L4", " \\\n && rm -rf /var/lib/apt/lists/* \\\n && groupadd", " \\\n && groupadd"},
		{"L5", "RUN go mod download", "RUN cd /src && go mod download"},
		{"L6", "WORKDIR /src", "WORKDIR src"},
		{"L7", "USER 10001:10001", "USER root"},
		{"L7", "USER 10001:10001\n", ""},
		{"L8", "HEALTHCHECK", "# HEALTHCHECK"},
		{"L9", `ENTRYPOINT ["/usr/local/bin/sparkpack"]`, "ENTRYPOINT /usr/local/bin/sparkpack"},
		{"L10", "CGO_ENABLED=1", "CGO_ENABLED=0"},
		{"L10", "coinor-libcbc3 ca-certificates", "ca-certificates"},
	} {
		if !strings.Contains(src, c.old) {
			t.Fatalf("the Dockerfile no longer contains %q; update this test", c.old)
		}
		broken := strings.Replace(src, c.old, c.new, 1)
		found := false
		for _, p := range lintDockerfile(broken, env) {
			found = found || strings.HasSuffix(p, "("+c.rule+")")
		}
		if !found {
			t.Errorf("replacing %q by %q breaks %s, but the lint did not notice", c.old, c.new, c.rule)
		}
	}
}
