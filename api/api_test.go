package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/lib/pq"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

const goodJob = `{
  "name": "wordcount",
  "app": {"appResource": "local:///opt/spark/examples/jars/spark-examples.jar", "mainClass": "org.apache.spark.examples.JavaWordCount", "args": ["/data/in"]},
  "executors": 4, "executorCores": 2, "executorMemoryMB": 4096,
  "labels": {"team": "analytics"}
}`

type testEnv struct {
	srv   *httptest.Server
	store *store.Store
	logs  *bytes.Buffer
}

type recNotifier struct {
	mu        sync.Mutex
	submitted []string
}

func (n *recNotifier) JobSubmitted(j scheduler.Job) {
	n.mu.Lock()
	n.submitted = append(n.submitted, j.ID)
	n.mu.Unlock()
}
func (n *recNotifier) JobCancelled(scheduler.Job, bool) {}

func newEnv(t *testing.T, mod func(*Config)) *testEnv {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), pgtest.URL(t), store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logs := &bytes.Buffer{}
	log := logrus.New()
	log.SetOutput(logs)
	log.SetFormatter(&logrus.JSONFormatter{})
	cfg := Config{Store: st, Log: log}
	if mod != nil {
		mod(&cfg)
	}
	srv := httptest.NewServer(New(cfg).Handler())
	t.Cleanup(srv.Close)
	return &testEnv{srv: srv, store: st, logs: logs}
}

func (e *testEnv) do(t *testing.T, method, path, ctype, token string, body io.Reader) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s %s: body is not JSON: %q", method, path, b)
		}
	}
	return resp, m
}

func (e *testEnv) post(t *testing.T, body string) (*http.Response, map[string]any) {
	return e.do(t, "POST", "/api/v1/jobs", "application/json", "", strings.NewReader(body))
}

func withField(body, key string, value any) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		panic(err)
	}
	path := strings.Split(key, ".")
	cur := m
	for _, p := range path[:len(path)-1] {
		cur = cur[p].(map[string]any)
	}
	if value == nil {
		delete(cur, path[len(path)-1])
	} else {
		cur[path[len(path)-1]] = value
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestSubmitAndGet(t *testing.T) {
	n := &recNotifier{}
	e := newEnv(t, func(c *Config) { c.Notifier = n })
	resp, m := e.post(t, goodJob)
	if resp.StatusCode != 201 {
		t.Fatalf("status %d: %v", resp.StatusCode, m)
	}
	id, _ := m["id"].(string)
	if resp.Header.Get("Location") != "/api/v1/jobs/"+id || m["state"] != "SUBMITTED" {
		t.Fatalf("location %q, body %v", resp.Header.Get("Location"), m)
	}
	// Durable before 201: the row is in the database.
	if _, err := e.store.GetJob(context.Background(), id); err != nil {
		t.Fatalf("job not stored: %v", err)
	}
	if len(n.submitted) != 1 || n.submitted[0] != id {
		t.Fatalf("notifier got %v", n.submitted)
	}
	resp, m = e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
	if resp.StatusCode != 200 || m["name"] != "wordcount" || m["memoryOverheadMB"] != nil {
		t.Fatalf("get: %d %v", resp.StatusCode, m)
	}
	evs, _ := m["events"].([]any)
	if len(evs) != 1 {
		t.Fatalf("events %v", m["events"])
	}
	if _, ok := m["placement"].([]any); !ok {
		t.Fatalf("placement missing: %v", m)
	}
	if resp.Header.Get("X-Request-Id") == "" {
		t.Fatal("no request id")
	}
}

func TestBadInput(t *testing.T) {
	e := newEnv(t, nil)
	cases := []struct {
		name, ctype, body string
		status            int
		field             string
	}{
		{"missing appResource", "application/json", withField(goodJob, "app.appResource", nil), 400, "app.appResource"},
		{"missing mainClass", "application/json", withField(goodJob, "app.mainClass", nil), 400, "app.mainClass"},
		{"missing executors", "application/json", withField(goodJob, "executors", nil), 400, "executors"},
		{"zero executors", "application/json", withField(goodJob, "executors", 0), 400, "executors"},
		{"negative executors", "application/json", withField(goodJob, "executors", -1), 400, "executors"},
		{"huge executors", "application/json", withField(goodJob, "executors", 1e15), 400, "executors"},
		{"executors as string", "application/json", withField(goodJob, "executors", "4"), 400, "executors"},
		{"cores as float", "application/json", withField(goodJob, "executorCores", 1.5), 400, "executorCores"},
		{"memory as bool", "application/json", withField(goodJob, "executorMemoryMB", true), 400, "executorMemoryMB"},
		{"unknown field", "application/json", withField(goodJob, "priority", 5), 400, "priority"},
		{"unknown nested field", "application/json", withField(goodJob, "app.jars", "x"), 400, "jars"},
		{"deadline nonsense", "application/json", withField(goodJob, "deadline", "next tuesday"), 400, "deadline"},
		{"deadline negative", "application/json", withField(goodJob, "deadline", -10), 400, "deadline"},
		{"deadline object", "application/json", withField(goodJob, "deadline", map[string]any{}), 400, "deadline"},
		{"10 KB name", "application/json", withField(goodJob, "name", strings.Repeat("é", 10*1024)), 400, "name"},
		{"bad id", "application/json", withField(goodJob, "id", "not-a-uuid"), 400, "id"},
		// A null where a string goes would be stored as "" (an argument,
		// a setting or a label nobody wrote): refused, naming it.
		{"null argument", "application/json", withField(goodJob, "app.args", []any{"/data/in", nil}), 400, "app.args[1]"},
		{"null spark setting", "application/json", withField(goodJob, "app.sparkConf", map[string]any{"spark.eventLog.enabled": nil}), 400, "app.sparkConf.spark.eventLog.enabled"},
		{"null environment value", "application/json", withField(goodJob, "app.environment", map[string]any{"SPARK_LOCAL_DIRS": nil}), 400, "app.environment.SPARK_LOCAL_DIRS"},
		{"null label", "application/json", withField(goodJob, "labels", map[string]any{"team": "analytics", "owner": nil}), 400, "labels.owner"},
		{"not JSON", "application/json", "executors=4", 400, ""},
		{"empty body", "application/json", "", 400, ""},
		{"array body", "application/json", "[1,2]", 400, ""},
		{"wrong content type", "text/plain", goodJob, 415, "Content-Type"},
		{"form content type", "application/x-www-form-urlencoded", goodJob, 415, "Content-Type"},
		{"no content type", "", goodJob, 415, "Content-Type"},
		{"2 MiB body", "application/json", withField(goodJob, "name", strings.Repeat("x", 2<<20)), 413, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, m := e.do(t, "POST", "/api/v1/jobs", tc.ctype, "", strings.NewReader(tc.body))
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d (body %v)", resp.StatusCode, tc.status, m)
			}
			if m["field"] != tc.field {
				t.Fatalf("field %q, want %q (body %v)", m["field"], tc.field, m)
			}
			if msg, _ := m["error"].(string); msg == "" {
				t.Fatalf("no error message: %v", m)
			}
		})
	}
	jobs, _, err := e.store.ListJobs(context.Background(), store.ListOptions{})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("bad input stored %d jobs (%v)", len(jobs), err)
	}
	// A unicode name is fine.
	resp, m := e.post(t, withField(goodJob, "name", "ジョブ ✓ <b>données</b>"))
	if resp.StatusCode != 201 || m["name"] != "ジョブ ✓ <b>données</b>" {
		t.Fatalf("unicode name: %d %v", resp.StatusCode, m)
	}
}

func TestPastDeadlineRejected(t *testing.T) {
	e := newEnv(t, nil)
	resp, m := e.post(t, withField(goodJob, "deadline", "2001-01-01T00:00:00Z"))
	if resp.StatusCode != 201 || m["state"] != "REJECTED" || !strings.Contains(fmt.Sprint(m["waitingReason"]), "already past") {
		t.Fatalf("%d %v", resp.StatusCode, m)
	}
}

func TestIdempotentSubmit(t *testing.T) {
	n := &recNotifier{}
	e := newEnv(t, func(c *Config) { c.Notifier = n })
	id := uuid.NewString()
	body := withField(goodJob, "id", id)
	resp, _ := e.post(t, body)
	if resp.StatusCode != 201 {
		t.Fatalf("first: %d", resp.StatusCode)
	}
	resp, m := e.post(t, body)
	if resp.StatusCode != 200 || m["id"] != id {
		t.Fatalf("repeat: %d %v", resp.StatusCode, m)
	}
	// The repeat of a waiting job tells the scheduler again: the first
	// attempt may have been committed without its answer (and without the
	// scheduler hearing of it).
	n.mu.Lock()
	got := slices.Clone(n.submitted)
	n.mu.Unlock()
	if len(got) != 2 || got[0] != id || got[1] != id {
		t.Fatalf("notifier heard %v, want %s twice", got, id)
	}
	resp, m = e.post(t, withField(body, "executors", 5))
	if resp.StatusCode != 409 || m["field"] != "id" {
		t.Fatalf("different body: %d %v", resp.StatusCode, m)
	}
	// Concurrent identical submissions of a new id: one 201, the rest 200, one job.
	id2 := uuid.NewString()
	body2 := withField(goodJob, "id", id2)
	var wg sync.WaitGroup
	codes := make(chan int, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.Post(e.srv.URL+"/api/v1/jobs", "application/json", strings.NewReader(body2))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(codes)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[201] != 1 || count[200] != 11 {
		t.Fatalf("status counts %v, want one 201 and eleven 200", count)
	}
	jobs, _, _ := e.store.ListJobs(context.Background(), store.ListOptions{})
	if len(jobs) != 2 {
		t.Fatalf("%d jobs stored, want 2", len(jobs))
	}
}

func TestListFilterAndPaginate(t *testing.T) {
	e := newEnv(t, nil)
	for i := 0; i < 5; i++ {
		team := "a"
		if i >= 3 {
			team = "b"
		}
		if resp, m := e.post(t, withField(goodJob, "labels", map[string]any{"team": team})); resp.StatusCode != 201 {
			t.Fatal(m)
		}
	}
	seen := 0
	next := ""
	for i := 0; i < 10; i++ {
		path := "/api/v1/jobs?limit=2"
		if next != "" {
			path += "&cursor=" + next
		}
		resp, m := e.do(t, "GET", path, "", "", nil)
		if resp.StatusCode != 200 {
			t.Fatal(m)
		}
		seen += len(m["jobs"].([]any))
		next, _ = m["next"].(string)
		if next == "" {
			break
		}
	}
	if seen != 5 {
		t.Fatalf("paged through %d jobs, want 5", seen)
	}
	_, m := e.do(t, "GET", "/api/v1/jobs?label=team=b&state=SUBMITTED", "", "", nil)
	if n := len(m["jobs"].([]any)); n != 2 {
		t.Fatalf("filter gave %d jobs, want 2", n)
	}
	for _, q := range []struct{ query, field string }{
		{"state=DONE", "state"}, {"label=nokey", "label"}, {"limit=0", "limit"}, {"limit=x", "limit"},
		{"cursor=zzz", "cursor"}, {"sort=name", "sort"},
		// Keys no job can carry: an empty list would hide the typo.
		{"label=bad%20key=x", "label"}, {"label=-team=b", "label"}, {"label=team.=b", "label"},
	} {
		resp, m := e.do(t, "GET", "/api/v1/jobs?"+q.query, "", "", nil)
		if resp.StatusCode != 400 || m["field"] != q.field {
			t.Errorf("%s: %d %v", q.query, resp.StatusCode, m)
		}
	}
}

func TestDeleteAndErrors(t *testing.T) {
	e := newEnv(t, nil)
	_, m := e.post(t, goodJob)
	id := m["id"].(string)
	resp, m := e.do(t, "DELETE", "/api/v1/jobs/"+id, "", "", nil)
	if resp.StatusCode != 200 || m["state"] != "CANCELLED" {
		t.Fatalf("cancel: %d %v", resp.StatusCode, m)
	}
	resp, m = e.do(t, "DELETE", "/api/v1/jobs/"+id, "", "", nil)
	if resp.StatusCode != 409 {
		t.Fatalf("cancel twice: %d %v", resp.StatusCode, m)
	}
	// A job holding resources gets a kill request (202).
	_, m = e.post(t, goodJob)
	id2 := m["id"].(string)
	ctx := context.Background()
	for _, st := range [][2]scheduler.State{{scheduler.Submitted, scheduler.Queued}, {scheduler.Queued, scheduler.Placing}, {scheduler.Placing, scheduler.Reserving}, {scheduler.Reserving, scheduler.Launching}, {scheduler.Launching, scheduler.Running}} {
		if _, err := e.store.Transition(ctx, id2, st[0], st[1], "test", nil); err != nil {
			t.Fatal(err)
		}
	}
	resp, m = e.do(t, "DELETE", "/api/v1/jobs/"+id2, "", "", nil)
	if resp.StatusCode != 202 || m["state"] != "RUNNING" || m["killRequested"] != true {
		t.Fatalf("kill: %d %v", resp.StatusCode, m)
	}
	for _, c := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/api/v1/jobs/" + uuid.NewString(), 404},
		{"DELETE", "/api/v1/jobs/" + uuid.NewString(), 404},
		{"GET", "/api/v1/jobs/not-a-uuid", 400},
		{"GET", "/api/v1/nothing", 404},
		{"PUT", "/api/v1/jobs", 405},
	} {
		resp, m := e.do(t, c.method, c.path, "", "", nil)
		if resp.StatusCode != c.status || m["error"] == nil {
			t.Errorf("%s %s: %d %v", c.method, c.path, resp.StatusCode, m)
		}
	}
}

func TestAuth(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader("# operators\nsecret-token-0123456789\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Tokens = tokens })
	body := func() io.Reader { return strings.NewReader(goodJob) }
	resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "", body())
	if resp.StatusCode != 401 || m["field"] != "Authorization" {
		t.Fatalf("no token: %d %v", resp.StatusCode, m)
	}
	resp, _ = e.do(t, "POST", "/api/v1/jobs", "application/json", "wrong-token-0123456789", body())
	if resp.StatusCode != 403 {
		t.Fatalf("wrong token: %d", resp.StatusCode)
	}
	resp, m = e.do(t, "POST", "/api/v1/jobs", "application/json", "secret-token-0123456789", body())
	if resp.StatusCode != 201 {
		t.Fatalf("good token: %d %v", resp.StatusCode, m)
	}
	id := m["id"].(string)
	if resp, _ := e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil); resp.StatusCode != 200 {
		t.Fatalf("open read: %d", resp.StatusCode)
	}
	if resp, _ := e.do(t, "DELETE", "/api/v1/jobs/"+id, "", "", nil); resp.StatusCode != 401 {
		t.Fatalf("delete without token: %d", resp.StatusCode)
	}
	if strings.Contains(e.logs.String(), "secret-token") || strings.Contains(e.logs.String(), "wrong-token") {
		t.Fatal("a token reached the log")
	}
	// Every log line of a request carries its id.
	for _, line := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
		if !strings.Contains(line, `"request_id"`) {
			t.Fatalf("log line without request id: %s", line)
		}
	}
	p := newEnv(t, func(c *Config) { c.Tokens = tokens; c.ProtectReads = true })
	if resp, _ := p.do(t, "GET", "/api/v1/jobs", "", "", nil); resp.StatusCode != 401 {
		t.Fatalf("protected read: %d", resp.StatusCode)
	}
	if resp, _ := p.do(t, "GET", "/api/v1/jobs", "", "secret-token-0123456789", nil); resp.StatusCode != 200 {
		t.Fatalf("protected read with token: %d", resp.StatusCode)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t, nil)
	for _, p := range []string{"/healthz", "/readyz"} {
		if resp, m := e.do(t, "GET", p, "", "", nil); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", p, resp.StatusCode, m)
		}
	}
}

// TestDatabaseDown kills PostgreSQL under a running API: POST answers 503,
// readyz reports it, and after the database returns no half-written job is
// visible while new submissions work again.
func TestDatabaseDown(t *testing.T) {
	pg := Private(t)
	ctx := context.Background()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(ctx, pg.URL, store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	srv := httptest.NewServer(New(Config{Store: st, Log: log, DBTimeout: 3 * time.Second}).Handler())
	defer srv.Close()
	post := func(body string) int {
		resp, err := http.Post(srv.URL+"/api/v1/jobs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil || m["error"] == nil && resp.StatusCode >= 400 {
			t.Fatalf("status %d with body %v (%v)", resp.StatusCode, m, err)
		}
		return resp.StatusCode
	}
	if c := post(goodJob); c != 201 {
		t.Fatalf("before: %d", c)
	}
	// Keep submitting while the server dies: every answer is 201 or 503.
	stop := make(chan struct{})
	var accepted, attempted []string
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			id := uuid.NewString()
			mu.Lock()
			attempted = append(attempted, id)
			mu.Unlock()
			resp, err := http.Post(srv.URL+"/api/v1/jobs", "application/json", strings.NewReader(withField(goodJob, "id", id)))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case 201:
				mu.Lock()
				accepted = append(accepted, id)
				mu.Unlock()
			case 503:
				if resp.Header.Get("Retry-After") == "" {
					t.Errorf("a 503 without Retry-After while the database dies")
				}
			default:
				t.Errorf("status %d while the database dies", resp.StatusCode)
			}
		}
	}()
	time.Sleep(200 * time.Millisecond)
	if err := pg.Kill(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if c := post(goodJob); c != 503 {
		t.Fatalf("with the database down: %d, want 503", c)
	}
	resp, err := http.Get(srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != strconv.Itoa(RetryAfterDatabase) {
		t.Fatalf("readyz with the database down: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	resp, err = http.Post(srv.URL+"/api/v1/jobs", "application/json", strings.NewReader(goodJob))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != strconv.Itoa(RetryAfterDatabase) {
		t.Fatalf("a submission with the database down: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if err := pg.Resume(); err != nil {
		t.Fatal(err)
	}
	// Every accepted job is there, complete. A job whose COMMIT reached the
	// server just before it died may be stored although its client saw 503
	// (the acknowledgement was lost): that is why clients retry with the
	// same id. Nothing else, and nothing half-written, is stored.
	var rows, events, incomplete int
	deadline := time.Now().Add(20 * time.Second)
	for {
		err = st.DB().QueryRow(`SELECT count(*) FROM jobs`).Scan(&rows)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	// A job's submission is recorded in its row (submit_state) or, for
	// jobs stored before migration 0009, as an event.
	st.DB().QueryRow(`SELECT count(*) FROM jobs j WHERE j.submit_state <> '' OR EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.id)`).Scan(&events)
	st.DB().QueryRow(`SELECT count(*) FROM jobs j WHERE j.submit_state = '' AND NOT EXISTS (SELECT 1 FROM job_events e WHERE e.job_id = j.id)`).Scan(&incomplete)
	if rows < len(accepted)+1 || rows > len(attempted)+1 || events != rows || incomplete != 0 {
		t.Fatalf("%d jobs, %d events, %d without events; %d were accepted and %d attempted (+1)", rows, events, incomplete, len(accepted), len(attempted))
	}
	var stray int
	st.DB().QueryRow(`SELECT count(*) FROM jobs WHERE NOT (id::text = ANY($1))`, pq.Array(append(attempted, ""))).Scan(&stray)
	if stray != 1 { // the job posted before the crash
		t.Fatalf("%d stored jobs were never submitted", stray-1)
	}
	for _, id := range accepted {
		if _, err := st.GetJob(ctx, id); err != nil {
			t.Errorf("accepted job %s lost: %v", id, err)
		}
	}
	if c := post(goodJob); c != 201 {
		t.Fatalf("after recovery: %d", c)
	}
}

// Private is a short name for a test-owned PostgreSQL server.
func Private(t *testing.T) *pgtest.Server { return pgtest.Private(t) }

// A job may not choose how its driver is launched (issue 34): the REST API
// refuses a launcher main class, a launch property and a launch variable
// with a 400 naming the field and the flag that allows it, stores nothing,
// and takes what the operator allows by name.
func TestLaunchSettingsRefusedUnlessAllowed(t *testing.T) {
	withApp := func(app string) string {
		return `{"name":"x","app":` + app + `,"executors":1,"executorCores":1,"executorMemoryMB":1024}`
	}
	const res = `"appResource":"local:///opt/spark/examples/jars/spark-examples.jar"`
	for _, c := range []struct {
		name, body, field, msg string
	}{
		{"SparkSubmit", withApp(`{` + res + `,"mainClass":"org.apache.spark.deploy.SparkSubmit","args":["--master","mesos://m:5050","--conf","spark.mesos.role=*"]}`), "app.mainClass", "spark-submit"},
		{"PythonGatewayServer", withApp(`{` + res + `,"mainClass":"org.apache.spark.api.python.PythonGatewayServer"}`), "app.mainClass", "PythonGatewayServer"},
		{"principal", withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","sparkConf":{"spark.mesos.principal":"root"}}`), "app.sparkConf", "--allow-spark-conf spark.mesos.principal"},
		{"java options", withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","sparkConf":{"spark.driver.extraJavaOptions":"-Dspark.mesos.role=*"}}`), "app.sparkConf", "--allow-spark-conf spark.driver.extraJavaOptions"},
		{"LD_PRELOAD", withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","environment":{"LD_PRELOAD":"/tmp/x.so"}}`), "app.environment", "--allow-env LD_PRELOAD"},
		{"SPARK_HOME", withApp(`{` + res + `,"mainClass":"org.apache.spark.examples.SparkPi","environment":{"SPARK_HOME":"/tmp/spark"}}`), "app.environment", "--allow-env SPARK_HOME"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, nil)
			resp, m := e.post(t, c.body)
			if resp.StatusCode != http.StatusBadRequest || m["field"] != c.field || !strings.Contains(fmt.Sprint(m["error"]), c.msg) {
				t.Fatalf("got %d %v; want 400 on %s mentioning %q", resp.StatusCode, m, c.field, c.msg)
			}
			if jobs, _, _ := e.store.ListJobs(context.Background(), store.ListOptions{}); len(jobs) != 0 {
				t.Errorf("a refused job was stored: %v", jobs)
			}
		})
	}
	pol, err := scheduler.NewContainment([]string{"spark.mesos.executor.docker.image"}, []string{"LD_PRELOAD"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Containment = pol })
	resp, m := e.post(t, withApp(`{`+res+`,"mainClass":"org.apache.spark.examples.SparkPi","sparkConf":{"spark.mesos.executor.docker.image":"own/spark:3.5"},"environment":{"LD_PRELOAD":"/opt/x.so"}}`))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("allowed settings: %d %v", resp.StatusCode, m)
	}
	resp, m = e.post(t, withApp(`{`+res+`,"mainClass":"org.apache.spark.examples.SparkPi","sparkConf":{"spark.mesos.executor.docker.volumes":"/:/host"}}`))
	if resp.StatusCode != http.StatusBadRequest || m["field"] != "app.sparkConf" {
		t.Fatalf("a setting not allowed: %d %v", resp.StatusCode, m)
	}
}

// A follower forwards the views to the leader; while the leader does not
// answer (it died and no other instance leads yet), or when it answers 503
// itself, the follower's 503 carries Retry-After.
func TestForwardedViews503CarryRetryAfter(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL, _ := url.Parse(dead.URL)
	dead.Close()
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable) // an old leader's 503, without Retry-After
	}))
	defer busy.Close()
	busyURL, _ := url.Parse(busy.URL)
	for name, target := range map[string]*url.URL{"dead leader": deadURL, "leader answering 503": busyURL} {
		env := newEnv(t, func(c *Config) {
			c.Views = fixedViews{}
			c.Forward = func() *url.URL { return target }
		})
		for _, path := range []string{"/api/v1/cluster", "/api/v1/queues", "/api/v1/cost"} {
			resp, _ := env.do(t, "GET", path, "", "", nil)
			if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != strconv.Itoa(RetryAfterElection) {
				t.Errorf("%s: %s: %d, Retry-After %q", name, path, resp.StatusCode, resp.Header.Get("Retry-After"))
			}
		}
	}
}
