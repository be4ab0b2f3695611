//go:build deploytest

package docker

// The deploy test's checks against a running compose stack (build tag
// deploytest; scripts/deploy-test.sh builds the images, brings the stack
// up, runs this test and tears the stack down). They do what
// docs/deploy.md tells an operator to do, against the real Mesos 1.12
// master and agents of the stack.
//
// Environment (set by scripts/deploy-test.sh):
//
//	DEPLOY_COMPOSE   the compose command, words separated by spaces
//	                 (e.g. "docker-compose --env-file F -f docker/docker-compose.yml")
//	DEPLOY_API_1/2   sparkpack's API of the services sparkpack / sparkpack-2 from the host
//	DEPLOY_CA        the generated CA (PEM), as `docker compose run ... cat /certs/ca.pem` wrote it
//	DEPLOY_MESOS     the master's HTTP endpoint from the host

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/integration/realmesos"
)

type deployEnv struct {
	compose   []string
	apis      map[string]string // compose service -> API URL from the host
	mesos     *realmesos.Observer
	http      *http.Client
	ciToken   string
	adminTok  string
	sparkJar  string
	nonce     string
	startedAt time.Time
}

func newDeployEnv(t *testing.T) *deployEnv {
	t.Helper()
	for _, k := range []string{"DEPLOY_COMPOSE", "DEPLOY_API_1", "DEPLOY_API_2", "DEPLOY_CA", "DEPLOY_MESOS"} {
		if os.Getenv(k) == "" {
			t.Fatalf("%s is not set: run scripts/deploy-test.sh (make test-deploy)", k)
		}
	}
	ca, err := os.ReadFile(os.Getenv("DEPLOY_CA"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatalf("%s holds no PEM certificate", os.Getenv("DEPLOY_CA"))
	}
	tokens := map[string]string{}
	raw, err := os.ReadFile("sparkpack/tokens")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if f := strings.Split(strings.TrimSpace(line), ":"); len(f) == 3 && !strings.HasPrefix(line, "#") {
			tokens[f[0]] = f[1]
		}
	}
	env := envFile(t)
	// The master authenticates operator API calls (MESOS_AUTHENTICATE_HTTP_READWRITE):
	// the observer uses sparkpack's principal from credentials.json.
	var creds struct {
		Credentials []struct{ Principal, Secret string } `json:"credentials"`
	}
	if raw, err := os.ReadFile("mesos/credentials.json"); err != nil || json.Unmarshal(raw, &creds) != nil {
		t.Fatalf("mesos/credentials.json: %v", err)
	}
	obs := realmesos.NewObserver(os.Getenv("DEPLOY_MESOS"))
	for _, c := range creds.Credentials {
		if c.Principal == "sparkpack" {
			obs.HTTP = &http.Client{Timeout: 15 * time.Second, Transport: basicAuth{c.Principal, c.Secret}}
		}
	}
	return &deployEnv{
		compose: strings.Fields(os.Getenv("DEPLOY_COMPOSE")),
		apis:    map[string]string{"sparkpack": os.Getenv("DEPLOY_API_1"), "sparkpack-2": os.Getenv("DEPLOY_API_2")},
		mesos:   obs,
		http: &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}},
		ciToken:  tokens["ci"],
		adminTok: tokens["admin"],
		sparkJar: "local:///opt/spark/examples/jars/spark-examples_2.12-" + env["SPARK_VERSION"] + ".jar",
		nonce:    fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff),
	}
}

type basicAuth struct{ user, pass string }

func (b basicAuth) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.SetBasicAuth(b.user, b.pass)
	return http.DefaultTransport.RoundTrip(r)
}

// phase logs a step with the time since the test started.
func (d *deployEnv) phase(t *testing.T, format string, a ...any) {
	t.Helper()
	t.Logf("[deploy +%5.1fs] %s", time.Since(d.startedAt).Seconds(), fmt.Sprintf(format, a...))
}

// composeRun runs the compose command with args and returns its output.
func (d *deployEnv) composeRun(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(d.compose[0], append(append([]string{}, d.compose[1:]...), args...)...)
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", strings.Join(d.compose, " "), strings.Join(args, " "), err, out)
	}
	return string(out)
}

// api sends a request to one instance's REST API with a token.
func (d *deployEnv) api(service, method, path, token string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, d.apis[service]+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := d.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// waitFor polls cond every second until it returns true or the timeout
// passes; the last error or reason is in the failure.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, string)) {
	t.Helper()
	end := time.Now().Add(timeout)
	last := ""
	for {
		ok, why := cond()
		if ok {
			return
		}
		if why != last && why != "" {
			t.Logf("  waiting for %s: %s", what, why)
			last = why
		}
		if time.Now().After(end) {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, last)
		}
		time.Sleep(time.Second)
	}
}

type leaderInfo struct {
	Leader         bool   `json:"leader"`
	Instance       string `json:"instance"`
	LeaderInstance string `json:"leaderInstance"`
}

func (d *deployEnv) leader(service string) (leaderInfo, error) {
	var li leaderInfo
	code, b, err := d.api(service, "GET", "/api/v1/leader", d.adminTok, nil)
	if err != nil {
		return li, err
	}
	if code != 200 {
		return li, fmt.Errorf("GET /api/v1/leader on %s: %d %s", service, code, b)
	}
	return li, json.Unmarshal(b, &li)
}

// serviceOf maps an instance id (SPARKPACK_INSTANCE_ID) to its service.
func serviceOf(instance string) string {
	if instance == "sparkpack-1" {
		return "sparkpack"
	}
	return instance
}

type jobView struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

func (d *deployEnv) job(service, id string) (jobView, error) {
	var j jobView
	code, b, err := d.api(service, "GET", "/api/v1/jobs/"+id, d.ciToken, nil)
	if err != nil {
		return j, err
	}
	if code != 200 {
		return j, fmt.Errorf("GET /api/v1/jobs/%s: %d %s", id, code, b)
	}
	return j, json.Unmarshal(b, &j)
}

// submitREST submits a job through sparkpack's REST API (TLS, the ci token).
func (d *deployEnv) submitREST(t *testing.T, service, name string, seconds int) string {
	t.Helper()
	body := map[string]any{
		"name": name,
		"app": map[string]any{
			"appResource": d.sparkJar,
			"mainClass":   "org.apache.spark.examples.SparkPi",
			"args":        []string{"100"},
			// The Spark stand-in runs this long. (It would read
			// estimatedDurationSeconds from its task's label, but the
			// master's operator API wants credentials it does not have.)
			"environment": map[string]string{"FAKESPARK_DURATION_SECONDS": fmt.Sprint(seconds)},
		},
		"executors": 2, "executorCores": 1, "executorMemoryMB": 512,
		"deadline": 1800, "estimatedDurationSeconds": seconds,
		"labels": map[string]string{"deploytest": d.nonce},
	}
	code, b, err := d.api(service, "POST", "/api/v1/jobs", d.ciToken, body)
	if err != nil || code != 201 {
		t.Fatalf("POST /api/v1/jobs on %s: %d %s %v", service, code, b, err)
	}
	var j jobView
	if err := json.Unmarshal(b, &j); err != nil || j.ID == "" {
		t.Fatalf("POST /api/v1/jobs answered %s (%v)", b, err)
	}
	return j.ID
}

// submitSpark submits a job through the Spark REST listener from inside
// the compose network: the CreateSubmissionRequest Spark 3.5's
// RestSubmissionClient posts, sent with curl from an agent container
// (spark-submit itself is the stand-in here, and cannot).
func (d *deployEnv) submitSpark(t *testing.T, listener, name string, seconds int) string {
	t.Helper()
	req := map[string]any{
		"action": "CreateSubmissionRequest", "clientSparkVersion": "3.5.8",
		"appResource": d.sparkJar, "mainClass": "org.apache.spark.examples.SparkPi", "appArgs": []string{"100"},
		"environmentVariables": map[string]string{"SPARK_ENV_LOADED": "1", "FAKESPARK_DURATION_SECONDS": fmt.Sprint(seconds)},
		"sparkProperties": map[string]string{
			"spark.app.name": name, "spark.master": "mesos://" + listener + ":7077", "spark.submit.deployMode": "cluster",
			"spark.executor.instances": "2", "spark.executor.cores": "1", "spark.executor.memory": "512m",
			"spark.sparkpack.deadline": "1800", "spark.sparkpack.estimatedDurationSeconds": fmt.Sprint(seconds),
			"spark.sparkpack.label.deploytest": d.nonce,
		},
	}
	b, _ := json.Marshal(req)
	out := d.composeRun(t, "exec", "-T", "agent-xlarge-1", "curl", "-sS", "--fail-with-body", "-X", "POST",
		"-H", "Content-Type: application/json", "--data", string(b), "http://"+listener+":7077/v1/submissions/create")
	var resp struct {
		SubmissionID string `json:"submissionId"`
		Success      bool   `json:"success"`
		Message      string `json:"message"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &resp); err != nil || !resp.Success || resp.SubmissionID == "" {
		t.Fatalf("Spark REST create on %s answered %s (%v)", listener, out, err)
	}
	return resp.SubmissionID
}

// sparkStatus asks the Spark REST listener for a submission's driverState,
// from inside the compose network, as spark-submit --status does.
func (d *deployEnv) sparkStatus(t *testing.T, listener, id string) string {
	t.Helper()
	out := d.composeRun(t, "exec", "-T", "agent-xlarge-1", "curl", "-sS", "--fail-with-body",
		"http://"+listener+":7077/v1/submissions/status/"+id)
	var resp struct {
		DriverState string `json:"driverState"`
		Success     bool   `json:"success"`
	}
	if i := strings.Index(out, "{"); i < 0 || json.Unmarshal([]byte(out[i:]), &resp) != nil || !resp.Success {
		t.Fatalf("Spark REST status of %s on %s answered %s", id, listener, out)
	}
	return resp.DriverState
}

// driverTasks counts the master's tasks (running and completed) that are
// drivers of job id, by state.
func driverTasks(tasks []realmesos.Task, id string) map[string]int {
	out := map[string]int{}
	for _, tk := range tasks {
		if strings.HasPrefix(tk.ID, "sparkpack-driver-"+id+"-") {
			out[tk.State]++
		}
	}
	return out
}

// waitJobsEnd waits until every job has ended, noting whether each was
// seen RESERVING/holding a reservation on an agent and its driver running
// on the master; it returns the end states.
func (d *deployEnv) waitJobsEnd(t *testing.T, ids []string, timeout time.Duration, sawReservation map[string]bool) map[string]string {
	t.Helper()
	ctx := context.Background()
	states := map[string]string{}
	waitFor(t, fmt.Sprintf("%d jobs to end", len(ids)), timeout, func() (bool, string) {
		if rs, err := d.mesos.Reservations(ctx); err == nil {
			for _, r := range rs {
				for _, id := range ids {
					if strings.Contains(r.Role, id) || labelHas(r.Labels, id) {
						if !sawReservation[id] {
							d.phase(t, "job %s holds a reservation on %s: role %s, %.1f cpus, %.0f MiB (principal %s)", id, r.Hostname, r.Role, r.CPUs, r.MemMB, r.Principal)
						}
						sawReservation[id] = true
					}
				}
			}
		}
		var pending []string
		for _, id := range ids {
			if _, done := states[id]; done {
				continue
			}
			for _, svc := range []string{"sparkpack", "sparkpack-2"} {
				j, err := d.job(svc, id)
				if err != nil {
					continue
				}
				switch j.State {
				case "FINISHED", "FAILED", "KILLED", "REJECTED", "CANCELLED":
					states[id] = j.State
					d.phase(t, "job %s ended: %s", id, j.State)
				default:
					pending = append(pending, id[:8]+"="+j.State)
				}
				break
			}
		}
		return len(states) == len(ids), strings.Join(pending, " ")
	})
	return states
}

func labelHas(m map[string]string, s string) bool {
	for _, v := range m {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// waitReleased waits until the master shows no dynamic reservation and no
// quota left over from sparkpack.
func (d *deployEnv) waitReleased(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, "reservations and quota released on the master", 2*time.Minute, func() (bool, string) {
		rs, err := d.mesos.Reservations(ctx)
		if err != nil {
			return false, err.Error()
		}
		if len(rs) > 0 {
			return false, fmt.Sprintf("%d reservations left, e.g. %s on %s", len(rs), rs[0].Role, rs[0].Hostname)
		}
		q, err := d.mesos.QuotaLimits(ctx)
		if err != nil {
			return false, err.Error()
		}
		for role, lim := range q {
			for res, v := range lim {
				if v > 0 {
					return false, fmt.Sprintf("quota %s %s=%g left", role, res, v)
				}
			}
		}
		return true, ""
	})
}

// waitStackReady waits for both instances' /readyz, a leader, the four
// agents registered and sparkpack's framework subscribed.
func (d *deployEnv) waitStackReady(t *testing.T, timeout time.Duration) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, "the stack to be ready", timeout, func() (bool, string) {
		for svc := range d.apis {
			code, b, err := d.api(svc, "GET", "/readyz", "", nil)
			if err != nil || code != 200 {
				return false, fmt.Sprintf("%s /readyz: %d %s %v", svc, code, bytes.TrimSpace(b), err)
			}
		}
		li, err := d.leader("sparkpack")
		if err != nil || li.LeaderInstance == "" {
			return false, fmt.Sprintf("no leader yet (%v)", err)
		}
		agents, err := d.mesos.Agents(ctx)
		if err != nil {
			return false, "GET_AGENTS: " + err.Error()
		}
		active := 0
		for _, a := range agents {
			if a.Active {
				active++
			}
		}
		if active < 4 {
			return false, fmt.Sprintf("%d of 4 agents active", active)
		}
		fws, err := d.mesos.Frameworks(ctx)
		if err != nil {
			return false, "GET_FRAMEWORKS: " + err.Error()
		}
		for _, f := range fws {
			if f.Name == "sparkpack" && f.Active && f.Connected && !f.Completed {
				return true, ""
			}
		}
		return false, "sparkpack's framework is not subscribed"
	})
}

func TestDeployStack(t *testing.T) {
	d := newDeployEnv(t)
	d.startedAt = time.Now()
	ctx := context.Background()

	d.phase(t, "waiting for the stack (both sparkpack instances ready, a leader, 4 agents, the framework subscribed)")
	d.waitStackReady(t, 5*time.Minute)
	if v := os.Getenv("DEPLOY_UP_STARTED"); v != "" {
		var started int64
		fmt.Sscan(v, &started)
		d.phase(t, "TIME stack ready %ds after `up -d` began", time.Now().Unix()-started)
	}

	// 1. One job through sparkpack's REST API (TLS, ci token), one through
	// the Spark REST listener from inside the compose network.
	t1 := time.Now()
	a := d.submitREST(t, "sparkpack", "deploytest-rest-"+d.nonce, 15)
	d.phase(t, "submitted %s through https://sparkpack:8080/api/v1/jobs (token ci)", a)
	b := d.submitSpark(t, "sparkpack-2", "deploytest-sparkrest-"+d.nonce, 15)
	d.phase(t, "submitted %s through the Spark REST listener http://sparkpack-2:7077 from agent-xlarge-1", b)
	saw := map[string]bool{}
	states := d.waitJobsEnd(t, []string{a, b}, 5*time.Minute, saw)
	d.phase(t, "TIME first jobs finished %.1fs after the first submission", time.Since(t1).Seconds())
	tasks, err := d.mesos.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a, b} {
		if states[id] != "FINISHED" {
			t.Errorf("job %s ended %s, want FINISHED", id, states[id])
		}
		if dt := driverTasks(tasks, id); dt["TASK_FINISHED"] != 1 || len(dt) != 1 {
			t.Errorf("job %s: driver tasks on the master by state %v, want exactly one TASK_FINISHED", id, dt)
		}
		if !saw[id] {
			t.Errorf("job %s was never seen holding a reservation on an agent", id)
		}
	}
	if st := d.sparkStatus(t, "sparkpack", b); st != "FINISHED" {
		t.Errorf("Spark REST status of %s: driverState %s, want FINISHED", b, st)
	}
	d.waitReleased(t)
	d.phase(t, "reservations and quota released on the master")

	// 2. Failover: jobs running, the leading container killed.
	li, err := d.leader("sparkpack")
	if err != nil {
		t.Fatal(err)
	}
	lead := serviceOf(li.LeaderInstance)
	other := "sparkpack"
	if lead == "sparkpack" {
		other = "sparkpack-2"
	}
	var ids []string
	for i := 0; i < 3; i++ {
		ids = append(ids, d.submitREST(t, other, fmt.Sprintf("deploytest-failover-%d-%s", i, d.nonce), 45))
	}
	d.phase(t, "submitted %d jobs (45 s each) to %s; %s leads", len(ids), other, lead)
	waitFor(t, "the failover jobs running", 3*time.Minute, func() (bool, string) {
		var st []string
		for _, id := range ids {
			j, err := d.job(other, id)
			if err != nil {
				return false, err.Error()
			}
			if j.State != "RUNNING" {
				st = append(st, id[:8]+"="+j.State)
			}
		}
		return len(st) == 0, strings.Join(st, " ")
	})
	d.phase(t, "killing the leader's container (%s, SIGKILL) while the jobs run", lead)
	d.composeRun(t, "kill", "-s", "SIGKILL", lead)
	killed := time.Now()
	waitFor(t, other+" to take over", 2*time.Minute, func() (bool, string) {
		li, err := d.leader(other)
		if err != nil {
			return false, err.Error()
		}
		return li.Leader, "leader is " + li.LeaderInstance
	})
	d.phase(t, "TIME failover: %s leads %.1fs after the kill", other, time.Since(killed).Seconds())
	for _, id := range ids {
		if j, err := d.job(other, id); err != nil || j.State != "RUNNING" {
			t.Errorf("failover job %s after the takeover: %s %v, want still RUNNING", id, j.State, err)
		}
	}
	states = d.waitJobsEnd(t, ids, 5*time.Minute, map[string]bool{})
	tasks, err = d.mesos.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if states[id] != "FINISHED" {
			t.Errorf("failover job %s ended %s, want FINISHED", id, states[id])
		}
		if dt := driverTasks(tasks, id); dt["TASK_FINISHED"] != 1 || len(dt) != 1 {
			t.Errorf("failover job %s: driver tasks on the master by state %v, want exactly one TASK_FINISHED (exactly once)", id, dt)
		}
	}
	d.waitReleased(t)
	d.phase(t, "the failover jobs finished exactly once; starting %s again", lead)
	d.composeRun(t, "start", lead)

	// 3. The Mesos master container restarts (with no job in flight: the
	// Spark stand-in does not re-subscribe after losing the master, unlike
	// Spark's libmesos driver, so a driver running across the restart dies
	// and leaves its executors behind; docs/deploy.md, "Try it on one machine").
	d.phase(t, "restarting the mesos-master container")
	d.composeRun(t, "restart", "mesos-master")
	restarted := time.Now()
	d.waitStackReady(t, 5*time.Minute)
	d.phase(t, "TIME after the master's restart: agents back and sparkpack subscribed again in %.1fs", time.Since(restarted).Seconds())
	c := d.submitREST(t, other, "deploytest-after-master-restart-"+d.nonce, 10)
	states = d.waitJobsEnd(t, []string{c}, 5*time.Minute, map[string]bool{})
	tasks, err = d.mesos.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if states[c] != "FINISHED" {
		t.Errorf("job %s after the master's restart ended %s, want FINISHED", c, states[c])
	}
	if dt := driverTasks(tasks, c); dt["TASK_FINISHED"] != 1 || len(dt) != 1 {
		t.Errorf("job %s: driver tasks on the master by state %v, want exactly one TASK_FINISHED", c, dt)
	}
	d.waitReleased(t)
	d.phase(t, "done")
}
