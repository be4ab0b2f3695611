package store

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants that mutation testing found alive
// (scripts/mutation.sh store; docs/testing.md). Expected values are worked
// out by hand from the methods' contracts, not read from their output.

// TestSaveCostOfNothing: a meter that has cost nothing yet (a new term on
// an idle cluster) saves a total of $0: an amount, not an error.
func TestSaveCostOfNothing(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.SaveCost(ctx, uuid.NewString(), 0, nil); err != nil {
		t.Fatalf("SaveCost($0): %v", err)
	}
	if v, err := s.CostTotal(ctx); err != nil || v != 0 {
		t.Fatalf("meter total %v, %v; want 0", v, err)
	}
}

// TestWaitingReasonHeldExactlyMinKeptWait: a reason is kept when it held
// MinKeptWait or longer; only a reason that held under it is noise. One
// that held exactly 1 s is kept, as "waited 1s: ...".
func TestWaitingReasonHeldExactlyMinKeptWait(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s, err := Open(context.Background(), pgtest.URL(t), WithLogger(quietLog()), WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	nj := newJob(t, nil)
	nj.SubmittedAt = clock()
	j, _, err := s.CreateJob(ctx, nj, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, j.ID, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetWaiting(ctx, j.ID, "does not fit now: short of cpus", false); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(MinKeptWait)
	mu.Unlock()
	if err := s.SetWaiting(ctx, j.ID, "deadline jobs first", false); err != nil {
		t.Fatal(err)
	}
	events, err := s.Events(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	var waited []string
	for _, e := range events {
		if strings.HasPrefix(e.Reason, "waited ") {
			waited = append(waited, e.Reason)
		}
	}
	if len(waited) != 1 || waited[0] != "waited 1s: does not fit now: short of cpus" {
		t.Fatalf("kept %q; want the reason that held 1 s", waited)
	}
}

// TestRunsAfterWithoutLimit: a limit of 0 means all the runs after the
// ID (documented), not none.
func TestRunsAfterWithoutLimit(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r := scheduler.RunRecord{JobID: j.ID, Attempt: i + 1, Signature: "sig", Executors: 1 + i,
			StartedAt: now, EndedAt: now.Add(time.Minute), Seconds: 60, Outcome: scheduler.RunFinished}
		if err := s.RecordRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.RunHistory(ctx, 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("history: %d runs, %v", len(all), err)
	}
	rest, err := s.RunsAfter(ctx, all[0].ID, 0)
	if err != nil || len(rest) != 2 || rest[0].Executors != 2 || rest[1].Executors != 3 {
		t.Fatalf("runs after the first, no limit: %+v, %v; want the second and third", rest, err)
	}
}

// TestListJobsPages: a limit under the cap of 1000 is the page size: 3
// jobs read 2 at a time are a page of the 2 newest with a cursor, then a
// page of the oldest without one; read 3 at a time, one page and no cursor.
func TestListJobsPages(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	team := "pages-" + uuid.NewString() // this test's jobs only
	var ids []string
	for range 3 {
		nj := newJob(t, nil)
		nj.Team = team
		j, _, err := s.CreateJob(ctx, nj, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	page, next, err := s.ListJobs(ctx, ListOptions{Limit: 2, Team: &team})
	if err != nil || len(page) != 2 || page[0].ID != ids[2] || page[1].ID != ids[1] || next == "" {
		t.Fatalf("first page of 2: %d jobs, cursor %q, %v; want the 2 newest and a cursor", len(page), next, err)
	}
	page, next, err = s.ListJobs(ctx, ListOptions{Limit: 2, Team: &team, Cursor: next})
	if err != nil || len(page) != 1 || page[0].ID != ids[0] || next != "" {
		t.Fatalf("second page: %d jobs, cursor %q, %v; want the oldest, no cursor", len(page), next, err)
	}
	// Exactly a page of jobs: no next page, no cursor.
	page, next, err = s.ListJobs(ctx, ListOptions{Limit: 3, Team: &team})
	if err != nil || len(page) != 3 || next != "" {
		t.Fatalf("a page of 3 of 3 jobs: %d jobs, cursor %q, %v; want 3, no cursor", len(page), next, err)
	}
}

// TestCursorOfTheFirstJob: job sequence numbers start at 1, so "seq:1"
// (the page after the first job) is a cursor; "seq:0" is not.
func TestCursorOfTheFirstJob(t *testing.T) {
	if seq, err := decodeCursor(encodeCursor(1)); err != nil || seq != 1 {
		t.Fatalf("cursor of seq 1: %d, %v; want 1", seq, err)
	}
	if _, err := decodeCursor(encodeCursor(0)); err == nil {
		t.Fatal("cursor of seq 0 accepted")
	}
}

// TestSizingReasonInTheTimeline: a job whose executors sparkpack chose
// ("executors": "auto") shows why in its timeline at submission; a job
// sized by its submitter shows no such event.
func TestSizingReasonInTheTimeline(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	auto, _, err := s.CreateJob(ctx, newJob(t, func(sp *scheduler.Spec) {
		sp.Sizing = &scheduler.Sizing{Auto: true, Executors: 4, Reason: "p90 within the deadline with 4"}
	}), "")
	if err != nil {
		t.Fatal(err)
	}
	fixed, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	sized := func(id string) []string {
		t.Helper()
		evs, err := s.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range evs {
			if strings.HasPrefix(e.Reason, "executors auto") {
				out = append(out, e.Reason)
			}
		}
		return out
	}
	if got := sized(auto.ID); len(got) != 1 || got[0] != "executors auto: p90 within the deadline with 4" {
		t.Errorf("auto-sized job's sizing events %q; want the one with its reason", got)
	}
	if got := sized(fixed.ID); len(got) != 0 {
		t.Errorf("a job sized by its submitter has sizing events %q", got)
	}
}

// TestTransitionWithARunReturnsTheJob: the end of a run that records it
// in the history returns the job as it now is (FINISHED), like any other
// transition.
func TestTransitionWithARunReturnsTheJob(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	from := scheduler.Submitted
	for _, st := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
		if _, err := s.Transition(ctx, j.ID, from, st, "test", nil); err != nil {
			t.Fatalf("%s -> %s: %v", from, st, err)
		}
		from = st
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	got, err := s.Transition(ctx, j.ID, scheduler.Running, scheduler.Finished, "done", func(x *scheduler.Job) {
		x.EndedRun = &scheduler.RunRecord{JobID: j.ID, Attempt: 1, Signature: "sig", Executors: 1,
			StartedAt: now.Add(-time.Minute), EndedAt: now, Seconds: 60, Outcome: scheduler.RunFinished}
	})
	if err != nil || got.ID != j.ID || got.State != scheduler.Finished {
		t.Fatalf("transition to FINISHED with a run: %q in %s, %v; want job %s FINISHED", got.ID, got.State, err, j.ID)
	}
	if runs, err := s.JobRuns(ctx, j.ID); err != nil || len(runs) != 1 {
		t.Fatalf("runs %+v, %v; want the one recorded", runs, err)
	}
}

// TestCancelNoticeSaysKill: the cancellation notice tells the leader
// whether a kill was requested: not for a waiting job (it is CANCELLED
// at once), yes for a job that holds resources.
func TestCancelNoticeSaysKill(t *testing.T) {
	s, url := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type notice struct {
		id   string
		kill bool
	}
	notices := make(chan notice, 4)
	ready := make(chan struct{})
	var once sync.Once
	done := make(chan error, 1)
	go func() {
		done <- Listen(ctx, url, JobEvents{
			Submitted: func([]string) {},
			Cancelled: func(id string, kill bool) { notices <- notice{id, kill} },
			Resync:    func() { once.Do(func() { close(ready) }) },
		}, quietLog())
	}()
	select {
	case <-ready:
	case <-time.After(60 * time.Second):
		t.Fatal("Listen did not start listening")
	}
	waiting, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	running, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	from := scheduler.Submitted
	for _, st := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
		if _, err := s.Transition(ctx, running.ID, from, st, "test", nil); err != nil {
			t.Fatal(err)
		}
		from = st
	}
	for _, c := range []struct {
		id   string
		kill bool
	}{{waiting.ID, false}, {running.ID, true}} {
		if _, _, err := s.Cancel(ctx, c.id, "test"); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-notices:
			if n.id != c.id || n.kill != c.kill {
				t.Errorf("notice %+v; want job %s, kill %v", n, c.id, c.kill)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("no cancellation notice for %s", c.id)
		}
	}
	cancel()
	<-done
}

// TestPlacementLeavesOutEmptyAssignments: a job's placement lists the
// agents where it has executors; an assignment of 0 executors is not a
// place.
func TestPlacementLeavesOutEmptyAssignments(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	plan := placement.Plan{Policy: "bfd", Assignments: []placement.Assignment{{AgentID: "A", Hostname: "host-a", Executors: 2}, {AgentID: "B", Executors: 0}}}
	if err := s.SavePlacement(ctx, j.ID, plan); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Placement(ctx, j.ID)
	if err != nil || len(rows) != 1 || rows[0].AgentID != "A" || rows[0].Executors != 2 || rows[0].Hostname != "host-a" {
		t.Fatalf("placement %+v, %v; want A (host-a) with 2 executors only", rows, err)
	}
}
