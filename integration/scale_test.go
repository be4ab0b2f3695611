package integration

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/integration/loadgen"
	"github.com/sparkpack/sparkpack/mesossim"
)

// TestQueueAtScale is the short version of scripts/bench-scale.sh: with a
// job holding the cluster, 5,000 jobs that cannot fit are submitted by 32
// clients; every one is stored and queued, the queue view pages through
// them with their totals, and a small job that fits, then a deadline job,
// still start at once. It asserts behaviour, not timings (the figures are
// the benchmark's).
func TestQueueAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	const n = 5000
	emu := startEmulator(t, mesossim.Config{})
	dbURL := e2eDB(t)
	// One address submits thousands of jobs a second: no rate limit.
	sp := startSparkpack(t, emu.URL, dbURL, "--log-level", "info", "--rate-limit", "0")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := loadgen.NewClient(sp.API, "", 40)

	// The thesis cluster has 100 cpus: hold all but 6 (one for its driver).
	blocker := loadgen.Job(loadgen.NewID(), "blocker", 94, 1, 1024, 7*24*3600)
	if _, err := c.Submit(ctx, blocker); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, blocker["id"].(string), "RUNNING"); err != nil {
		t.Fatal(err)
	}
	res := c.RunBurst(ctx, loadgen.Burst{Clients: 32, MaxJobs: n, Body: func(i int) (string, []byte) {
		id := loadgen.NewID()
		return id, loadgen.JobBody(id, fmt.Sprintf("wait-%d", i), 12, 2, 2048, 600)
	}})
	if res.OK != n || res.Failed != 0 {
		t.Fatalf("%d of %d submissions stored, %d failed (first: %s)", res.OK, n, res.Failed, res.FirstError)
	}
	t.Logf("%d submissions in %s (%.0f/s, p99 %s; not a benchmark)", n, res.Elapsed.Round(time.Millisecond), res.PerSecond(), loadgen.Percentile(res.Latencies, 99))

	// Every stored job reaches QUEUED (the core admits them all).
	var tot loadgen.Totals
	for {
		var err error
		if tot, err = c.QueueTotals(ctx); err != nil {
			t.Fatal(err)
		}
		if tot.Regular >= n && tot.Intake == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("queues hold %+v, want %d regular jobs", tot, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	lags, notQueued, err := loadgen.IntakeLag(ctx, db, res.IDs)
	if err != nil || notQueued != 0 || len(lags) != n {
		t.Fatalf("intake: %d queued, %d not, %v", len(lags), notQueued, err)
	}

	// The queue view pages through them with the totals.
	var page struct {
		Regular []struct {
			ID            string `json:"id"`
			WaitingReason string `json:"waitingReason"`
		} `json:"regular"`
		Totals loadgen.Totals `json:"totals"`
		Next   string         `json:"next"`
	}
	if err := c.GetJSON(ctx, "/api/v1/queues", &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Regular) != 100 || page.Totals.Regular != n || page.Next == "" {
		t.Fatalf("first page: %d jobs, totals %+v, next %q; want 100 of %d and a cursor", len(page.Regular), page.Totals, page.Next, n)
	}
	if page.Regular[0].WaitingReason == "" {
		t.Fatal("a waiting job has no reason")
	}
	first := page.Regular[0].ID
	if err := c.GetJSON(ctx, "/api/v1/queues?limit=1000&cursor="+page.Next, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Regular) != 1000 || page.Regular[0].ID == first {
		t.Fatalf("second page: %d jobs starting with %s", len(page.Regular), page.Regular[0].ID)
	}
	// The stored reason is the coarse one; the job itself waits.
	var st loadgen.JobState
	if err := c.GetJSON(ctx, "/api/v1/jobs/"+first, &st); err != nil || st.State != "QUEUED" || st.Reason == "" {
		t.Fatalf("job %s: %+v %v", first, st, err)
	}

	// A small job that fits starts while the 5,000 wait.
	small := loadgen.Job(loadgen.NewID(), "small", 1, 1, 1024, 30)
	if _, err := c.Submit(ctx, small); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, small["id"].(string), "RESERVING", "LAUNCHING", "RUNNING", "FINISHED"); err != nil {
		t.Fatalf("the small job did not start with %d jobs queued: %v", n, err)
	}
	// So does a deadline job.
	dl := loadgen.Job(loadgen.NewID(), "deadline", 1, 1, 1024, 30)
	dl["deadline"] = 3600
	if _, err := c.Submit(ctx, dl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, dl["id"].(string), "RESERVING", "LAUNCHING", "RUNNING", "FINISHED"); err != nil {
		t.Fatalf("the deadline job did not start with %d jobs queued: %v", n, err)
	}
}
