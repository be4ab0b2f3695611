package simulate

// Tests of the replayed windows, seeds, offsets and the trace's path
// (issue 33); expected values by hand.

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// parsedFlags parses args as the command does.
func parsedFlags(t *testing.T, args ...string) (*flags, *flag.FlagSet, map[string]bool) {
	t.Helper()
	f := &flags{}
	fs := newFlagSet(f)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return f, fs, set
}

// TestWindowsByHand: the windows of --hour, --hours, --from/--to, their
// labels and bounds (0 and 23 are hours, -1 and 24 are not).
func TestWindowsByHand(t *testing.T) {
	end := time.Duration(math.MaxInt64)
	for _, c := range []struct {
		args []string
		want []window
	}{
		{nil, []window{{Label: "[00:00:00, end)", Hour: -1, From: 0, To: end}}},
		{[]string{"--hour", "0"}, []window{{Label: "hour 0", Hour: 0, From: 0, To: time.Hour}}},
		{[]string{"--hour", "23"}, []window{{Label: "hour 23", Hour: 23, From: 23 * time.Hour, To: 24 * time.Hour}}},
		{[]string{"--from", "90", "--to", "1h"}, []window{{Label: "[00:01:30, 01:00:00)", Hour: -1, From: 90 * time.Second, To: time.Hour}}},
		{[]string{"--from", "10", "--to", "10.5"}, []window{{Label: "[00:00:10, 00:00:11)", Hour: -1, From: 10 * time.Second, To: 10500 * time.Millisecond}}},
		{[]string{"--to", "2h"}, []window{{Label: "[00:00:00, 02:00:00)", Hour: -1, From: 0, To: 2 * time.Hour}}},
		{[]string{"--hours", "0, 23,5"}, []window{
			{Label: "hour 0", Hour: 0, From: 0, To: time.Hour},
			{Label: "hour 23", Hour: 23, From: 23 * time.Hour, To: 24 * time.Hour},
			{Label: "hour 5", Hour: 5, From: 5 * time.Hour, To: 6 * time.Hour}}},
	} {
		f, fs, set := parsedFlags(t, c.args...)
		got, err := f.windows(fs, set)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%v: %+v, want %+v", c.args, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%v: window %d %+v, want %+v", c.args, i, got[i], c.want[i])
			}
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--hour", "24"}, "--hour 24 not in 0..23"},
		{[]string{"--hour", "-1"}, "--hour -1 not in 0..23"},
		{[]string{"--hour", "1", "--to", "3h"}, "--hour or --from/--to"},
		{[]string{"--hour", "1", "--from", "0"}, "--hour or --from/--to"},
		{[]string{"--from", "10", "--to", "10"}, "--to 10 is not after --from 10"},
		{[]string{"--from", "20", "--to", "10"}, "is not after"},
		{[]string{"--from", "x"}, "--from"},
		{[]string{"--to", "x"}, "--to"},
		{[]string{"--hours", "24"}, `"24" is not an hour`},
		{[]string{"--hours", "-1"}, `"-1" is not an hour`},
		{[]string{"--hours", "1,x"}, `"x" is not an hour`},
		{[]string{"--hours", "0,5, 0"}, "hour 0 is given twice"}, // was run twice, aggregated as "seeds 1,1"
		{[]string{"--hours", "1", "--hour", "1"}, "--hours or --hour/--from/--to"},
		{[]string{"--hours", "1", "--from", "0"}, "--hours or --hour/--from/--to"},
		{[]string{"--hours", "1", "--to", "1h"}, "--hours or --hour/--from/--to"},
	} {
		f, fs, set := parsedFlags(t, c.args...)
		if _, err := f.windows(fs, set); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// TestParseSeedsByHand: single seeds, ranges with both ends, at most 1,000
// seeds a range, and the largest seeds without wrapping.
func TestParseSeedsByHand(t *testing.T) {
	for s, want := range map[string][]uint64{
		"7":   {7},
		"5-5": {5},
		"2-4": {2, 3, 4},
		"18446744073709551614-18446744073709551615": {18446744073709551614, 18446744073709551615},
	} {
		got, err := parseSeeds(s)
		if err != nil || len(got) != len(want) {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
			continue
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%q: %v, want %v", s, got, want)
				break
			}
		}
	}
	if got, err := parseSeeds("1-1000"); err != nil || len(got) != 1000 || got[999] != 1000 {
		t.Errorf("1-1000 (1,000 seeds): %d seeds, %v", len(got), err)
	}
	for _, bad := range []string{"1-1001", "5-4", "x", "1-x", "-3", "", "1-5,3", "2,2"} {
		if got, err := parseSeeds(bad); err == nil {
			t.Errorf("%q accepted: %d seeds", bad, len(got))
		}
	}
}

// TestParseOffsetByHand: seconds in [0, MaxTraceSeconds] or a duration >= 0.
func TestParseOffsetByHand(t *testing.T) {
	for s, want := range map[string]time.Duration{
		"0":         0,
		"90.5":      90500 * time.Millisecond,
		"1h30m":     90 * time.Minute,
		"0s":        0,
		"315360000": 315360000 * time.Second, // 10 years, the largest
	} {
		if got, err := parseOffset(s); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", s, got, err, want)
		}
	}
	for _, bad := range []string{"-1", "-0.001", "315360000.5", "NaN", "-1h", "soon"} {
		if got, err := parseOffset(bad); err == nil {
			t.Errorf("%q accepted: %v", bad, got)
		}
	}
	if workload.MaxTraceSeconds != 315360000 {
		t.Fatalf("MaxTraceSeconds is %d: the cases above assume 10 years", workload.MaxTraceSeconds)
	}
}

// TestFmtOffsetByHand: hh:mm:ss rounded to the second, "end" for no end.
func TestFmtOffsetByHand(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                       "00:00:00",
		3725*time.Second + 600*time.Millisecond: "01:02:06",
		25*time.Hour + 59*time.Second:           "25:00:59",
		time.Duration(math.MaxInt64):            "end",
		time.Duration(math.MaxInt64 - 1):        "2562047:47:16",
	} {
		if got := fmtOffset(d); got != want {
			t.Errorf("fmtOffset(%v) = %q, want %q", d, got, want)
		}
	}
}

// TestResolveTraceByHand: a given path as it is; else DefaultTrace from
// the working directory, else from the nearest folder above it with a
// go.mod whose ../shared/traces holds the trace; else an error.
func TestResolveTraceByHand(t *testing.T) {
	if got, err := resolveTrace("some/file.tsv"); err != nil || got != "some/file.tsv" {
		t.Errorf("given: %q %v", got, err)
	}
	root := t.TempDir()
	repo := filepath.Join(root, "repo")
	deep := filepath.Join(repo, "sub", "dir")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(deep, 0o755))
	must(os.MkdirAll(filepath.Join(root, "shared", "traces"), 0o755))
	must(os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644))
	// A go.mod on the way up without the trace beside it: looked past.
	must(os.WriteFile(filepath.Join(repo, "sub", "go.mod"), []byte("module y\n"), 0o644))
	trace := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(DefaultTrace, "../")))
	must(os.WriteFile(trace, []byte("j0\t0\t0\t0\t0\t0\n"), 0o644))

	t.Chdir(deep)
	got, err := resolveTrace("")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(repo, filepath.FromSlash(DefaultTrace)); got != want {
		t.Errorf("from %s: %q, want %q", deep, got, want)
	}
	t.Chdir(repo)
	if got, err := resolveTrace(""); err != nil || got != DefaultTrace {
		t.Errorf("from the repository root: %q %v, want %q", got, err, DefaultTrace)
	}
	elsewhere := t.TempDir()
	t.Chdir(elsewhere)
	if got, err := resolveTrace(""); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("from %s: %q %v, want not found", elsewhere, got, err)
	}
}
