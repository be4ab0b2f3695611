package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// teams.go's changed lines (tenth session; docs/testing.md, "Mutation
// testing"); the expected counts are derived by hand in the comments.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// TestHeldDeadlineCountInIncrementalPass: in a pass that is not full, the
// deadline queue's entries the pass does not look at are still counted
// among the deadline jobs regular jobs wait behind, unless they are out
// of the count: held by their team's maximum (teamPass.heldDeadline) or
// waiting by choice at their last look (passInput.deferredOut). An entry
// is taken out once: one held at its team's maximum at its last look
// (not by choice) through heldDeadline, one waiting for its start time
// (by choice) through deferredOut only. Counting it in both would let
// regular jobs past another deadline job; counting it in neither would
// keep them behind a job that cannot start.
//
// Team a (max 6 cpus) holds 5 (ra: 2 executors of 2 cpus, a 1-cpu
// driver); d-a (the same size) would take it to 10. d-b (team b, 4
// executors of 4 cpus and a driver: 17 cpus) does not fit the 16-cpu
// agent. The third pass, after r-c (team c, 1 cpu) is submitted, looks
// at r-c alone: deadlineLeft = queued - heldDeadline - deferredOut.
func TestHeldDeadlineCountInIncrementalPass(t *testing.T) {
	dA := func(opts ...jobOpt) Job {
		return mkJob("d-a", 2, 2, append([]jobOpt{inTeam("a"), withDeadline(time.Hour), submittedAt(time.Second)}, opts...)...)
	}
	dB := mkJob("d-b", 4, 4, inTeam("b"), withDeadline(2*time.Hour), submittedAt(2*time.Second))
	for _, c := range []struct {
		name     string
		deadline []Job
		reasons  map[string]string // after the second pass
		rcStarts bool
	}{{
		// 1 - 1 (held, not by choice) - 0 = 0: r-c starts.
		name:     "held at its team's maximum: out of the count through heldDeadline",
		deadline: []Job{dA()},
		reasons:  map[string]string{"d-a": "team a at its cpu limit"},
		rcStarts: true,
	}, {
		// 2 - 1 - 0 = 1: r-c waits behind d-b.
		name:     "held at its team's maximum beside a deadline job waiting for room",
		deadline: []Job{dA(), dB},
		reasons:  map[string]string{"d-a": "team a at its cpu limit", "d-b": "does not fit now"},
	}, {
		// 1 - 0 - 1 (by choice) = 0: r-c starts.
		name:     "waiting for its start time: out of the count through deferredOut",
		deadline: []Job{dA(withNotBefore(10 * time.Minute))},
		reasons:  map[string]string{"d-a": "waiting for its start time"},
		rcStarts: true,
	}, {
		// 2 - 0 - 1 = 1 (not 2 - 1 - 1 = 0): r-c waits behind d-b.
		name:     "waiting for its start time beside a deadline job waiting for room: counted out once",
		deadline: []Job{dA(withNotBefore(10 * time.Minute)), dB},
		reasons:  map[string]string{"d-a": "waiting for its start time", "d-b": "does not fit now"},
	}, {
		// 1 - 0 - 0 = 1: r-c waits behind d-b (control: the count is not always 0).
		name:     "a deadline job waiting for room alone",
		deadline: []Job{dB},
		reasons:  map[string]string{"d-b": "does not fit now"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			holder := &teams.Holder{}
			holder.Set(teamsOf(t, "a max-cpus=6"))
			var stats []PassStat
			h := newHarness(t, Config{Policy: "bfd", Teams: holder, Observer: passStats{got: &stats}}, agent("a1", 16, 65536, 0.24))
			h.submit(mkJob("ra", 2, 2, inTeam("a")))
			if n := h.schedule(); n != 1 {
				t.Fatalf("first pass started %d, want ra", n)
			}
			h.submit(c.deadline...)
			if n := h.schedule(); n != 0 {
				t.Fatalf("second pass started %d, want none", n)
			}
			for id, want := range c.reasons {
				if j := h.store.get(id); j.State != Queued || !strings.HasPrefix(j.WaitingReason, want) {
					t.Fatalf("after the second pass: %s %s %q, want it waiting with %q", id, j.State, j.WaitingReason, want)
				}
			}
			h.submit(mkJob("r-c", 1, 1, inTeam("c"), submittedAt(3*time.Second)))
			n := h.schedule()
			if last := stats[len(stats)-1]; last.Full {
				t.Fatalf("the third pass was full: %+v", last)
			}
			rc := h.store.get("r-c")
			switch {
			case c.rcStarts && n != 1:
				t.Fatalf("r-c %s %q, want it started", rc.State, rc.WaitingReason)
			case !c.rcStarts && (n != 0 || !strings.HasPrefix(rc.WaitingReason, "deadline jobs first")):
				t.Fatalf("r-c %s %q (%d started), want it waiting behind the deadline jobs", rc.State, rc.WaitingReason, n)
			}
		})
	}
}

// TestHeldDeadlineCountNotLookedAtStartTime: an entry the pass does not
// look at is counted out by what it waited for at its last look, not by
// its start time: one held for its team's budget then (not by choice),
// whose budget is no longer spent and whose start time is still ahead,
// is out of the count as held at its team's maximum (counted out by
// neither, it would keep regular jobs waiting until the next full pass).
// Its start time alone takes a job out of the count only when the pass
// looks at it (it then waits by choice).
//
// Team a (max 10 cpus) holds 6; d1 (5 cpus) would take it to 11. An
// incremental pass looks at r1 alone: 1 queued - 1 held - 0 deferred = 0
// deadline jobs left, so r1 starts.
func TestHeldDeadlineCountNotLookedAtStartTime(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	dl := entriesOf(mkJob("d1", 2, 2, inTeam("a"), withDeadline(time.Hour), withNotBefore(10*time.Minute)))
	dl[0].wait = waitState{kind: waitText, text: "team a over its daily budget $5.00"} // its last look
	regular := entriesOf(mkJob("r1", 1, 1, inTeam("c")))
	in := passInput{now: t0, snap: snapOf([]placement.Agent{agent("a1", 16, 65536, 0.24)}, "a1=10"),
		deadlineAll: dl, deadlineQueued: 1, regular: regular, regularFresh: regular,
		running: []runningJob{holding("ra", "a", 6)}, teams: teamsOf(t, "a max-cpus=10")}
	if got, want := describe(d.decide(in).decisions, 0), []string{"start r1 on a1x1"}; !slices.Equal(got, want) {
		t.Errorf("\n got  %q\n want %q", got, want)
	}
}
