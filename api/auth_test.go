package api

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

func storeListAll() store.ListOptions { return store.ListOptions{Limit: 1000} }

func TestParseTokens(t *testing.T) {
	cases := []struct {
		name, file string
		wantErr    string
		want       []string // name (scopes)
		warnings   int
	}{
		{"bare token keeps working", "# ops\nsecret-token-0123456789\n\n", "", []string{"token-"}, 0},
		{"named with scopes", "ci:ci-token-0123456789abc:submit,cancel\nprom:prom-token-0123456789:metrics\nops:ops-token-0123456789ab:admin",
			"", []string{"ci (submit,cancel)", "prom (metrics)", "ops (admin)"}, 0},
		{"mixed", "secret-token-0123456789\nreader:reader-token-0123456789:read", "", []string{"token-", "reader (read)"}, 0},
		{"unknown scope", "ci:ci-token-0123456789abc:submit,delete", "unknown scope \"delete\"", nil, 0},
		{"short named token", "ci:short:submit", "at least 16", nil, 0},
		{"short bare token", "short", "at least 16", nil, 0},
		{"duplicate token", "a:same-token-0123456789:read\nb:same-token-0123456789:submit", "same token is on line 1", nil, 0},
		{"duplicate name", "a:one-token-0123456789x:read\na:two-token-0123456789x:submit", "name \"a\" is used on line 1", nil, 0},
		{"empty", "# nothing\n", "no tokens found", nil, 0},
		{"name:token without scopes is one bare token, with a warning", "ci:ci-token-0123456789abc", "", []string{"token-"}, 1},
		{"space inside", "ci token with spaces 0123456789", "without spaces", nil, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk, err := ParseTokens(strings.NewReader(c.file))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := tk.Names()
			if len(names) != len(c.want) {
				t.Fatalf("names %v, want %v", names, c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(names[i], w) {
					t.Errorf("name %d: %q, want prefix %q", i, names[i], w)
				}
			}
			if len(tk.Warnings()) != c.warnings {
				t.Errorf("warnings %v, want %d", tk.Warnings(), c.warnings)
			}
			for _, n := range names {
				if strings.Contains(n, "token-0123456789") {
					t.Errorf("a name shows the token: %s", n)
				}
			}
		})
	}
	// A bare token's name is stable (from its digest), not its position.
	a, _ := ParseTokens(strings.NewReader("first-token-0123456789\nsecond-token-0123456789"))
	b, _ := ParseTokens(strings.NewReader("second-token-0123456789\nfirst-token-0123456789"))
	if a.Names()[0] != b.Names()[1] {
		t.Errorf("bare token names depend on order: %v %v", a.Names(), b.Names())
	}
}

func TestLoadTokensList(t *testing.T) {
	tk, err := LoadTokens("", "ci:ci-token-0123456789abc:submit,cancel,read,bare-token-0123456789,ops:ops-token-0123456789ab:admin")
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Join(tk.Names(), " ")
	for _, w := range []string{"ci (submit,cancel,read)", "token-", "ops (admin)"} {
		if !strings.Contains(names, w) {
			t.Errorf("names %q lack %q", names, w)
		}
	}
	if tk.Len() != 3 {
		t.Fatalf("%d tokens, want 3", tk.Len())
	}
	if _, err := LoadTokens("", "a-token-0123456789xx,read"); err == nil {
		t.Fatal("a lone scope after a bare token must not be glued to it")
	}
}

func TestScopeAllows(t *testing.T) {
	for _, c := range []struct {
		have, need Scope
		ok         bool
	}{
		{ScopeSubmit, ScopeSubmit, true},
		{ScopeSubmit, ScopeCancel, false},
		{ScopeSubmit | ScopeCancel, ScopeCancel, true},
		{ScopeRead, ScopeMetrics, true},
		{ScopeMetrics, ScopeRead, false},
		{ScopeAdmin, ScopeCancel, true},
		{ScopeAdmin, ScopeMetrics, true},
		{0, ScopeRead, false},
		{AllScopes, 0, true},
		{ScopeRead, 0, false},
	} {
		if got := c.have.Allows(c.need); got != c.ok {
			t.Errorf("%s allows %s = %v, want %v", c.have, c.need, got, c.ok)
		}
	}
}

func TestParseAllowlist(t *testing.T) {
	got, err := ParseAllowlist(" 10.0.0.0/8, 192.168.1.7 ,fd00::/8,::ffff:172.16.0.1,::ffff:100.64.0.0/106")
	if err != nil {
		t.Fatal(err)
	}
	g := &Guard{SparkAllow: got}
	for addr, want := range map[string]bool{"10.1.2.3": true, "192.168.1.7": true, "192.168.1.8": false, "fd00::1": true, "fe80::1": false, "172.16.0.1": true, "11.0.0.1": false,
		"100.64.1.2": true, "100.128.0.1": false} {
		if g.inAllowlist(netip.MustParseAddr(addr)) != want {
			t.Errorf("%s in allowlist: %v, want %v", addr, !want, want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "host.example", "10.0.0.1,", "1.2.3"} {
		if _, err := ParseAllowlist(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if p, err := ParseAllowlist("none"); err != nil || p != nil {
		t.Errorf("none: %v %v", p, err)
	}
}

func TestLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(2, 3)
	l.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatalf("burst request %d refused", i)
		}
	}
	ok, wait := l.Allow("a")
	if ok || wait != 500*time.Millisecond {
		t.Fatalf("4th: %v %v, want refused with 500ms", ok, wait)
	}
	if ok, _ := l.Allow("b"); !ok {
		t.Fatal("another key is limited too")
	}
	now = now.Add(500 * time.Millisecond)
	if ok, _ := l.Allow("a"); !ok {
		t.Fatal("refilled token refused")
	}
	if blocked, _ := l.Blocked("a"); !blocked {
		t.Fatal("Blocked should see the empty bucket")
	}
	if blocked, _ := l.Blocked("never-seen"); blocked {
		t.Fatal("unknown key blocked")
	}
	now = now.Add(time.Hour)
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a"); !ok {
			t.Fatal("bucket should be full after an hour, not more than burst")
		}
	}
	if ok, _ := l.Allow("a"); ok {
		t.Fatal("burst exceeded after a long idle time")
	}
	if NewLimiter(0, 10) != nil {
		t.Fatal("rate 0 must mean no limiter")
	}
	var none *Limiter
	if ok, _ := none.Allow("x"); !ok {
		t.Fatal("nil limiter refuses")
	}
	if retryAfterSeconds(10*time.Millisecond) != 1 || retryAfterSeconds(1500*time.Millisecond) != 2 {
		t.Fatal("Retry-After rounding")
	}
}

func TestLimiterBoundsKeys(t *testing.T) {
	now := time.Unix(1000, 0)
	l := NewLimiter(1, 1)
	l.now = func() time.Time { return now }
	l.maxKeys = 100
	for i := 0; i < 1000; i++ {
		l.Allow(fmt.Sprintf("k%d", i))
		if len(l.buckets) > l.maxKeys {
			t.Fatalf("%d buckets kept, max %d", len(l.buckets), l.maxKeys)
		}
	}
	// Full buckets go first: after refilling, a key under pressure keeps its state.
	now = now.Add(time.Minute)
	l.Allow("hot")
	for i := 0; i < 200; i++ {
		l.Allow(fmt.Sprintf("x%d", i))
	}
	if len(l.buckets) > l.maxKeys {
		t.Fatalf("%d buckets", len(l.buckets))
	}
}

const authTokens = `# test tokens
ci:ci-token-0123456789abcdef:submit,cancel
alice:alice-token-0123456789abc:submit,cancel,read
reader:reader-token-0123456789ab:read
prom:prom-token-0123456789abcde:metrics
ops:ops-token-0123456789abcdef:admin
legacy-token-0123456789abcdef
`

type refusals struct {
	mu sync.Mutex
	n  map[string]int
}

func (r *refusals) add(listener, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[string]int{}
	}
	r.n[listener+"/"+reason]++
}

func (r *refusals) get(key string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[key]
}

func authEnv(t *testing.T, protect bool, mod func(*Config)) (*testEnv, *refusals) {
	t.Helper()
	tokens, err := ParseTokens(strings.NewReader(authTokens))
	if err != nil {
		t.Fatal(err)
	}
	ref := &refusals{}
	e := newEnv(t, func(c *Config) {
		c.Guard = &Guard{Tokens: tokens, ProtectReads: protect, Refused: ref.add}
		if mod != nil {
			mod(c)
		}
	})
	return e, ref
}

// TestEveryMutatingEndpointRefuses: POST and DELETE refuse a request
// without a credential (401), with a malformed one (401), an unknown token
// (403) and a token without the scope (403), and nothing changes.
func TestEveryMutatingEndpointRefuses(t *testing.T) {
	e, ref := authEnv(t, false, nil)
	resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ops-token-0123456789abcdef", strings.NewReader(goodJob))
	if resp.StatusCode != 201 {
		t.Fatalf("admin submit: %d %v", resp.StatusCode, m)
	}
	id := m["id"].(string)
	bodies := map[string]func() io.Reader{
		"POST /api/v1/jobs":         func() io.Reader { return strings.NewReader(withField(goodJob, "id", uuid.NewString())) },
		"DELETE /api/v1/jobs/" + id: func() io.Reader { return nil },
	}
	for ep, body := range bodies {
		method, path, _ := strings.Cut(ep, " ")
		for _, c := range []struct {
			name, header string
			status       int
			reason       string
		}{
			{"no credential", "", 401, RefusedNoCredentials},
			{"basic auth", "Basic b3BzOnNlY3JldA==", 401, RefusedMalformed},
			{"empty bearer", "Bearer ", 401, RefusedMalformed},
			{"wrong token", "Bearer wrong-token-0123456789abcdef", 403, RefusedUnknownToken},
			{"token with a suffix", "Bearer ops-token-0123456789abcdefX", 403, RefusedUnknownToken},
			{"read-only token", "Bearer reader-token-0123456789ab", 403, RefusedScope},
			{"metrics token", "Bearer prom-token-0123456789abcde", 403, RefusedScope},
		} {
			req, _ := http.NewRequest(method, e.srv.URL+path, body())
			req.Header.Set("Content-Type", "application/json")
			if c.header != "" {
				req.Header.Set("Authorization", c.header)
			}
			before := ref.get("api/" + c.reason)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), `"field":"Authorization"`) {
				t.Errorf("%s, %s: %d %s, want %d naming Authorization", ep, c.name, resp.StatusCode, b, c.status)
			}
			if c.status == 401 && resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s, %s: 401 without WWW-Authenticate", ep, c.name)
			}
			if got := ref.get("api/" + c.reason); got != before+1 {
				t.Errorf("%s, %s: refusal %s counted %d times", ep, c.name, c.reason, got-before)
			}
		}
	}
	ctx := context.Background()
	jobs, _, err := e.store.ListJobs(ctx, storeListAll())
	if err != nil || len(jobs) != 1 || jobs[0].State != scheduler.Submitted {
		t.Fatalf("refused requests changed something: %d jobs %v", len(jobs), err)
	}
	for _, secret := range []string{"ops-token", "wrong-token", "reader-token", "prom-token"} {
		if strings.Contains(e.logs.String(), secret) {
			t.Fatalf("a token reached the log: %s", secret)
		}
	}
}

// TestScopesAndOwnership: submit needs submit; a cancel token cancels its
// own jobs only; admin and bare tokens cancel anything; reads under
// --protect-reads need read; every change names the token and the client.
func TestScopesAndOwnership(t *testing.T) {
	e, ref := authEnv(t, true, nil)
	submit := func(token string) (int, string) {
		resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", token, strings.NewReader(goodJob))
		id, _ := m["id"].(string)
		return resp.StatusCode, id
	}
	code, ciJob := submit("ci-token-0123456789abcdef")
	if code != 201 {
		t.Fatalf("ci submit: %d", code)
	}
	_, aliceJob := submit("alice-token-0123456789abc")
	_, legacyJob := submit("legacy-token-0123456789abcdef")
	if code, _ := submit("reader-token-0123456789ab"); code != 403 {
		t.Fatalf("reader submit: %d", code)
	}
	// ci may not cancel alice's job, nor one submitted with the bare token.
	for _, id := range []string{aliceJob, legacyJob} {
		resp, m := e.do(t, "DELETE", "/api/v1/jobs/"+id, "", "ci-token-0123456789abcdef", nil)
		if resp.StatusCode != 403 || m["field"] != "id" || !strings.Contains(m["error"].(string), "another token") {
			t.Fatalf("ci cancels another's job: %d %v", resp.StatusCode, m)
		}
	}
	if ref.get("api/"+RefusedNotOwner) != 2 {
		t.Fatalf("not_owner counted %d times", ref.get("api/"+RefusedNotOwner))
	}
	if resp, m := e.do(t, "DELETE", "/api/v1/jobs/"+ciJob, "", "ci-token-0123456789abcdef", nil); resp.StatusCode != 200 || m["state"] != "CANCELLED" {
		t.Fatalf("ci cancels its own job: %d %v", resp.StatusCode, m)
	}
	if resp, m := e.do(t, "DELETE", "/api/v1/jobs/"+aliceJob, "", "ops-token-0123456789abcdef", nil); resp.StatusCode != 200 {
		t.Fatalf("admin cancels alice's job: %d %v", resp.StatusCode, m)
	}
	_, ciJob2 := submit("ci-token-0123456789abcdef")
	if resp, m := e.do(t, "DELETE", "/api/v1/jobs/"+ciJob2, "", "legacy-token-0123456789abcdef", nil); resp.StatusCode != 200 {
		t.Fatalf("a bare token keeps every scope (cancel any job): %d %v", resp.StatusCode, m)
	}
	// Reads under --protect-reads.
	for token, want := range map[string]int{"": 401, "ci-token-0123456789abcdef": 403, "reader-token-0123456789ab": 200,
		"alice-token-0123456789abc": 200, "prom-token-0123456789abcde": 403, "ops-token-0123456789abcdef": 200} {
		if resp, _ := e.do(t, "GET", "/api/v1/jobs/"+ciJob, "", token, nil); resp.StatusCode != want {
			t.Errorf("GET with %q: %d, want %d", token, resp.StatusCode, want)
		}
	}
	// Who did what: the events name the token and the client, never the token itself.
	resp, m := e.do(t, "GET", "/api/v1/jobs/"+aliceJob, "", "ops-token-0123456789abcdef", nil)
	if resp.StatusCode != 200 {
		t.Fatal(resp.StatusCode)
	}
	evs := m["events"].([]any)
	if len(evs) != 2 {
		t.Fatalf("events %v", evs)
	}
	first, last := evs[0].(map[string]any), evs[1].(map[string]any)
	if first["actor"] != "alice" || first["client"] != "127.0.0.1" || last["actor"] != "ops" || last["client"] != "127.0.0.1" || last["to"] != "CANCELLED" {
		t.Fatalf("events do not record who: %v", evs)
	}
	resp, m = e.do(t, "GET", "/api/v1/jobs/"+legacyJob, "", "ops-token-0123456789abcdef", nil)
	if a := m["events"].([]any)[0].(map[string]any)["actor"].(string); !strings.HasPrefix(a, "token-") || strings.Contains(a, "legacy") {
		t.Fatalf("bare token recorded as %q", a)
	}
	raw := e.logs.String()
	if !strings.Contains(raw, `"principal":"alice"`) || !strings.Contains(raw, `"refused":"not_owner"`) {
		t.Error("the access log lacks principal or refusal reason")
	}
	if strings.Contains(raw, "-token-0123456789") {
		t.Error("a token reached the log")
	}
}

// TestMetricsToken: a handler mounted with Require(ScopeMetrics) takes a
// metrics, read or admin token under --protect-reads and is open without.
func TestMetricsToken(t *testing.T) {
	mount := func(c *Config) {
		c.Mount = func(r *mux.Router, s *Server) {
			r.Handle("/metrics", s.Require(ScopeMetrics, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })))
		}
	}
	e, _ := authEnv(t, true, mount)
	for token, want := range map[string]int{"": 401, "prom-token-0123456789abcde": 200, "reader-token-0123456789ab": 200,
		"ops-token-0123456789abcdef": 200, "ci-token-0123456789abcdef": 403, "bad-token-0123456789abcdef": 403} {
		req, _ := http.NewRequest("GET", e.srv.URL+"/metrics", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("/metrics with %q: %d, want %d", token, resp.StatusCode, want)
		}
	}
	open, _ := authEnv(t, false, mount)
	resp, err := http.Get(open.srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics without --protect-reads: %d", resp.StatusCode)
	}
}

// TestRateLimit: a token's mutating requests past the burst get 429 with
// Retry-After; another token and reads are not affected; a client that
// keeps presenting bad tokens is answered 429 even with a good one.
func TestRateLimit(t *testing.T) {
	e, ref := authEnv(t, false, func(c *Config) { c.Guard.Limiter = NewLimiter(0.01, 3) })
	for i := 0; i < 3; i++ {
		if resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ci-token-0123456789abcdef", strings.NewReader(goodJob)); resp.StatusCode != 201 {
			t.Fatalf("request %d in the burst: %d %v", i, resp.StatusCode, m)
		}
	}
	resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ci-token-0123456789abcdef", strings.NewReader(goodJob))
	ra, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
	if resp.StatusCode != 429 || ra < 1 || !strings.Contains(m["error"].(string), "too many requests") {
		t.Fatalf("past the burst: %d Retry-After %q %v", resp.StatusCode, resp.Header.Get("Retry-After"), m)
	}
	// Durations read as everywhere else in sparkpack's text ("15s", Go's
	// time.Duration), not "15 s".
	if want := fmt.Sprintf("retry after %ds", ra); !strings.Contains(m["error"].(string), want) {
		t.Fatalf("past the burst: %q; want %q", m["error"], want)
	}
	if ref.get("api/"+RefusedRateLimited) != 1 {
		t.Fatal("rate_limited not counted")
	}
	if resp, _ := e.do(t, "POST", "/api/v1/jobs", "application/json", "alice-token-0123456789abc", strings.NewReader(goodJob)); resp.StatusCode != 201 {
		t.Fatalf("another token: %d", resp.StatusCode)
	}
	if resp, _ := e.do(t, "GET", "/api/v1/jobs", "", "ci-token-0123456789abcdef", nil); resp.StatusCode != 200 {
		t.Fatalf("reads are not limited: %d", resp.StatusCode)
	}
	jobs, _, _ := e.store.ListJobs(context.Background(), storeListAll())
	if len(jobs) != 4 {
		t.Fatalf("%d jobs stored, want 4", len(jobs))
	}

	// Failed credentials: 3 refusals use the address' bucket, then even a
	// good token from that address waits.
	f, _ := authEnv(t, false, func(c *Config) { c.Guard.Limiter = NewLimiter(0.01, 3) })
	for i := 0; i < 3; i++ {
		if resp, _ := f.do(t, "POST", "/api/v1/jobs", "application/json", fmt.Sprintf("guess-%d-0123456789abcdef", i), strings.NewReader(goodJob)); resp.StatusCode != 403 {
			t.Fatalf("guess %d: %d", i, resp.StatusCode)
		}
	}
	resp, m = f.do(t, "POST", "/api/v1/jobs", "application/json", "ops-token-0123456789abcdef", strings.NewReader(goodJob))
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("after 3 bad tokens: %d", resp.StatusCode)
	}
	if want := "retry after " + resp.Header.Get("Retry-After") + "s with a valid token"; !strings.Contains(m["error"].(string), want) {
		t.Fatalf("after 3 bad tokens: %q; want %q", m["error"], want)
	}
}

// TestMaxWaitingPerToken: past the cap a token gets 429 with a message
// naming the cap; resending an existing job still answers 200; other
// tokens are not affected; concurrent submissions never exceed the cap;
// a job that leaves the queue frees a place.
func TestMaxWaitingPerToken(t *testing.T) {
	e, ref := authEnv(t, false, func(c *Config) { c.MaxWaitingPerToken = 3 })
	var wg sync.WaitGroup
	codes := make(chan int, 12)
	for i := 0; i < 12; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", e.srv.URL+"/api/v1/jobs", strings.NewReader(withField(goodJob, "id", uuid.NewString())))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer ci-token-0123456789abcdef")
			resp, err := http.DefaultClient.Do(req)
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
	got := map[int]int{}
	for c := range codes {
		got[c]++
	}
	if got[201] != 3 || got[429] != 9 {
		t.Fatalf("12 concurrent submissions with a cap of 3: %v", got)
	}
	if ref.get("api/"+RefusedTooManyWaiting) != 9 {
		t.Fatalf("too_many_waiting counted %d", ref.get("api/"+RefusedTooManyWaiting))
	}
	id := uuid.NewString()
	body := withField(goodJob, "id", id)
	resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ci-token-0123456789abcdef", strings.NewReader(body))
	if resp.StatusCode != 429 || !strings.Contains(m["error"].(string), "--max-waiting-per-token 3") || !strings.Contains(m["error"].(string), `"ci"`) {
		t.Fatalf("over the cap: %d %v", resp.StatusCode, m)
	}
	if resp, _ := e.do(t, "POST", "/api/v1/jobs", "application/json", "alice-token-0123456789abc", strings.NewReader(body)); resp.StatusCode != 201 {
		t.Fatalf("alice is under her own cap: %d", resp.StatusCode)
	}
	// The same id and body again, now by ci: it exists, so nothing is created and the answer is 200.
	if resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ci-token-0123456789abcdef", strings.NewReader(body)); resp.StatusCode != 200 {
		t.Fatalf("resend of an existing job over the cap: %d %v", resp.StatusCode, m)
	}
	// One of ci's jobs starts: a place frees up.
	jobs, _, _ := e.store.ListJobs(context.Background(), storeListAll())
	for _, j := range jobs {
		if j.ID != id {
			if _, err := e.store.Transition(context.Background(), j.ID, scheduler.Submitted, scheduler.Queued, "", nil); err != nil {
				t.Fatal(err)
			}
			if _, err := e.store.Transition(context.Background(), j.ID, scheduler.Queued, scheduler.Placing, "", nil); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	if resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "ci-token-0123456789abcdef", strings.NewReader(goodJob)); resp.StatusCode != 201 {
		t.Fatalf("after a job started: %d %v", resp.StatusCode, m)
	}
}
