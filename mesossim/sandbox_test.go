package mesossim

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestFilesAPIAnswersAsARealAgent checks the emulated agents' files API
// against the answers a real Mesos 1.12 agent gave to the same requests
// (recorded by hand from the build in ../shared/mesos: a command task that
// wrote "hello-stdout\n").
func TestFilesAPIAnswersAsARealAgent(t *testing.T) {
	m, err := New(Config{Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	dir := sandboxDir("fw-1", "probe")
	m.sandboxes[dir] = &sandbox{dir: dir, stdout: []byte("hello-stdout\n"), stderr: []byte("I1126 exec.cpp] Starting task probe\n")}
	srv := httptest.NewServer(m.AgentHandler())
	defer srv.Close()
	cases := []struct {
		query string
		code  int
		body  string
	}{
		{"read?path=" + dir + "/stdout&offset=0", 200, `{"data":"hello-stdout\n","offset":0}`},
		{"read?path=" + dir + "/stdout", 200, `{"data":"","offset":13}`},
		{"read?path=" + dir + "/stdout&offset=-1", 200, `{"data":"","offset":13}`},
		{"read?path=" + dir + "/stdout&offset=100", 200, `{"data":"","offset":100}`},
		{"read?path=" + dir + "/stdout&offset=5&length=100", 200, `{"data":"-stdout\n","offset":5}`},
		{"read?path=" + dir + "/stdout&offset=2&length=5", 200, `{"data":"llo-s","offset":2}`},
		{"read?path=" + dir + "/stdout&offset=0&length=0", 200, `{"data":"","offset":0}`},
		{"read?path=" + dir + "/stdout&offset=0&length=-5", 400, "Negative length provided: -5.\n"},
		{"read?path=" + dir + "&offset=0", 400, "Cannot read a directory.\n"},
		{"read?offset=0", 400, "Expecting 'path=value' in query.\n"},
		{"read?path=/frameworks/fw-1/executors/nope/runs/latest/stdout&offset=0", 404, ""},
		{"browse?path=" + dir + "/stdout", 200, "[]"},
		{"browse?path=/frameworks/fw-1/executors/probe", 404, ""},
	}
	for _, tc := range cases {
		resp, err := http.Get(srv.URL + "/files/" + tc.query)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.code || strings.TrimSuffix(string(b), "\n") != strings.TrimSuffix(tc.body, "\n") {
			t.Errorf("%s: %d %q, want %d %q", tc.query, resp.StatusCode, b, tc.code, tc.body)
		}
	}
	resp, err := http.Get(srv.URL + "/files/browse?path=" + dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"path":"`+dir+`/stdout","size":13`) || !strings.Contains(string(b), dir+"/stderr") {
		t.Errorf("browse the sandbox: %d %s", resp.StatusCode, b)
	}
}
