package main

import (
	"slices"
	"testing"
	"time"
)

func TestRecentIDs(t *testing.T) {
	now := time.Unix(0, 0)
	r := newRecentIDs(30 * time.Second)
	r.nowFunc = func() time.Time { return now }
	r.Reset()
	r.Add("a")
	r.Add("b")
	steps := []struct {
		advance time.Duration
		add     []string
		ask     []string
		unknown []string
	}{
		{0, nil, []string{"a", "x"}, []string{"x"}},        // a was handed over: skipped
		{0, nil, []string{"a"}, []string{"a"}},             // a notification comes once: a is forgotten
		{31 * time.Second, []string{"c"}, nil, nil},        // b moves to the older generation
		{0, nil, []string{"b", "c"}, nil},                  // both still remembered
		{31 * time.Second, []string{"d"}, nil, nil},        // rotation
		{31 * time.Second, nil, []string{"d"}, []string{}}, // d in the older generation
		{61 * time.Second, []string{"e"}, nil, nil},
		{61 * time.Second, nil, []string{"e"}, []string{"e"}}, // two rotations: forgotten
	}
	for i, s := range steps {
		now = now.Add(s.advance)
		for _, id := range s.add {
			r.Add(id)
		}
		if s.ask == nil {
			continue
		}
		got := r.Unknown(s.ask)
		if !slices.Equal(got, s.unknown) && !(len(got) == 0 && len(s.unknown) == 0) {
			t.Errorf("step %d: Unknown(%v) = %v, want %v", i, s.ask, got, s.unknown)
		}
	}
	r.Add("f")
	r.Reset()
	if got := r.Unknown([]string{"f"}); len(got) != 1 {
		t.Errorf("after Reset, Unknown(f) = %v, want [f]", got)
	}
}
