package integration

import (
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestDashboardWaitedIsTheTimeInTheQueue: the jobs table's Waited and the
// job page's "waited" are the time the job spent in the queue (2s + 3s,
// then 5s again after its failed first run: 10s), not its last start
// minus its submission (1m10s, its failed run included).
func TestDashboardWaitedIsTheTimeInTheQueue(t *testing.T) {
	var mu sync.Mutex
	now := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	at := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	log := logrus.New()
	log.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), pgtest.URL(t), store.WithLogger(log), store.WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	base := startAPIWith(t, func(c *api.Config) { c.Store = st })

	ctx := context.Background()
	spec := scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-000000000041", Name: "retried", App: scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
		Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.CreateJob(ctx, scheduler.Job{Spec: spec, SubmittedAt: clock(), Fingerprint: spec.Fingerprint()}, ""); err != nil {
		t.Fatal(err)
	}
	from := scheduler.Submitted
	path := func(states ...scheduler.State) {
		t.Helper()
		for _, to := range states {
			if _, err := st.Transition(ctx, spec.ID, from, to, "test", nil); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
		}
	}
	at(2 * time.Second)
	path(scheduler.Queued)
	at(3 * time.Second)
	path(scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running)
	at(60 * time.Second)
	path(scheduler.Queued) // its first run failed: back to the queue
	at(5 * time.Second)
	path(scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running)
	at(10 * time.Second)
	path(scheduler.Finished)

	b := newBrowser(t)
	var row, fact string
	b.run(t, 60*time.Second,
		chromedp.Navigate(base+"/#/jobs"),
		pageText(`#jobs-table tr[data-job="`+spec.ID+`"] td.waited`, &row, 20*time.Second),
		chromedp.Evaluate(`location.hash = "#/jobs/`+spec.ID+`"`, nil),
		pageText(`#job-facts dd[data-fact="waited"]`, &fact, 20*time.Second),
	)
	if row != "10s" || fact != "10s" {
		t.Fatalf("waited: %q in the table, %q on the job page; want 10s (the time in the queue)", row, fact)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Fatalf("console errors: %v", errs)
	}
}
