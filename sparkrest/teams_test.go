package sparkrest

import (
	"context"
	"strings"
	"testing"
)

// TestSparkRESTJobTeam: a Spark REST submission gets its team as a native
// one does: the token's team, else the spark.sparkpack.label.team label.
func TestSparkRESTJobTeam(t *testing.T) {
	const tokens = "etl:etl-token-0123456789abcdef:submit:analytics\nci:ci-token-0123456789abcdef:submit\n"
	e := setupAuth(t, tokens, "", false, nil)
	body := strings.Replace(sparkPiRequest, `"spark.sparkpack.deadline" : "3600",`,
		`"spark.sparkpack.deadline" : "3600", "spark.sparkpack.label.team" : "ml",`, 1)
	for token, want := range map[string]string{"etl-token-0123456789abcdef": "analytics", "ci-token-0123456789abcdef": "ml"} {
		code, m, _ := doAuth(t, "POST", e.url+"/v1/submissions/create", body, "Bearer "+token)
		if code != 200 {
			t.Fatalf("create: %d %v", code, m)
		}
		j, err := e.store.GetJob(context.Background(), m["submissionId"].(string))
		if err != nil || j.Team != want {
			t.Errorf("token %s: team %q (%v), want %q", token, j.Team, err, want)
		}
	}
}
