package offers

import (
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestReserveDoesNotWaitForAStrayInUse: on the emulator, a job's earlier
// plan reserved on agent a, and an executor of that run (a stand-in
// driver's task in the job's role) still runs on the reservation when the
// job is placed again on agent b. The stray on a cannot be unreserved
// while the executor runs: the operator API refuses it (409) and, from
// offers, resources in use are never offered. Reserve must not wait for
// it: the new plan does not need it. From offers it waited for the whole
// timeout (60 s here) before the job could start; it must be done well
// within half of it. The stray stays (journalled as it was) and the leak
// sweep does not wait on it either; once the executor is gone, the sweep
// gives it back. In both reservation modes.
func TestReserveDoesNotWaitForAStrayInUse(t *testing.T) {
	inPinModes(t, reserveDoesNotWaitForAStrayInUse)
}

func reserveDoesNotWaitForAStrayInUse(t *testing.T, mode string) {
	m, quiet, op, ctx, ids, r, jr := pinnerOnEmulator(t, mode, 2, 2)
	a, b := ids[0], ids[1]
	j := scheduler.Job{Spec: scheduler.Spec{ID: "eeeeeeee-eeee-eeee-eeee-eeeeeeeeeeee", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 512}, State: scheduler.Launching}
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	// The earlier run's driver is gone (its framework disconnected, its
	// failover timeout of an hour running); its executor runs on.
	s, fwID := standInDriver(t, ctx, op.ep.Base(), quiet, scheduler.Role(j.ID), j.ID, 3600)
	s.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		f, _ := frameworkOf(m, fwID)
		if !f.Connected && f.Tasks == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stand-in driver's framework %+v: want it disconnected with its executor", f)
		}
	}

	// The timeout of one operation is a minute (pinnerOnEmulator).
	const bound = 30 * time.Second
	onB := placement.Plan{Assignments: []placement.Assignment{{AgentID: b, Executors: 1}, {AgentID: a, Executors: 0}}}
	began := time.Now()
	if err := r.Reserve(ctx, j, onB); err != nil {
		t.Fatal(err)
	}
	took := time.Since(began)
	t.Logf("%s: Reserve of the new plan took %s with the earlier plan's reservation in use", mode, took.Round(time.Millisecond))
	if took >= bound {
		t.Fatalf("Reserve of the new plan took %s with the earlier plan's reservation on %s in use; want well within %s: the job's start waited for a reservation its plan does not need", took, a, bound)
	}
	h := heldFor(t, ctx, op, j.ID)
	if len(h) != 2 || h[b] != [2]float64{1, 896} || h[a] != [2]float64{1, 896} {
		t.Fatalf("after the new plan the job holds %v; want %s: 1 cpu 896 MiB (the plan) and the earlier plan's on %s (in use)", h, b, a)
	}
	if rec := jr.recs[j.ID+"/"+a]; rec.State == scheduler.ResReleased {
		t.Errorf("journal of the stray on %s: %+v; want it not released (Mesos still holds it)", a, rec)
	}

	st := &statesStore{memStore: *newMemStore(), unfinished: []scheduler.Job{j}}
	c := NewCluster(ClusterConfig{Operator: op, Reserver: r, Store: st, Log: quiet})
	followed(c, j, onB, lifecycle.Running)
	began = time.Now()
	if err := c.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took >= bound {
		t.Errorf("the sweep took %s with the stray in use; want well within %s", took, bound)
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 2 {
		t.Fatalf("after a sweep with the stray in use the job holds %v; want both", h)
	}

	// The earlier run's executor goes (its framework torn down).
	if err := op.Teardown(ctx, fwID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if err := c.sweep(ctx); err != nil {
			t.Fatal(err)
		}
		h := heldFor(t, ctx, op, j.ID)
		if len(h) == 1 && h[b] == [2]float64{1, 896} {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job holds %v after sweeps with the executor gone; want only its plan's on %s: the stray is never released", h, b)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if rec := jr.recs[j.ID+"/"+a]; rec.State != scheduler.ResReleased {
		t.Errorf("journal of the stray on %s after the sweep: %+v; want released", a, rec)
	}
}

// frameworkOf is what the emulator shows of framework id, and whether it
// lists it.
func frameworkOf(m *mesossim.Master, id string) (mesossim.FrameworkInfo, bool) {
	for _, f := range m.Frameworks() {
		if f.ID == id {
			return f, true
		}
	}
	return mesossim.FrameworkInfo{}, false
}
