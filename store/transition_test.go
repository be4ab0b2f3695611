package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/simulate"
)

// TestStoresTransitionAlike: the PostgreSQL store (Transition and
// TransitionMany) and the simulator's MemStore give the same job and the
// same events for the same transitions at the same times: both run
// scheduler.ApplyTransition (#32 defect 5: the simulator neither cleared
// the waiting reason nor set StartedAt/FinishedAt).
func TestStoresTransitionAlike(t *testing.T) {
	type step struct {
		from, to scheduler.State
		reason   string
		mutate   func(*scheduler.Job)
		err      error // a refused step: the same error in every store
	}
	start := func(j *scheduler.Job) { j.Attempt++ } // what Core.Report does on RUNNING
	path := func(end scheduler.State) []step {
		return []step{
			{from: scheduler.Submitted, to: scheduler.Queued, reason: "queued", mutate: func(j *scheduler.Job) { j.WaitingReason = "no room" }},
			{from: scheduler.Queued, to: scheduler.Placing, reason: "placing"},
			{from: scheduler.Placing, to: scheduler.Reserving, reason: "reserving"},
			{from: scheduler.Reserving, to: scheduler.Launching, reason: "driver launched"},
			{from: scheduler.Launching, to: scheduler.Running, reason: "running", mutate: start},
			{from: scheduler.Running, to: end, reason: "ended"},
		}
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"finished", path(scheduler.Finished)},
		{"failed", path(scheduler.Failed)},
		{"cancelled while queued", []step{
			{from: scheduler.Submitted, to: scheduler.Queued, reason: "queued", mutate: func(j *scheduler.Job) { j.WaitingReason = "no room" }},
			{from: scheduler.Queued, to: scheduler.Cancelled, reason: "user"},
		}},
		{"rejected", []step{{from: scheduler.Submitted, to: scheduler.Rejected, reason: "too big"}}},
		{"retried after a lost agent", append(path(scheduler.Queued)[:5:5],
			step{from: scheduler.Running, to: scheduler.Queued, reason: "agent lost", mutate: func(j *scheduler.Job) { j.WaitingReason = "retry: agent lost" }},
			step{from: scheduler.Queued, to: scheduler.Placing, reason: "placing"},
			step{from: scheduler.Placing, to: scheduler.Reserving, reason: "reserving"},
			step{from: scheduler.Reserving, to: scheduler.Launching, reason: "driver launched"},
			step{from: scheduler.Launching, to: scheduler.Running, reason: "running", mutate: start},
			step{from: scheduler.Running, to: scheduler.Finished, reason: "finished"},
		)},
		{"evicted", append(path(scheduler.Queued)[:5:5],
			step{from: scheduler.Running, to: scheduler.Queued, reason: "evicted", mutate: func(j *scheduler.Job) {
				j.Preemptions++
				j.LostWorkSeconds += 90
				j.WaitingReason = "preempted: room for a deadline job"
			}},
			step{from: scheduler.Queued, to: scheduler.Placing, reason: "placing"},
		)},
		{"stale and illegal steps change nothing", []step{
			{from: scheduler.Submitted, to: scheduler.Queued, reason: "queued"},
			{from: scheduler.Submitted, to: scheduler.Queued, reason: "again", err: scheduler.ErrStale},
			{from: scheduler.Queued, to: scheduler.Running, reason: "skip", err: scheduler.ErrIllegalTransition},
			{from: scheduler.Queued, to: scheduler.Placing, reason: "placing"},
		}},
	}

	clock := simulate.NewVirtualClock(time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC))
	pg, _ := openStore(t)
	pg = func() *Store { s := *pg; s.now = clock.Now; return &s }() // the same clock as the MemStore's
	ctx := context.Background()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// The same job three times: moved by Transition, by
			// TransitionMany and by the simulator's store.
			var created [2]scheduler.Job
			for i := range created {
				j, _, err := pg.CreateJob(ctx, newJob(t, nil), "")
				if err != nil {
					t.Fatal(err)
				}
				if created[i], err = pg.GetJob(ctx, j.ID); err != nil {
					t.Fatal(err)
				}
			}
			one, many := created[0].ID, created[1].ID
			mem := simulate.NewMemStore(clock)
			mem.KeepEvents = true
			if _, err := mem.Create(created[0]); err != nil {
				t.Fatal(err)
			}
			for i, st := range c.steps {
				clock.Set(clock.Now().Add(time.Minute))
				memJob, memErr := mem.Transition(ctx, one, st.from, st.to, st.reason, st.mutate)
				pgJob, pgErr := pg.Transition(ctx, one, st.from, st.to, st.reason, st.mutate)
				res, err := pg.TransitionMany(ctx, []scheduler.Change{{ID: many, From: st.from, To: st.to, Reason: st.reason, Mutate: st.mutate}})
				if err != nil {
					t.Fatal(err)
				}
				manyJob, manyErr := res[0].Job, res[0].Err
				for name, err := range map[string]error{"memory": memErr, "Transition": pgErr, "TransitionMany": manyErr} {
					if (st.err == nil) != (err == nil) || (st.err != nil && !errors.Is(err, st.err)) {
						t.Fatalf("step %d %s -> %s in %s: %v, want %v", i, st.from, st.to, name, err, st.err)
					}
				}
				if st.err != nil {
					continue
				}
				sameSubmission(&manyJob, created[0])
				if !reflect.DeepEqual(memJob, pgJob) || !reflect.DeepEqual(pgJob, manyJob) {
					t.Fatalf("step %d %s -> %s:\n   memory %s\nTransition %s\n     many %s\ndiffer in %q, %q", i, st.from, st.to, show(memJob), show(pgJob), show(manyJob), diff(memJob, pgJob), diff(pgJob, manyJob))
				}
			}
			// What each store keeps agrees with what it returned.
			stored, err := pg.GetJob(ctx, one)
			if err != nil {
				t.Fatal(err)
			}
			storedMany, err := pg.GetJob(ctx, many)
			if err != nil {
				t.Fatal(err)
			}
			sameSubmission(&storedMany, created[0])
			memStored, err := mem.Get(one)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(memStored, stored) || !reflect.DeepEqual(stored, storedMany) {
				t.Fatalf("stored jobs differ:\n   memory %s\nTransition %s\n     many %s\nin %q, %q", show(memStored), show(stored), show(storedMany), diff(memStored, stored), diff(stored, storedMany))
			}
			// The same events (the submission aside).
			var memEv, pgEv, manyEv []string
			for _, e := range mem.Events() {
				if e.From != "" {
					memEv = append(memEv, fmt.Sprintf("%s %s->%s %s", e.At.Format(time.TimeOnly), e.From, e.To, e.Reason))
				}
			}
			for _, x := range []struct {
				id  string
				out *[]string
			}{{one, &pgEv}, {many, &manyEv}} {
				evs, err := pg.Events(ctx, x.id)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range evs {
					if e.From != nil {
						*x.out = append(*x.out, fmt.Sprintf("%s %s->%s %s", e.At.UTC().Format(time.TimeOnly), *e.From, e.To, e.Reason))
					}
				}
			}
			if !reflect.DeepEqual(memEv, pgEv) || !reflect.DeepEqual(pgEv, manyEv) {
				t.Fatalf("events differ:\n   memory %q\nTransition %q\n     many %q", memEv, pgEv, manyEv)
			}
		})
	}
}

// sameSubmission gives j (the second job) the first job's submission, the
// only thing in which the two jobs differ.
func sameSubmission(j *scheduler.Job, first scheduler.Job) {
	j.Spec, j.SubmittedAt, j.Fingerprint = first.Spec, first.SubmittedAt, first.Fingerprint
}

// diff names the fields in which a and b differ.
func diff(a, b scheduler.Job) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			out = append(out, fmt.Sprintf("%s: %v / %v", va.Type().Field(i).Name, va.Field(i).Interface(), vb.Field(i).Interface()))
		}
	}
	return out
}

func show(j scheduler.Job) string {
	ts := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.Format(time.TimeOnly)
	}
	return fmt.Sprintf("%s reason=%q risk=%v attempt=%d started=%s last=%s finished=%s preemptions=%d lost=%v",
		j.State, j.WaitingReason, j.AtRisk, j.Attempt, ts(j.StartedAt), ts(j.LastStartedAt), ts(j.FinishedAt), j.Preemptions, j.LostWorkSeconds)
}
