package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestSubmitAndPlanRefuseFlagsTheyWouldIgnore: a flag that would do nothing
// in the mode given is refused before any request (nothing listens on the
// --server here), naming the flag and what to do instead; --poll is held
// to the 100ms floor of the other commands' --interval; plan's help is
// plan's own, without submit's flags.
func TestSubmitAndPlanRefuseFlagsTheyWouldIgnore(t *testing.T) {
	job := []string{"--server", "http://127.0.0.1:1", "--app-resource", "local:///a.jar", "--main-class", "a.B",
		"--executors", "1", "--executor-cores", "1", "--executor-memory", "1g"}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plan", "--follow"}, 2, "flag provided but not defined: -follow"},
		{[]string{"plan", "--timeout", "1m"}, 2, "flag provided but not defined: -timeout"},
		{[]string{"plan", "-o", "name"}, 1, "a plan has none"},
		{[]string{"submit", "--dry-run", "--follow"}, 1, "--follow follows a submitted job"},
		{[]string{"submit", "--dry-run", "--poll", "2s"}, 1, "--poll follows a submitted job"},
		{[]string{"submit", "--dry-run", "--timeout", "1m"}, 1, "drop --timeout, or drop --dry-run"},
		{[]string{"submit", "--dry-run", "-o", "name"}, 1, "a plan has none"},
		{[]string{"submit", "-o", "json"}, 1, "sparkpack job ID -o json"},
		{[]string{"submit", "-o", "yaml"}, 1, "-o yaml shows a plan"},
		{[]string{"submit", "-o", "wide"}, 1, "-o wide shows a plan"},
		{[]string{"submit", "--follow", "--poll", "0"}, 1, "--poll 0s: want at least 100ms"},
		{[]string{"submit", "--follow", "--poll", "-1s"}, 1, "--poll -1s: want at least 100ms"},
		{[]string{"submit", "--follow", "--timeout", "-1s"}, 1, "--timeout -1s: want a duration >= 0"},
	}
	for _, tc := range cases {
		args := append(append([]string{}, tc.args...), job...)
		code, out, errOut := runCmd(t, args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%v: exit %d, output %q %q; want exit %d saying %q, before any request", tc.args, code, out, errOut, tc.code, tc.want)
		}
	}
	// What each mode does take still gets as far as the server.
	for _, args := range [][]string{{"plan", "-o", "wide"}, {"plan", "-o", "json"}, {"submit", "--dry-run", "-o", "yaml"}, {"submit", "-o", "name", "--follow", "--poll", "100ms"}} {
		if _, _, errOut := runCmd(t, append(append([]string{}, args...), job...)...); !strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%v: refused before asking the server: %q", args, errOut)
		}
	}

	_, helpOut, helpErr := runCmd(t, "plan", "--help")
	help := helpOut + helpErr
	if !strings.Contains(help, "Usage: sparkpack plan") {
		t.Errorf("plan --help does not describe plan:\n%s", help)
	}
	for _, f := range []string{"-follow", "-poll", "-timeout", "-dry-run"} {
		if strings.Contains(help, "\n  "+f+" ") || strings.Contains(help, "\n  "+f+"\n") {
			t.Errorf("plan --help lists submit's %s:\n%s", f, help)
		}
	}
}

// TestViewFlagsThatWouldBeIgnoredAreRefused: a negative --limit (which
// fell back to the server's page) and an output flag given with an -o that
// asks for another output (one of them was ignored) are refused before any
// request, naming both.
func TestViewFlagsThatWouldBeIgnoredAreRefused(t *testing.T) {
	srv := []string{"--server", "http://127.0.0.1:1"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"cluster", "--limit", "-1"}, "--limit -1: want at least 1"},
		{[]string{"queue", "--limit", "-5"}, "--limit -5: want at least 1"},
		{[]string{"jobs", "--json", "-o", "yaml"}, "--json and -o yaml ask for two outputs"},
		{[]string{"jobs", "--json", "-o", "json"}, "--json and -o json ask for two outputs"},
		{[]string{"job", "--json", "-o", "wide", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"}, "--json and -o wide ask for two outputs"},
		{[]string{"usage", "--csv", "-o", "json"}, "--csv and -o json ask for two outputs"},
		{[]string{"usage", "--csv", "--output", "table"}, "--csv and -o table ask for two outputs"},
	} {
		code, out, errOut := runCmd(t, append(append([]string{}, tc.args...), srv...)...)
		if code != 1 || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%v: exit %d, output %q %q; want exit 1 saying %q, before any request", tc.args, code, out, errOut, tc.want)
		}
	}
	// The flags alone, or with the -o they agree with, still ask the server.
	for _, args := range [][]string{{"jobs", "--json"}, {"job", "--json", "-o", "json", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"}, {"usage", "--csv"}, {"usage", "-o", "json"}, {"cluster", "--limit", "3"}} {
		if _, _, errOut := runCmd(t, append(append([]string{}, args...), srv...)...); !strings.Contains(errOut, "127.0.0.1:1") {
			t.Errorf("%v: refused before asking the server: %q", args, errOut)
		}
	}
}

// TestCancelWaitTimeout: cancel --wait --timeout 0 waits as long as the job
// takes to end, as submit --follow --timeout 0 does (it gave up at the
// first look: "still ... after 0s"), and a negative --timeout is refused.
func TestCancelWaitTimeout(t *testing.T) {
	code, _, errOut := runCmd(t, "cancel", "--server", "http://127.0.0.1:1", "--wait", "--timeout", "-5s", "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f")
	if code != 1 || !strings.Contains(errOut, "--timeout -5s: want a duration >= 0") || strings.Contains(errOut, "127.0.0.1:1") {
		t.Errorf("cancel --timeout -5s: exit %d %q; want a refusal before any request", code, errOut)
	}

	server := startServe(t)
	code, out, errOut := runCmd(t, append(append([]string{"submit", "--server", server}, jobFlags...), "--executor-memory", "1g")...)
	if code != 0 {
		t.Fatalf("submit: %d %q", code, errOut)
	}
	id := strings.TrimSpace(out)
	cf := clientFlags{server: server}
	cl, err := cf.client()
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		j   scheduler.Job
		err error
	}
	done := make(chan result, 1)
	go func() {
		j, err := waitJobEnd(context.Background(), cl, id, 0)
		done <- result{j, err}
	}()
	// The job waits (serve has no Mesos here): nothing ends it yet.
	select {
	case r := <-done:
		t.Fatalf("waitJobEnd with timeout 0 returned while the job waits: %v, %v", r.j.State, r.err)
	case <-time.After(2 * time.Second):
	}
	req, _ := http.NewRequest(http.MethodDelete, server+"/api/v1/jobs/"+id, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case r := <-done:
		if r.err != nil || r.j.State != scheduler.Cancelled {
			t.Fatalf("waitJobEnd: %v, %v; want the job CANCELLED", r.j.State, r.err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("waitJobEnd did not see the job end")
	}
}
