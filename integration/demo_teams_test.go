package integration

import (
	"context"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestDemoHasTeams: the demo runs with its sample teams (a newcomer can
// try team guarantees and usage per team): GET /api/v1/teams lists them,
// PUT /api/v1/teams changes them (it answered 409 without a teams file),
// and once sample jobs ended sparkpack usage --by team shows their teams.
func TestDemoHasTeams(t *testing.T) {
	d := startDemo(t, "--sim-speed", "30", "--sample-jobs", "6", "--sample-max-gap", "100ms")
	var v struct {
		Configured bool
		Teams      []struct{ Name string }
	}
	getJSON(t, d.API+"/api/v1/teams", &v)
	var names []string
	for _, tm := range v.Teams {
		names = append(names, tm.Name)
	}
	if !v.Configured || strings.Join(names, " ") != "analytics etl reporting" {
		t.Fatalf("the demo's teams: %+v", v)
	}
	req, _ := http.NewRequest(http.MethodPut, d.API+"/api/v1/teams", strings.NewReader("analytics weight=3\netl\nreporting max-deadline=10\n"))
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PUT /api/v1/teams on the demo: %d", resp.StatusCode)
	}

	bin := sparkpackBinary(t)
	var out []byte
	for deadline := time.Now().Add(3 * time.Minute); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err = exec.CommandContext(ctx, bin, "usage", "--by", "team", "-o", "name", "--server", d.API).CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("sparkpack usage --by team: %v\n%s", err, out)
		}
		got := strings.Fields(string(out))
		if len(got) >= 2 && !strings.Contains(string(out), "(none)") {
			for _, g := range got {
				if g != "analytics" && g != "etl" && g != "reporting" {
					t.Fatalf("usage --by team lists %q, not a sample team:\n%s", g, out)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("usage --by team after 3 minutes:\n%s", out)
		}
		time.Sleep(time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	table, err := exec.CommandContext(ctx, bin, "usage", "--by", "team", "--server", d.API).CombinedOutput()
	if err != nil || !strings.Contains(string(table), "TEAM") {
		t.Fatalf("sparkpack usage --by team: %v\n%s", err, table)
	}
	t.Logf("usage by team on the demo:\n%s", table)
}
