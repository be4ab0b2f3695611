package scheduler

import (
	"context"
	"testing"
	"time"
)

// TestRunNeverSeenRunningIsRecorded: a job whose driver ran but which was
// never reported RUNNING (its driver ended while it was LAUNCHING) has its
// run counted in its end's transaction, as a RUNNING report would have:
// one more attempt, its start (the run's best known start, the end when
// none), and a row of the run history handed to the model. A start seen
// running is measured; a launch time or no start at all leaves the run
// time unknown (0 s, RunTimeUnknown). An end from LAUNCHING without a run
// (a launch that never ran) counts nothing, as before; from RUNNING the
// run's start is the reported one.
func TestRunNeverSeenRunningIsRecorded(t *testing.T) {
	launch, seen, end := t0.Add(5*time.Second), t0.Add(10*time.Second), t0.Add(60*time.Second)
	for _, c := range []struct {
		name        string
		running     bool // reported RUNNING at t0 first
		to          State
		run         RunStart
		wantRun     bool
		wantStart   time.Time
		wantSeconds float64
		unknown     bool
		outcome     string
	}{
		{"finished, launched at 5s", false, Finished, RunStart{Ran: true, At: launch}, true, launch, 0, true, RunFinished},
		{"finished, seen running at 10s", false, Finished, RunStart{Ran: true, At: seen, Measured: true}, true, seen, 50, false, RunFinished},
		{"finished, start unknown", false, Finished, RunStart{Ran: true}, true, end, 0, true, RunFinished},
		{"failed and retried, launched at 5s", false, Queued, RunStart{Ran: true, At: launch}, true, launch, 0, true, RunRetried},
		{"measured, start unknown: the run time is not known", false, Finished, RunStart{Ran: true, Measured: true}, true, end, 0, true, RunFinished},
		{"a start after the end is not believed", false, Finished, RunStart{Ran: true, At: end.Add(time.Second), Measured: true}, true, end, 0, true, RunFinished},
		{"never ran", false, Failed, RunStart{}, false, time.Time{}, 0, false, ""},
		{"from RUNNING the reported start wins", true, Finished, RunStart{Ran: true, At: launch}, true, t0, 60, false, RunFinished},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &tableModel{base: map[string]float64{}}
			st := newTestStore()
			clock := newManualClock(t0)
			core, err := New(Config{Model: m, Log: DiscardLogger()}, newTestCluster(agent("a1", 4, 16384, 0.24)), st, clock)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			j := mkJob("j", 2, 1)
			st.add(j)
			if _, err := core.Submit(ctx, j); err != nil {
				t.Fatal(err)
			}
			if n, err := core.Schedule(ctx); err != nil || n != 1 {
				t.Fatalf("schedule: %d, %v", n, err)
			}
			states := []State{Launching}
			if c.running {
				states = append(states, Running)
			}
			for _, s := range states {
				if err := core.Report(ctx, "j", s, ""); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(end.Sub(t0))
			if err := core.ReportRan(ctx, "j", c.to, "driver ended", c.run); err != nil {
				t.Fatal(err)
			}
			got := st.get("j")
			if !c.wantRun {
				if got.Attempt != 0 || got.StartedAt != nil || got.EndedRun != nil || len(m.seen) != 0 {
					t.Fatalf("a launch that never ran was counted: attempt %d, started %v, run %+v, model saw %d", got.Attempt, got.StartedAt, got.EndedRun, len(m.seen))
				}
				return
			}
			if got.Attempt != 1 || got.StartedAt == nil || !got.StartedAt.Equal(c.wantStart) || got.LastStartedAt == nil || !got.LastStartedAt.Equal(c.wantStart) {
				t.Fatalf("attempt %d, started %v, last started %v; want 1, %v", got.Attempt, got.StartedAt, got.LastStartedAt, c.wantStart)
			}
			r := got.EndedRun
			if r == nil || len(m.seen) != 1 {
				t.Fatalf("no run recorded with the end (%+v), model saw %d", r, len(m.seen))
			}
			if r.Attempt != 1 || r.Outcome != c.outcome || !r.StartedAt.Equal(c.wantStart) || !r.EndedAt.Equal(end) ||
				r.Seconds != c.wantSeconds || r.RunTimeUnknown != c.unknown || r.Executors != 2 {
				t.Fatalf("recorded %+v", *r)
			}
		})
	}
}
