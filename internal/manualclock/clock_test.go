package manualclock

import (
	"testing"
	"time"
)

func fired(ch <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-ch:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestClock(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	c := New(t0)
	if !c.Now().Equal(t0) {
		t.Fatalf("now %v", c.Now())
	}
	if at, ok := fired(c.After(0)); !ok || !at.Equal(t0) {
		t.Fatal("After(0) does not fire at once")
	}
	a := c.After(time.Minute)
	b := c.After(2 * time.Minute)
	c.Advance(59 * time.Second)
	if _, ok := fired(a); ok {
		t.Fatal("fired early")
	}
	c.Advance(time.Second)
	if at, ok := fired(a); !ok || !at.Equal(t0.Add(time.Minute)) {
		t.Fatalf("at a minute: %v %v", at, ok)
	}
	c.Set(t0) // never backwards
	if !c.Now().Equal(t0.Add(time.Minute)) {
		t.Fatalf("went back to %v", c.Now())
	}
	if _, ok := fired(b); ok {
		t.Fatal("b fired early")
	}
	c.Set(t0.Add(time.Hour))
	if at, ok := fired(b); !ok || !at.Equal(t0.Add(time.Hour)) {
		t.Fatalf("b: %v %v (it fires with the time the clock was set to)", at, ok)
	}
	c.Advance(-time.Hour)
	if !c.Now().Equal(t0.Add(time.Hour)) {
		t.Fatalf("a negative advance moved it to %v", c.Now())
	}
}
