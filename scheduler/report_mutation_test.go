package scheduler

import (
	"context"
	"testing"
	"time"

	logtest "github.com/sirupsen/logrus/hooks/test"
)

// TestReportRunningCountsAttempts: a run of the application starts when
// the job is reported RUNNING, not LAUNCHING: only then does the attempt
// count grow and the start times get set (the first start kept, the last
// one moved on a rerun).
func TestReportRunningCountsAttempts(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("j", 1, 2))
	h.schedule()
	type want struct {
		attempt       int
		started, last time.Duration // -1: not set
	}
	at := func(d time.Duration) *time.Time {
		if d < 0 {
			return nil
		}
		x := t0.Add(d)
		return &x
	}
	same := func(a, b *time.Time) bool { return (a == nil) == (b == nil) && (a == nil || a.Equal(*b)) }
	for i, step := range []struct {
		advance time.Duration
		to      State
		want    want
	}{
		{time.Minute, Launching, want{0, -1, -1}},
		{2 * time.Minute, Running, want{1, 3 * time.Minute, 3 * time.Minute}},
		{10 * time.Minute, Queued, want{1, 3 * time.Minute, 3 * time.Minute}}, // a retry
		{0, "", want{1, 3 * time.Minute, 3 * time.Minute}},                    // schedule again
		{time.Minute, Launching, want{1, 3 * time.Minute, 3 * time.Minute}},
		{4 * time.Minute, Running, want{2, 3 * time.Minute, 18 * time.Minute}},
	} {
		h.clock.Advance(step.advance)
		if step.to == "" {
			h.schedule()
		} else if err := h.core.Report(ctx, "j", step.to, ""); err != nil {
			t.Fatalf("step %d: report %s: %v", i, step.to, err)
		}
		j := h.store.get("j")
		if j.Attempt != step.want.attempt || !same(j.StartedAt, at(step.want.started)) || !same(j.LastStartedAt, at(step.want.last)) {
			t.Fatalf("step %d (%s): attempt %d, started %v, last started %v; want %d, +%v, +%v",
				i, step.to, j.Attempt, j.StartedAt, j.LastStartedAt, step.want.attempt, step.want.started, step.want.last)
		}
	}
}

// TestReportRanKeepsFirstStart: a run never seen RUNNING (its driver
// ended while the job was LAUNCHING) is counted as a RUNNING report counts
// it: one more attempt and the last start moved to the run's start, while
// the job's first start stays the first run's. The first run starts at
// +3 min (reported RUNNING) and is retried at +13 min; the second is
// launched at +16 min and ends at +18 min, never reported RUNNING.
func TestReportRanKeepsFirstStart(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t, Config{}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("j", 1, 2))
	h.schedule()
	for _, step := range []struct {
		advance time.Duration
		to      State
	}{{time.Minute, Launching}, {2 * time.Minute, Running}, {10 * time.Minute, Queued}, {0, ""}, {time.Minute, Launching}} {
		h.clock.Advance(step.advance)
		if step.to == "" {
			h.schedule()
		} else if err := h.core.Report(ctx, "j", step.to, ""); err != nil {
			t.Fatalf("report %s: %v", step.to, err)
		}
	}
	h.clock.Advance(4 * time.Minute)
	if err := h.core.ReportRan(ctx, "j", Finished, "", RunStart{Ran: true, At: t0.Add(16 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	j := h.store.get("j")
	first, last := t0.Add(3*time.Minute), t0.Add(16*time.Minute)
	if j.Attempt != 2 || j.StartedAt == nil || !j.StartedAt.Equal(first) || j.LastStartedAt == nil || !j.LastStartedAt.Equal(last) {
		t.Fatalf("attempt %d, started %v, last started %v; want 2, %v, %v", j.Attempt, j.StartedAt, j.LastStartedAt, first, last)
	}
}

// TestReportReleaseFailure: a job that ended lets go of its resources; when
// the cluster's release fails, Report returns the error and warns once,
// naming the job; when it goes through, neither.
func TestReportReleaseFailure(t *testing.T) {
	for _, tc := range []struct {
		name        string
		failRelease bool
		warnings    int
	}{
		{"the release went through", false, 0},
		{"the release failed", true, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, hook := logtest.NewNullLogger()
			fc := &flakyCluster{testCluster: newTestCluster(agent("a1", 4, 16384, 0.24))}
			h := flakyHarness(t, Config{Log: log}, fc)
			h.schedule()
			h.submit(mkJob("j", 1, 2))
			h.schedule()
			h.run("j")
			fc.failRelease = tc.failRelease
			hook.Reset()
			err := h.core.Report(context.Background(), "j", Finished, "")
			if (err != nil) != tc.failRelease {
				t.Fatalf("Report: %v, want an error: %v", err, tc.failRelease)
			}
			if st := h.store.get("j").State; st != Finished {
				t.Fatalf("job %s, want FINISHED either way", st)
			}
			got := warnings(hook, "release failed")
			if len(got) != tc.warnings {
				t.Fatalf("%d warnings of the release, want %d: %v", len(got), tc.warnings, hook.AllEntries())
			}
			if len(got) == 1 && got[0].Data["job"] != "j" {
				t.Fatalf("the warning names job %v, want j", got[0].Data["job"])
			}
		})
	}
}
