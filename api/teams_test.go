package api

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/teams"
)

func TestParseTokensTeam(t *testing.T) {
	cases := []struct {
		name, file, wantErr string
		want                []string
	}{
		{"a team after the scopes", "etl:etl-token-0123456789abc:submit,cancel:analytics", "", []string{"etl (submit,cancel; team analytics)"}},
		{"without a team as before", "ci:ci-token-0123456789abc:submit", "", []string{"ci (submit)"}},
		{"a bad team name", "etl:etl-token-0123456789abc:submit:bad team", "team name", nil},
		{"an empty team", "etl:etl-token-0123456789abc:submit:", "team name", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk, err := ParseTokens(strings.NewReader(c.file))
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.Contains(err.Error(), "line 1") {
					t.Fatalf("err %v, want %q on line 1", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(tk.Names(), "|"); got != strings.Join(c.want, "|") {
				t.Fatalf("names %q, want %q", got, c.want)
			}
		})
	}
	// SPARKPACK_TOKENS: a team rides on the last scope of an entry.
	tk, err := LoadTokens("", "etl:etl-token-0123456789abc:submit,read:analytics,ops:ops-token-0123456789ab:admin")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(tk.Names(), "|"); got != "etl (submit,read; team analytics)|ops (admin)" {
		t.Fatalf("names %q", got)
	}
}

const teamTokens = `etl:etl-token-0123456789abcdef:submit,cancel,read:analytics
ci:ci-token-0123456789abcdef:submit,cancel,read
`

// TestJobTeam: a job's team is its token's, else its "team" label; it is
// stored, shown and filtered on.
func TestJobTeam(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader(teamTokens))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Guard = &Guard{Tokens: tokens} })
	submit := func(token string, labels map[string]any) string {
		body := withField(goodJob, "labels", labels) // goodJob's own labels name a team
		resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", token, strings.NewReader(body))
		if resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		return m["id"].(string)
	}
	tokenTeam := submit("etl-token-0123456789abcdef", map[string]any{"team": "ml"})
	labelTeam := submit("ci-token-0123456789abcdef", map[string]any{"team": "ml"})
	noTeam := submit("ci-token-0123456789abcdef", map[string]any{"owner": "bob"})
	for id, want := range map[string]any{tokenTeam: "analytics", labelTeam: "ml", noTeam: nil} {
		_, m := e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
		if m["team"] != want {
			t.Errorf("job %s: team %v, want %v", id, m["team"], want)
		}
	}
	for query, want := range map[string]string{"team=analytics": tokenTeam, "team=ml": labelTeam, "team=": noTeam} {
		resp, m := e.do(t, "GET", "/api/v1/jobs?"+query, "", "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %v", query, resp.StatusCode, m)
		}
		jobs := m["jobs"].([]any)
		if len(jobs) != 1 || jobs[0].(map[string]any)["id"] != want {
			t.Errorf("%s: %v, want only %s", query, jobs, want)
		}
	}
	resp, m := e.do(t, "GET", "/api/v1/jobs?team=a&team=b", "", "", nil)
	if resp.StatusCode != 400 || m["field"] != "team" {
		t.Errorf("two team filters: %d %v", resp.StatusCode, m)
	}
	// A name no team can have is refused naming it, not answered with an
	// empty list that hides the typo.
	for _, bad := range []string{"ml%20team", "-ml", "ml%2Fteam", strings.Repeat("a", 65)} {
		resp, m := e.do(t, "GET", "/api/v1/jobs?team="+bad, "", "", nil)
		if msg, _ := m["error"].(string); resp.StatusCode != 400 || m["field"] != "team" || !strings.Contains(msg, "is not a team name") {
			t.Errorf("team=%s: %d %v; want 400 naming team", bad, resp.StatusCode, m)
		}
	}
}

func teamsHolder(t *testing.T, text string) *teams.Holder {
	t.Helper()
	c, err := teams.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	h := &teams.Holder{}
	h.Set(c)
	return h
}

// TestTeamCaps: a submission past its team's max-waiting or max-deadline
// is refused with 429 naming the team; other teams, regular jobs of a team
// at its deadline cap, and a resubmission of an existing job pass.
func TestTeamCaps(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Teams = teamsHolder(t, "analytics max-waiting=2\nml max-deadline=1\n") })
	submit := func(team string, extra map[string]any) (int, map[string]any) {
		body := withField(goodJob, "labels", map[string]any{"team": team})
		for k, v := range extra {
			body = withField(body, k, v)
		}
		resp, m := e.post(t, body)
		return resp.StatusCode, m
	}
	const firstID = "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"
	for i, want := range []int{201, 201, 429} {
		extra := map[string]any{}
		if i == 0 {
			extra["id"] = firstID
		}
		code, m := submit("analytics", extra)
		if code != want {
			t.Fatalf("analytics job %d: %d %v, want %d", i, code, m, want)
		}
		if code == 429 && (m["field"] != "team" || !strings.Contains(m["error"].(string), "team analytics already has 2 jobs waiting") || !strings.Contains(m["error"].(string), "max-waiting")) {
			t.Fatalf("refusal %v", m)
		}
	}
	if code, m := submit("analytics", map[string]any{"id": firstID}); code != 200 {
		t.Fatalf("resubmitting an existing job at the cap: %d %v", code, m)
	}
	if code, m := submit("bi", nil); code != 201 {
		t.Fatalf("another team: %d %v", code, m)
	}
	dl := map[string]any{"deadline": 3600}
	if code, m := submit("ml", dl); code != 201 {
		t.Fatalf("first ml deadline job: %d %v", code, m)
	}
	if code, m := submit("ml", dl); code != 429 || m["field"] != "team" || !strings.Contains(m["error"].(string), "max-deadline") {
		t.Fatalf("second ml deadline job: %d %v", code, m)
	}
	if code, m := submit("ml", nil); code != 201 {
		t.Fatalf("a regular ml job: %d %v", code, m)
	}
}

// TestTeamsEndpoint: GET and PUT /api/v1/teams need the admin scope; PUT
// refuses a bad file naming its line and keeps the configuration in
// force, and puts a good one in force (and in the file).
func TestTeamsEndpoint(t *testing.T) {
	tokens, err := ParseTokens(strings.NewReader(authTokens))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "teams")
	os.WriteFile(path, []byte("analytics weight=2\n"), 0o644)
	h := &teams.Holder{}
	w := &teams.Watcher{Path: path, Holder: h}
	if err := w.Load(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) {
		c.Guard = &Guard{Tokens: tokens, ProtectReads: true}
		c.Teams, c.SaveTeams = h, w.Save
		c.TeamUsage = func() map[string]teams.Usage { return map[string]teams.Usage{"analytics": {CPUs: 9, MemMB: 4096}} }
	})
	const admin, reader = "ops-token-0123456789abcdef", "reader-token-0123456789ab"
	if resp, _ := e.do(t, "GET", "/api/v1/teams", "", reader, nil); resp.StatusCode != 403 {
		t.Fatalf("GET with a read token: %d", resp.StatusCode)
	}
	resp, m := e.do(t, "GET", "/api/v1/teams", "", admin, nil)
	if resp.StatusCode != 200 || m["configured"] != true || m["teams"].([]any)[0].(map[string]any)["weight"] != 2.0 ||
		m["running"].(map[string]any)["analytics"].(map[string]any)["cpus"] != 9.0 {
		t.Fatalf("GET: %d %v", resp.StatusCode, m)
	}
	if resp, _ := e.do(t, "PUT", "/api/v1/teams", "text/plain", "ci-token-0123456789abcdef", strings.NewReader("a weight=1\n")); resp.StatusCode != 403 {
		t.Fatalf("PUT with a submit token: %d", resp.StatusCode)
	}
	resp, m = e.do(t, "PUT", "/api/v1/teams", "text/plain", admin, strings.NewReader("analytics weight=3\nml max-cpus=-2\n"))
	if resp.StatusCode != 400 || m["field"] != "body" || !strings.Contains(m["error"].(string), "line 2: team ml: max-cpus=-2: must not be negative") {
		t.Fatalf("bad PUT: %d %v", resp.StatusCode, m)
	}
	if h.Get().Team("analytics").Weight != 2 {
		t.Fatal("a refused PUT changed the configuration in force")
	}
	resp, m = e.do(t, "PUT", "/api/v1/teams", "text/plain", admin, strings.NewReader("analytics weight=3\nml max-cpus=8\n"))
	if resp.StatusCode != 200 || len(m["teams"].([]any)) != 2 {
		t.Fatalf("good PUT: %d %v", resp.StatusCode, m)
	}
	if h.Get().Team("ml").MaxCPUs != 8 {
		t.Fatal("a good PUT is not in force")
	}
	if b, _ := os.ReadFile(path); string(b) != "analytics weight=3\nml max-cpus=8\n" {
		t.Fatalf("the file holds %q", b)
	}
}
