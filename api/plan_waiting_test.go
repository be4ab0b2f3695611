package api

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/simulate"
)

// TestWaitingCapRefusal: the --max-waiting-per-token decision a
// submission and a preview share.
func TestWaitingCapRefusal(t *testing.T) {
	tok := Principal{Name: "ci", Via: "token"}
	allow := Principal{Name: AllowlistName, Via: "allowlist"}
	cases := []struct {
		name           string
		p              Principal
		waiting, limit int
		want           string // a part of the refusal; "" none
	}{
		{"no cap", tok, 1000, 0, ""},
		{"below the cap", tok, 2, 3, ""},
		{"at the cap", tok, 3, 3, `token "ci" already has 3 jobs waiting (SUBMITTED or QUEUED), the most the operator allows (--max-waiting-per-token 3)`},
		{"past the cap (lowered since)", tok, 5, 3, `token "ci" already has 5 jobs waiting`},
		{"no name (no tokens configured)", Principal{Via: "open"}, 10, 3, ""},
		{"allowlisted clients share one cap", allow, 3, 3, "clients of --spark-rest-allow already have"},
	}
	for _, c := range cases {
		got := waitingCapRefusal(c.p, c.waiting, c.limit)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPlanMaxWaitingPerToken: POST /api/v1/plan with a token that has
// --max-waiting-per-token jobs waiting answers that a submission would be
// refused (429, too_many_waiting) with the submission's own message, and
// counts no refusal; the submission then gets exactly that. Another token,
// and a job of an id that exists (a resend creates nothing), are not
// refused. Real PostgreSQL, the real scheduler core on a simulated
// one-agent cluster.
func TestPlanMaxWaitingPerToken(t *testing.T) {
	var core *scheduler.Core
	e, ref := authEnv(t, false, func(c *Config) {
		c.MaxWaitingPerToken = 2
		c.Preview = func(ctx context.Context, j scheduler.Job, now time.Time) (scheduler.Preview, error) {
			return core.Preview(ctx, j, now)
		}
	})
	spec := clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 32, MemMB: 131072, PricePerHour: 0.5}}}
	var err error
	core, err = scheduler.New(scheduler.Config{Policy: "bfd", Log: discard()}, simulate.NewCluster(spec, scheduler.SystemClock{}), e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	const ci, alice = "ci-token-0123456789abcdef", "alice-token-0123456789abc"
	plan := func(token, body string) map[string]any {
		t.Helper()
		resp, m := e.do(t, "POST", "/api/v1/plan", "application/json", token, strings.NewReader(body))
		if resp.StatusCode != 200 {
			t.Fatalf("plan: %d %v", resp.StatusCode, m)
		}
		return m
	}
	if m := plan(ci, goodJob); m["startsNow"] != true || m["rejected"] != nil {
		t.Fatalf("ci, nothing waiting: %v; want a start now", m)
	}
	var ids []string
	for range 2 {
		id := uuid.NewString()
		if resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", ci, strings.NewReader(withField(goodJob, "id", id))); resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		ids = append(ids, id)
	}
	m := plan(ci, goodJob)
	msg := str(m["rejected"])
	if !strings.Contains(msg, `token "ci" already has 2 jobs waiting`) || !strings.Contains(msg, "--max-waiting-per-token 2") ||
		m["refusedStatus"] != float64(http.StatusTooManyRequests) || m["refusedReason"] != RefusedTooManyWaiting || m["startsNow"] != false {
		t.Fatalf("ci, 2 waiting of 2: %v; want the refusal a submission would get", m)
	}
	if n := ref.get("api/" + RefusedTooManyWaiting); n != 0 {
		t.Errorf("a preview counted %d too_many_waiting refusals; it refuses nothing", n)
	}
	// The submission decides the same, in the same words.
	resp, sm := e.do(t, "POST", "/api/v1/jobs", "application/json", ci, strings.NewReader(goodJob))
	if resp.StatusCode != http.StatusTooManyRequests || sm["error"] != msg {
		t.Errorf("the submission: %d %v; the preview said %q", resp.StatusCode, sm, msg)
	}
	if m := plan(alice, goodJob); m["rejected"] != nil || m["startsNow"] != true {
		t.Errorf("alice, nothing waiting: %v; want a start now", m)
	}
	// Resending a stored job creates nothing: neither refused.
	again := withField(goodJob, "id", ids[0])
	if m := plan(ci, again); m["rejected"] != nil {
		t.Errorf("ci, a job of a stored id: %v; want no refusal", m)
	}
	if resp, sm := e.do(t, "POST", "/api/v1/jobs", "application/json", ci, strings.NewReader(again)); resp.StatusCode != 200 {
		t.Errorf("ci resends a stored job: %d %v", resp.StatusCode, sm)
	}
}
