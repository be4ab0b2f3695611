package api

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// TestEncodedBodiesAreRefusedNamingTheHeader: a body sent with a content
// coding (a client that gzips) is a 415 naming Content-Encoding and saying
// to send it uncompressed, not a "malformed JSON at byte 1"; a job file with
// a UTF-8 byte order mark is a 400 saying so. Nothing is stored or changed.
func TestEncodedBodiesAreRefusedNamingTheHeader(t *testing.T) {
	path := filepath.Join(t.TempDir(), "teams")
	os.WriteFile(path, []byte("analytics weight=2\n"), 0o644)
	h := &teams.Holder{}
	w := &teams.Watcher{Path: path, Holder: h}
	if err := w.Load(); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(c *Config) { c.Teams, c.SaveTeams = h, w.Save })
	gz := func(s string) *bytes.Buffer {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write([]byte(s))
		zw.Close()
		return &b
	}
	for _, tc := range []struct {
		method, path, ctype, encoding string
		body                          *bytes.Buffer
	}{
		{"POST", "/api/v1/jobs", "application/json", "gzip", gz(goodJob)},
		{"POST", "/api/v1/jobs", "application/json", "br", bytes.NewBufferString(goodJob)},
		{"PUT", "/api/v1/teams", "text/plain", "gzip", gz("analytics weight=5\n")},
	} {
		resp, m := doEncoded(t, e, tc.method, tc.path, tc.ctype, tc.encoding, tc.body)
		msg, _ := m["error"].(string)
		if resp.StatusCode != 415 || m["field"] != "Content-Encoding" || !strings.Contains(msg, "send the body uncompressed") {
			t.Errorf("%s %s with Content-Encoding %s: %d %v; want 415 naming Content-Encoding", tc.method, tc.path, tc.encoding, resp.StatusCode, m)
		}
	}
	// identity is no coding at all.
	if resp, m := doEncoded(t, e, "POST", "/api/v1/jobs", "application/json", "identity", bytes.NewBufferString(goodJob)); resp.StatusCode != 201 {
		t.Fatalf("Content-Encoding identity: %d %v", resp.StatusCode, m)
	}
	resp, m := e.do(t, "POST", "/api/v1/jobs", "application/json", "", strings.NewReader("\xef\xbb\xbf"+goodJob))
	if msg, _ := m["error"].(string); resp.StatusCode != 400 || !strings.Contains(msg, "byte order mark") || !strings.Contains(msg, "without a BOM") {
		t.Errorf("a body with a byte order mark: %d %v", resp.StatusCode, m)
	}
	jobs, _, err := e.store.ListJobs(context.Background(), store.ListOptions{})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("%d jobs stored (%v), want only the identity one", len(jobs), err)
	}
	if h.Get().Team("analytics").Weight != 2 {
		t.Fatal("a compressed PUT changed the teams in force")
	}
}

// doEncoded sends body with a Content-Encoding header, as sent (Go's client
// would not compress it itself).
func doEncoded(t *testing.T, e *testEnv, method, path, ctype, encoding string, body io.Reader) (*http.Response, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", ctype)
	req.Header.Set("Content-Encoding", encoding)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s %s: body is not JSON: %q", method, path, b)
	}
	return resp, m
}
