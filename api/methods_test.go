package api

import (
	"strings"
	"testing"
)

// TestMethodNotAllowedSaysWhichAre: a 405 carries the Allow header HTTP
// requires and says which methods the path takes (it said only that this
// one is not allowed).
func TestMethodNotAllowedSaysWhichAre(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Dashboard = true })
	for _, c := range []struct{ method, path, allow string }{
		{"PUT", "/api/v1/jobs", "GET, POST"},
		{"PATCH", "/api/v1/jobs/6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", "GET, DELETE"},
		{"DELETE", "/healthz", "GET, HEAD"},
		{"POST", "/", "GET, HEAD"},
	} {
		resp, m := e.do(t, c.method, c.path, "", "", nil)
		msg, _ := m["error"].(string)
		want := "use " + strings.ReplaceAll(c.allow, ", ", " or ")
		if resp.StatusCode != 405 || resp.Header.Get("Allow") != c.allow || !strings.HasSuffix(msg, want) {
			t.Errorf("%s %s: %d, Allow %q, %q; want 405, Allow %q, saying %q", c.method, c.path, resp.StatusCode, resp.Header.Get("Allow"), msg, c.allow, want)
		}
	}
}
