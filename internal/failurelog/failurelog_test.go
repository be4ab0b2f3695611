package failurelog

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestStepTranscript: a run of failures every 250 ms for 70 s is logged
// three times (the first, and after 30 s and 60 s with the count), then
// the recovery once, then nothing while all is well; a new failure is a
// first again.
func TestStepTranscript(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	var s State
	var log []string
	step := func(at time.Duration, failed bool) {
		var v Verdict
		s, v = s.Step(t0.Add(at), failed)
		switch v.Kind {
		case First:
			log = append(log, fmt.Sprintf("%s first", at))
		case Still:
			log = append(log, fmt.Sprintf("%s still %d since %s", at, v.Failures, v.Since.Sub(t0)))
		case Recovered:
			log = append(log, fmt.Sprintf("%s recovered after %d since %s", at, v.Failures, v.Since.Sub(t0)))
		}
	}
	step(0, false)
	for at := time.Second; at <= 71*time.Second; at += 250 * time.Millisecond {
		step(at, true)
	}
	step(72*time.Second, false)
	step(73*time.Second, false)
	step(80*time.Second, true)
	got := strings.Join(log, "\n")
	want := strings.Join([]string{
		"1s first",
		"31s still 121 since 1s",
		"1m1s still 241 since 1s",
		"1m12s recovered after 281 since 1s",
		"1m20s first",
	}, "\n")
	if got != want {
		t.Fatalf("transcript:\n%s\nwant:\n%s", got, want)
	}
}

func TestEveryIsConfigurable(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	s := State{Every: time.Second}
	n := 0
	for i := 0; i < 40; i++ { // 10 s of failures every 250 ms
		var v Verdict
		s, v = s.Step(t0.Add(time.Duration(i)*250*time.Millisecond), true)
		if v.Kind != Silent {
			n++
		}
	}
	if n != 10 { // the first, then one a second
		t.Fatalf("%d lines in 10 s with Every 1s, want 10", n)
	}
}
