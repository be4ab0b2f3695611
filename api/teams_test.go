package api

import (
	"strings"
	"testing"
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
}
