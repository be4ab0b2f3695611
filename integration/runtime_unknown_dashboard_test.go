package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestDashboardRunTimeUnknown: a FINISHED job whose run was never seen
// running (docs/learning.md, "Runs never seen running"; here the start
// unknown too, so its start is its end) shows its run time as unknown in
// the jobs table and on its page, not as the 0 s between its startedAt and
// finishedAt; a job seen running still shows its run time. Before, both
// showed "0s".
func TestDashboardRunTimeUnknown(t *testing.T) {
	var st *store.Store
	base := startAPIWith(t, func(c *api.Config) { st = c.Store.(*store.Store) })
	ctx := context.Background()
	finish := func(name string, unknown bool) string {
		id := postJob(t, base, `{"name":"`+name+`","app":{"appResource":"local:///jobs/etl.jar","mainClass":"com.example.ETL"},"executors":1,"executorCores":1,"executorMemoryMB":1024}`)
		from := scheduler.Submitted
		for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Finished} {
			if _, err := st.Transition(ctx, id, from, to, "test", func(j *scheduler.Job) {
				if to != scheduler.Finished {
					return
				}
				end := time.Now().UTC()
				start := end
				if !unknown {
					start = end.Add(-90 * time.Second)
				}
				j.Attempt, j.StartedAt, j.LastStartedAt, j.FinishedAt = 1, &start, &start, &end
				j.EndedRun = &scheduler.RunRecord{JobID: id, Attempt: 1, Signature: "sig", Executors: 1, StartedAt: start, EndedAt: end,
					Seconds: end.Sub(start).Seconds(), RunTimeUnknown: unknown, Outcome: scheduler.RunFinished}
			}); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
		}
		return id
	}
	unseen, seen := finish("unseen", true), finish("seen", false)
	b := newBrowser(t)
	var unseenRow, seenRow, fact string
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		chromedp.WaitVisible(`#jobs-table`, chromedp.ByQuery),
		pageTexts(20*time.Second, textRead{sel: `#jobs-table tr[data-job="` + unseen + `"] td.ran`, out: &unseenRow},
			textRead{sel: `#jobs-table tr[data-job="` + seen + `"] td.ran`, out: &seenRow}),
		chromedp.Evaluate(`location.hash = "#/jobs/`+unseen+`"`, nil),
		pageTexts(20*time.Second, textRead{sel: `#job-facts dd[data-fact="ran"]`, out: &fact}),
	)
	if !strings.Contains(unseenRow, "unknown") || !strings.Contains(fact, "unknown") {
		t.Errorf("a run never seen running: table %q, job page %q; want its run time unknown", unseenRow, fact)
	}
	if seenRow != "1m30s" {
		t.Errorf("a run seen running: table %q; want 1m30s", seenRow)
	}
}
