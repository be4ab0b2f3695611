package sparkrest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/store"
)

const sparkTokens = `ci:ci-token-0123456789abcdef:submit,cancel
reader:reader-token-0123456789ab:read
ops:ops-token-0123456789abcdef:admin
`

type authEnv struct {
	url, apiURL string
	store       *store.Store
	mu          sync.Mutex
	refused     map[string]int
}

func (e *authEnv) count(reason string) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refused[reason]
}

// setupAuth serves both listeners with one guard, as serve does.
func setupAuth(t *testing.T, tokens, allow string, protect bool, mod func(*api.Config)) *authEnv {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(ctx, pgtest.URL(t), store.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &authEnv{store: st, refused: map[string]int{}}
	var tk *api.Tokens
	if tokens != "" {
		if tk, err = api.ParseTokens(strings.NewReader(tokens)); err != nil {
			t.Fatal(err)
		}
	}
	prefixes, err := api.ParseAllowlist(allow)
	if err != nil {
		t.Fatal(err)
	}
	g := &api.Guard{Tokens: tk, ProtectReads: protect, SparkAllow: prefixes, Refused: func(l, reason string) {
		e.mu.Lock()
		e.refused[l+"/"+reason]++
		e.mu.Unlock()
	}}
	cfg := api.Config{Store: st, Log: log, Guard: g}
	if mod != nil {
		mod(&cfg)
	}
	apiSrv := api.New(cfg)
	srv := httptest.NewServer(New(Config{Store: st, Submit: apiSrv.Submit, Cancel: apiSrv.Cancel, Log: log, Guard: apiSrv.Guard()}))
	t.Cleanup(srv.Close)
	asrv := httptest.NewServer(apiSrv.Handler())
	t.Cleanup(asrv.Close)
	e.url, e.apiURL = srv.URL, asrv.URL
	return e
}

// doAuth sends a request as Spark's client would, plus an Authorization
// header when authz is set, and checks the answer is a Spark response.
func doAuth(t *testing.T, method, url, body, authz string) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, url, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s %s: not JSON: %s", method, url, raw)
	}
	allowed := fields[m["action"].(string)]
	for k := range m {
		ok := false
		for _, a := range allowed {
			ok = ok || a == k
		}
		if !ok {
			t.Errorf("%s %s: field %q that Spark's client would reject", method, url, k)
		}
	}
	return resp.StatusCode, m, resp.Header
}

// TestSparkRESTRefusesWithoutCredentials: with tokens configured and the
// client outside the allowlist, create and kill refuse a request without a
// credential, with a malformed one, a wrong token or a token without the
// scope; nothing is stored or killed; every refusal is counted by reason.
func TestSparkRESTRefusesWithoutCredentials(t *testing.T) {
	e := setupAuth(t, sparkTokens, "10.0.0.0/8", false, nil)
	code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "Bearer ops-token-0123456789abcdef")
	if code != 200 || m["success"] != true {
		t.Fatalf("create with an admin token: %d %v", code, m)
	}
	id := m["submissionId"].(string)
	for _, ep := range []struct{ path, body string }{
		{"/v1/submissions/create", sparkPiRequest},
		{"/v1/submissions/kill/" + id, ""},
	} {
		for _, c := range []struct {
			authz  string
			status int
			reason string
		}{
			{"", 401, api.RefusedNoCredentials},
			{"Basic c3Bhcms6c2VjcmV0", 401, api.RefusedMalformed},
			{"Bearer wrong-token-0123456789abcdef", 403, api.RefusedUnknownToken},
			{"Bearer reader-token-0123456789ab", 403, api.RefusedScope},
		} {
			before := e.count("spark-rest/" + c.reason)
			code, m, hdr := doAuth(t, "POST", e.url+ep.path, ep.body, c.authz)
			if code != c.status || m["action"] != ActionErrorResponse || m["success"] != false || !strings.Contains(m["message"].(string), "Refused by sparkpack") {
				t.Errorf("%s with %q: %d %v, want %d ErrorResponse", ep.path, c.authz, code, m, c.status)
			}
			if c.status == 401 && hdr.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: 401 without a challenge", ep.path)
			}
			if c.reason == api.RefusedNoCredentials && !strings.Contains(m["message"].(string), "--spark-rest-allow") {
				t.Errorf("%s: a refusal without credentials must name --spark-rest-allow: %v", ep.path, m)
			}
			if e.count("spark-rest/"+c.reason) != before+1 {
				t.Errorf("%s with %q: %s not counted", ep.path, c.authz, c.reason)
			}
		}
	}
	jobs, _, _ := e.store.ListJobs(context.Background(), store.ListOptions{Limit: 100})
	if len(jobs) != 1 || jobs[0].State != "SUBMITTED" {
		t.Fatalf("refused requests changed something: %+v", jobs)
	}
	// Status is open without --protect-reads.
	if code, m, _ := doAuth(t, "GET", e.url+"/v1/submissions/status/"+id, "", ""); code != 200 || m["driverState"] != DriverQueued {
		t.Fatalf("open status: %d %v", code, m)
	}
	// The right token kills.
	if code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/kill/"+id, "", "Bearer ops-token-0123456789abcdef"); code != 200 || m["success"] != true {
		t.Fatalf("kill with the admin token: %d %v", code, m)
	}
	evs, _ := e.store.Events(context.Background(), id)
	if len(evs) != 2 || evs[0].Actor != "ops" || evs[1].Actor != "ops" || evs[1].Client != "127.0.0.1" {
		t.Fatalf("events do not name the token and client: %+v", evs)
	}
}

// TestSparkRESTAllowlist: a tokenless client in the allowlist submits,
// reads and kills what allowlisted clients submitted, but not a token's
// job; its events name spark-rest-allow and its address.
func TestSparkRESTAllowlist(t *testing.T) {
	e := setupAuth(t, sparkTokens, "127.0.0.0/8,::1", true, nil)
	code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "")
	if code != 200 || m["success"] != true {
		t.Fatalf("allowlisted create: %d %v", code, m)
	}
	id := m["submissionId"].(string)
	if code, m, _ := doAuth(t, "GET", e.url+"/v1/submissions/status/"+id, "", ""); code != 200 || m["success"] != true {
		t.Fatalf("allowlisted status under --protect-reads: %d %v", code, m)
	}
	// The same job is private on the REST API, which has no allowlist.
	if resp, err := http.Get(e.apiURL + "/api/v1/jobs/" + id); err != nil || resp.StatusCode != 401 {
		t.Fatalf("the allowlist must not open the REST API: %v %v", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}
	// A job submitted with ci's token cannot be killed by the allowlist.
	code, m, _ = doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "Bearer ci-token-0123456789abcdef")
	if code != 200 {
		t.Fatalf("token create: %d %v", code, m)
	}
	ciJob := m["submissionId"].(string)
	code, m, _ = doAuth(t, "POST", e.url+"/v1/submissions/kill/"+ciJob, "", "")
	if code != 403 || !strings.Contains(m["message"].(string), "another token") || e.count("spark-rest/"+api.RefusedNotOwner) != 1 {
		t.Fatalf("allowlist kills a token's job: %d %v", code, m)
	}
	if code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/kill/"+id, "", ""); code != 200 || m["success"] != true {
		t.Fatalf("allowlist kills its own submission: %d %v", code, m)
	}
	// A credential, when sent, is judged even from an allowlisted address.
	if code, _, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "Bearer wrong-token-0123456789abcdef"); code != 403 {
		t.Fatalf("wrong token from an allowlisted address: %d", code)
	}
	evs, _ := e.store.Events(context.Background(), id)
	if len(evs) != 2 || evs[0].Actor != api.AllowlistName || evs[0].Client != "127.0.0.1" || evs[1].Actor != api.AllowlistName {
		t.Fatalf("events: %+v", evs)
	}
}

// TestSparkRESTProtectReads: status needs a read credential under
// --protect-reads when the client is not allowlisted.
func TestSparkRESTProtectReads(t *testing.T) {
	e := setupAuth(t, sparkTokens, "none", true, nil)
	url := e.url + "/v1/submissions/status/6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"
	for authz, want := range map[string]int{"": 401, "Bearer ci-token-0123456789abcdef": 403, "Bearer reader-token-0123456789ab": 200} {
		if code, m, _ := doAuth(t, "GET", url, "", authz); code != want {
			t.Errorf("status with %q: %d %v, want %d", authz, code, m, want)
		}
	}
}

// TestSparkRESTOpenWithAllowlist: without tokens, an allowlist still
// limits who may create and kill; status stays open.
func TestSparkRESTOpenWithAllowlist(t *testing.T) {
	e := setupAuth(t, "", "10.0.0.0/8", false, nil)
	code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "")
	if code != 403 || !strings.Contains(m["message"].(string), "127.0.0.1") || e.count("spark-rest/"+api.RefusedAddress) != 1 {
		t.Fatalf("create from outside the allowlist: %d %v", code, m)
	}
	if code, _, _ := doAuth(t, "POST", e.url+"/v1/submissions/kill/6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", "", ""); code != 403 {
		t.Fatalf("kill from outside the allowlist: %d", code)
	}
	if code, _, _ := doAuth(t, "GET", e.url+"/v1/submissions/status/6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", "", ""); code != 200 {
		t.Fatalf("status: %d", code)
	}
	open := setupAuth(t, "", "", false, nil)
	if code, m, _ := doAuth(t, "POST", open.url+"/v1/submissions/create", sparkPiRequest, ""); code != 200 || m["success"] != true {
		t.Fatalf("no tokens, no allowlist: the old open behaviour: %d %v", code, m)
	}
}

// TestSparkRESTLimits: the rate limit and the waiting cap answer 429
// ErrorResponses (with Retry-After for the rate).
func TestSparkRESTLimits(t *testing.T) {
	e := setupAuth(t, sparkTokens, "127.0.0.1", false, func(c *api.Config) { c.Guard.Limiter = api.NewLimiter(0.01, 2) })
	for i := 0; i < 2; i++ {
		if code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, ""); code != 200 {
			t.Fatalf("create %d: %d %v", i, code, m)
		}
	}
	code, m, hdr := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "")
	if code != 429 || hdr.Get("Retry-After") == "" || m["action"] != ActionErrorResponse || e.count("spark-rest/"+api.RefusedRateLimited) != 1 {
		t.Fatalf("past the rate: %d %v %v", code, m, hdr)
	}
	// A token has its own bucket.
	if code, _, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", sparkPiRequest, "Bearer ci-token-0123456789abcdef"); code != 200 {
		t.Fatalf("token after the address hit its limit: %d", code)
	}

	c := setupAuth(t, sparkTokens, "127.0.0.1", false, func(c *api.Config) { c.MaxWaitingPerToken = 1 })
	if code, _, _ := doAuth(t, "POST", c.url+"/v1/submissions/create", sparkPiRequest, ""); code != 200 {
		t.Fatal(code)
	}
	code, m, _ = doAuth(t, "POST", c.url+"/v1/submissions/create", sparkPiRequest, "")
	if code != 429 || !strings.Contains(m["message"].(string), "--max-waiting-per-token 1") || c.count("spark-rest/"+api.RefusedTooManyWaiting) != 1 {
		t.Fatalf("over the waiting cap: %d %v", code, m)
	}
}
