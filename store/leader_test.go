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
	// Release: the lease runs out at once.
	if err := s.Release(ctx, "b", b.Token); err != nil {
		t.Fatal(err)
	}
	if c, ok, err := s.TryAcquire(ctx, "c", "", time.Second); err != nil || !ok || c.Token != b.Token+1 {
		t.Fatalf("acquire after release: %+v %v %v", c, ok, err)
	}
}
