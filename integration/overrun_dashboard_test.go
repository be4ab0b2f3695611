package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestDashboardOverrunAndStartPrediction: a running job without a
// deadline flagged at risk for running past its p90 (the store's
// MarkRunningAtRisk, as the scheduler does) shows "at risk" where a
// deadline job's at-risk shows, in the jobs table's deadline column and
// on its page's deadline fact (before, only in its timeline); a finished
// job's page shows the prediction made at its start, labelled so, and
// compares its run with that one, not with what the model predicts now
// (which learned from the run).
func TestDashboardOverrunAndStartPrediction(t *testing.T) {
	var st *store.Store
	base := startAPIWith(t, func(c *api.Config) {
		st = c.Store.(*store.Store)
		// The model now, after it learned from the runs: 2m.
		c.JobPrediction = func(scheduler.Job) *api.JobPrediction {
			return &api.JobPrediction{P50Seconds: 120, P90Seconds: 150, Level: perfmodel.LevelSignature}
		}
	})
	ctx := context.Background()
	const spec = `"app":{"appResource":"local:///jobs/etl.jar","mainClass":"com.example.ETL"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`
	walk := func(id string, states []scheduler.State, mod func(to scheduler.State, j *scheduler.Job)) {
		t.Helper()
		from := scheduler.Submitted
		for _, to := range states {
			if _, err := st.Transition(ctx, id, from, to, "test", func(j *scheduler.Job) { mod(to, j) }); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
		}
	}
	toRunning := []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running}
	over := postJob(t, base, `{"name":"overrun",`+spec)
	walk(over, toRunning, func(to scheduler.State, j *scheduler.Job) {
		if to == scheduler.Running {
			s := time.Now().UTC().Add(-3 * time.Minute)
			j.StartedAt, j.LastStartedAt = &s, &s
		}
	})
	if err := st.MarkRunningAtRisk(ctx, over, "at risk: running past its p90 predicted run time"); err != nil {
		t.Fatal(err)
	}
	done := postJob(t, base, `{"name":"done",`+spec)
	walk(done, append(toRunning, scheduler.Finished), func(to scheduler.State, j *scheduler.Job) {
		end := time.Now().UTC()
		start := end.Add(-90 * time.Second)
		switch to {
		case scheduler.Running:
			j.StartedAt, j.LastStartedAt = &start, &start
		case scheduler.Finished:
			j.Attempt, j.FinishedAt = 1, &end
			// Predicted 1m (a point: the estimate corrected by the
			// signature's runs, learned.LevelEstimate) at its start; it
			// ran 1m30s.
			j.EndedRun = &scheduler.RunRecord{JobID: j.ID, Attempt: 1, Signature: "sig", Executors: 1, StartedAt: *j.LastStartedAt, EndedAt: end,
				Seconds: end.Sub(*j.LastStartedAt).Seconds(), Outcome: scheduler.RunFinished,
				PredictedP50: 60, PredictedP90: 60, PredictionLevel: string(learned.LevelEstimate)}
		}
	})
	// A run the scheduler made no prediction for (no model then): the
	// model's now, labelled so, and no error against it.
	plain := postJob(t, base, `{"name":"plain",`+spec)
	walk(plain, append(toRunning, scheduler.Finished), func(to scheduler.State, j *scheduler.Job) {
		end := time.Now().UTC()
		start := end.Add(-90 * time.Second)
		switch to {
		case scheduler.Running:
			j.StartedAt, j.LastStartedAt = &start, &start
		case scheduler.Finished:
			j.Attempt, j.FinishedAt = 1, &end
			j.EndedRun = &scheduler.RunRecord{JobID: j.ID, Attempt: 1, Signature: "sig", Executors: 1, StartedAt: *j.LastStartedAt, EndedAt: end,
				Seconds: end.Sub(*j.LastStartedAt).Seconds(), Outcome: scheduler.RunFinished}
		}
	})
	b := newBrowser(t)
	var row, fact, predicted, actual, plainPredicted, plainActual string
	b.run(t, 90*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#jobs-table`, chromedp.ByQuery),
		pageTexts(30*time.Second, textRead{sel: `#jobs-table tr[data-job="` + over + `"] td.deadline`, out: &row, until: "at risk"}),
		chromedp.Evaluate(`location.hash = "#/jobs/`+over+`"`, nil),
		pageTexts(30*time.Second, textRead{sel: `#job-facts dd[data-fact="deadline"]`, out: &fact, until: "at risk"}),
		chromedp.Evaluate(`location.hash = "#/jobs/`+done+`"`, nil),
		pageTexts(30*time.Second, textRead{sel: `#job-facts dd[data-fact="predicted"]`, out: &predicted, until: "at its start"},
			textRead{sel: `#job-facts dd[data-fact="actual"]`, out: &actual}),
		chromedp.Evaluate(`location.hash = "#/jobs/`+plain+`"`, nil),
		pageTexts(30*time.Second, textRead{sel: `#job-facts dd[data-fact="predicted"]`, out: &plainPredicted, until: "now"},
			textRead{sel: `#job-facts dd[data-fact="actual"]`, out: &plainActual}),
	)
	if !strings.Contains(plainPredicted, "2m0s") || !strings.Contains(plainPredicted, "now, none kept from its start") ||
		!strings.Contains(plainActual, "not compared") || strings.Contains(plainActual, "%") {
		t.Errorf("finished job without a start prediction: predicted %q, actual %q; want the model's now, labelled, not compared", plainPredicted, plainActual)
	}
	if !strings.Contains(row, "at risk") {
		t.Errorf("jobs table deadline cell of a job past its p90: %q; want at risk", row)
	}
	if !strings.Contains(fact, "none") || !strings.Contains(fact, "at risk: running past its p90") {
		t.Errorf("job page deadline of a job past its p90: %q; want none, at risk: running past its p90", fact)
	}
	if !strings.Contains(predicted, "1m0s (p90 1m0s; from its estimate, corrected by its signature's runs, at its start)") {
		t.Errorf("finished job's predicted: %q; want the start's 1m0s (p90 1m0s) from its corrected estimate, at its start", predicted)
	}
	if !strings.Contains(actual, "1m30s") || !strings.Contains(actual, "+50% against the prediction, beyond its p90") {
		t.Errorf("finished job's actual: %q; want 1m30s, +50%% against the start's prediction, beyond its p90", actual)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
