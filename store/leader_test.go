package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/leader"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestLeaseAndFencing: one holder at a time, tokens that grow, renewals
// only by the holder, and a deposed leader's writes refused.
func TestLeaseAndFencing(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if l, err := s.Current(ctx); err != nil || l.Instance != "" || l.Live {
		t.Fatalf("no lease yet: %+v %v", l, err)
	}
	a, ok, err := s.TryAcquire(ctx, "a", "http://a", 300*time.Millisecond)
	if err != nil || !ok || a.Token != 1 || !a.Live {
		t.Fatalf("first acquire: %+v %v %v", a, ok, err)
	}
	if b, ok, err := s.TryAcquire(ctx, "b", "http://b", time.Second); err != nil || ok || b.Instance != "a" || b.URL != "http://a" {
		t.Fatalf("second instance took a held lease: %+v %v %v", b, ok, err)
	}
	if _, err := s.Renew(ctx, "a", a.Token, 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Renew(ctx, "b", a.Token, time.Second); !errors.Is(err, leader.ErrLost) {
		t.Fatalf("renewal by a non-holder: %v", err)
	}
	fa := s.Fenced(a.Token)
	job, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fa.Transition(ctx, job.ID, scheduler.Submitted, scheduler.Queued, "queued by a", nil); err != nil {
		t.Fatalf("the leader's fenced write: %v", err)
	}
	time.Sleep(400 * time.Millisecond) // a is paused past its lease
	b, ok, err := s.TryAcquire(ctx, "b", "http://b", time.Second)
	if err != nil || !ok || b.Token != a.Token+1 {
		t.Fatalf("take-over after expiry: %+v %v %v", b, ok, err)
	}
	// a wakes up: every leader-only write fails, its renewal too.
	if _, err := fa.Transition(ctx, job.ID, scheduler.Queued, scheduler.Placing, "placing by a", nil); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's transition: %v, want ErrFenced", err)
	}
	if err := fa.SetWaitingMany(ctx, []scheduler.WaitingNote{{ID: job.ID, Reason: "x"}}); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's waiting notes: %v", err)
	}
	if err := fa.PutPowerRecord(ctx, power.Record{AgentID: "S1", State: power.StateOff, Since: time.Now()}); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's power record: %v", err)
	}
	// The writes of the Mesos side (offers): driver records, failed-run
	// counts, the framework id and reservations (#32 defect 3: they were
	// not fenced).
	if err := fa.PutDriver(ctx, scheduler.DriverRecord{JobID: job.ID, Attempt: 1, TaskID: "t-1"}); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's driver record: %v, want ErrFenced", err)
	}
	if _, err := fa.CountFailedRun(ctx, job.ID, "t-1"); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's failed-run count: %v, want ErrFenced", err)
	}
	if err := fa.SetFrameworkID(ctx, "fw-a"); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's framework id: %v, want ErrFenced", err)
	}
	if err := fa.SetFrameworkID(ctx, ""); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader forgetting the framework id: %v, want ErrFenced", err)
	}
	if err := fa.PutReservation(ctx, scheduler.Reservation{JobID: job.ID, AgentID: "S1", Role: "r", CPUs: 1, MemMB: 1, State: scheduler.ResReserving}); !errors.Is(err, ErrFenced) {
		t.Fatalf("deposed leader's reservation: %v, want ErrFenced", err)
	}
	if _, err := s.Driver(ctx, job.ID); !errors.Is(err, scheduler.ErrNotFound) {
		t.Fatalf("a refused driver record was stored: %v", err)
	}
	if id, err := s.FrameworkID(ctx); err != nil || id != "" {
		t.Fatalf("a refused framework id was stored: %q %v", id, err)
	}
	if rs, err := s.Reservations(ctx, job.ID); err != nil || len(rs) != 0 {
		t.Fatalf("a refused reservation was stored: %+v %v", rs, err)
	}
	if j, _ := s.GetJob(ctx, job.ID); j.FailedRuns != 0 {
		t.Fatalf("a refused failed-run count was stored: %d", j.FailedRuns)
	}
	if _, err := s.Renew(ctx, "a", a.Token, time.Second); !errors.Is(err, leader.ErrLost) {
		t.Fatalf("deposed leader renewed: %v", err)
	}
	if j, _ := s.GetJob(ctx, job.ID); j.State != scheduler.Queued {
		t.Fatalf("job %s after the refused write", j.State)
	}
	fb := s.Fenced(b.Token)
	if _, err := fb.Transition(ctx, job.ID, scheduler.Queued, scheduler.Placing, "placing by b", nil); err != nil {
		t.Fatalf("the new leader's write: %v", err)
	}
	if err := fb.PutDriver(ctx, scheduler.DriverRecord{JobID: job.ID, Attempt: 1, TaskID: "t-1"}); err != nil {
		t.Fatalf("the new leader's driver record: %v", err)
	}
	if n, err := fb.CountFailedRun(ctx, job.ID, "t-1"); err != nil || n != 1 {
		t.Fatalf("the new leader's failed-run count: %d %v", n, err)
	}
	if err := fb.SetFrameworkID(ctx, "fw-b"); err != nil {
		t.Fatalf("the new leader's framework id: %v", err)
	}
	if err := fb.PutReservation(ctx, scheduler.Reservation{JobID: job.ID, AgentID: "S1", Role: "r", CPUs: 1, MemMB: 1, State: scheduler.ResReserving}); err != nil {
		t.Fatalf("the new leader's reservation: %v", err)
	}
	// Release: the lease runs out at once.
	if err := s.Release(ctx, "b", b.Token); err != nil {
		t.Fatal(err)
	}
	if c, ok, err := s.TryAcquire(ctx, "c", "", time.Second); err != nil || !ok || c.Token != b.Token+1 {
		t.Fatalf("acquire after release: %+v %v %v", c, ok, err)
	}
}
