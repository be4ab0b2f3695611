package integration

import (
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestE2EDriverSeenOnlyFinishedIsRecorded (issue 27, item 1: every
// finished attempt is recorded): the emulator shows sparkpack only its
// driver's TASK_FINISHED (terminal-only: its TASK_STARTING and TASK_RUNNING
// count as acknowledged, unseen), so the job goes from LAUNCHING to
// FINISHED. Its run is still counted: attempt 1, a start time (its
// launch), and a row of the run history in PostgreSQL with its run time
// unknown (NULL seconds), which the model does not learn. With the fault
// off, the next job's run is measured as usual. The dashboard (headless
// Chromium) shows the first run's time as unknown, in the jobs table and
// on the job page, and the second's as a duration.
func TestE2EDriverSeenOnlyFinishedIsRecorded(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2)})
	emu.SetUpdateFaults(mesossim.UpdateFaults{TerminalOnly: true})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), db, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()

	id := submit(t, sp.API, sparkJob("seen-only-finished", 1, 1, 1024, 20))
	v := waitState(t, sp.API, id, 3*time.Minute, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" {
		t.Fatalf("job ended %s", v.State)
	}
	for _, e := range v.Events {
		if e.To == "RUNNING" {
			t.Fatalf("the job was reported RUNNING (%q): the fault did not hide TASK_RUNNING", e.Reason)
		}
	}
	if v.StartedAt == nil || v.FinishedAt == nil || v.StartedAt.After(*v.FinishedAt) {
		t.Fatalf("job view: started %v, finished %v; want a start before the end", v.StartedAt, v.FinishedAt)
	}
	j, err := st.GetJob(ctx, id)
	if err != nil || j.Attempt != 1 {
		t.Fatalf("job: attempt %d, %v; want 1", j.Attempt, err)
	}
	runs, err := st.JobRuns(ctx, id)
	if err != nil || len(runs) != 1 {
		t.Fatalf("run history of the job: %+v, %v; want one run", runs, err)
	}
	r := runs[0]
	if r.Attempt != 1 || r.Outcome != scheduler.RunFinished || !r.RunTimeUnknown || r.Seconds != 0 ||
		r.StartedAt.Sub(*v.StartedAt).Abs() > time.Millisecond || r.EndedAt.Before(r.StartedAt) {
		t.Fatalf("recorded run %+v (job started %v)", r, v.StartedAt)
	}
	t.Logf("run never seen running: started %s (its launch), ended %s, run time unknown", r.StartedAt.Format(time.RFC3339Nano), r.EndedAt.Format(time.RFC3339Nano))

	// The dashboard says so: the jobs table's Ran and the job page's ran
	// are "unknown", not its launch-to-end span (or "0s" when its start is
	// its end), and its start is named its launch.
	b := newBrowser(t)
	var rowRan, started, ranFact, actual string
	b.run(t, 90*time.Second,
		chromedp.Navigate(sp.API+"/#/jobs"),
		pageText(`#jobs-table tr[data-job="`+id+`"] td.ran`, &rowRan, 30*time.Second),
		chromedp.Evaluate(`location.hash = "#/jobs/`+id+`"`, nil),
		pageTexts(30*time.Second, textRead{sel: `#job-facts dd[data-fact="id"]`, out: new(string), until: id},
			textRead{sel: `#job-facts dd[data-fact="started"]`, out: &started},
			textRead{sel: `#job-facts dd[data-fact="ran"]`, out: &ranFact},
			textRead{sel: `#job-facts dd[data-fact="actual"]`, out: &actual}),
	)
	if rowRan != "unknown" || !strings.HasPrefix(ranFact, "unknown (") || !strings.Contains(started, "(its launch: never seen running)") ||
		!strings.HasPrefix(actual, "unknown: never seen running") {
		t.Errorf("dashboard: jobs table ran %q, job page started %q, ran %q, actual %q; want the run time unknown and the start named its launch", rowRan, started, ranFact, actual)
	}
	b.screenshot(t, "dashboard-run-never-seen-running")
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}

	emu.SetUpdateFaults(mesossim.UpdateFaults{})
	id2 := submit(t, sp.API, sparkJob("seen-running", 1, 1, 1024, 20))
	if v := waitState(t, sp.API, id2, 3*time.Minute, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
		t.Fatalf("second job ended %s", v.State)
	}
	runs, err = st.JobRuns(ctx, id2)
	if err != nil || len(runs) != 1 || runs[0].RunTimeUnknown || !(runs[0].Seconds > 0) {
		t.Fatalf("run history of the second job: %+v, %v; want one measured run", runs, err)
	}
	t.Logf("run seen running: %.2f s", runs[0].Seconds)
	// A run seen running shows its run time.
	b.run(t, 60*time.Second,
		chromedp.Evaluate(`location.hash = "#/jobs/`+id2+`"`, nil),
		// Read with its id: the page showed the first job's facts before.
		pageTexts(30*time.Second, textRead{sel: `#job-facts dd[data-fact="id"]`, out: new(string), until: id2},
			textRead{sel: `#job-facts dd[data-fact="ran"]`, out: &ranFact}))
	if !regexp.MustCompile(`^(\d+m)?\d+s$`).MatchString(ranFact) {
		t.Errorf("dashboard: a run seen running reads ran %q; want its run time", ranFact)
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
