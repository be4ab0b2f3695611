package power

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
)

var t0 = time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// TestStaleness: the view is stale when its last read failed, when none
// answered yet, or when it is older than the bound.
func TestStaleness(t *testing.T) {
	down := errors.New("Mesos GET_AGENTS: 503 No leader elected")
	for _, c := range []struct {
		name  string
		v     View
		stale bool
		why   string
	}{
		{"current", View{ReadAt: at(98)}, false, ""},
		{"at the bound", View{ReadAt: at(85)}, false, ""},
		{"the last read failed", View{ReadAt: at(99), Err: down}, true, "GET_AGENTS) fails: Mesos GET_AGENTS: 503"},
		{"never read", View{}, true, "has not listed the agents yet"},
		{"never read, failing", View{Err: down}, true, "fails"},
		{"too old, no error (a hanging call)", View{ReadAt: at(80)}, true, "is 20s old"},
		// A large cluster's reads are spaced by their cost (16 s apart
		// for a 2 s GET_AGENTS): a view is current until two spacings.
		{"older than the bound, within two spacings", View{ReadAt: at(80), Every: 16 * time.Second}, false, ""},
		{"older than two spacings", View{ReadAt: at(60), Every: 16 * time.Second}, true, "is 40s old"},
		{"short spacings: the bound", View{ReadAt: at(80), Every: 2 * time.Second}, true, "is 20s old"},
	} {
		stale, why := staleness(c.v, at(100), 15*time.Second)
		if stale != c.stale || !strings.Contains(why, c.why) {
			t.Errorf("%s: stale %v (%q), want %v (%q)", c.name, stale, why, c.stale, c.why)
		}
	}
}

// TestSeenFor: the clocks count only what current views showed.
func TestSeenFor(t *testing.T) {
	for _, c := range []struct {
		name       string
		since, now int
		blind      []span
		want       int
	}{
		{"no blind span", 0, 100, nil, 100},
		{"a span inside", 0, 100, []span{{at(10), at(40)}}, 70},
		{"two spans", 0, 100, []span{{at(10), at(20)}, {at(50), at(60)}}, 80},
		{"a span before the clock started", 50, 100, []span{{at(10), at(40)}}, 50},
		{"a span the clock started in", 20, 100, []span{{at(10), at(40)}}, 60},
		{"an open span: blind up to now", 0, 100, []span{{at(70), time.Time{}}}, 70},
		{"blind all along", 10, 100, []span{{at(0), time.Time{}}}, 0},
	} {
		if got := seenFor(at(c.since), at(c.now), c.blind); got != time.Duration(c.want)*time.Second {
			t.Errorf("%s: %s, want %ds", c.name, got, c.want)
		}
	}
}

// TestBlindStep: on a stale view only a power-on not yet asked for goes
// ahead; every other state holds (no drain, no power-off, no timeout).
func TestBlindStep(t *testing.T) {
	for _, c := range []struct {
		r    Record
		want blindAction
	}{
		{Record{State: StateOn}, blindHold},
		{Record{State: StateDraining}, blindHold},
		{Record{State: StateDraining, Failures: 4}, blindHold},
		{Record{State: StatePoweringOff}, blindHold},
		{Record{State: StateOff}, blindHold},
		{Record{State: StateOff, AvoidUntil: at(10)}, blindHold},
		{Record{State: StateBooting}, blindPowerOn},
		{Record{State: StateBooting, Failures: 2}, blindPowerOn},
		{Record{State: StateBooting, Requested: true}, blindHold},
	} {
		if got := blindStep(c.r); got != c.want {
			t.Errorf("%+v: %v, want %v", c.r, got, c.want)
		}
	}
}

// TestBlindSpans: a stale view opens a span at the last current read, a
// current one closes it at its read; old spans are dropped.
func TestBlindSpans(t *testing.T) {
	var b []span
	b = blindSpans(b, false, at(0), at(1), at(0))
	if len(b) != 0 {
		t.Fatalf("a current view opened %v", b)
	}
	b = blindSpans(b, true, at(2), at(4), at(0)) // read at 2 s, failing at 4 s
	b = blindSpans(b, true, at(2), at(6), at(0))
	if want := []span{{from: at(2)}}; !slices.Equal(b, want) {
		t.Fatalf("stale: %v, want %v", b, want)
	}
	b = blindSpans(b, false, at(30), at(31), at(0))
	if want := []span{{at(2), at(30)}}; !slices.Equal(b, want) {
		t.Fatalf("current again: %v, want %v", b, want)
	}
	b = blindSpans(b, true, time.Time{}, at(40), at(0)) // never read (a restart): from now
	b = blindSpans(b, false, at(45), at(46), at(0))
	if want := []span{{at(2), at(30)}, {at(40), at(45)}}; !slices.Equal(b, want) {
		t.Fatalf("%v, want %v", b, want)
	}
	b = blindSpans(b, false, at(50), at(50), at(35)) // no clock from before 35 s
	if want := []span{{at(40), at(45)}}; !slices.Equal(b, want) {
		t.Fatalf("pruned: %v, want %v", b, want)
	}
}

// TestNoPowerOffOnAStaleView (the UAT: power management began draining
// agents 34 s into a Mesos outage, on the view from before it): agents
// idle past OffAfter during an outage are not drained nor powered off,
// a draining one is not deactivated, one deactivated before is not
// powered off, and the outage does not count as idle time: afterwards an
// agent goes off once current views have shown it idle for OffAfter in
// all. A power-on a plan asks for meanwhile goes ahead. The operator is
// told once that decisions are paused, and when they resume.
func TestNoPowerOffOnAStaleView(t *testing.T) {
	r, hook := newLoggedRig(t, Config{}) // OffAfter 1 minute
	a1, a2, a3, a4 := idle("a1", 4), idle("a2", 4), idle("a3", 4), idle("a4", 4)
	view := func(err error, readAt time.Time, agents ...Agent) {
		t.Helper()
		_ = r.m.TickView(context.Background(), View{Agents: agents, ReadAt: readAt, Err: err}, nil)
	}
	// a3 is drained (deactivated, seen so), a4 is off: set them up on
	// current views.
	r.offAfterIdle(a4)
	view(nil, r.now, a1, a2, a3)        // idle timers of a1, a2, a3 start
	r.now = r.now.Add(61 * time.Second) // a3 is past OffAfter ...
	view(nil, r.now, a1, a2, a3)        // ... (a1, a2 too: all drain)
	r.mesos.took()
	// Put a1 and a2 back on, idle for 40 s; a3 stays draining, not yet
	// shown deactivated.
	for _, id := range []string{"a1", "a2"} {
		rec := r.store.recs[id]
		rec.State = StateOn
		r.store.recs[id] = rec
	}
	r.restart()
	r.m.idle["a1"], r.m.idle["a2"] = r.now.Add(-40*time.Second), r.now.Add(-40*time.Second)
	r.m.idle["a3"] = r.now.Add(-40 * time.Second)
	read := r.now
	view(nil, read, a1, a2, a3)
	if s := r.m.StateOf("a1"); s != StateOn {
		t.Fatalf("a1 %s after 40 s idle", s)
	}
	hook.Reset()
	r.mesos.took()
	r.prov.took()

	// The master goes down: GET_AGENTS fails for 5 minutes; the view is
	// the last one (a3 shown deactivated just before, as a3's drain
	// went through).
	down := errors.New("Mesos GET_AGENTS: 503 No leader elected")
	ctx := context.Background()
	if err := r.m.PowerOn(ctx, "a4"); err != nil { // a plan needs a4
		t.Fatal(err)
	}
	for i := 0; i < 150; i++ {
		r.now = r.now.Add(2 * time.Second)
		view(down, read, a1, a2, drained(a3))
	}
	if got := r.mesos.took(); len(got) != 0 {
		t.Errorf("Mesos calls during the outage: %v", got)
	}
	if got := r.prov.took(); !slices.Equal(got, []string{"on a4"}) {
		t.Errorf("provider calls during the outage: %v, want the power-on only", got)
	}
	for id, want := range map[string]State{"a1": StateOn, "a2": StateOn, "a3": StateDraining, "a4": StateBooting} {
		if s := r.store.state(id); s != want {
			t.Errorf("%s is %s after the outage, want %s", id, s, want)
		}
	}
	var notes []string
	var first map[string]any
	for _, e := range hook.AllEntries() {
		if strings.HasPrefix(e.Message, "power management") {
			if first == nil {
				first = e.Data
			}
			notes = append(notes, e.Level.String()+" "+e.Message)
		}
	}
	// 5 minutes of failures: the first, then one each 30 s after.
	if len(notes) != 10 || !strings.HasPrefix(notes[0], "warning power management paused: ") || !strings.Contains(notes[0], "check that the Mesos master") ||
		!strings.HasPrefix(notes[1], "warning power management still paused") {
		t.Fatalf("notices during the outage: %q", notes)
	}
	if f := first; !strings.Contains(f["reason"].(string), "503") || f["view_read_at"] != read.Format(time.RFC3339) {
		t.Errorf("the notice's fields %v", f)
	}
	hook.Reset()

	// The master is back. a2 got work during the outage; a1 is still
	// idle: 40 s seen before, so it goes off 20 s of current views later,
	// not at once. a3's drain goes on (it is idle): powered off on the
	// current view that shows it deactivated and idle. a4 registers.
	read = r.now
	view(nil, read, a1, busy(a2), a3, rebooted(a4))
	if got := r.mesos.took(); !slices.Equal(got, []string{"drain a3"}) {
		t.Errorf("Mesos calls at the first current view: %v, want a3's deactivation only", got)
	}
	if s := r.m.StateOf("a1"); s != StateOn {
		t.Fatalf("a1 is %s at the first current view after the outage: the outage counted as idle time", s)
	}
	if s := r.m.StateOf("a4"); s != StateOn {
		t.Errorf("a4 %s after it registered", s)
	}
	r.now = r.now.Add(18 * time.Second)
	view(nil, r.now, a1, busy(a2), drained(a3), rebooted(a4))
	if s := r.m.StateOf("a1"); s != StateOn {
		t.Fatalf("a1 is %s after 58 s of idle time seen", s)
	}
	if s := r.store.state("a3"); s != StateOff {
		t.Errorf("a3 is %s, want off (deactivated and idle on a current view)", s)
	}
	r.now = r.now.Add(3 * time.Second)
	view(nil, r.now, a1, busy(a2), drained(a3), rebooted(a4))
	if s := r.store.state("a1"); s != StateDraining {
		t.Errorf("a1 is %s after 61 s of idle time seen, want draining", s)
	}
	if s := r.store.state("a2"); s != StateOn {
		t.Errorf("a2, busy, is %s", s)
	}
	resumed := 0
	for _, e := range hook.AllEntries() {
		if e.Level == logrus.InfoLevel && strings.HasPrefix(e.Message, "power management resumed") {
			resumed++
		}
		if strings.Contains(e.Message, "paused") && e.Level == logrus.WarnLevel {
			t.Errorf("a pause notice on a current view: %s", e.Message)
		}
	}
	if resumed != 1 {
		t.Errorf("%d resume notices, want 1", resumed)
	}
}

// TestStaleWithoutErrorIsStale: a view that stopped moving (a GET_AGENTS
// that hangs) is stale once older than StaleAfter: nothing is drained on
// it.
func TestStaleWithoutErrorIsStale(t *testing.T) {
	r := newRig(t, Config{StaleAfter: 10 * time.Second})
	a := idle("a1", 4)
	read := r.now
	_ = r.m.TickView(context.Background(), View{Agents: []Agent{a}, ReadAt: read}, nil)
	for i := 0; i < 60; i++ {
		r.now = r.now.Add(2 * time.Second)
		_ = r.m.TickView(context.Background(), View{Agents: []Agent{a}, ReadAt: read}, nil)
	}
	if got := r.mesos.took(); len(got) != 0 || r.m.StateOf("a1") != StateOn {
		t.Fatalf("on a view 2 minutes old: calls %v, state %s", got, r.m.StateOf("a1"))
	}
}
