package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

func quietLog() logrus.FieldLogger {
	l := logrus.New()
	l.SetLevel(logrus.WarnLevel)
	return l
}

func openStore(t *testing.T) (*Store, string) {
	t.Helper()
	url := pgtest.URL(t)
	s, err := Open(context.Background(), url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, url
}

func newJob(t *testing.T, mod func(*scheduler.Spec)) scheduler.Job {
	t.Helper()
	spec := scheduler.Spec{
		ID:               uuid.NewString(),
		Name:             "test",
		App:              scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
		Executors:        2,
		ExecutorCores:    1,
		ExecutorMemoryMB: 1024,
		Labels:           map[string]string{"team": "a"},
	}
	if mod != nil {
		mod(&spec)
	}
	if err := spec.Validate(); err != nil {
		t.Fatal(err)
	}
	return scheduler.Job{Spec: spec, SubmittedAt: time.Now(), Fingerprint: spec.Fingerprint()}
}

func TestMigrationsRerunAndConcurrent(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ctx, url, WithLogger(quietLog()))
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			errs <- s.Ready(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("concurrent open: %v", err)
		}
	}
	s, err := Open(ctx, url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n, err := s.Migrate(ctx)
	if err != nil || n != 0 {
		t.Fatalf("re-run applied %d migrations, err %v; want 0, nil", n, err)
	}
	var count int
	ms, _ := migrations()
	if err := s.DB().QueryRow(`SELECT count(*) FROM schema_migrations`).Scan(&count); err != nil || count != len(ms) {
		t.Fatalf("schema_migrations has %d rows (err %v), want %d", count, err, len(ms))
	}
}

func TestCreateJobIdempotent(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j := newJob(t, nil)
	got, created, err := s.CreateJob(ctx, j, "")
	if err != nil || !created || got.State != scheduler.Submitted {
		t.Fatalf("create: %v %v %v", got.State, created, err)
	}
	again, created, err := s.CreateJob(ctx, j, "")
	if err != nil || created || again.ID != j.ID {
		t.Fatalf("repeat: created=%v err=%v", created, err)
	}
	other := j
	other.Executors = 3
	other.Fingerprint = other.Spec.Fingerprint()
	if _, _, err := s.CreateJob(ctx, other, ""); !errors.Is(err, scheduler.ErrConflict) {
		t.Fatalf("different body: err = %v, want ErrConflict", err)
	}
}

func TestCreateJobConcurrentSameID(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j := newJob(t, nil)
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	createdCount := 0
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, created, err := s.CreateJob(ctx, j, "")
			if err != nil {
				t.Error(err)
				return
			}
			if created {
				mu.Lock()
				createdCount++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if createdCount != 1 {
		t.Fatalf("%d callers created the job, want exactly 1", createdCount)
	}
	var rows int
	s.DB().QueryRow(`SELECT count(*) FROM jobs WHERE id = $1`, j.ID).Scan(&rows)
	evs, err := s.Events(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if events := len(evs); rows != 1 || events != 1 {
		t.Fatalf("%d rows and %d events, want 1 and 1", rows, events)
	}
}

func TestCreateRejected(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "deadline is already past")
	if err != nil || j.State != scheduler.Rejected || j.FinishedAt == nil {
		t.Fatalf("%+v %v", j, err)
	}
	evs, _ := s.Events(ctx, j.ID)
	if len(evs) != 2 || evs[1].To != scheduler.Rejected || evs[1].Reason != "deadline is already past" {
		t.Fatalf("events %+v", evs)
	}
	// The rejection happened when the job was stored: its finishedAt.
	if !evs[0].At.Equal(j.SubmittedAt) || !evs[1].At.Equal(*j.FinishedAt) {
		t.Fatalf("events at %v and %v, want the submission %v and the rejection %v", evs[0].At, evs[1].At, j.SubmittedAt, *j.FinishedAt)
	}
}

func TestTransitions(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	path := []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running, scheduler.Finished}
	from := scheduler.Submitted
	for _, to := range path {
		got, err := s.Transition(ctx, j.ID, from, to, "step to "+string(to), nil)
		if err != nil {
			t.Fatalf("%s -> %s: %v", from, to, err)
		}
		if got.State != to {
			t.Fatalf("state %s, want %s", got.State, to)
		}
		from = to
	}
	got, _ := s.GetJob(ctx, j.ID)
	if got.StartedAt == nil || got.FinishedAt == nil || got.FinishedAt.Before(*got.StartedAt) {
		t.Fatalf("times: started %v finished %v", got.StartedAt, got.FinishedAt)
	}
	evs, _ := s.Events(ctx, j.ID)
	if len(evs) != len(path)+1 {
		t.Fatalf("%d events, want %d", len(evs), len(path)+1)
	}
	for i, e := range evs[1:] {
		if e.To != path[i] || e.Reason != "step to "+string(path[i]) {
			t.Errorf("event %d = %+v", i, e)
		}
	}
	// Illegal and stale moves change nothing.
	if _, err := s.Transition(ctx, j.ID, scheduler.Finished, scheduler.Running, "", nil); !errors.Is(err, scheduler.ErrIllegalTransition) {
		t.Fatalf("illegal move: %v", err)
	}
	if _, err := s.Transition(ctx, j.ID, scheduler.Running, scheduler.Failed, "", nil); !errors.Is(err, scheduler.ErrStale) {
		t.Fatalf("stale move: %v", err)
	}
	if _, err := s.Transition(ctx, uuid.NewString(), scheduler.Queued, scheduler.Placing, "", nil); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("missing job: %v", err)
	}
	if evs2, _ := s.Events(ctx, j.ID); len(evs2) != len(evs) {
		t.Fatal("a refused transition wrote an event")
	}
}

func TestConcurrentWritersOneWins(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	var wg sync.WaitGroup
	results := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			to := scheduler.Queued
			if i%2 == 1 {
				to = scheduler.Cancelled
			}
			_, err := s.Transition(ctx, j.ID, scheduler.Submitted, to, fmt.Sprint("writer ", i), nil)
			results <- err
		}(i)
	}
	wg.Wait()
	close(results)
	ok := 0
	for err := range results {
		if err == nil {
			ok++
		} else if !errors.Is(err, scheduler.ErrStale) {
			t.Errorf("unexpected error %v", err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d writers succeeded, want 1", ok)
	}
	evs, _ := s.Events(ctx, j.ID)
	if len(evs) != 2 {
		t.Fatalf("%d events, want 2", len(evs))
	}
}

func TestTransitionIsOneTransaction(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	// Make the event insert fail: the state change must roll back with it.
	_, err := s.DB().Exec(`CREATE FUNCTION fail_events() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.to_state = 'QUEUED' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END; $$;
		CREATE TRIGGER fail_events BEFORE INSERT ON job_events FOR EACH ROW EXECUTE FUNCTION fail_events();`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, j.ID, scheduler.Submitted, scheduler.Queued, "", nil); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	got, _ := s.GetJob(ctx, j.ID)
	if got.State != scheduler.Submitted {
		t.Fatalf("state %s after a failed transaction, want SUBMITTED", got.State)
	}
}

func TestEventsAppendOnly(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	// The submission is recorded in the job's row; a transition is an event row.
	if _, err := s.Transition(ctx, j.ID, scheduler.Submitted, scheduler.Queued, "", nil); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.DB().QueryRow(`SELECT count(*) FROM job_events WHERE job_id = $1`, j.ID).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d event rows (%v), want 1", n, err)
	}
	if _, err := s.DB().Exec(`UPDATE job_events SET reason = 'x' WHERE job_id = $1`, j.ID); err == nil {
		t.Fatal("an event was updated")
	}
	if _, err := s.DB().Exec(`DELETE FROM job_events WHERE job_id = $1`, j.ID); err == nil {
		t.Fatal("an event was deleted")
	}
}

func TestListJobs(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 7; i++ {
		team := "a"
		if i%2 == 1 {
			team = "b"
		}
		j, _, err := s.CreateJob(ctx, newJob(t, func(sp *scheduler.Spec) { sp.Labels = map[string]string{"team": team} }), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	s.Transition(ctx, ids[0], scheduler.Submitted, scheduler.Queued, "", nil)
	// Pages of 3, newest first, cover everything once.
	var seen []string
	cursor := ""
	for pages := 0; ; pages++ {
		jobs, next, err := s.ListJobs(ctx, ListOptions{Limit: 3, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs {
			seen = append(seen, j.ID)
		}
		if next == "" {
			break
		}
		if pages > 5 {
			t.Fatal("pagination does not end")
		}
		cursor = next
	}
	if len(seen) != 7 || seen[0] != ids[6] || seen[6] != ids[0] {
		t.Fatalf("pages gave %v", seen)
	}
	jobs, _, _ := s.ListJobs(ctx, ListOptions{Labels: map[string]string{"team": "b"}})
	if len(jobs) != 3 {
		t.Fatalf("label filter gave %d jobs, want 3", len(jobs))
	}
	jobs, _, _ = s.ListJobs(ctx, ListOptions{States: []scheduler.State{scheduler.Queued}})
	if len(jobs) != 1 || jobs[0].ID != ids[0] {
		t.Fatalf("state filter gave %v", jobs)
	}
	if _, _, err := s.ListJobs(ctx, ListOptions{Cursor: "garbage"}); !errors.Is(err, ErrBadCursor) {
		t.Fatalf("bad cursor: %v", err)
	}
}

func TestCancel(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	waiting, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	got, outcome, err := s.Cancel(ctx, waiting.ID, "user")
	if err != nil || outcome != Cancelled || got.State != scheduler.Cancelled {
		t.Fatalf("cancel waiting: %v %v %v", got.State, outcome, err)
	}
	if _, _, err := s.Cancel(ctx, waiting.ID, "again"); !errors.Is(err, ErrTerminal) {
		t.Fatalf("cancel ended job: %v", err)
	}
	running, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	for _, st := range [][2]scheduler.State{{scheduler.Submitted, scheduler.Queued}, {scheduler.Queued, scheduler.Placing}, {scheduler.Placing, scheduler.Reserving}} {
		if _, err := s.Transition(ctx, running.ID, st[0], st[1], "", nil); err != nil {
			t.Fatal(err)
		}
	}
	got, outcome, err = s.Cancel(ctx, running.ID, "user")
	if err != nil || outcome != KillRequested || got.State != scheduler.Reserving || !got.KillRequested {
		t.Fatalf("cancel active: %+v %v %v", got, outcome, err)
	}
	got, _ = s.GetJob(ctx, running.ID)
	if !got.KillRequested {
		t.Fatal("kill request not stored")
	}
}

func TestPlacementFrameworkReservations(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	plan := placement.Plan{Policy: "bfd", Outcome: "heuristic", Assignments: []placement.Assignment{
		{AgentID: "S2", Hostname: "h2", Executors: 1}, {AgentID: "S1", Hostname: "h1", Executors: 3}}}
	if err := s.SavePlacement(ctx, j.ID, plan); err != nil {
		t.Fatal(err)
	}
	plan.Assignments = plan.Assignments[1:]
	if err := s.SavePlacement(ctx, j.ID, plan); err != nil {
		t.Fatal(err)
	}
	rows, err := s.Placement(ctx, j.ID)
	if err != nil || len(rows) != 1 || rows[0].AgentID != "S1" || rows[0].Executors != 3 || rows[0].Policy != "bfd" {
		t.Fatalf("placement %+v %v", rows, err)
	}

	// An id that is no UUID matches no job (and fails nothing: the ids
	// are compared as uuid[]).
	all, err := s.Placements(ctx, []string{j.ID, uuid.NewString(), "not-a-uuid"})
	if err != nil || len(all) != 1 || len(all[j.ID]) != 1 || all[j.ID][0].AgentID != "S1" {
		t.Fatalf("placements %+v %v", all, err)
	}

	if id, err := s.FrameworkID(ctx); err != nil || id != "" {
		t.Fatalf("framework id %q %v", id, err)
	}
	for _, id := range []string{"fw-1", "fw-2"} {
		if err := s.SetFrameworkID(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	if id, _ := s.FrameworkID(ctx); id != "fw-2" {
		t.Fatalf("framework id %q", id)
	}

	r := scheduler.Reservation{JobID: j.ID, AgentID: "S1", Role: scheduler.Role(j.ID), CPUs: 3, MemMB: 4224, State: scheduler.ResReserving}
	if err := s.PutReservation(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.State = scheduler.ResReserved
	if err := s.PutReservation(ctx, r); err != nil {
		t.Fatal(err)
	}
	live, _ := s.Reservations(ctx, "", scheduler.ResReserved, scheduler.ResReserving)
	if len(live) != 1 || live[0].State != scheduler.ResReserved || live[0].CPUs != 3 {
		t.Fatalf("reservations %+v", live)
	}
	if none, _ := s.Reservations(ctx, j.ID, scheduler.ResReleased); len(none) != 0 {
		t.Fatalf("released %+v", none)
	}
}

func TestUnfinishedAndWaiting(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	a, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	b, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	s.CreateJob(ctx, newJob(t, nil), "too big")
	if err := s.SetWaiting(ctx, b.ID, "deadline jobs first", true); err != nil {
		t.Fatal(err)
	}
	jobs, err := s.Unfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range jobs {
		ids = append(ids, j.ID)
		if j.ID == b.ID && (j.WaitingReason != "deadline jobs first" || !j.AtRisk) {
			t.Errorf("waiting info not stored: %+v", j)
		}
	}
	counts, err := s.CountByState(ctx)
	if err != nil || counts["SUBMITTED"] != 2 || counts["REJECTED"] != 1 {
		t.Fatalf("counts %v %v", counts, err)
	}
	// States with no job are counted at 0, not left out.
	if n, ok := counts["RUNNING"]; !ok || n != 0 || len(counts) != len(scheduler.AllStates) {
		t.Fatalf("counts %v: want every state, RUNNING at 0", counts)
	}
	want := []string{a.ID, b.ID}
	sort.Strings(ids)
	sort.Strings(want)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("unfinished %v, want %v", ids, want)
	}
}

// TestDriverRecordAndFailedRuns: the driver record keeps its launch
// number, lost launches and started flag; a failed run is counted once
// per driver task however often it is counted.
func TestDriverRecordAndFailedRuns(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, func(sp *scheduler.Spec) { sp.Retries = 2 }), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Driver(ctx, j.ID); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("driver of a new job: %v, want ErrNotFound", err)
	}
	rec := scheduler.DriverRecord{JobID: j.ID, Attempt: 3, TaskID: "sparkpack-driver-" + j.ID + "-3", State: "TASK_LOST", Ended: true, LostLaunches: 2}
	if err := s.PutDriver(ctx, rec); err != nil {
		t.Fatal(err)
	}
	rec.Attempt, rec.TaskID, rec.State, rec.Ended, rec.Started = 4, "sparkpack-driver-"+j.ID+"-4", "TASK_RUNNING", false, true
	if err := s.PutDriver(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got, err := s.Driver(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Attempt != 4 || got.TaskID != rec.TaskID || got.LostLaunches != 2 || !got.Started || got.Ended || got.State != "TASK_RUNNING" {
		t.Fatalf("driver record %+v, want %+v", got, rec)
	}
	// The attempt only grows (#32 defect 4): a late record of an older
	// launch (its task's last status arriving after the relaunch was
	// named) changes nothing; a newer status of the current one does.
	stale := scheduler.DriverRecord{JobID: j.ID, Attempt: 3, TaskID: "sparkpack-driver-" + j.ID + "-3", State: "TASK_FAILED", Ended: true}
	if err := s.PutDriver(ctx, stale); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Driver(ctx, j.ID); err != nil || got.Attempt != 4 || got.TaskID != rec.TaskID || got.State != "TASK_RUNNING" || got.Ended {
		t.Fatalf("after a stale record of attempt 3: %+v %v, want attempt 4 unchanged", got, err)
	}
	rec.State, rec.Ended = "TASK_FINISHED", true
	if err := s.PutDriver(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Driver(ctx, j.ID); err != nil || got.Attempt != 4 || got.State != "TASK_FINISHED" || !got.Ended {
		t.Fatalf("a newer status of attempt 4: %+v %v", got, err)
	}

	for i, c := range []struct {
		task string
		want int
	}{{"t-1", 1}, {"t-1", 1}, {"t-2", 2}, {"t-2", 2}, {"t-3", 3}} {
		n, err := s.CountFailedRun(ctx, j.ID, c.task)
		if err != nil || n != c.want {
			t.Fatalf("count %d (%s) = %d, %v; want %d", i, c.task, n, err, c.want)
		}
	}
	if j2, err := s.GetJob(ctx, j.ID); err != nil || j2.FailedRuns != 3 {
		t.Fatalf("job failed runs %d (%v), want 3", j2.FailedRuns, err)
	}
	if _, err := s.CountFailedRun(ctx, uuid.NewString(), "t"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("count on an unknown job: %v", err)
	}
	// Concurrent counts of one task count once.
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _, _ = s.CountFailedRun(ctx, j.ID, "t-4") }()
	}
	wg.Wait()
	if n, _ := s.CountFailedRun(ctx, j.ID, "t-4"); n != 4 {
		t.Errorf("after concurrent counts of one task: %d, want 4", n)
	}
}

// A job's submission events come from its row; a job stored before
// migration 0009 (submit_state ”) has them as rows, and only those count.
func TestSubmissionEvents(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	queued := newJob(t, nil)
	queued.State = scheduler.Queued
	q, _, err := s.CreateJob(ctx, queued, "")
	if err != nil {
		t.Fatal(err)
	}
	sub, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	rej, _, _ := s.CreateJob(ctx, newJob(t, nil), "too big")
	for _, c := range []struct {
		id   string
		want []scheduler.State
		last string
	}{{q.ID, []scheduler.State{scheduler.Submitted, scheduler.Queued}, "queued"},
		{sub.ID, []scheduler.State{scheduler.Submitted}, "submitted"},
		{rej.ID, []scheduler.State{scheduler.Submitted, scheduler.Rejected}, "too big"}} {
		evs, err := s.Events(ctx, c.id)
		if err != nil || len(evs) != len(c.want) {
			t.Fatalf("job %s: events %+v, %v; want %v", c.id, evs, err, c.want)
		}
		for i, e := range evs {
			if e.To != c.want[i] || e.ID != 0 || e.At.IsZero() || (i > 0) != (e.From != nil) {
				t.Errorf("job %s event %d: %+v", c.id, i, e)
			}
		}
		if evs[len(evs)-1].Reason != c.last {
			t.Errorf("job %s: last reason %q, want %q", c.id, evs[len(evs)-1].Reason, c.last)
		}
	}
	// Later events follow, as rows.
	if _, err := s.Transition(ctx, sub.ID, scheduler.Submitted, scheduler.Queued, "admitted", nil); err != nil {
		t.Fatal(err)
	}
	evs, _ := s.Events(ctx, sub.ID)
	if len(evs) != 2 || evs[1].To != scheduler.Queued || evs[1].ID == 0 || evs[1].Reason != "admitted" {
		t.Fatalf("after a transition: %+v", evs)
	}
	// A job stored before migration 0009: its submission is an event row.
	legacy, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	if _, err := s.DB().Exec(`UPDATE jobs SET submit_state = '' WHERE id = $1`, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DB().Exec(`INSERT INTO job_events (job_id, at, from_state, to_state, reason) VALUES ($1, now(), NULL, 'SUBMITTED', 'submitted')`, legacy.ID); err != nil {
		t.Fatal(err)
	}
	if evs, _ := s.Events(ctx, legacy.ID); len(evs) != 1 || evs[0].ID == 0 || evs[0].To != scheduler.Submitted {
		t.Fatalf("legacy job's events %+v", evs)
	}
	if evs, err := s.Events(ctx, "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"); err != nil || len(evs) != 0 {
		t.Fatalf("unknown job: %+v %v", evs, err)
	}
}

// Jobs committed together in one group commit come back exactly as they
// were given, whatever their strings hold (quotes, backslashes, control
// characters, non-ASCII, HTML characters), with their deadlines, labels,
// states, reasons and submitters.
func TestCreateJobBatchRoundTrip(t *testing.T) {
	s, _ := openStore(t)
	names := []string{"plain", `quote " and \ backslash`, "ünïcödé ✓ 😀", "<html> & 'x'", "a"}
	deadline := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	type sent struct {
		j      scheduler.Job
		reject string
	}
	var jobs []sent
	for i, name := range names {
		j := newJob(t, func(sp *scheduler.Spec) {
			sp.Name = name
			sp.Labels = map[string]string{"team": "t" + fmt.Sprint(i), "k": name}
		})
		reject := ""
		switch i % 3 {
		case 1:
			j.DeadlineAt = &deadline
			j.State, j.WaitingReason, j.AtRisk = scheduler.Queued, "short of "+name+" \t\n\x01\x7f", true
		case 2:
			reject = "deadline is already past: " + name
		}
		jobs = append(jobs, sent{j, reject})
	}
	ctx := WithActor(context.Background(), Actor{Name: "tok\"en ✓", Client: "10.0.0.1"})
	var wg sync.WaitGroup
	for _, x := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, created, err := s.CreateJob(ctx, x.j, x.reject); err != nil || !created {
				t.Errorf("create %q: created=%v %v", x.j.Name, created, err)
			}
		}()
	}
	wg.Wait()
	for _, x := range jobs {
		got, err := s.GetJob(context.Background(), x.j.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := x.j
		switch {
		case x.reject != "":
			want.State, want.WaitingReason = scheduler.Rejected, x.reject
		case want.State == "":
			want.State = scheduler.Submitted
		}
		if got.Name != want.Name || !reflect.DeepEqual(got.Labels, want.Labels) || got.State != want.State ||
			got.WaitingReason != want.WaitingReason || got.AtRisk != want.AtRisk || got.Fingerprint != want.Fingerprint ||
			!got.SubmittedAt.Equal(want.SubmittedAt.Truncate(time.Microsecond)) {
			t.Errorf("stored %+v\nwant   %+v", got, want)
		}
		if (got.DeadlineAt == nil) != (want.DeadlineAt == nil) || got.DeadlineAt != nil && !got.DeadlineAt.Equal(*want.DeadlineAt) {
			t.Errorf("%q: deadline %v, want %v", got.Name, got.DeadlineAt, want.DeadlineAt)
		}
		if (got.FinishedAt != nil) != (x.reject != "") {
			t.Errorf("%q: finished at %v", got.Name, got.FinishedAt)
		}
		evs, err := s.Events(context.Background(), x.j.ID)
		if err != nil || len(evs) == 0 || evs[0].Actor != "tok\"en ✓" || evs[0].Client != "10.0.0.1" {
			t.Errorf("%q: events %+v %v", got.Name, evs, err)
		}
	}
}

// TestWaitingAfter: the waiting jobs stored after a seq, and the largest
// seq among them; jobs that left the waiting states, or were stored before
// the seq, are not in it.
func TestWaitingAfter(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	a, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	ids, first, err := s.WaitingAfter(ctx, 0)
	if err != nil || !slices.Equal(ids, []string{a.ID}) || first <= 0 {
		t.Fatalf("WaitingAfter(0) = %v, %d, %v; want [a], a's seq", ids, first, err)
	}
	b, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	c, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	s.CreateJob(ctx, newJob(t, nil), "too big") // REJECTED
	if _, err := s.Transition(ctx, b.ID, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Transition(ctx, c.ID, scheduler.Submitted, scheduler.Cancelled, "user", nil); err != nil {
		t.Fatal(err)
	}
	ids, last, err := s.WaitingAfter(ctx, first)
	if err != nil || !slices.Equal(ids, []string{b.ID}) || last <= first {
		t.Fatalf("WaitingAfter(a's seq) = %v, %d, %v; want [b] and b's seq above %d", ids, last, err, first)
	}
	// Nothing after the last: the seq given back.
	if ids, got, err := s.WaitingAfter(ctx, last+100); err != nil || len(ids) != 0 || got != last+100 {
		t.Fatalf("WaitingAfter(after every job) = %v, %d, %v", ids, got, err)
	}
}
