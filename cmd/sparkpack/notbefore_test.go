package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestNotBeforeFlag: --not-before takes an RFC 3339 time or a duration
// from now; anything else is an error naming the flag.
func TestNotBeforeFlag(t *testing.T) {
	now := time.Date(2026, 11, 22, 0, 0, 30, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2h40m":                     time.Date(2026, 11, 22, 2, 40, 30, 0, time.UTC),
		"2026-11-22T02:40:00Z":      time.Date(2026, 11, 22, 2, 40, 0, 0, time.UTC),
		"2026-11-22T03:40:00+01:00": time.Date(2026, 11, 22, 2, 40, 0, 0, time.UTC),
	} {
		nb, err := parseNotBeforeFlag(in, now)
		if err != nil || !nb.Equal(want) {
			t.Errorf("--not-before %s: %v (%v), want %s", in, nb, err, want)
		}
	}
	if _, err := parseNotBeforeFlag("tomorrow", now); err == nil || !strings.Contains(err.Error(), "--not-before") {
		t.Errorf("bad value: %v", err)
	}
	// In the job JSON it is the notBefore field, an RFC 3339 time.
	nb, _ := parseNotBeforeFlag("2026-11-22T02:40:00Z", now)
	b, _ := json.Marshal(nb)
	if string(b) != `"2026-11-22T02:40:00Z"` {
		t.Errorf("JSON %s", b)
	}
}
