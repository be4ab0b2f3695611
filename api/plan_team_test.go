package api

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/simulate"
)

// TestPlanTeam: POST /api/v1/plan works out the job's team exactly as a
// submission does (the token's team, else the team label) and answers
// what the submission and the scheduler's pass would do with that team:
// a wait at the team's maximum, a refusal for its spent budget
// (budget-action reject) or at its max-waiting. Real PostgreSQL, the real
// scheduler core on a simulated one-agent cluster (32 cpus).
//
// goodJob needs 9 cpus (4 executors of 2 and its driver); analytics may
// hold 12 and runs one such job, submitted with the etl token (whose team
// is analytics).
func TestPlanTeam(t *testing.T) {
	// sub may submit but not read: where reads are open it previews all
	// the same, as its team's.
	tokens, err := ParseTokens(strings.NewReader(teamTokens + "sub:sub-token-0123456789abcdef:submit:analytics\n"))
	if err != nil {
		t.Fatal(err)
	}
	var core *scheduler.Core
	holder := teamsHolder(t, "analytics max-cpus=12\nbi max-waiting=1\n")
	e := newEnv(t, func(c *Config) {
		c.Guard = &Guard{Tokens: tokens}
		c.Teams = holder
		c.BudgetRefusal = func(team string) (string, bool) {
			if team == "spent" {
				return "team spent is over its daily budget $5.00: new jobs are refused until tomorrow (budget-action reject)", true
			}
			return "", false
		}
		c.Preview = func(ctx context.Context, j scheduler.Job, now time.Time) (scheduler.Preview, error) {
			return core.Preview(ctx, j, now)
		}
	})
	spec := clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 32, MemMB: 131072, PricePerHour: 0.5}}}
	core, err = scheduler.New(scheduler.Config{Policy: "bfd", Teams: holder, Log: discard()},
		simulate.NewCluster(spec, scheduler.SystemClock{}), e.store, nil)
	if err != nil {
		t.Fatal(err)
	}
	const etl, ci = "etl-token-0123456789abcdef", "ci-token-0123456789abcdef"
	ctx := context.Background()
	submit := func(token, team string) {
		t.Helper()
		resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", token, strings.NewReader(withField(goodJob, "labels", map[string]any{"team": team})))
		if resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		j, err := e.store.GetJob(ctx, m["id"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Submit(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	submit(etl, "ml") // team analytics (the token's)
	if n, err := core.Schedule(ctx); n != 1 || err != nil {
		t.Fatalf("started %d (%v), want analytics' first job", n, err)
	}
	plan := func(token, team string) map[string]any {
		t.Helper()
		resp, m := e.do(t, "POST", "/api/v1/plan", "application/json", token, strings.NewReader(withField(goodJob, "labels", map[string]any{"team": team})))
		if resp.StatusCode != 200 {
			t.Fatalf("plan: %d %v", resp.StatusCode, m)
		}
		return m
	}
	// The etl token's team is analytics, whatever the label says: a second
	// job would take analytics to 18 cpus of its 12.
	if m := plan(etl, "ml"); m["startsNow"] != false || m["waitingReason"] != "team analytics at its cpu limit" {
		t.Errorf("etl token, label ml: %v; want a wait at team analytics' limit", m)
	}
	if m := plan("sub-token-0123456789abcdef", "ml"); m["waitingReason"] != "team analytics at its cpu limit" {
		t.Errorf("sub token (submit only), label ml: %v; want a wait at team analytics' limit", m)
	}
	// A token without a team: the label's team, which has no maximum.
	if m := plan(ci, "ml"); m["startsNow"] != true || m["waitingReason"] != nil {
		t.Errorf("ci token, label ml: %v; want a start now", m)
	}
	// Without a token (reads are open): the label's team, as a submission
	// where submitting needs no token would get.
	if m := plan("", "analytics"); m["startsNow"] != false || m["waitingReason"] != "team analytics at its cpu limit" {
		t.Errorf("no token, label analytics: %v; want a wait at team analytics' limit", m)
	}
	// A token that is not allowed is refused, as a submission with it is.
	if resp, m := e.do(t, "POST", "/api/v1/plan", "application/json", "no-such-token-0123456789", strings.NewReader(goodJob)); resp.StatusCode != 403 || m["field"] != "Authorization" {
		t.Errorf("unknown token: %d %v; want 403 naming Authorization", resp.StatusCode, m)
	}
	if m := plan(ci, "spent"); !strings.Contains(str(m["rejected"]), "team spent is over its daily budget") || m["startsNow"] != false {
		t.Errorf("ci token, label spent: %v; want the budget's refusal", m)
	}
	// bi may have one job waiting: with one stored (not yet scheduled), a
	// second would be refused (429) at submission.
	if m := plan(ci, "bi"); m["startsNow"] != true {
		t.Errorf("ci token, label bi, none waiting: %v; want a start now", m)
	}
	submit(ci, "bi")
	if m := plan(ci, "bi"); !strings.Contains(str(m["rejected"]), "team bi already has 1 jobs waiting") {
		t.Errorf("ci token, label bi, one waiting: %v; want the max-waiting refusal", m)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}
