package scheduler

import (
	"context"
	"testing"
	"time"
)

// TestRunningReportStartsAtFirstRunning: a RUNNING report made after a
// restart (or a refused report tried again) carries when the driver was
// first seen running (stored with its launch, offers/lifecycle); the run
// starts then, not at the report, so the downtime between is run time in
// the job (startedAt, lastStartedAt) and in its run-history row, which the
// model learns from (docs/learning.md, "How a run's times survive a
// restart"). A start that is not measured, or is after the report (another
// instance's clock), is not believed: the report's time stands.
func TestRunningReportStartsAtFirstRunning(t *testing.T) {
	seen, report, end := t0.Add(10*time.Second), t0.Add(60*time.Second), t0.Add(100*time.Second)
	for _, c := range []struct {
		name        string
		run         RunStart
		wantStart   time.Time
		wantSeconds float64
	}{
		{"first seen running at 10s, reported at 60s", RunStart{Ran: true, At: seen, Measured: true}, seen, 90},
		{"no start known: the report's time", RunStart{}, report, 40},
		{"a launch time is not a running time", RunStart{Ran: true, At: seen}, report, 40},
		{"a start after the report is not believed", RunStart{Ran: true, At: report.Add(time.Second), Measured: true}, report, 40},
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
			if err := core.Report(ctx, "j", Launching, ""); err != nil {
				t.Fatal(err)
			}
			clock.Advance(report.Sub(t0))
			if err := core.ReportRan(ctx, "j", Running, "driver running on agent a1", c.run); err != nil {
				t.Fatal(err)
			}
			got := st.get("j")
			if got.State != Running || got.Attempt != 1 || got.StartedAt == nil || !got.StartedAt.Equal(c.wantStart) ||
				got.LastStartedAt == nil || !got.LastStartedAt.Equal(c.wantStart) {
				t.Fatalf("%s, attempt %d, started %v, last started %v; want RUNNING, 1, %v", got.State, got.Attempt, got.StartedAt, got.LastStartedAt, c.wantStart)
			}
			clock.Advance(end.Sub(report))
			if err := core.Report(ctx, "j", Finished, "driver TASK_FINISHED"); err != nil {
				t.Fatal(err)
			}
			r := st.get("j").EndedRun
			if r == nil || len(m.seen) != 1 {
				t.Fatalf("no run recorded with the end (%+v), model saw %d", r, len(m.seen))
			}
			if !r.StartedAt.Equal(c.wantStart) || r.Seconds != c.wantSeconds || r.RunTimeUnknown || m.seen[0].Seconds != c.wantSeconds {
				t.Fatalf("recorded %+v, model saw %+v; want started %v, %v s", *r, m.seen[0], c.wantStart, c.wantSeconds)
			}
		})
	}
}
