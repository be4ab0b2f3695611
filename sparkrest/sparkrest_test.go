package sparkrest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/internal/syncbuf"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// sparkPiRequest is a create request in exactly the shape Spark 3.5's
// RestSubmissionClient sends for
//
//	spark-submit --master mesos://sparkpack:7077 --deploy-mode cluster \
//	  --class org.apache.spark.examples.SparkPi --name "Spark Pi" \
//	  --total-executor-cores 4 --executor-cores 2 --executor-memory 2g \
//	  --driver-memory 1g --driver-cores 1 \
//	  --conf spark.eventLog.enabled=true --conf spark.sparkpack.deadline=3600 \
//	  local:///opt/spark/examples/jars/spark-examples.jar 100
//
// Jackson writes it with INDENT_OUTPUT and alphabetically ordered fields;
// every Spark property is a string; spark-submit adds spark.app.name,
// spark.jars (with the application jar), spark.master,
// spark.submit.deployMode and spark.driver.supervise; the client forwards
// its SPARK_* (except SPARK_ENV_LOADED, SPARK_HOME, SPARK_CONF_DIR) and
// MESOS_* environment variables.
const sparkPiRequest = `{
  "action" : "CreateSubmissionRequest",
  "appArgs" : [ "100" ],
  "appResource" : "local:///opt/spark/examples/jars/spark-examples.jar",
  "clientSparkVersion" : "3.5.8",
  "environmentVariables" : {
    "MESOS_NATIVE_JAVA_LIBRARY" : "/usr/lib/libmesos.so",
    "SPARK_SCALA_VERSION" : "2.12"
  },
  "mainClass" : "org.apache.spark.examples.SparkPi",
  "sparkProperties" : {
    "spark.jars" : "local:///opt/spark/examples/jars/spark-examples.jar",
    "spark.driver.supervise" : "false",
    "spark.sparkpack.deadline" : "3600",
    "spark.app.name" : "Spark Pi",
    "spark.cores.max" : "4",
    "spark.executor.cores" : "2",
    "spark.eventLog.enabled" : "true",
    "spark.submit.deployMode" : "cluster",
    "spark.driver.memory" : "1g",
    "spark.master" : "mesos://sparkpack:7077",
    "spark.driver.cores" : "1",
    "spark.executor.memory" : "2g"
  }
}
`

// fields are the JSON properties of Spark's response classes
// (SubmitRestProtocolResponse and subclasses). Spark's client parses
// responses with Jackson and fails on any property not listed here.
var fields = map[string][]string{
	ActionCreateResponse: {"action", "message", "serverSparkVersion", "submissionId", "success", "unknownFields"},
	ActionStatusResponse: {"action", "driverState", "message", "serverSparkVersion", "submissionId", "success", "workerHostPort", "workerId", "unknownFields"},
	ActionKillResponse:   {"action", "message", "serverSparkVersion", "submissionId", "success", "unknownFields"},
	ActionErrorResponse:  {"action", "highestProtocolVersion", "message", "serverSparkVersion", "success", "unknownFields"},
}

type env struct {
	url    string
	native string // the native API on the same store
	store  *store.Store
	notes  *notifier
	logs   *syncbuf.Buffer
}

// notifier records what the scheduler core would hear.
type notifier struct {
	mu        sync.Mutex
	submitted []string
	cancelled []string // id, with " kill" when a kill was requested
}

func (n *notifier) JobSubmitted(j scheduler.Job) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.submitted = append(n.submitted, j.ID)
}

func (n *notifier) JobCancelled(j scheduler.Job, kill bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	s := j.ID
	if kill {
		s += " kill"
	}
	n.cancelled = append(n.cancelled, s)
}

func (n *notifier) cancels() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]string(nil), n.cancelled...)
}

// setup serves the protocol wired as serve wires it: Submit and Cancel are
// a native api.Server's, the logger is a JSON one at level info.
func setup(t *testing.T) env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logs := &syncbuf.Buffer{}
	log := logrus.New()
	log.SetOutput(logs)
	log.SetFormatter(&logrus.JSONFormatter{})
	log.SetLevel(logrus.InfoLevel)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(ctx, pgtest.URL(t), store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	notes := &notifier{}
	apiSrv := api.New(api.Config{Store: st, Log: log, Notifier: notes})
	srv := httptest.NewServer(New(Config{Store: st, Submit: apiSrv.Submit, Cancel: apiSrv.Cancel, Log: log.WithField("listener", "spark-rest")}))
	t.Cleanup(srv.Close)
	native := httptest.NewServer(apiSrv.Handler())
	t.Cleanup(native.Close)
	return env{url: srv.URL, native: native.URL, store: st, notes: notes, logs: logs}
}

// do sends a request as Spark's client does and decodes the answer,
// checking that it holds only fields Spark's class for its action has.
func do(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("charset", "utf-8")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: answer is not JSON (%v): %s", method, url, err, raw)
	}
	action, _ := m["action"].(string)
	allowed, ok := fields[action]
	if !ok {
		t.Fatalf("%s %s: unknown action %q in %s", method, url, action, raw)
	}
	for k := range m {
		found := false
		for _, a := range allowed {
			found = found || a == k
		}
		if !found {
			t.Errorf("%s %s: %s has field %q, which Spark's client would reject", method, url, action, k)
		}
	}
	if _, ok := m["serverSparkVersion"].(string); !ok {
		t.Errorf("%s %s: serverSparkVersion missing: %s", method, url, raw)
	}
	if _, ok := m["success"].(bool); !ok {
		t.Errorf("%s %s: success must be a JSON boolean: %s", method, url, raw)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, url, ct)
	}
	return resp.StatusCode, m
}

func TestSparkPiSubmitStatusKill(t *testing.T) {
	e := setup(t)
	before := time.Now()
	code, m := do(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest)
	if code != 200 || m["action"] != ActionCreateResponse || m["success"] != true {
		t.Fatalf("create: %d %v", code, m)
	}
	id, _ := m["submissionId"].(string)
	if !scheduler.IsUUID(id) {
		t.Fatalf("submissionId %q is not a job id", id)
	}
	if m["serverSparkVersion"] != DefaultSparkVersion {
		t.Errorf("serverSparkVersion %v", m["serverSparkVersion"])
	}
	if _, ok := m["unknownFields"]; ok {
		t.Errorf("unknownFields set for a request without unknown fields: %v", m)
	}

	job, err := e.store.GetJob(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "Spark Pi" || job.Executors != 2 || job.ExecutorCores != 2 || job.ExecutorMemoryMB != 2048 ||
		job.Driver == nil || job.Driver.MemoryMB != 1024 || job.Driver.Cores != 1 || job.MemoryOverheadMB != 0 {
		t.Errorf("job sizes: %+v driver %+v", job.Spec, job.Driver)
	}
	if job.App.AppResource != "local:///opt/spark/examples/jars/spark-examples.jar" || job.App.MainClass != "org.apache.spark.examples.SparkPi" ||
		len(job.App.Args) != 1 || job.App.Args[0] != "100" {
		t.Errorf("app: %+v", job.App)
	}
	if len(job.App.SparkConf) != 1 || job.App.SparkConf["spark.eventLog.enabled"] != "true" {
		t.Errorf("sparkConf should keep only spark.eventLog.enabled: %v", job.App.SparkConf)
	}
	// MESOS_NATIVE_JAVA_LIBRARY (forwarded by the client from its own
	// environment) chooses the native library of the driver: dropped,
	// and the answer says so.
	if job.App.Environment["SPARK_SCALA_VERSION"] != "2.12" || len(job.App.Environment) != 1 {
		t.Errorf("environment: %v", job.App.Environment)
	}
	if msg, _ := m["message"].(string); !strings.Contains(msg, "MESOS_NATIVE_JAVA_LIBRARY not passed to the driver") {
		t.Errorf("the message does not say the variable was dropped: %q", msg)
	}
	if job.DeadlineAt == nil || job.DeadlineAt.Before(before.Add(3599*time.Second)) || job.DeadlineAt.After(time.Now().Add(3601*time.Second)) {
		t.Errorf("deadline: %v", job.DeadlineAt)
	}

	code, m = do(t, "GET", e.url+"/v1/submissions/status/"+id, "")
	if code != 200 || m["action"] != ActionStatusResponse || m["success"] != true || m["driverState"] != DriverQueued || m["submissionId"] != id {
		t.Fatalf("status: %d %v", code, m)
	}

	// A driver that runs is RUNNING, and a kill is a kill request.
	ctx := context.Background()
	for _, step := range [][2]scheduler.State{{scheduler.Submitted, scheduler.Queued}, {scheduler.Queued, scheduler.Placing},
		{scheduler.Placing, scheduler.Reserving}, {scheduler.Reserving, scheduler.Launching}, {scheduler.Launching, scheduler.Running}} {
		if _, err := e.store.Transition(ctx, id, step[0], step[1], "test", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, m = do(t, "GET", e.url+"/v1/submissions/status/"+strings.ToUpper(id), ""); m["driverState"] != DriverRunning || m["submissionId"] != id {
		t.Fatalf("status of a running job: %v", m)
	}
	code, m = do(t, "POST", e.url+"/v1/submissions/kill/"+id, "")
	if code != 200 || m["action"] != ActionKillResponse || m["success"] != true || !strings.Contains(m["message"].(string), "Killing running driver") {
		t.Fatalf("kill running: %d %v", code, m)
	}
	if j, _ := e.store.GetJob(ctx, id); !j.KillRequested {
		t.Error("kill did not mark the job kill-requested")
	}
	// The kill reached the scheduler core exactly as a DELETE does.
	if got := e.notes.cancels(); len(got) != 1 || got[0] != id+" kill" {
		t.Errorf("the core heard %v of the kill, want [%s kill]", got, id)
	}
	if _, err := e.store.Transition(ctx, id, scheduler.Running, scheduler.Killed, "test", nil); err != nil {
		t.Fatal(err)
	}
	if _, m = do(t, "GET", e.url+"/v1/submissions/status/"+id, ""); m["driverState"] != DriverKilled {
		t.Fatalf("status of a killed job: %v", m)
	}
	if code, m = do(t, "POST", e.url+"/v1/submissions/kill/"+id, ""); code != 200 || m["success"] != false {
		t.Fatalf("kill of an ended job: %d %v", code, m)
	}
}

func TestKillPendingAndUnknown(t *testing.T) {
	e := setup(t)
	_, m := do(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest)
	id := m["submissionId"].(string)
	code, m := do(t, "POST", e.url+"/v1/submissions/kill/"+id, "")
	if code != 200 || m["success"] != true || m["submissionId"] != id {
		t.Fatalf("kill pending: %d %v", code, m)
	}
	if j, _ := e.store.GetJob(context.Background(), id); j.State != scheduler.Cancelled {
		t.Errorf("state after kill: %s", j.State)
	}
	if _, m = do(t, "GET", e.url+"/v1/submissions/status/"+id, ""); m["driverState"] != DriverKilled {
		t.Errorf("status after kill: %v", m)
	}
	for _, unknown := range []string{"6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", "driver-20261122120000-0001"} {
		code, m = do(t, "GET", e.url+"/v1/submissions/status/"+unknown, "")
		if code != 200 || m["success"] != false || m["driverState"] != DriverNotFound || m["submissionId"] != unknown {
			t.Errorf("status of unknown %s: %d %v", unknown, code, m)
		}
		code, m = do(t, "POST", e.url+"/v1/submissions/kill/"+unknown, "")
		if code != 200 || m["success"] != false || m["submissionId"] != unknown {
			t.Errorf("kill of unknown %s: %d %v", unknown, code, m)
		}
	}
}

func TestIdempotencyWithSparkpackID(t *testing.T) {
	e := setup(t)
	const id = "0b0e7c3a-1d2e-4f5a-8b9c-0d1e2f3a4b5c"
	body := strings.Replace(sparkPiRequest, `"spark.sparkpack.deadline" : "3600",`,
		`"spark.sparkpack.deadline" : "2099-01-01T00:00:00Z", "spark.sparkpack.id" : "`+strings.ToUpper(id)+`", "spark.sparkpack.label.team" : "analytics",`, 1)
	code, m := do(t, "POST", e.url+"/v1/submissions/create", body)
	if code != 200 || m["submissionId"] != id {
		t.Fatalf("first create: %d %v", code, m)
	}
	code, m = do(t, "POST", e.url+"/v1/submissions/create", body)
	if code != 200 || m["success"] != true || m["submissionId"] != id || !strings.Contains(m["message"].(string), "already submitted") {
		t.Fatalf("repeated create: %d %v", code, m)
	}
	other := strings.Replace(body, `"spark.executor.memory" : "2g"`, `"spark.executor.memory" : "4g"`, 1)
	code, m = do(t, "POST", e.url+"/v1/submissions/create", other)
	if code != 400 || m["action"] != ActionErrorResponse || !strings.Contains(m["message"].(string), PropID) {
		t.Fatalf("same id, other body: %d %v", code, m)
	}
	j, err := e.store.GetJob(context.Background(), id)
	if err != nil || j.Labels["team"] != "analytics" || j.ExecutorMemoryMB != 2048 || j.DeadlineAt == nil || j.DeadlineAt.Year() != 2099 {
		t.Errorf("job: %+v %v", j, err)
	}
	list, _, err := e.store.ListJobs(context.Background(), store.ListOptions{})
	if err != nil || len(list) != 1 {
		t.Errorf("%d jobs stored, want 1 (%v)", len(list), err)
	}
}

func TestWithoutIDEverySubmissionIsANewJob(t *testing.T) {
	e := setup(t)
	_, a := do(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest)
	_, b := do(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest)
	if a["submissionId"] == b["submissionId"] {
		t.Errorf("two spark-submit runs became one job %v", a["submissionId"])
	}
}

func TestBadRequests(t *testing.T) {
	e := setup(t)
	replace := func(old, new string) string {
		if !strings.Contains(sparkPiRequest, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(sparkPiRequest, old, new, 1)
	}
	for _, c := range []struct {
		name, method, path, body string
		code                     int
		msg                      string
	}{
		{"malformed JSON", "POST", "/v1/submissions/create", `{"action": `, 400, "Malformed request"},
		{"not an object", "POST", "/v1/submissions/create", `[1, 2]`, 400, "Malformed request"},
		{"no action", "POST", "/v1/submissions/create", replace(`"action" : "CreateSubmissionRequest",`, ""), 400, "action"},
		{"wrong action", "POST", "/v1/submissions/create", replace(`"CreateSubmissionRequest"`, `"KillSubmissionRequest"`), 400, "unexpected type KillSubmissionRequest"},
		{"no client version", "POST", "/v1/submissions/create", replace(`"clientSparkVersion" : "3.5.8",`, ""), 400, "clientSparkVersion"},
		{"no properties", "POST", "/v1/submissions/create", `{"action":"CreateSubmissionRequest","clientSparkVersion":"3.5.8","appResource":"a.jar","mainClass":"A"}`, 400, "Spark properties"},
		{"no main class", "POST", "/v1/submissions/create", replace(`"mainClass" : "org.apache.spark.examples.SparkPi",`, ""), 400, "mainClass"},
		{"fractional memory", "POST", "/v1/submissions/create", replace(`"2g"`, `"2.5g"`), 400, "spark.executor.memory"},
		{"tiny executor", "POST", "/v1/submissions/create", replace(`"2g"`, `"100m"`), 400, "spark.executor.memory"},
		{"reserved property", "POST", "/v1/submissions/create", replace(`"spark.eventLog.enabled" : "true"`, `"spark.mesos.role" : "other"`), 400, "spark.mesos.role"},
		{"cores.max below executor cores", "POST", "/v1/submissions/create", replace(`"spark.cores.max" : "4"`, `"spark.cores.max" : "1"`), 400, "spark.cores.max"},
		{"bad deadline", "POST", "/v1/submissions/create", replace(`"3600"`, `"tomorrow"`), 400, PropDeadline},
		{"bad id", "POST", "/v1/submissions/create", replace(`"spark.sparkpack.deadline" : "3600"`, `"spark.sparkpack.id" : "x"`), 400, PropID},
		{"unknown sparkpack property", "POST", "/v1/submissions/create", replace(`"spark.sparkpack.deadline"`, `"spark.sparkpack.deadlin"`), 400, "unknown sparkpack property"},
		{"bad supervise", "POST", "/v1/submissions/create", replace(`"spark.driver.supervise" : "false"`, `"spark.driver.supervise" : "yes"`), 400, "spark.driver.supervise must be true or false"},
		{"too many retries", "POST", "/v1/submissions/create", replace(`"spark.driver.supervise" : "false"`, `"spark.sparkpack.retries" : "11"`), 400, "spark.sparkpack.retries must be a whole number from 0 to 10"},
		{"bad env name", "POST", "/v1/submissions/create", replace(`"SPARK_SCALA_VERSION"`, `"1BAD"`), 400, "environmentVariables"},
		{"option as appResource", "POST", "/v1/submissions/create", replace(`"appResource" : "local:///opt/spark/examples/jars/spark-examples.jar"`, `"appResource" : "--conf=spark.mesos.role=*"`), 400, "appResource: must not begin with a dash"},
		{"spaced option as appResource", "POST", "/v1/submissions/create", replace(`"appResource" : "local:///opt/spark/examples/jars/spark-examples.jar"`, `"appResource" : "  -c"`), 400, "appResource"},
		{"unicode dash appResource", "POST", "/v1/submissions/create", replace(`"appResource" : "local:///opt/spark/examples/jars/spark-examples.jar"`, `"appResource" : "\u2014conf=spark.cores.max=99"`), 400, "appResource: must not begin with a dash"},
		{"shell class", "POST", "/v1/submissions/create", replace(`"mainClass" : "org.apache.spark.examples.SparkPi"`, `"mainClass" : "org.apache.spark.repl.Main"`), 400, "mainClass"},
		{"SparkSubmit class", "POST", "/v1/submissions/create", replace(`"mainClass" : "org.apache.spark.examples.SparkPi"`, `"mainClass" : "org.apache.spark.deploy.SparkSubmit"`), 400, "mainClass: org.apache.spark.deploy.SparkSubmit runs spark-submit again"},
		{"PythonGatewayServer class", "POST", "/v1/submissions/create", replace(`"mainClass" : "org.apache.spark.examples.SparkPi"`, `"mainClass" : "org.apache.spark.api.python.PythonGatewayServer"`), 400, "mainClass"},
		{"launch property", "POST", "/v1/submissions/create", replace(`"spark.eventLog.enabled" : "true"`, `"spark.driver.extraJavaOptions" : "-Dspark.mesos.role=*"`), 400, "serve --allow-spark-conf spark.driver.extraJavaOptions"},
		{"docker image", "POST", "/v1/submissions/create", replace(`"spark.eventLog.enabled" : "true"`, `"spark.mesos.executor.docker.image" : "evil/spark"`), 400, "sparkProperties: spark.mesos.executor.docker.image"},
		{"dash app name", "POST", "/v1/submissions/create", replace(`"spark.app.name" : "Spark Pi"`, `"spark.app.name" : "--verbose"`), 400, "spark.app.name"},
		// encoding/json decodes a null into a string as "", an argument or
		// a setting nobody wrote: refused, naming it.
		{"null argument", "POST", "/v1/submissions/create", replace(`[ "100" ]`, `[ "100", null ]`), 400, "appArgs[1]' is null"},
		{"null property", "POST", "/v1/submissions/create", replace(`"spark.eventLog.enabled" : "true"`, `"spark.eventLog.enabled" : null`), 400, "sparkProperties.spark.eventLog.enabled is null"},
		{"null variable", "POST", "/v1/submissions/create", replace(`"SPARK_SCALA_VERSION" : "2.12"`, `"SPARK_SCALA_VERSION" : null`), 400, "environmentVariables.SPARK_SCALA_VERSION is null"},
		{"query parameter", "GET", "/v1/submissions/status/x?a=%00", "", 400, "unknown query parameter \"a\""},
		{"malformed query", "POST", "/v1/submissions/create?%zz", sparkPiRequest, 400, "not a parameter name"},
		{"GET create", "GET", "/v1/submissions/create", "", 405, "not supported"},
		{"POST status", "POST", "/v1/submissions/status/x", "", 405, "not supported"},
		{"status without id", "GET", "/v1/submissions/status/", "", 400, "Submission ID is missing"},
		{"kill without id", "POST", "/v1/submissions/kill", "", 400, "Submission ID is missing"},
		{"root", "GET", "/", "", 400, "Missing protocol version"},
		{"no prefix", "GET", "/v1", "", 400, "Missing the /submissions prefix"},
		{"no action path", "GET", "/v1/submissions/list", "", 400, "Missing an action"},
		{"other version", "POST", "/v2/submissions/create", sparkPiRequest, StatusUnknownProtocolVersion, "Unknown protocol version 'v2'"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, m := do(t, c.method, e.url+c.path, c.body)
			msg, _ := m["message"].(string)
			if code != c.code || m["action"] != ActionErrorResponse || m["success"] != false || !strings.Contains(msg, c.msg) {
				t.Errorf("got %d %v; want %d ErrorResponse mentioning %q", code, m, c.code, c.msg)
			}
			if c.code == StatusUnknownProtocolVersion && m["highestProtocolVersion"] != ProtocolVersion {
				t.Errorf("highestProtocolVersion: %v", m["highestProtocolVersion"])
			}
		})
	}
	list, _, _ := e.store.ListJobs(context.Background(), store.ListOptions{})
	if len(list) != 0 {
		t.Errorf("bad requests stored %d jobs", len(list))
	}
}

func TestPastDeadlineIsAFailedSubmission(t *testing.T) {
	e := setup(t)
	body := strings.Replace(sparkPiRequest, `"spark.sparkpack.deadline" : "3600"`, `"spark.sparkpack.deadline" : "2020-01-01T00:00:00Z"`, 1)
	code, m := do(t, "POST", e.url+"/v1/submissions/create", body)
	id, _ := m["submissionId"].(string)
	if code != 200 || m["success"] != false || id == "" || !strings.Contains(m["message"].(string), "rejected") {
		t.Fatalf("%d %v", code, m)
	}
	if _, m = do(t, "GET", e.url+"/v1/submissions/status/"+id, ""); m["driverState"] != DriverFailed || !strings.Contains(m["message"].(string), "REJECTED") {
		t.Errorf("status of a rejected job: %v", m)
	}
}

func TestUnknownFieldsAreReported(t *testing.T) {
	e := setup(t)
	body := strings.Replace(sparkPiRequest, `"action" : "CreateSubmissionRequest",`, `"action" : "CreateSubmissionRequest", "zeta": 1, "alpha": {},`, 1)
	code, m := do(t, "POST", e.url+"/v1/submissions/create", body)
	if code != 200 || m["success"] != true {
		t.Fatalf("%d %v", code, m)
	}
	got, _ := json.Marshal(m["unknownFields"])
	if string(got) != `["alpha","zeta"]` {
		t.Errorf("unknownFields = %s", got)
	}
}

func TestToSpec(t *testing.T) {
	base := func(props map[string]string) CreateSubmissionRequest {
		return CreateSubmissionRequest{Action: ActionCreateRequest, ClientSparkVersion: "3.5.8",
			AppResource: "local:///app.jar", MainClass: "a.B", SparkProperties: props}
	}
	for _, c := range []struct {
		name  string
		props map[string]string
		check func(t *testing.T, s scheduler.Spec, notes []string)
	}{
		{"defaults", map[string]string{"spark.app.name": "x"}, func(t *testing.T, s scheduler.Spec, notes []string) {
			if s.Executors != 3 || s.ExecutorCores != 1 || s.ExecutorMemoryMB != 1024 || s.Driver != nil || s.Name != "x" {
				t.Errorf("%+v", s)
			}
			if !strings.Contains(strings.Join(notes, ";"), "executors defaulted to 3") {
				t.Errorf("notes %v", notes)
			}
		}},
		{"name defaults to main class", map[string]string{}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.Name != "a.B" {
				t.Errorf("name %q", s.Name)
			}
		}},
		{"instances", map[string]string{"spark.executor.instances": "5", "spark.executor.cores": "3", "spark.executor.memory": "4096"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.Executors != 5 || s.ExecutorCores != 3 || s.ExecutorMemoryMB != 4096 {
				t.Errorf("%+v", s)
			}
		}},
		{"cores.max caps instances", map[string]string{"spark.executor.instances": "5", "spark.executor.cores": "2", "spark.cores.max": "7"}, func(t *testing.T, s scheduler.Spec, notes []string) {
			if s.Executors != 3 || len(notes) != 1 {
				t.Errorf("executors %d notes %v", s.Executors, notes)
			}
		}},
		{"executors auto", map[string]string{"spark.sparkpack.executors": "auto"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if !s.AutoExecutors() || s.Executors != 0 || s.App.SparkConf["spark.sparkpack.executors"] != "" {
				t.Errorf("executors %d sizing %+v conf %v", s.Executors, s.Sizing, s.App.SparkConf)
			}
		}},
		{"instances win over auto", map[string]string{"spark.sparkpack.executors": "auto", "spark.executor.instances": "3"}, func(t *testing.T, s scheduler.Spec, notes []string) {
			if s.AutoExecutors() || s.Executors != 3 || len(notes) == 0 {
				t.Errorf("executors %d sizing %+v notes %v", s.Executors, s.Sizing, notes)
			}
		}},
		{"cores.max alone", map[string]string{"spark.cores.max": "8.0", "spark.executor.cores": "2"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.Executors != 4 {
				t.Errorf("executors %d", s.Executors)
			}
		}},
		{"mesos overhead wins", map[string]string{"spark.mesos.executor.memoryOverhead": "500", "spark.executor.memoryOverhead": "1g"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.MemoryOverheadMB != 500 {
				t.Errorf("overhead %d", s.MemoryOverheadMB)
			}
		}},
		{"generic overhead", map[string]string{"spark.executor.memoryOverhead": "1g"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.MemoryOverheadMB != 1024 {
				t.Errorf("overhead %d", s.MemoryOverheadMB)
			}
		}},
		{"driver", map[string]string{"spark.driver.cores": "0.5", "spark.driver.memory": "2G"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.Driver == nil || s.Driver.Cores != 0.5 || s.Driver.MemoryMB != 2048 {
				t.Errorf("driver %+v", s.Driver)
			}
		}},
		{"bare sparkpack keys", map[string]string{"sparkpack.deadline": "2030-01-02T03:04:05Z", "sparkpack.estimatedDurationSeconds": "60", "sparkpack.label.team": "a"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if s.Deadline == nil || s.Deadline.At == nil || s.Deadline.At.Year() != 2030 || s.EstimatedDurationSeconds != 60 || s.Labels["team"] != "a" {
				t.Errorf("%+v", s)
			}
		}},
		{"jars keep the others", map[string]string{"spark.jars": "local:///app.jar,local:///dep.jar", "spark.submit.pyFiles": "", "spark.dynamicAllocation.enabled": "false", "spark.master": "mesos://x:7077", "spark.submit.deployMode": "cluster", "spark.driver.supervise": "false"}, func(t *testing.T, s scheduler.Spec, _ []string) {
			if len(s.App.SparkConf) != 1 || s.App.SparkConf["spark.jars"] != "local:///dep.jar" || s.Retries != 0 {
				t.Errorf("sparkConf %v, retries %d", s.App.SparkConf, s.Retries)
			}
		}},
		{"supervise becomes retries", map[string]string{"spark.driver.supervise": "true"}, func(t *testing.T, s scheduler.Spec, notes []string) {
			if s.Retries != SuperviseRetries || len(s.App.SparkConf) != 0 || !strings.Contains(strings.Join(notes, ";"), "launched again up to 3 times") {
				t.Errorf("retries %d, sparkConf %v, notes %q", s.Retries, s.App.SparkConf, notes)
			}
		}},
		{"explicit retries win over supervise", map[string]string{"spark.driver.supervise": "TRUE", "spark.sparkpack.retries": "7"}, func(t *testing.T, s scheduler.Spec, notes []string) {
			if s.Retries != 7 || strings.Contains(strings.Join(notes, ";"), "supervise") {
				t.Errorf("retries %d, notes %q", s.Retries, notes)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, notes, err := ToSpec(base(c.props), 3)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Validate(); err != nil {
				t.Fatalf("validate: %v", err)
			}
			c.check(t, s, notes)
		})
	}
	if _, _, err := ToSpec(base(map[string]string{"sparkpack.deadline": "1", "spark.sparkpack.deadline": "2"}), 1); err == nil {
		t.Error("both forms of one setting accepted")
	}
}

func TestParseSizeMB(t *testing.T) {
	for in, want := range map[string]int{"512m": 512, "512M": 512, "4g": 4096, "4gb": 4096, "1024": 1024, "1t": 1 << 20,
		"2097152k": 2048, "1048576b": 1, "1048575b": 0, " 2g ": 2048} {
		if got, err := ParseSizeMB(in); err != nil || got != want {
			t.Errorf("ParseSizeMB(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1.5g", "-1g", "g", "4x", "4 g", "99999999999999999999m", "9999999p"} {
		if got, err := ParseSizeMB(in); err == nil {
			t.Errorf("ParseSizeMB(%q) = %d, want an error", in, got)
		}
	}
}

func TestDriverStateCoversEveryState(t *testing.T) {
	want := map[scheduler.State]string{
		scheduler.Submitted: DriverQueued, scheduler.Queued: DriverQueued, scheduler.Placing: DriverQueued, scheduler.Reserving: DriverQueued,
		scheduler.Launching: DriverRunning, scheduler.Running: DriverRunning, scheduler.Finished: DriverFinished,
		scheduler.Failed: DriverFailed, scheduler.Rejected: DriverFailed, scheduler.Killed: DriverKilled, scheduler.Cancelled: DriverKilled,
	}
	for _, s := range scheduler.AllStates {
		w, ok := want[s]
		if !ok {
			t.Errorf("state %s has no expected driverState in this test; add it", s)
			continue
		}
		if got := DriverState(s); got != w {
			t.Errorf("DriverState(%s) = %s, want %s", s, got, w)
		}
	}
}

func TestResponseFieldListsAreSorted(t *testing.T) {
	// Guards the fields table above against typos: every response struct's
	// JSON names must be in it.
	for action, v := range map[string]any{ActionCreateResponse: CreateSubmissionResponse{UnknownFields: []string{"x"}, Message: "m", SubmissionID: "s"},
		ActionStatusResponse: SubmissionStatusResponse{DriverState: "d", Message: "m", WorkerHostPort: "h", WorkerID: "w"},
		ActionKillResponse:   KillSubmissionResponse{Message: "m"}, ActionErrorResponse: ErrorResponse{HighestProtocolVersion: "v1"}} {
		b, _ := json.Marshal(v)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ok := false
			for _, a := range fields[action] {
				ok = ok || a == k
			}
			if !ok {
				t.Errorf("%s marshals field %q that Spark's class does not have", action, k)
			}
		}
	}
}

// brokenStore fails like an unreachable database.
type brokenStore struct{}

func (brokenStore) GetJob(context.Context, string) (scheduler.Job, error) {
	return scheduler.Job{}, context.DeadlineExceeded
}
func brokenCancel(context.Context, string, string) (scheduler.Job, store.CancelOutcome, error) {
	return scheduler.Job{}, 0, context.DeadlineExceeded
}

func TestServerFailuresAreErrorResponses(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	submit := func(w http.ResponseWriter, r *http.Request, spec scheduler.Spec) (scheduler.Job, bool, bool) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error": "the database is unavailable; retry shortly", "field": ""}`)
		return scheduler.Job{}, false, false
	}
	srv := httptest.NewServer(New(Config{Store: brokenStore{}, Submit: submit, Cancel: brokenCancel, Log: log, DBTimeout: time.Second}))
	defer srv.Close()
	id := "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/v1/submissions/create", sparkPiRequest},
		{"GET", "/v1/submissions/status/" + id, ""},
		{"POST", "/v1/submissions/kill/" + id, ""},
	} {
		// A database outage is a 503 with Retry-After (Spark's client
		// prints the message whatever the status; other clients and
		// proxies know to come back).
		code, m := do(t, c.method, srv.URL+c.path, c.body)
		if code != http.StatusServiceUnavailable || m["action"] != ActionErrorResponse || !strings.Contains(m["message"].(string), "unavailable") {
			t.Errorf("%s %s: %d %v", c.method, c.path, code, m)
		}
		req, _ := http.NewRequest(c.method, srv.URL+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if ra, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || ra < 1 {
			t.Errorf("%s %s: Retry-After %q", c.method, c.path, resp.Header.Get("Retry-After"))
		}
	}
}

// TestKillPendingNotifiesTheCore: a kill of a waiting job cancels it and
// the core drops it from its queues, as after a DELETE.
func TestKillPendingNotifiesTheCore(t *testing.T) {
	e := setup(t)
	_, m := do(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest)
	id := m["submissionId"].(string)
	if code, m := do(t, "POST", e.url+"/v1/submissions/kill/"+id, ""); code != 200 || m["success"] != true {
		t.Fatalf("kill: %d %v", code, m)
	}
	if got := e.notes.cancels(); len(got) != 1 || got[0] != id {
		t.Errorf("the core heard %v, want [%s]", got, id)
	}
}

// TestRequestsLogThroughTheConfiguredLogger: every line a Spark REST
// request causes, including the native API's "job submitted", is JSON
// from the configured logger and carries the request id.
func TestRequestsLogThroughTheConfiguredLogger(t *testing.T) {
	e := setup(t)
	var std strings.Builder
	logrus.StandardLogger().SetOutput(&std)
	defer logrus.StandardLogger().SetOutput(os.Stderr)

	req, _ := http.NewRequest("POST", e.url+"/v1/submissions/create", strings.NewReader(sparkPiRequest))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "spark-req-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("X-Request-Id"); got != "spark-req-1" {
		t.Errorf("X-Request-Id answered %q", got)
	}
	var created map[string]any
	_, created = do(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest)
	id := created["submissionId"].(string)
	do(t, "POST", e.url+"/v1/submissions/kill/"+id, "")

	if std.Len() > 0 {
		t.Errorf("the standard logger was written to:\n%s", std.String())
	}
	msgs := map[string]int{}
	ids := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		rid, _ := m["request_id"].(string)
		if rid == "" || m["front_end"] != "spark-rest" || m["listener"] != "spark-rest" {
			t.Errorf("log line without request id or front end: %s", line)
		}
		ids[rid] = true
		msgs[m["msg"].(string)]++
	}
	if msgs["job submitted"] != 2 || msgs["request"] != 3 || !ids["spark-req-1"] || len(ids) != 3 {
		t.Errorf("log messages %v with request ids %v; want 2 'job submitted', 3 'request', 3 ids including spark-req-1", msgs, ids)
	}
	found := false
	for m := range msgs {
		found = found || strings.HasPrefix(m, "job cancelled")
	}
	if !found {
		t.Errorf("no 'job cancelled' line in %v", msgs)
	}
}

// TestInvalidTextAndDuplicateKeysRefused: invalid UTF-8, escaped lone
// surrogates and repeated keys get a 400 naming the field on both
// listeners, and nothing is stored.
func TestInvalidTextAndDuplicateKeysRefused(t *testing.T) {
	e := setup(t)
	native := `{"app":{"appResource":"local:///a.jar","mainClass":"a.B","args":["x"]},"executors":1,"executorCores":1,"executorMemoryMB":1024}`
	for _, c := range []struct{ name, native, spark, field, nativeField string }{
		{"invalid utf-8 arg", strings.Replace(native, `["x"]`, "[\"x\", \"\xff\"]", 1),
			strings.Replace(sparkPiRequest, `[ "100" ]`, "[ \"100\", \"\xc3\x28\" ]", 1), "appArgs[1]", "app.args[1]"},
		{"lone surrogate", strings.Replace(native, `"a.B"`, `"a.B","args":["\ud800"]`, 1),
			strings.Replace(sparkPiRequest, `"2.12"`, `"2.12\udfff"`, 1), "environmentVariables.SPARK_SCALA_VERSION", "app.args[0]"},
		{"duplicate key", strings.Replace(native, `"executors":1,`, `"executors":1,"executors":9,`, 1),
			strings.Replace(sparkPiRequest, `"spark.cores.max" : "4",`, `"spark.cores.max" : "4", "spark.cores.max" : "400",`, 1), "sparkProperties.spark.cores.max", "executors"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, m := do(t, "POST", e.url+"/v1/submissions/create", c.spark)
			if msg, _ := m["message"].(string); code != 400 || !strings.Contains(msg, "'"+c.field+"'") {
				t.Errorf("Spark REST: %d %v, want 400 naming %s", code, m, c.field)
			}
			resp, err := http.Post(e.native+"/api/v1/jobs", "application/json", strings.NewReader(c.native))
			if err != nil {
				t.Fatal(err)
			}
			var eb api.ErrorBody
			_ = json.NewDecoder(resp.Body).Decode(&eb)
			resp.Body.Close()
			if resp.StatusCode != 400 || eb.Field != c.nativeField || eb.Error == "" {
				t.Errorf("native API: %d %+v, want 400 naming %s", resp.StatusCode, eb, c.nativeField)
			}
		})
	}
	list, _, _ := e.store.ListJobs(context.Background(), store.ListOptions{})
	if len(list) != 0 {
		t.Errorf("%d jobs stored from refused bodies", len(list))
	}
}

// dropRefusedEnv drops what the policy refuses (what Spark's client
// forwards from its own environment) and keeps what the operator allows.
func TestDropRefusedEnv(t *testing.T) {
	env := func() *scheduler.Spec {
		return &scheduler.Spec{App: scheduler.App{Environment: map[string]string{
			"MESOS_NATIVE_JAVA_LIBRARY": "/usr/lib/libmesos.so", "SPARK_SUBMIT_OPTS": "-Dspark.mesos.role=*", "SPARK_LOCAL_DIRS": "/tmp"}}}
	}
	s := env()
	if got := dropRefusedEnv(s, scheduler.Containment{}); strings.Join(got, ",") != "MESOS_NATIVE_JAVA_LIBRARY,SPARK_SUBMIT_OPTS" || len(s.App.Environment) != 1 {
		t.Errorf("dropped %v, left %v", got, s.App.Environment)
	}
	pol, err := scheduler.NewContainment(nil, []string{"MESOS_NATIVE_JAVA_LIBRARY"})
	if err != nil {
		t.Fatal(err)
	}
	s = env()
	if got := dropRefusedEnv(s, pol); strings.Join(got, ",") != "SPARK_SUBMIT_OPTS" || s.App.Environment["MESOS_NATIVE_JAVA_LIBRARY"] == "" {
		t.Errorf("allowed by the operator: dropped %v, left %v", got, s.App.Environment)
	}
}
