package docker

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// envFile reads docker/.env (KEY=VALUE lines, # comments).
func envFile(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(".env")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf(".env: line %q is not KEY=VALUE", line)
		}
		out[k] = v
	}
	return out
}

// pinned reports why an image reference is not pinned, or "".
func pinned(ref string) string {
	if strings.Contains(ref, "$") {
		return "it still holds a variable"
	}
	if strings.Contains(ref, "@sha256:") {
		return ""
	}
	name := ref
	if i := strings.LastIndex(ref, "/"); i >= 0 {
		name = ref[i+1:]
	}
	_, tag, ok := strings.Cut(name, ":")
	switch {
	case !ok || tag == "":
		return "it has no tag (that means latest)"
	case tag == "latest" || strings.HasSuffix(tag, "-latest"):
		return "its tag is latest"
	}
	return ""
}

func TestEnvPinsEveryImage(t *testing.T) {
	env := envFile(t)
	for _, k := range []string{"GO_IMAGE", "RUNTIME_IMAGE", "SPARK_IMAGE"} {
		if why := pinned(env[k]); why != "" {
			t.Errorf(".env %s=%q is not pinned: %s", k, env[k], why)
		}
	}
	for _, k := range []string{"MESOS_VERSION", "ZOOKEEPER_VERSION", "POSTGRES_VERSION", "SPARK_VERSION"} {
		if v := env[k]; v == "" || v == "latest" {
			t.Errorf(".env %s=%q must be an explicit version", k, v)
		}
	}
	if m := regexp.MustCompile(`^1\.(\d+)\.\d+$`).FindStringSubmatch(env["MESOS_VERSION"]); m == nil {
		t.Errorf("MESOS_VERSION %q is not a Mesos 1.x.y release", env["MESOS_VERSION"])
	} else if minor, _ := strconv.Atoi(m[1]); minor < 9 {
		t.Errorf("MESOS_VERSION %s: quota limits need Mesos 1.9 or later", env["MESOS_VERSION"])
	}
	if !strings.HasPrefix(env["SPARK_VERSION"], "3.5.") {
		t.Errorf("SPARK_VERSION %q: sparkpack targets Spark 3.5 (Spark 4 dropped Mesos)", env["SPARK_VERSION"])
	}
	if !strings.Contains(env["SPARK_IMAGE"], ":"+env["SPARK_VERSION"]+"-") && !strings.HasSuffix(env["SPARK_IMAGE"], ":"+env["SPARK_VERSION"]) {
		t.Errorf("SPARK_IMAGE %q is not Spark %s", env["SPARK_IMAGE"], env["SPARK_VERSION"])
	}
	// The builder's Go must be at least go.mod's.
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`(?m)^go (\d+\.\d+(\.\d+)?)`).FindSubmatch(gomod)
	got := regexp.MustCompile(`^golang:(\d+\.\d+(\.\d+)?)`).FindStringSubmatch(env["GO_IMAGE"])
	if want == nil || got == nil {
		t.Fatalf("cannot compare Go versions: go.mod %q, GO_IMAGE %q", want, env["GO_IMAGE"])
	}
	if versionLess(got[1], string(want[1])) {
		t.Errorf("GO_IMAGE has Go %s, go.mod needs %s", got[1], want[1])
	}
}

func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		var x, y int
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

// composeCommand finds docker-compose (v1) or the docker compose plugin.
// Under `make test` scripts/deps.sh installs Debian's docker-compose, so a
// missing binary is a failure there; elsewhere the test skips loudly.
func composeCommand(t *testing.T) []string {
	t.Helper()
	if p, err := exec.LookPath("docker-compose"); err == nil {
		return []string{p}
	}
	if p, err := exec.LookPath("docker"); err == nil {
		if exec.Command(p, "compose", "version").Run() == nil {
			return []string{p, "compose"}
		}
	}
	msg := "docker-compose is not installed, so docker/docker-compose.yml was NOT validated; install it with: sudo apt-get install docker-compose (scripts/deps.sh test does)"
	if os.Getenv("SPARKPACK_TEST_DATABASE_URL") != "" {
		t.Fatal(msg + " — make test ran scripts/deps.sh, which should have installed it")
	}
	t.Skip("SKIPPED LOUDLY: " + msg)
	return nil
}

// composeEnv is the environment for docker-compose: the caller's without
// overrides that would change which files or values are checked.
func composeEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "COMPOSE_") || strings.HasPrefix(k, "DOCKER_") {
			continue
		}
		if _, inEnvFile := map[string]bool{"GO_IMAGE": true, "RUNTIME_IMAGE": true, "SPARK_IMAGE": true, "MESOS_IMAGE": true,
			"MESOS_VERSION": true, "SPARK_VERSION": true, "POSTGRES_VERSION": true, "ZOOKEEPER_VERSION": true,
			"POSTGRES_PASSWORD": true, "SPARKPACK_VERSION": true,
			"ZOOKEEPER_IMAGE": true, "POSTGRES_IMAGE": true, "MESOS_MASTER_SCHEME": true, "MESOS_MASTER_CA_FILE": true}[k]; inEnvFile {
			continue
		}
		out = append(out, kv)
	}
	return out
}

type composeFile struct {
	Services map[string]struct {
		Image       string            `json:"image"`
		Build       json.RawMessage   `json:"build"`
		Command     json.RawMessage   `json:"command"`
		Environment map[string]any    `json:"environment"`
		Volumes     []json.RawMessage `json:"volumes"`
		Ports       []json.RawMessage `json:"ports"`
		DependsOn   json.RawMessage   `json:"depends_on"`
		Healthcheck map[string]any    `json:"healthcheck"`
	} `json:"services"`
	Volumes map[string]any `json:"volumes"`
}

// resolved returns `docker-compose config` as JSON: compose v2 prints JSON
// itself; v1 prints YAML, converted with the PyYAML it depends on.
func resolved(t *testing.T, compose []string) composeFile {
	t.Helper()
	var cf composeFile
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(compose[0], append(compose[1:], args...)...)
		cmd.Dir, cmd.Env = ".", composeEnv()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Logf("%s: %s", strings.Join(cmd.Args, " "), stderr.String())
		}
		return out, err
	}
	if out, err := run("config", "--format", "json"); err == nil && json.Unmarshal(out, &cf) == nil {
		return cf
	}
	out, err := run("config")
	if err != nil {
		t.Fatalf("docker-compose config: %v", err)
	}
	py := exec.Command("python3", "-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)")
	py.Stdin = bytes.NewReader(out)
	js, err := py.Output()
	if err != nil {
		t.Fatalf("converting docker-compose config's YAML to JSON with python3 + PyYAML (docker-compose's own dependency): %v", err)
	}
	if err := json.Unmarshal(js, &cf); err != nil {
		t.Fatal(err)
	}
	return cf
}

func TestComposeConfig(t *testing.T) {
	compose := composeCommand(t)
	cmd := exec.Command(compose[0], append(compose[1:], "config", "-q")...)
	cmd.Dir, cmd.Env = ".", composeEnv()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s config -q: %v\n%s", strings.Join(compose, " "), err, out)
	}

	cf := resolved(t, compose)
	env := envFile(t)
	str := func(v any) string { s, _ := v.(string); return s }

	// Every image is pinned once .env is applied.
	for name, s := range cf.Services {
		if s.Image == "" {
			t.Errorf("service %s has no image name (set image: so that it is tagged)", name)
			continue
		}
		if why := pinned(s.Image); why != "" && !(name == "sparkpack" && len(s.Build) > 0) {
			t.Errorf("service %s: image %q is not pinned: %s", name, s.Image, why)
		}
	}

	for _, name := range []string{"zookeeper", "mesos-master", "postgres", "sparkpack", "spark-dist"} {
		if _, ok := cf.Services[name]; !ok {
			t.Errorf("service %s is missing", name)
		}
	}

	master := cf.Services["mesos-master"]
	for _, k := range []string{"MESOS_ZK", "MESOS_ACLS", "MESOS_CREDENTIALS", "MESOS_HTTP_CREDENTIALS"} {
		if str(master.Environment[k]) == "" {
			t.Errorf("mesos-master lacks %s", k)
		}
	}
	for _, k := range []string{"MESOS_AUTHENTICATE_FRAMEWORKS", "MESOS_AUTHENTICATE_HTTP_FRAMEWORKS", "MESOS_AUTHENTICATE_HTTP_READWRITE"} {
		if str(master.Environment[k]) != "true" {
			t.Errorf("mesos-master: %s must be true so that the ACLs apply to authenticated principals", k)
		}
	}

	// Agents: at least three, at least three sizes, full attributes.
	type size struct{ cpus, mem float64 }
	sizes := map[size]bool{}
	instanceTypes := map[string]bool{}
	agents := 0
	for name, s := range cf.Services {
		if !strings.HasPrefix(name, "agent-") {
			continue
		}
		agents++
		res, attrs := str(s.Environment["MESOS_RESOURCES"]), str(s.Environment["MESOS_ATTRIBUTES"])
		var sz size
		for _, kv := range strings.Split(res, ";") {
			k, v, _ := strings.Cut(kv, ":")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "cpus":
				sz.cpus = f
			case "mem":
				sz.mem = f
			}
		}
		if sz.cpus <= 0 || sz.mem <= 0 {
			t.Errorf("%s: MESOS_RESOURCES %q lacks cpus or mem", name, res)
		}
		sizes[sz] = true
		got := map[string]string{}
		for _, kv := range strings.Split(attrs, ";") {
			k, v, _ := strings.Cut(kv, ":")
			got[k] = v
		}
		if _, err := strconv.ParseFloat(got["price"], 64); err != nil || got["instance_type"] == "" || (got["location"] != "cloud" && got["location"] != "local") {
			t.Errorf("%s: MESOS_ATTRIBUTES %q needs instance_type, a numeric price and location local|cloud", name, attrs)
		}
		instanceTypes[got["instance_type"]] = true
		if str(s.Environment["MESOS_MASTER"]) == "" || str(s.Environment["MESOS_HOSTNAME"]) != name {
			t.Errorf("%s: MESOS_MASTER must be set and MESOS_HOSTNAME must be the service name (Spark's driver and executors reach each other by it)", name)
		}
		if str(s.Environment["SPARK_HOME"]) != "/opt/spark" || !strings.Contains(str(s.Environment["PATH"]), "/opt/java/openjdk/bin") {
			t.Errorf("%s: SPARK_HOME and the Java runtime must be set up for Spark's drivers and executors", name)
		}
		vols := ""
		for _, v := range s.Volumes {
			vols += string(v) + " "
		}
		if !strings.Contains(vols, "/opt/spark") || !strings.Contains(vols, "spark-home") {
			t.Errorf("%s: Spark is not mounted at /opt/spark: %s", name, vols)
		}
	}
	if agents < 3 || len(sizes) < 3 || len(instanceTypes) < 3 {
		t.Errorf("want >= 3 agents with >= 3 sizes and instance types; got %d agents, %d sizes, %d types", agents, len(sizes), len(instanceTypes))
	}

	// PostgreSQL keeps its data on a named volume.
	pgVols := ""
	for _, v := range cf.Services["postgres"].Volumes {
		pgVols += string(v)
	}
	if !strings.Contains(pgVols, "/var/lib/postgresql/data") || !strings.Contains(pgVols, `"volume"`) && !strings.Contains(pgVols, "pgdata:") {
		t.Errorf("postgres data is not on a named volume: %s", pgVols)
	}
	if _, ok := cf.Volumes["pgdata"]; !ok {
		t.Error("the named volume pgdata is not declared")
	}

	// sparkpack points at the master and the database.
	sp := cf.Services["sparkpack"]
	dbURL := str(sp.Environment["SPARKPACK_DATABASE_URL"])
	if !strings.Contains(dbURL, "@postgres:5432/") || !strings.Contains(dbURL, env["POSTGRES_PASSWORD"]) {
		t.Errorf("SPARKPACK_DATABASE_URL %q does not point at the postgres service", dbURL)
	}
	if !strings.Contains(str(sp.Environment["SPARKPACK_MESOS_MASTER"]), "mesos-master:5050") {
		t.Errorf("SPARKPACK_MESOS_MASTER %q does not point at mesos-master", sp.Environment["SPARKPACK_MESOS_MASTER"])
	}
	if l := str(sp.Environment["SPARKPACK_LISTEN"]); !strings.HasPrefix(l, "0.0.0.0:") {
		t.Errorf("SPARKPACK_LISTEN %q must listen on all interfaces inside the container", l)
	}
	if !strings.Contains(string(sp.Build), "docker/Dockerfile") {
		t.Errorf("sparkpack is not built from docker/Dockerfile: %s", sp.Build)
	}

	// High availability: a second instance on the same database and
	// master, with its own name, address and ports.
	sp2, ok := cf.Services["sparkpack-2"]
	if !ok {
		t.Fatal("no second sparkpack instance (sparkpack-2)")
	}
	for _, k := range []string{"SPARKPACK_DATABASE_URL", "SPARKPACK_MESOS_MASTER", "SPARKPACK_TOKENS_FILE", "SPARKPACK_TLS_CERT"} {
		if str(sp2.Environment[k]) != str(sp.Environment[k]) {
			t.Errorf("sparkpack-2 %s %q differs from sparkpack's %q", k, sp2.Environment[k], sp.Environment[k])
		}
	}
	id1, id2 := str(sp.Environment["SPARKPACK_INSTANCE_ID"]), str(sp2.Environment["SPARKPACK_INSTANCE_ID"])
	if id1 == "" || id1 == id2 {
		t.Errorf("instance ids %q and %q: want two distinct ones", id1, id2)
	}
	if !strings.Contains(str(sp2.Environment["SPARKPACK_ADVERTISE_URL"]), "sparkpack-2:8080") {
		t.Errorf("sparkpack-2 advertises %q", sp2.Environment["SPARKPACK_ADVERTISE_URL"])
	}
	if string(sp2.Ports[0]) == string(sp.Ports[0]) {
		t.Errorf("both instances publish %s", sp.Ports[0])
	}

	// spark-dist copies the pinned Spark 3.5 image.
	if img := cf.Services["spark-dist"].Image; img != env["SPARK_IMAGE"] {
		t.Errorf("spark-dist image %q, want SPARK_IMAGE %q", img, env["SPARK_IMAGE"])
	}
}

// TestMesosConfig checks the files the master and the agents mount.
func TestMesosConfig(t *testing.T) {
	var creds struct {
		Credentials []struct{ Principal, Secret string } `json:"credentials"`
	}
	b, err := os.ReadFile("mesos/credentials.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &creds); err != nil {
		t.Fatalf("credentials.json: %v", err)
	}
	secrets := map[string]string{}
	for _, c := range creds.Credentials {
		secrets[c.Principal] = c.Secret
	}
	for principal, file := range map[string]string{"sparkpack": "mesos/sparkpack.secret", "spark": "mesos/spark.secret"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// Spark reads spark.mesos.secret.file whole: no trailing newline.
		if string(b) != secrets[principal] || secrets[principal] == "" {
			t.Errorf("%s does not hold exactly the secret of principal %q in credentials.json", file, principal)
		}
	}

	type entity struct {
		Type   string   `json:"type"`
		Values []string `json:"values"`
	}
	var acls map[string]json.RawMessage
	b, err = os.ReadFile("mesos/acls.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &acls); err != nil {
		t.Fatalf("acls.json: %v", err)
	}
	// objects names each ACL's object field (Mesos' acls.proto).
	objects := map[string]string{
		"register_frameworks": "roles", "run_tasks": "users", "reserve_resources": "roles",
		"unreserve_resources": "reserver_principals", "update_quotas": "roles", "get_quotas": "roles",
		"teardown_frameworks": "framework_principals", "create_volumes": "roles", "destroy_volumes": "creator_principals",
	}
	// allowed evaluates the ACL list for one action like Mesos' local
	// authorizer: the first entry whose subject matches decides; with none,
	// "permissive" decides.
	permissive := true
	if p, ok := acls["permissive"]; ok {
		_ = json.Unmarshal(p, &permissive)
	}
	allowed := func(action, principal, object string) bool {
		var list []map[string]entity
		if err := json.Unmarshal(acls[action], &list); err != nil && acls[action] != nil {
			t.Fatalf("acls.json %s: %v", action, err)
		}
		matches := func(e entity, v string) bool {
			switch e.Type {
			case "ANY":
				return true
			case "NONE":
				return false
			}
			for _, x := range e.Values {
				if x == v {
					return true
				}
			}
			return false
		}
		for _, acl := range list {
			subj, obj := acl["principals"], acl[objects[action]]
			if subj.Type == "NONE" || !matches(subj, principal) {
				continue
			}
			if obj.Type == "NONE" {
				return false
			}
			if matches(obj, object) {
				return true
			}
		}
		return permissive
	}
	for action := range acls {
		if action == "permissive" {
			continue
		}
		if _, ok := objects[action]; !ok {
			t.Errorf("acls.json: unknown action %q", action)
		}
	}
	jobRole := "sparkpack-job-6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"
	for _, c := range []struct {
		action, principal, object string
		want                      bool
	}{
		{"register_frameworks", "sparkpack", "sparkpack", true},
		{"register_frameworks", "sparkpack", jobRole, true},
		{"register_frameworks", "spark", jobRole, true},
		{"register_frameworks", "mallory", jobRole, false},
		{"reserve_resources", "sparkpack", jobRole, true},
		{"reserve_resources", "spark", jobRole, false},
		{"unreserve_resources", "sparkpack", "sparkpack", true},
		{"unreserve_resources", "spark", "sparkpack", false},
		{"update_quotas", "sparkpack", jobRole, true},
		{"update_quotas", "spark", jobRole, false},
		{"get_quotas", "sparkpack", jobRole, true},
		{"run_tasks", "sparkpack", "root", true},
		{"run_tasks", "spark", "root", true},
		{"teardown_frameworks", "sparkpack", "spark", true},
		{"teardown_frameworks", "spark", "sparkpack", false},
	} {
		if got := allowed(c.action, c.principal, c.object); got != c.want {
			t.Errorf("ACL %s by %s on %s: allowed=%v, want %v", c.action, c.principal, c.object, got, c.want)
		}
	}
}
