package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestJobPrefixSeesEveryMatch: a prefix or name is matched against every
// job the search finds, not only its first page. Here the jobs whose
// names contain "43" fill more than a page, between two jobs whose ids
// start with 43: "43" fits both (it was taken for the newer one alone,
// which cancel would then have stopped), and the old job's exact name
// still finds it. A search with more matches than the pages read is
// refused, not guessed.
func TestJobPrefixSeesEveryMatch(t *testing.T) {
	server := startServe(t)
	post := func(id, name string) {
		t.Helper()
		body := fmt.Sprintf(`{"id":%q,"name":%q,"app":{"appResource":"local:///a.jar","mainClass":"a.B"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`, id, name)
		resp, err := http.Post(server+"/api/v1/jobs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 201 {
			t.Fatalf("POST %s: %d", name, resp.StatusCode)
		}
	}
	const older, newer = "43000000-0000-4000-8000-000000000001", "43000000-0000-4000-8000-000000000002"
	post(older, "nightly")
	for i := range 60 {
		post(fmt.Sprintf("aa000000-0000-4000-8000-%012d", i), fmt.Sprintf("nightly-43-%d", i))
	}
	post(newer, "") // unnamed: listed as "ID (STATE)", not "ID (, STATE)"

	code, out, errOut := runCmd(t, "job", "--server", server, "-o", "name", "43")
	if code != 1 || !strings.Contains(errOut, `"43" fits 2 jobs`) || !strings.Contains(errOut, older) || !strings.Contains(errOut, newer) {
		t.Errorf("job 43: exit %d %q %q; want both jobs whose ids start with 43", code, out, errOut)
	}
	if strings.Contains(errOut, "(, ") {
		t.Errorf("job 43: %q lists the unnamed job with an empty name", errOut)
	}
	code, out, errOut = runCmd(t, "job", "--server", server, "-o", "name", "nightly")
	if code != 0 || strings.TrimSpace(out) != older {
		t.Errorf("job nightly: exit %d %q %q; want %s", code, out, errOut, older)
	}

	pages, size := resolvePages, resolvePageSize
	resolvePages, resolvePageSize = 2, 20
	t.Cleanup(func() { resolvePages, resolvePageSize = pages, size })
	code, out, errOut = runCmd(t, "cancel", "--server", server, "nightly")
	if code != 1 || !strings.Contains(errOut, `more than 40 jobs match "nightly"`) {
		t.Errorf("cancel nightly past the pages read: exit %d %q %q; want a refusal", code, out, errOut)
	}
}

// TestServerThatIsNotSparkpack: --server given as the REST API's URL the
// demo prints (with /api/v1/jobs), or pointing at another service (the
// Mesos master's port), says what --server should be instead of passing
// on a bare "404 page not found".
func TestServerThatIsNotSparkpack(t *testing.T) {
	code, _, errOut := runCmd(t, "jobs", "--server", "http://127.0.0.1:1/api/v1/jobs")
	if code != 1 || !strings.Contains(errOut, "holds the API's path: give sparkpack's base URL, http://127.0.0.1:1") {
		t.Errorf("--server with the API's path: exit %d %q", code, errOut)
	}
	m, err := mesossim.New(mesossim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	mesos := httptest.NewServer(m.Handler())
	defer mesos.Close()
	for _, args := range [][]string{{"jobs"}, {"cluster"}, {"job", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"}, {"logs", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"}, {"plan", "--app-resource", "local:///a.jar", "--main-class", "a.B", "--executors", "1", "--executor-cores", "1", "--executor-memory", "1g"}} {
		code, out, errOut := runCmd(t, append(args, "--server", mesos.URL)...)
		if code != 1 || !strings.Contains(errOut, "this is not sparkpack's API answering: is "+mesos.URL+" sparkpack's address") {
			t.Errorf("%v against the Mesos master: exit %d %q %q; want the hint about --server", args, code, out, errOut)
		}
	}
}
