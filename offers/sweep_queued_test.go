package offers

import (
	"context"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// statesStore is a JobStore whose unfinished jobs are the given ones, in
// their states.
type statesStore struct {
	memStore
	unfinished []scheduler.Job
}

func (s *statesStore) Unfinished(context.Context) ([]scheduler.Job, error) {
	return s.unfinished, nil
}

// followed makes the adapter follow j with plan in phase ph, its machine
// awaiting an answer: no follower, so the sweep is what is looked at.
func followed(c *Cluster, j scheduler.Job, plan placement.Plan, ph lifecycle.Phase) {
	lj := &liveJob{signal: make(chan struct{}, 1), st: lifecycle.New(lifecycle.Config{}, j, plan, ph, scheduler.DriverRecord{}, time.Now())}
	lj.st.Busy = lifecycle.ActKillDriver
	c.jobs[j.ID] = lj
}

// TestSweepReleasesAQueuedJobsStrayReservation: on the emulator, a job's
// release skips an agent that is disconnected (its agent process crashed),
// the job goes back to the queue (QUEUED: no plan, nothing follows it),
// and the agent comes back with the job's reservation. The sweep gives
// that reservation back: no plan of the job holds it. A RUNNING job's
// reservation, and one of a QUEUED job the adapter follows (placed again
// since the store was read), are kept. In both reservation modes: from
// offers, the release no longer waits for the disconnected agent (it
// timed out waiting for an offer the agent cannot make).
func TestSweepReleasesAQueuedJobsStrayReservation(t *testing.T) {
	inPinModes(t, sweepReleasesAQueuedJobsStrayReservation)
}

func sweepReleasesAQueuedJobsStrayReservation(t *testing.T, mode string) {
	m, quiet, op, ctx, ids, r, _ := pinnerOnEmulator(t, mode, 2, 2)
	a, b := ids[0], ids[1]
	job := func(id string, st scheduler.State) scheduler.Job {
		return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 512}, State: st}
	}
	queued := job("55555555-5555-5555-5555-555555555555", scheduler.Queued)
	running := job("66666666-6666-6666-6666-666666666666", scheduler.Running)
	placedAgain := job("77777777-7777-7777-7777-777777777777", scheduler.Queued)
	onAB := placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}, {AgentID: b, Executors: 1}}}
	for _, j := range []scheduler.Job{queued, running, placedAgain} {
		if err := r.Reserve(ctx, j, onAB); err != nil {
			t.Fatal(err)
		}
	}

	// The queued job gave its resources back while b was disconnected:
	// its release succeeds without b, and b comes back with them.
	if err := m.CrashAgent(b); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, queued.ID); err != nil {
		t.Fatal(err)
	}
	if err := m.RestartAgent(b); err != nil {
		t.Fatal(err)
	}
	if h := heldFor(t, ctx, op, queued.ID); len(h) != 1 || h[b] == [2]float64{} {
		t.Fatalf("the queued job holds %v; want its reservation on %s only (back with the agent)", h, b)
	}

	st := &statesStore{memStore: *newMemStore(), unfinished: []scheduler.Job{queued, running, placedAgain}}
	c := NewCluster(ClusterConfig{Operator: op, Reserver: r, Store: st, Log: quiet, Retry: 50 * time.Millisecond})
	cctx, stop := context.WithCancel(ctx)
	t.Cleanup(func() { stop(); c.Wait() })
	c.mu.Lock()
	c.ctx = cctx // as Start does, without its loops: the test sweeps
	followed(c, placedAgain, onAB, lifecycle.Running)
	c.mu.Unlock()
	if err := c.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	// The release of the queued job's stray runs as a follower of the job
	// (so that a new plan of it waits for it): wait for it to end.
	c.mu.Lock()
	lj := c.jobs[queued.ID]
	c.mu.Unlock()
	if lj != nil {
		select {
		case <-lj.done:
		case <-ctx.Done():
			t.Fatal("the release of the queued job's stray reservation did not end")
		}
	}
	if h := heldFor(t, ctx, op, queued.ID); len(h) != 0 {
		t.Errorf("after the sweep the queued job still holds %v: a stray reservation of a job in the queue is kept", h)
	}
	for _, j := range []scheduler.Job{running, placedAgain} {
		if h := heldFor(t, ctx, op, j.ID); len(h) != 2 {
			t.Errorf("job %s (%s, followed %v) holds %v after the sweep; want its 2 reservations kept", j.ID, j.State, j.ID == placedAgain.ID, h)
		}
	}
	c.mu.Lock()
	_, still := c.jobs[queued.ID]
	c.mu.Unlock()
	if still {
		t.Error("the queued job is still followed after its stray reservation was released")
	}
}

// TestReserveDropsAnEarlierPlansReservations: on the emulator, a job that
// still holds a reservation of an earlier plan (a release missed its agent)
// is placed again on other agents: Reserve unreserves the reservation its
// new plan does not name, and keeps the one it does, adding what the new
// plan needs there; in both reservation modes (from offers it kept it).
func TestReserveDropsAnEarlierPlansReservations(t *testing.T) {
	inPinModes(t, reserveDropsAnEarlierPlansReservations)
}

func reserveDropsAnEarlierPlansReservations(t *testing.T, mode string) {
	_, _, op, ctx, ids, r, jr := pinnerOnEmulator(t, mode, 3, 2)
	a, b, c := ids[0], ids[1], ids[2]
	j := scheduler.Job{Spec: scheduler.Spec{ID: "88888888-8888-8888-8888-888888888888", Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 512}}
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}, {AgentID: b, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	// The new plan: 2 executors on b, 1 on c; a is not named.
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: b, Executors: 2}, {AgentID: c, Executors: 1}, {AgentID: a, Executors: 0}}}); err != nil {
		t.Fatal(err)
	}
	h := heldFor(t, ctx, op, j.ID)
	if len(h) != 2 || h[b] != [2]float64{2, 1792} || h[c] != [2]float64{1, 896} {
		t.Errorf("after the new plan the job holds %v; want %s: 2 cpus 1792 MiB, %s: 1 cpu 896 MiB, nothing on %s (the earlier plan's)", h, b, c, a)
	}
	if rec := jr.recs[j.ID+"/"+a]; rec.State != scheduler.ResReleased {
		t.Errorf("journal of the earlier plan's reservation on %s: %+v; want released", a, rec)
	}
}

// TestSweepDropsAnEarlierPlansReservationOfARunningJob: on the emulator, a
// job placed again runs on agent b; agent a, which its release missed
// while a was disconnected, is back with a reservation of the earlier
// plan. The sweep unreserves it and keeps the one on b; a job being
// reserved, or one whose plan is not known, is left to its follower. In
// both reservation modes (from offers, the sweep kept it until the job
// ended).
func TestSweepDropsAnEarlierPlansReservationOfARunningJob(t *testing.T) {
	inPinModes(t, sweepDropsAnEarlierPlansReservationOfARunningJob)
}

func sweepDropsAnEarlierPlansReservationOfARunningJob(t *testing.T, mode string) {
	_, quiet, op, ctx, ids, r, _ := pinnerOnEmulator(t, mode, 2, 3)
	a, b := ids[0], ids[1]
	mk := func(id string) scheduler.Job {
		return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 512}, State: scheduler.Running}
	}
	running, reserving := mk("99999999-9999-9999-9999-999999999999"), mk("aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")
	both := placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}, {AgentID: b, Executors: 1}}}
	onB := placement.Plan{Assignments: []placement.Assignment{{AgentID: b, Executors: 1}, {AgentID: a, Executors: 0}}}
	for _, j := range []scheduler.Job{running, reserving} {
		if err := r.Reserve(ctx, j, both); err != nil {
			t.Fatal(err)
		}
	}
	st := &statesStore{memStore: *newMemStore(), unfinished: []scheduler.Job{running, reserving}}
	c := NewCluster(ClusterConfig{Operator: op, Reserver: r, Store: st, Log: quiet})
	planless := mk("bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb")
	if err := r.Reserve(ctx, planless, both); err != nil {
		t.Fatal(err)
	}
	followed(c, running, onB, lifecycle.Running)
	followed(c, reserving, onB, lifecycle.Reserving)
	followed(c, planless, placement.Plan{}, lifecycle.Running) // resumed with no plan stored
	if err := c.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if h := heldFor(t, ctx, op, running.ID); len(h) != 1 || h[b] != [2]float64{1, 896} {
		t.Errorf("the running job holds %v after the sweep; want only its plan's 1 cpu 896 MiB on %s", h, b)
	}
	for _, j := range []scheduler.Job{reserving, planless} {
		if h := heldFor(t, ctx, op, j.ID); len(h) != 2 {
			t.Errorf("job %s (being reserved, or with no plan known) holds %v after the sweep; want both reservations left to its follower", j.ID, h)
		}
	}
}
