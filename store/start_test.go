package store

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestStartPlaced: a queued job's start is both moves with their events and
// the plan, in one transaction; a job not QUEUED, or a failure of any
// part, writes nothing.
func TestStartPlaced(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, _ := s.CreateJob(ctx, newJob(t, nil), "")
	plan := placement.Plan{Policy: "bfd", Outcome: "heuristic", Assignments: []placement.Assignment{{AgentID: "S1", Hostname: "h1", Executors: 2}}}
	start := scheduler.Placed{ID: j.ID, Plan: plan, PlacingReason: "placing with bfd", ReservingReason: "plan (bfd)",
		Mutate: func(x *scheduler.Job) { x.AtRisk = true }}
	// Not QUEUED yet: stale, nothing written.
	if _, err := s.StartPlaced(ctx, start); !errors.Is(err, scheduler.ErrStale) {
		t.Fatalf("start of a SUBMITTED job: %v, want ErrStale", err)
	}
	if _, err := s.Transition(ctx, j.ID, scheduler.Submitted, scheduler.Queued, "queued", func(x *scheduler.Job) { x.WaitingReason = "does not fit now" }); err != nil {
		t.Fatal(err)
	}
	// A failure of the second event rolls back the whole start.
	_, err := s.DB().Exec(`CREATE FUNCTION fail_reserving() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN IF NEW.to_state = 'RESERVING' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END; $$;
		CREATE TRIGGER fail_reserving BEFORE INSERT ON job_events FOR EACH ROW EXECUTE FUNCTION fail_reserving();`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartPlaced(ctx, start); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("err = %v, want the injected failure", err)
	}
	got, _ := s.GetJob(ctx, j.ID)
	rows, _ := s.Placement(ctx, j.ID)
	evs, _ := s.Events(ctx, j.ID)
	if got.State != scheduler.Queued || len(rows) != 0 || len(evs) != 2 {
		t.Fatalf("after a failed start: %s, placement %+v, %d events; want QUEUED, none, 2", got.State, rows, len(evs))
	}
	if _, err := s.DB().Exec(`DROP TRIGGER fail_reserving ON job_events`); err != nil {
		t.Fatal(err)
	}
	got, err = s.StartPlaced(ctx, start)
	if err != nil {
		t.Fatal(err)
	}
	stored, _ := s.GetJob(ctx, j.ID)
	for _, x := range []scheduler.Job{got, stored} {
		if x.State != scheduler.Reserving || !x.AtRisk || x.WaitingReason != "" {
			t.Fatalf("started job %s at risk %v reason %q; want RESERVING, true, none", x.State, x.AtRisk, x.WaitingReason)
		}
	}
	evs, _ = s.Events(ctx, j.ID)
	if len(evs) != 4 || evs[2].To != scheduler.Placing || evs[2].Reason != "placing with bfd" ||
		evs[3].To != scheduler.Reserving || evs[3].Reason != "plan (bfd)" || *evs[3].From != scheduler.Placing {
		t.Fatalf("events %+v", evs)
	}
	rows, _ = s.Placement(ctx, j.ID)
	if len(rows) != 1 || rows[0].AgentID != "S1" || rows[0].Executors != 2 || rows[0].Policy != "bfd" {
		t.Fatalf("placement %+v", rows)
	}
	// Started already: stale.
	if _, err := s.StartPlaced(ctx, start); !errors.Is(err, scheduler.ErrStale) {
		t.Fatalf("second start: %v, want ErrStale", err)
	}
}
