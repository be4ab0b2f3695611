package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestGroupCommitManySubmitters: 64 concurrent submitters (distinct jobs,
// repeats of one job, and a conflicting body) each get the right answer,
// and every created job has exactly its own events.
func TestGroupCommitManySubmitters(t *testing.T) {
	for _, committers := range []int{0, 1, DefaultCommitters} {
		t.Run(fmt.Sprintf("committers=%d", committers), func(t *testing.T) {
			s, err := Open(context.Background(), pgtest.URL(t), WithLogger(quietLog()), WithCommitters(committers))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			shared := newJob(t, nil)
			existing := newJob(t, nil)
			if _, _, err := s.CreateJob(ctx, existing, ""); err != nil {
				t.Fatal(err)
			}
			conflicting := existing
			conflicting.Executors = 7
			conflicting.Fingerprint = conflicting.Spec.Fingerprint()
			const n = 64
			distinct := make([]scheduler.Job, n)
			for i := range distinct {
				distinct[i] = newJob(t, nil)
			}
			rejected := newJob(t, nil)
			var wg sync.WaitGroup
			var mu sync.Mutex
			sharedCreated := 0
			errs := make(chan error, 3*n)
			for i := 0; i < n; i++ {
				wg.Add(3)
				go func() {
					defer wg.Done()
					got, created, err := s.CreateJob(ctx, distinct[i], "")
					if err != nil || !created || got.ID != distinct[i].ID || got.State != scheduler.Submitted {
						errs <- fmt.Errorf("distinct %d: created=%v state=%s err=%v", i, created, got.State, err)
					}
				}()
				go func() {
					defer wg.Done()
					_, created, err := s.CreateJob(ctx, shared, "")
					if err != nil {
						errs <- fmt.Errorf("shared: %v", err)
						return
					}
					if created {
						mu.Lock()
						sharedCreated++
						mu.Unlock()
					}
				}()
				go func() {
					defer wg.Done()
					if i%8 == 0 {
						j, created, err := s.CreateJob(ctx, rejected, "too big")
						if err != nil || j.State != scheduler.Rejected || j.FinishedAt == nil {
							errs <- fmt.Errorf("rejected: %+v %v %v", j.State, created, err)
						}
						return
					}
					if i%2 == 1 {
						if _, _, err := s.CreateJob(ctx, conflicting, ""); !errors.Is(err, scheduler.ErrConflict) {
							errs <- fmt.Errorf("conflicting body: %v, want ErrConflict", err)
						}
						return
					}
					if _, created, err := s.CreateJob(ctx, existing, ""); err != nil || created {
						errs <- fmt.Errorf("repeat of a stored job: created=%v err=%v", created, err)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			if sharedCreated != 1 {
				t.Errorf("shared job created %d times", sharedCreated)
			}
			for _, id := range []string{shared.ID, existing.ID, rejected.ID, distinct[0].ID, distinct[n-1].ID} {
				var rows int
				s.DB().QueryRow(`SELECT count(*) FROM jobs WHERE id = $1`, id).Scan(&rows)
				evs, _ := s.Events(ctx, id)
				events := len(evs)
				want := 1
				if id == rejected.ID {
					want = 2
				}
				if rows != 1 || events != want {
					t.Errorf("job %s: %d rows and %d events, want 1 and %d", id, rows, events, want)
				}
			}
			evs, err := s.Events(ctx, rejected.ID)
			if err != nil || len(evs) != 2 || evs[0].To != scheduler.Submitted || evs[1].To != scheduler.Rejected || evs[1].Reason != "too big" {
				t.Errorf("rejected job's events %+v %v", evs, err)
			}
		})
	}
}

// TestGroupCommitCancelledContext: a submission whose caller gave up
// before its batch was written is not written.
func TestGroupCommitCancelledContext(t *testing.T) {
	s, _ := openStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	j := newJob(t, nil)
	if _, _, err := s.CreateJob(ctx, j, ""); err == nil {
		t.Fatal("created with a cancelled context")
	}
	var rows int
	s.DB().QueryRow(`SELECT count(*) FROM jobs WHERE id = $1`, j.ID).Scan(&rows)
	if rows != 0 {
		t.Fatalf("%d rows for a submission whose caller had gone", rows)
	}
}

// TestTransitionMany: one batch with good, stale, unknown, illegal and
// repeated changes; each reported on its own, the good ones written with
// their events.
func TestTransitionMany(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 4; i++ {
		j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	unknown := newJob(t, nil).ID
	res, err := s.TransitionMany(ctx, []scheduler.Change{
		{ID: ids[0], From: scheduler.Submitted, To: scheduler.Queued, Reason: "queued", Mutate: func(j *scheduler.Job) { j.WaitingReason = "queued" }},
		{ID: ids[1], From: scheduler.Queued, To: scheduler.Placing, Reason: "stale"},
		{ID: unknown, From: scheduler.Submitted, To: scheduler.Queued, Reason: "unknown"},
		{ID: ids[2], From: scheduler.Submitted, To: scheduler.Running, Reason: "illegal"},
		{ID: ids[3], From: scheduler.Submitted, To: scheduler.Queued, Reason: "first"},
		{ID: ids[3], From: scheduler.Queued, To: scheduler.Cancelled, Reason: "second"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Err != nil || res[0].Job.State != scheduler.Queued || res[0].Job.WaitingReason != "queued" {
		t.Errorf("good change: %+v", res[0])
	}
	if !errors.Is(res[1].Err, scheduler.ErrStale) || !errors.Is(res[2].Err, scheduler.ErrNotFound) ||
		!errors.Is(res[3].Err, scheduler.ErrIllegalTransition) {
		t.Errorf("errors: %v / %v / %v", res[1].Err, res[2].Err, res[3].Err)
	}
	if res[4].Err != nil || res[5].Err != nil || res[5].Job.FinishedAt == nil {
		t.Errorf("repeated: %+v %+v", res[4], res[5])
	}
	for i, want := range []scheduler.State{scheduler.Queued, scheduler.Submitted, scheduler.Submitted, scheduler.Cancelled} {
		j, err := s.GetJob(ctx, ids[i])
		if err != nil || j.State != want {
			t.Errorf("job %d: %s %v, want %s", i, j.State, err, want)
		}
	}
	evs, _ := s.Events(ctx, ids[3])
	if len(evs) != 3 || evs[1].Reason != "first" || evs[2].Reason != "second" {
		t.Errorf("events of the repeated job: %+v", evs)
	}
	// Waiting notes: only waiting jobs change.
	if err := s.SetWaitingMany(ctx, []scheduler.WaitingNote{
		{ID: ids[0], Reason: "does not fit now: short of cpus", AtRisk: true},
		{ID: ids[3], Reason: "must not be written", AtRisk: true},
		{ID: unknown, Reason: "nobody"},
	}); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.GetJob(ctx, ids[0]); j.WaitingReason != "does not fit now: short of cpus" || !j.AtRisk {
		t.Errorf("waiting job: %q %v", j.WaitingReason, j.AtRisk)
	}
	if j, _ := s.GetJob(ctx, ids[3]); j.WaitingReason == "must not be written" || j.AtRisk {
		t.Errorf("ended job got a waiting reason: %q %v", j.WaitingReason, j.AtRisk)
	}
}

// TestPowerRecords: power records survive a reopen, with every field.
func TestPowerRecords(t *testing.T) {
	s, url := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	r := power.Record{AgentID: "S1", Hostname: "agent-1", Attributes: map[string]string{"location": "cloud"}, CPUs: 4, MemMB: 16384,
		PricePerHour: 0.24, State: power.StateBooting, Since: now, Requested: true, Failures: 2, LastError: "x", AvoidUntil: now.Add(time.Hour),
		RegisteredAt: now.Add(-time.Hour)}
	if err := s.PutPowerRecord(ctx, r); err != nil {
		t.Fatal(err)
	}
	r.State, r.ReplacedBy = power.StateOn, "S9" // what replaced_by (0018) holds comes back too
	if err := s.PutPowerRecord(ctx, r); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPowerRecord(ctx, power.Record{AgentID: "S2", State: "sideways", Since: now}); err == nil {
		t.Fatal("an unknown state was stored")
	}
	s2, err := Open(ctx, url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.PowerRecords(ctx)
	if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], r) {
		t.Fatalf("read back %+v %v, want %+v", got, err, r)
	}
	// A record written again without it (the old id registered again) is
	// no longer replaced.
	r.ReplacedBy = ""
	if err := s2.PutPowerRecord(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.PowerRecords(ctx); err != nil || len(got) != 1 || got[0].ReplacedBy != "" {
		t.Fatalf("read back %+v %v, want S1 not replaced", got, err)
	}
}
