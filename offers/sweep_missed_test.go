package offers

import (
	"slices"
	"testing"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestReleaseMissedOnADisconnectedAgentIsSweptWhenItIsBack: on the
// emulator, a job ends while agent b, which holds one of its
// reservations, is disconnected. The release succeeds without b and the
// journal says every reservation is released. With the operator API, b
// was deactivated before it went, so the unreserve is sent and taken
// (202): the master shows b without the reservation, yet b comes back
// with what it checkpointed. From offers, b is not offered, so nothing is
// sent. Either way b is back with the reservation; the journal still
// says released, and the leak sweep, which reads the labels Mesos shows,
// gives it back. From offers, a deactivated agent is not offered either:
// the sweep does not try it (no "releasing" warning every sweep) until it
// is reactivated.
func TestReleaseMissedOnADisconnectedAgentIsSweptWhenItIsBack(t *testing.T) {
	inPinModes(t, releaseMissedOnADisconnectedAgentIsSwept)
}

func releaseMissedOnADisconnectedAgentIsSwept(t *testing.T, mode string) {
	m, _, op, ctx, ids, r, jr := pinnerOnEmulator(t, mode, 2, 1)
	a, b := ids[0], ids[1]
	j := scheduler.Job{Spec: scheduler.Spec{ID: "cccccccc-cccc-cccc-cccc-cccccccccccc", Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 512}, State: scheduler.Finished}
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}, {AgentID: b, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	if mode == "operator" {
		if err := op.DeactivateAgent(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.CrashAgent(b); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, j.ID); err != nil {
		t.Fatalf("release with agent %s disconnected: %v; want it done without the agent", b, err)
	}
	for _, ag := range []string{a, b} {
		if rec := jr.recs[j.ID+"/"+ag]; rec.State != scheduler.ResReleased {
			t.Errorf("journal of %s after the release: %+v; want released", ag, rec)
		}
	}
	h := heldFor(t, ctx, op, j.ID)
	if mode == "operator" && len(h) != 0 {
		t.Fatalf("the master shows %v after the unreserve (202) on the disconnected agent; want nothing (its agent kept it)", h)
	}
	if mode == "offers" && (len(h) != 1 || h[b] == [2]float64{}) {
		t.Fatalf("the master shows %v after the release from offers; want the reservation on %s (not offered: nothing sent)", h, b)
	}
	if err := m.RestartAgent(b); err != nil {
		t.Fatal(err)
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 1 || h[b] == [2]float64{} {
		t.Fatalf("the job holds %v with agent %s back; want its reservation there (checkpointed): the test proves nothing", h, b)
	}

	log, hook := logtest.NewNullLogger()
	c := NewCluster(ClusterConfig{Operator: op, Reserver: r, Store: &statesStore{memStore: *newMemStore()}, Log: log})
	releasing := func() bool {
		return slices.ContainsFunc(hook.AllEntries(), func(e *logrus.Entry) bool {
			return e.Message == "releasing reservations of a job that is over (left by a crash or a lost agent)"
		})
	}
	if mode == "offers" {
		if err := op.DeactivateAgent(ctx, b); err != nil {
			t.Fatal(err)
		}
		if err := c.sweep(ctx); err != nil {
			t.Fatal(err)
		}
		if releasing() || len(heldFor(t, ctx, op, j.ID)) != 1 {
			t.Fatalf("from offers, the sweep tried to release the job's reservation on deactivated agent %s (no offer can come: %v); want it left until the agent is reactivated", b, warnings(hook))
		}
		if err := op.ReactivateAgent(ctx, b); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 0 || !releasing() {
		t.Errorf("after the sweep the ended job holds %v (released %v); want nothing: the sweep reads Mesos' labels, not the journal", h, releasing())
	}
}

// TestOfferDropStraysOnAnAgentGoneMeanwhile: from offers, a stray found on
// an agent that is disconnected by the time it is dropped (no offer can
// come from it) is not taken for gone: DropStrays does not count it, and
// the journal keeps it unreserving, not released; the master still shows
// it.
func TestOfferDropStraysOnAnAgentGoneMeanwhile(t *testing.T) {
	m, _, op, ctx, ids, r, jr := pinnerOnEmulator(t, "offers", 2, 1)
	a, b := ids[0], ids[1]
	j := scheduler.Job{Spec: scheduler.Spec{ID: "dddddddd-dddd-dddd-dddd-dddddddddddd", Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 512}, State: scheduler.Running}
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}, {AgentID: b, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	view, err := op.GetAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	strays := offPlanStrays(view, map[string]map[string][2]float64{j.ID: {a: {}}}, true)
	if len(strays) != 1 || strays[0].AgentID != b {
		t.Fatalf("strays %+v; want the job's reservation on %s", strays, b)
	}
	if err := m.CrashAgent(b); err != nil {
		t.Fatal(err)
	}
	if done := r.DropStrays(ctx, j.ID, strays); len(done) != 0 {
		t.Errorf("DropStrays with %s disconnected: %v dropped; want none", b, done)
	}
	if rec := jr.recs[j.ID+"/"+b]; rec.State != scheduler.ResUnreserving {
		t.Errorf("journal of the stray on %s: %+v; want unreserving (not gone)", b, rec)
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 2 {
		t.Errorf("the job holds %v; want both reservations still shown", h)
	}
}
