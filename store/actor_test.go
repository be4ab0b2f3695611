package store

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestActorsAreRecorded: events written under an Actor name the token and
// the client, through the group commit (concurrent submitters with
// different tokens in one batch), a rejected job, a cancel and a kill
// request; the scheduler's own steps name nobody.
func TestActorsAreRecorded(t *testing.T) {
	for _, committers := range []int{0, DefaultCommitters} {
		s, url := openStore(t)
		if committers == 0 {
			s.Close()
			var err error
			s, err = Open(context.Background(), url, WithLogger(quietLog()), WithCommitters(0))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
		}
		ctx := context.Background()
		actors := []Actor{{Name: "ci", Client: "10.0.0.1"}, {Name: "alice", Client: "2001:db8::7"}, {Client: "192.0.2.9"}}
		jobs := make([]scheduler.Job, 30)
		var wg sync.WaitGroup
		for i := range jobs {
			jobs[i] = newJob(t, nil)
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				reject := ""
				if i%10 == 9 {
					reject = "deadline already passed"
				}
				if _, _, err := s.CreateJob(WithActor(ctx, actors[i%3]), jobs[i], reject); err != nil {
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		for i, j := range jobs {
			evs, err := s.Events(ctx, j.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := 1
			if i%10 == 9 {
				want = 2
			}
			if len(evs) != want {
				t.Fatalf("job %d: %d events, want %d", i, len(evs), want)
			}
			for _, e := range evs {
				if e.Actor != actors[i%3].Name || e.Client != actors[i%3].Client {
					t.Errorf("committers=%d job %d event %s: actor %q client %q, want %+v", committers, i, e.To, e.Actor, e.Client, actors[i%3])
				}
			}
			by, err := s.SubmittedBy(ctx, j.ID)
			if err != nil || by != actors[i%3].Name {
				t.Errorf("job %d submitted by %q (%v), want %q", i, by, err, actors[i%3].Name)
			}
		}
		// A scheduler step under no actor names nobody.
		if _, err := s.Transition(ctx, jobs[0].ID, scheduler.Submitted, scheduler.Queued, "queued", nil); err != nil {
			t.Fatal(err)
		}
		// Cancel under another actor is recorded with that actor.
		admin := Actor{Name: "ops", Client: "10.9.9.9"}
		if _, _, err := s.Cancel(WithActor(ctx, admin), jobs[0].ID, "cancelled through the API"); err != nil {
			t.Fatal(err)
		}
		evs, _ := s.Events(ctx, jobs[0].ID)
		if len(evs) != 3 || evs[1].Actor != "" || evs[1].Client != "" || evs[2].Actor != "ops" || evs[2].Client != "10.9.9.9" || evs[2].To != scheduler.Cancelled {
			t.Fatalf("events after queue and cancel: %+v", evs)
		}
	}
}

// TestCancelOwnOnly: an actor limited to its own jobs cancels those and
// gets ErrNotOwner (nothing changed) for another token's or an anonymous
// job; an unlimited actor cancels anything.
func TestCancelOwnOnly(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	mine, theirs, anon := newJob(t, nil), newJob(t, nil), newJob(t, nil)
	for _, c := range []struct {
		j  scheduler.Job
		by string
	}{{mine, "ci"}, {theirs, "alice"}, {anon, ""}} {
		if _, _, err := s.CreateJob(WithActor(ctx, Actor{Name: c.by, Client: "10.0.0.1"}), c.j, ""); err != nil {
			t.Fatal(err)
		}
	}
	ci := WithActor(ctx, Actor{Name: "ci", Client: "10.0.0.1", OwnOnly: true})
	for _, j := range []scheduler.Job{theirs, anon} {
		got, _, err := s.Cancel(ci, j.ID, "x")
		if !errors.Is(err, ErrNotOwner) {
			t.Fatalf("cancel of another's job: %v", err)
		}
		if got.ID != j.ID {
			t.Errorf("ErrNotOwner should return the job, got %+v", got)
		}
		if now, _ := s.GetJob(ctx, j.ID); now.State != scheduler.Submitted {
			t.Fatalf("refused cancel changed the job: %s", now.State)
		}
	}
	if _, out, err := s.Cancel(ci, mine.ID, "x"); err != nil || out != Cancelled {
		t.Fatalf("cancel own job: %v %v", out, err)
	}
	if _, out, err := s.Cancel(WithActor(ctx, Actor{Name: "ops"}), theirs.ID, "x"); err != nil || out != Cancelled {
		t.Fatalf("admin cancel: %v %v", out, err)
	}
}

// TestCountWaitingBy counts SUBMITTED and QUEUED jobs per submitter only.
func TestCountWaitingBy(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	var ids []string
	for i := 0; i < 5; i++ {
		j := newJob(t, nil)
		if _, _, err := s.CreateJob(WithActor(ctx, Actor{Name: "ci"}), j, ""); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	other := newJob(t, nil)
	if _, _, err := s.CreateJob(WithActor(ctx, Actor{Name: "alice"}), other, ""); err != nil {
		t.Fatal(err)
	}
	anon := newJob(t, nil)
	if _, _, err := s.CreateJob(ctx, anon, ""); err != nil {
		t.Fatal(err)
	}
	rejected := newJob(t, nil)
	if _, _, err := s.CreateJob(WithActor(ctx, Actor{Name: "ci"}), rejected, "no"); err != nil {
		t.Fatal(err)
	}
	s.Transition(ctx, ids[0], scheduler.Submitted, scheduler.Queued, "", nil)
	s.Transition(ctx, ids[1], scheduler.Submitted, scheduler.Queued, "", nil)
	s.Transition(ctx, ids[1], scheduler.Queued, scheduler.Placing, "", nil)
	s.Cancel(ctx, ids[2], "x")
	for name, want := range map[string]int{"ci": 3, "alice": 1, "": 0, "nobody": 0} {
		if n, err := s.CountWaitingBy(ctx, name); err != nil || n != want {
			t.Errorf("CountWaitingBy(%q) = %d, %v; want %d", name, n, err, want)
		}
	}
}
