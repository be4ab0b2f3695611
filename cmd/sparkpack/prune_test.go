package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

func TestParseAge(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"90d", 90 * 24 * time.Hour, true},
		{"36h", 36 * time.Hour, true},
		{"30m", 30 * time.Minute, true},
		{"", 0, false},
		{"-1d", 0, false},
		{"1.5d", 0, false},
		{"10s", 0, false}, // under a minute
		{"soon", 0, false},
	}
	for _, tc := range cases {
		got, err := parseAge(tc.in)
		if (err == nil) != tc.ok || (tc.ok && got != tc.want) {
			t.Errorf("parseAge(%q) = %v, %v; want %v (ok %v)", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestPruneCommand(t *testing.T) {
	url := pgtest.URL(t)
	code, out, errOut := runCmd(t, "prune", "--database-url", url, "--older-than", "90d", "--dry-run")
	if code != 0 || !strings.HasPrefix(out, "prune: 0 jobs ended before ") {
		t.Fatalf("prune --dry-run: %d %q %q", code, out, errOut)
	}
	code, _, errOut = runCmd(t, "prune", "--database-url", url)
	if code != 1 || !strings.Contains(errOut, "--older-than") {
		t.Fatalf("prune without --older-than: %d %q", code, errOut)
	}
}
