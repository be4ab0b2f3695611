package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// A figure that could not be measured (NaN) is written as -1 in --json,
// which encoding/json could not otherwise write at all, and is never
// judged as meeting its target.
func TestResultsWithUnmeasuredFigures(t *testing.T) {
	r := results{SmallStartMs: math.NaN(), PassFullP99Ms: math.Inf(1), QueuesP99Ms: 12.5}
	if _, err := json.Marshal(r); err == nil {
		t.Fatal("encoding/json wrote a NaN: the test no longer shows the problem")
	}
	b, err := json.Marshal(r.finite())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"smallJobStartMs":-1`, `"passFullP99Ms":-1`, `"queuesP99Ms":12.5`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var out strings.Builder
	r.finite().print(&out)
	found := false
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "small job") {
			found = true
			if !strings.HasSuffix(strings.TrimSpace(line), "MISSED") {
				t.Errorf("an unmeasured small-job start is not judged missed: %q", line)
			}
		}
	}
	if !found {
		t.Errorf("no small-job line in:\n%s", out.String())
	}
}
