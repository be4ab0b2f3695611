package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// pass.go (docs/testing.md, "Mutation testing"); expected figures by hand.

import (
	"slices"
	"testing"
	"time"
)

// passStats keeps the PassStat of every pass.
type passStats struct {
	NopObserver
	got *[]PassStat
}

func (o passStats) PassDone(s PassStat) { *o.got = append(*o.got, s) }

// TestPassStatWaiting: a pass's Waiting counts both queues. On one 4-cpu
// agent, four jobs of one 4-cpu executor: deadline d1 starts (earliest
// deadline), deadline d2 waits in the deadline queue, regular r1 and r2
// wait behind it in the job queue: 1 + 2 = 3 waiting, 1 started.
func TestPassStatWaiting(t *testing.T) {
	var stats []PassStat
	h := newHarness(t, Config{Observer: passStats{got: &stats}}, agent("a1", 4, 16384, 0.24))
	h.submit(mkJob("d1", 1, 4, withDeadline(time.Hour)), mkJob("d2", 1, 4, withDeadline(2*time.Hour)),
		mkJob("r1", 1, 4), mkJob("r2", 1, 4, submittedAt(time.Second)))
	h.schedule()
	if len(stats) != 1 {
		t.Fatalf("%d pass stats, want 1", len(stats))
	}
	if s := stats[0]; s.Waiting != 3 || s.Started != 1 {
		t.Fatalf("pass stat %+v, want 3 waiting, 1 started", s)
	}
}

// TestPassRemembersForTenMinutes: a full pass forgets a cancelled job and
// a job it placed (which has ended since) once more than 10 minutes
// (pass.go's comment: "how long the pass remembers a cancelled job") have
// gone since: Unknown does not name them before, and names them after.
// "c" is cancelled and "p" placed by the passes at t0; "p" then ends.
func TestPassRemembersForTenMinutes(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		want  []string
	}{
		{time.Minute, nil},
		{10 * time.Minute, nil},
		{10*time.Minute + time.Nanosecond, []string{"c", "p"}},
	} {
		t.Run(c.after.String(), func(t *testing.T) {
			h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
			h.submit(mkJob("p", 1, 4), mkJob("c", 1, 4, submittedAt(time.Second)))
			h.schedule() // p placed at t0, c waits
			h.cancel("c", "no longer needed")
			h.schedule() // the pass at t0 forgets c from its queue
			if err := h.finish("p"); err != nil {
				t.Fatal(err)
			}
			h.clock.Advance(c.after)
			h.core.ClusterChanged() // a full pass
			h.schedule()
			if got := h.core.Unknown([]string{"c", "p"}); !slices.Equal(got, c.want) {
				t.Fatalf("%s later: Unknown = %v, want %v", c.after, got, c.want)
			}
		})
	}
}
