package main

import (
	"strings"
	"testing"
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
