package simulate

import (
	"os"
	"strings"
	"testing"
)

// TestCommandWarnsOfIgnoredFlags: a flag that only modifies an option that
// is off (--boot-time without --power-off-after, ...) used to be accepted
// and silently ignored; the run now says so on stderr, --quiet or not,
// naming the flag and what would make it count. With the option on, no
// warning.
func TestCommandWarnsOfIgnoredFlags(t *testing.T) {
	base := []string{"--trace", tinyTrace(t, 3), "--quiet", "--policies", "bfd", "--format", "json"}
	cases := []struct {
		args     []string
		flag, do string // the warning's start and what it says to do; "": no warning expected
	}{
		{[]string{"--boot-time", "5m"}, "--boot-time has no effect", "add --power-off-after"},
		{[]string{"--boot-aware=false"}, "--boot-aware has no effect", "add --power-off-after"},
		{[]string{"--power-off-after", "2m", "--boot-time", "5m", "--boot-aware=false"}, "", ""},
		{[]string{"--miss-cost", "5"}, "--miss-cost has no effect", "--warm-pool"},
		{[]string{"--power-off-after", "2m", "--warm-pool", "--miss-cost", "5"}, "", ""},
		{[]string{"--estimate-error", "2"}, "--estimate-error has no effect", "add --estimates user or learned"},
		{[]string{"--estimates", "user", "--estimate-error", "2"}, "", ""},
		{[]string{"--estimates", "user", "--learned-decisions", "told"}, "--learned-decisions has no effect", "add --estimates learned"},
		{[]string{"--estimates", "learned", "--learned-decisions", "told"}, "", ""},
		{[]string{"--preempt-protect", "5m"}, "--preempt-protect has no effect", "add --preemption"},
		{[]string{"--preempt-max-share", "0.1"}, "--preempt-max-share has no effect", "add --preemption"},
		{[]string{"--max-preemptions", "1"}, "--max-preemptions has no effect", "add --preemption"},
		{[]string{"--preemption", "none,mdf", "--preempt-protect", "5m", "--max-preemptions", "1"}, "", ""},
		{[]string{"--ilp-time-limit", "1s"}, "--ilp-time-limit has no effect", "add ilp to --policies"},
		{[]string{"--policies", "ilp@fifo", "--ilp-time-limit", "1s"}, "", ""},
		{nil, "", ""},
		{[]string{"--compare-default"}, "--compare-default prints its verdict", "--format table or markdown"},
		{[]string{"--compare-default", "--format", "csv"}, "--compare-default prints its verdict", "--format table or markdown"},
		{[]string{"--compare-default", "--format", "markdown"}, "", ""},
		// Only deadline jobs are submitted ahead (2026-11-27: said nothing).
		{[]string{"--deadline-fraction", "0", "--not-before-lead", "5m"}, "--not-before-lead has no effect with --deadline-fraction 0", "give --deadline-fraction above 0"},
		{[]string{"--deadline-fraction", "0.5", "--not-before-lead", "5m"}, "", ""},
		{[]string{"--deadline-fraction", "0", "--not-before-lead", "0"}, "", ""}, // 0: off, as asked
	}
	// A teams file: --teams without --team-mix changes nothing (every job
	// in the default team); a --team-mix team the file does not list runs
	// unconfigured, as a misspelt one would.
	teamsFile := t.TempDir() + "/teams"
	if err := os.WriteFile(teamsFile, []byte("analytics weight=2\nml max-cpus=24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, []struct {
		args     []string
		flag, do string
	}{
		{[]string{"--teams", teamsFile}, "--teams has no effect", "add --team-mix"},
		{[]string{"--teams", teamsFile, "--team-mix", "analytics=1,ml=1,-=1"}, "", ""},
		{[]string{"--team-mix", "analytics=1,data=1"}, "", ""},
		{[]string{"--teams", teamsFile, "--team-mix", "analytcs=1,ml=1"}, `--team-mix: team "analytcs" is not in the teams file`, "check the name"},
	}...)
	for _, c := range cases {
		_, stderr, err := runCommand(t, append(append([]string{}, base...), c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if c.flag == "" {
			if strings.Contains(stderr, "warning") {
				t.Errorf("%v: unexpected warning %q", c.args, stderr)
			}
			continue
		}
		if !strings.Contains(stderr, "simulate: warning: "+c.flag) || !strings.Contains(stderr, c.do) {
			t.Errorf("%v: stderr %q does not warn %q and say to %q", c.args, stderr, c.flag, c.do)
		}
	}
}

// TestCommandRefusesAnEmptyWindow: a window with no submission (hour 11
// of the FB-2009 trace; here hour 1 of a trace of three jobs in the first
// 30 s) ran no job and printed a row of zeros, met 0% and $0, as if it
// were a result. It is refused naming the window and what to change,
// before any window runs and before --job-log is written.
func TestCommandRefusesAnEmptyWindow(t *testing.T) {
	trace := tinyTrace(t, 3)
	for _, args := range [][]string{{"--hour", "1"}, {"--hours", "0,1"}, {"--from", "1h"}} {
		logPath := t.TempDir() + "/jobs.csv"
		out, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet", "--policies", "bfd", "--job-log", logPath}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "no job of tiny.tsv is submitted") || !strings.Contains(err.Error(), "choose another --hour") {
			t.Errorf("%v: err %v, out %q; want the empty window refused", args, err, out)
		}
		if _, serr := os.Stat(logPath); serr == nil {
			t.Errorf("%v: --job-log written for a refused run", args)
		}
	}
	if _, _, err := runCommand(t, "--trace", trace, "--quiet", "--policies", "bfd", "--hour", "0"); err != nil {
		t.Errorf("hour 0 refused: %v", err)
	}
	// An empty trace file: said as such, not "choose another --hour".
	empty := t.TempDir() + "/empty.tsv"
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCommand(t, "--trace", empty, "--quiet", "--policies", "bfd"); err == nil || !strings.HasPrefix(err.Error(), "--trace "+empty+" holds no job: ") {
		t.Errorf("empty trace: %v", err)
	}
}

// TestCommandWarnsOfFewerJobsThanAsked: --sample 5 (or --jobs 5) on a
// window of 3 submissions replays the 3, as before, and now says so; 3 of
// 3 says nothing.
func TestCommandWarnsOfFewerJobsThanAsked(t *testing.T) {
	trace := tinyTrace(t, 3)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "5"}, "simulate: warning: --sample 5: hour 0 has only 3 submissions; all 3 are replayed"},
		{[]string{"--jobs", "5"}, "simulate: warning: --jobs 5: hour 0 has only 3 submissions; all 3 are replayed"},
		{[]string{"--sample", "3"}, ""},
		{[]string{"--jobs", "2"}, ""},
	} {
		out, stderr, err := runCommand(t, append([]string{"--trace", trace, "--quiet", "--policies", "bfd", "--hour", "0", "--format", "csv"}, c.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if c.want == "" && stderr != "" || c.want != "" && !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q, want %q", c.args, stderr, c.want)
		}
		if rows := strings.Count(out, "\n"); rows != 2 {
			t.Errorf("%v: %d CSV lines, want a header and one row", c.args, rows)
		}
	}
}

// TestCommandSuggestsNearFlags: a misspelt flag (--policy, as an operator
// reading "the policy flag" types it) was refused with "see --help" only;
// the error now names the flags it is close to. A flag near nothing gets
// no suggestion.
func TestCommandSuggestsNearFlags(t *testing.T) {
	for _, c := range []struct{ flag, want string }{
		{"--policy", "(did you mean --policies? see --help)"},
		{"--job-logs", "(did you mean --job-log? see --help)"},
		{"--warmpool", "(did you mean --warm-pool? see --help)"},
		{"--seeed", "(did you mean --seed or --seeds? see --help)"},
		{"--zzzzzzzz", "flag provided but not defined: -zzzzzzzz (see --help)"},
	} {
		_, _, err := runCommand(t, c.flag, "1")
		if err == nil || !strings.HasSuffix(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to end %q", c.flag, err, c.want)
		}
	}
	if d := editDistance("policy", "policies"); d != 3 {
		t.Errorf("editDistance(policy, policies) = %d, want 3 (y to i, e, s)", d)
	}
}
