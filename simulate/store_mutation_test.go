package simulate

// Tests of the simulator's in-memory store and the core's view of it
// (store.go, corestore.go; issue 33).

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// stepClock is a clock that reads a time the test sets.
type stepClock struct{ now time.Time }

func (c *stepClock) Now() time.Time                         { return c.now }
func (c *stepClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func specJob(id string, submitted time.Time) scheduler.Job {
	j := scheduler.Job{SubmittedAt: submitted}
	j.ID = id
	return j
}

// TestMemStoreByHand: creation order, the event log stamped by the store's
// clock, unfinished jobs by submission then id, and the refusals of every
// call on an unknown or stale job.
func TestMemStoreByHand(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := &stepClock{now: t0}
	s := NewMemStore(clock)
	s.KeepEvents = true
	// Created c, a, b, d; c and b submitted at t0+1s, a at t0+2s, d at t0.
	for _, j := range []scheduler.Job{specJob("c", t0.Add(time.Second)), specJob("a", t0.Add(2*time.Second)), specJob("b", t0.Add(time.Second)), specJob("d", t0)} {
		got, err := s.Create(j)
		if err != nil || got.State != scheduler.Submitted {
			t.Fatalf("create %s: %+v %v", j.ID, got, err)
		}
	}
	var order []string
	for _, j := range s.Jobs() {
		order = append(order, j.ID)
	}
	if strings.Join(order, ",") != "c,a,b,d" {
		t.Errorf("Jobs in %v, want creation order c,a,b,d", order)
	}
	clock.now = t0.Add(time.Minute)
	if _, err := s.Transition(ctx, "d", scheduler.Submitted, scheduler.Rejected, "no", nil); err != nil {
		t.Fatal(err)
	}
	u, err := s.Unfinished(ctx)
	if err != nil {
		t.Fatal(err)
	}
	order = order[:0]
	for _, j := range u {
		order = append(order, j.ID)
	}
	// d is rejected (terminal); b and c tie at t0+1s: by id.
	if strings.Join(order, ",") != "b,c,a" {
		t.Errorf("Unfinished in %v, want b,c,a", order)
	}
	ev := s.Events()
	if len(ev) != 5 || ev[4].JobID != "d" || ev[4].From != scheduler.Submitted || ev[4].To != scheduler.Rejected || ev[4].Reason != "no" || !ev[4].At.Equal(t0.Add(time.Minute)) ||
		ev[0].JobID != "c" || ev[0].To != scheduler.Submitted || !ev[0].At.Equal(t0) {
		t.Errorf("events %+v", ev)
	}
	ev[0].JobID = "changed"
	if s.Events()[0].JobID != "c" {
		t.Error("Events returned the log itself")
	}
	// Without KeepEvents: no log.
	quiet := NewMemStore(clock)
	if _, err := quiet.Create(specJob("q", t0)); err != nil || len(quiet.Events()) != 0 {
		t.Errorf("events without KeepEvents: %v %v", quiet.Events(), err)
	}

	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, scheduler.ErrNotFound) {
			t.Errorf("%s of an unknown job: %v, want ErrNotFound", what, err)
		}
	}
	stale := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, scheduler.ErrStale) {
			t.Errorf("%s: %v, want ErrStale", what, err)
		}
	}
	_, err = s.Get("zz")
	notFound("Get", err)
	_, err = s.Transition(ctx, "zz", scheduler.Submitted, scheduler.Queued, "", nil)
	notFound("Transition", err)
	notFound("SetWaiting", s.SetWaiting(ctx, "zz", "r", false))
	notFound("SavePlacement", s.SavePlacement(ctx, "zz", placement.Plan{}))
	_, err = s.RequestPreemption(ctx, "zz", "r")
	notFound("RequestPreemption", err)
	_, err = s.StartPlaced(ctx, scheduler.Placed{ID: "zz"})
	notFound("StartPlaced", err)
	if _, ok := s.Plan("a"); ok {
		t.Error("a plan before any was saved")
	}

	// d is rejected: not waiting, not active, not queued.
	stale("SetWaiting on a rejected job", s.SetWaiting(ctx, "d", "r", true))
	_, err = s.RequestPreemption(ctx, "d", "r")
	stale("RequestPreemption of a rejected job", err)
	_, err = s.StartPlaced(ctx, scheduler.Placed{ID: "a"})
	stale("StartPlaced of a submitted job", err)
	if j, _ := s.Get("a"); j.State != scheduler.Submitted {
		t.Errorf("a refused StartPlaced moved the job to %s", j.State)
	}

	// a: queued, then placed: PLACING and RESERVING with the reasons, the
	// plan saved, the mutation applied; then a preemption request.
	if _, err := s.Transition(ctx, "a", scheduler.Submitted, scheduler.Queued, "q", nil); err != nil {
		t.Fatal(err)
	}
	plan := placement.Plan{Policy: "bfd", CostMicroUSDPerHour: 7}
	j, err := s.StartPlaced(ctx, scheduler.Placed{ID: "a", Plan: plan, PlacingReason: "placing", ReservingReason: "reserving",
		Mutate: func(j *scheduler.Job) { j.WaitingReason = "mutated" }})
	if err != nil || j.State != scheduler.Reserving {
		t.Fatalf("StartPlaced: %+v %v", j, err)
	}
	if p, ok := s.Plan("a"); !ok || p.Policy != "bfd" || p.CostMicroUSDPerHour != 7 {
		t.Errorf("plan %+v %v", p, ok)
	}
	ev = s.Events()
	n := len(ev)
	if ev[n-2].Reason != "placing" || ev[n-2].To != scheduler.Placing || ev[n-1].Reason != "reserving" || ev[n-1].To != scheduler.Reserving {
		t.Errorf("StartPlaced's events %+v", ev[n-2:])
	}
	j, err = s.RequestPreemption(ctx, "a", "deadline")
	if err != nil || j.PreemptRequested != "deadline" {
		t.Errorf("RequestPreemption: %+v %v", j, err)
	}
	if last := s.Events()[len(s.Events())-1]; last.Reason != "preemption requested: deadline" || last.From != scheduler.Reserving || last.To != scheduler.Reserving {
		t.Errorf("preemption event %+v", last)
	}
}

// TestCoreStoreByHand: the core's batch calls made of one-job calls: a
// change that fails leaves the others done; waiting notes of jobs gone or
// no longer waiting are skipped; a missing plan is ErrNotFound.
func TestCoreStoreByHand(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := coreStore{NewMemStore(&stepClock{now: t0})}
	for _, id := range []string{"a", "b", "c"} {
		if _, err := s.Create(specJob(id, t0)); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.TransitionMany(ctx, []scheduler.Change{
		{ID: "a", From: scheduler.Submitted, To: scheduler.Queued, Reason: "q"},
		{ID: "zz", From: scheduler.Submitted, To: scheduler.Queued},
		{ID: "b", From: scheduler.Queued, To: scheduler.Placing}, // stale
		{ID: "c", From: scheduler.Submitted, To: scheduler.Rejected, Mutate: func(j *scheduler.Job) { j.WaitingReason = "x" }},
	})
	if err != nil || len(res) != 4 {
		t.Fatalf("%+v %v", res, err)
	}
	if res[0].Err != nil || res[0].Job.State != scheduler.Queued || !errors.Is(res[1].Err, scheduler.ErrNotFound) ||
		!errors.Is(res[2].Err, scheduler.ErrStale) || res[3].Err != nil || res[3].Job.State != scheduler.Rejected {
		t.Errorf("results %+v", res)
	}
	if err := s.SetWaitingMany(ctx, []scheduler.WaitingNote{
		{ID: "a", Reason: "room", AtRisk: true}, {ID: "zz", Reason: "gone"}, {ID: "c", Reason: "rejected"}, {ID: "b", Reason: "order"},
	}); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get("a"); j.WaitingReason != "room" || !j.AtRisk {
		t.Errorf("a: %+v", j)
	}
	if j, _ := s.Get("b"); j.WaitingReason != "order" || j.AtRisk {
		t.Errorf("b (noted after the others): %+v", j)
	}
	if _, err := s.Plan(ctx, "a"); !errors.Is(err, scheduler.ErrNotFound) {
		t.Errorf("Plan without one: %v", err)
	}
	if err := s.SavePlacement(ctx, "a", placement.Plan{Policy: "dap"}); err != nil {
		t.Fatal(err)
	}
	if p, err := s.Plan(ctx, "a"); err != nil || p.Policy != "dap" {
		t.Errorf("Plan: %+v %v", p, err)
	}
}
