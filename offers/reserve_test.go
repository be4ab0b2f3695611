package offers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// memJournal is a Journal in memory: the latest record per agent, and
// every state written, in order.
type memJournal struct {
	mu     sync.Mutex
	recs   map[string]scheduler.Reservation // by job and agent
	states []scheduler.ReservationState
}

func (j *memJournal) PutReservation(_ context.Context, r scheduler.Reservation) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.recs == nil {
		j.recs = map[string]scheduler.Reservation{}
	}
	j.recs[r.JobID+"/"+r.AgentID] = r
	j.states = append(j.states, r.State)
	return nil
}

func (j *memJournal) Reservations(_ context.Context, jobID string, states ...scheduler.ReservationState) ([]scheduler.Reservation, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []scheduler.Reservation
	for _, r := range j.recs {
		if r.JobID == jobID && (len(states) == 0 || slices.Contains(states, r.State)) {
			out = append(out, r)
		}
	}
	return out, nil
}

// TestReserverAgainstTheEmulator: the operator-API reserver on the Mesos
// emulator. A plan of 2 executors on agent A and 1 on B, each executor 1
// cpu and 2048 + 512 MiB, reserves 2 cpus and 5120 MiB on A and 1 cpu and
// 2560 MiB on B with the job's label in its role, under a quota limit of
// 3 cpus and 7680 MiB (worked out by hand); journalled reserving, then
// reserved. Reserving again adds nothing. Orphans names the jobs with
// reservations that keep refuses. Release leaves nothing labelled, the
// journal released and the quota cleared. A plan beyond an agent's room
// is refused (409), named by the agent's hostname, and rolled back.
func TestReserverAgainstTheEmulator(t *testing.T) {
	_, _, quiet, op, ctx, agents := operatorOnEmulator(t, 2*time.Minute)
	if len(agents) < 3 || agents[0].FreeCPUs < 2 || agents[0].FreeMemMB < 5120 || agents[1].FreeCPUs < 1 || agents[1].FreeMemMB < 2560 {
		t.Fatalf("the emulator's agents %+v: want 3, the first two with room for the plan", agents)
	}
	a, b, c := agents[0].ID, agents[1].ID, agents[2].ID
	job := func(id string) scheduler.Job {
		return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: 3, ExecutorCores: 1, ExecutorMemoryMB: 2048, MemoryOverheadMB: 512}}
	}
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 2}, {AgentID: b, Executors: 1}, {AgentID: c, Executors: 0}}}
	jr := &memJournal{}
	r := &Reserver{Op: op, Journal: jr, Log: quiet, Poll: 20 * time.Millisecond, ConfirmTimeout: time.Minute}
	j1 := job("11111111-1111-1111-1111-111111111111")
	role := scheduler.Role(j1.ID)
	held := func(jobID string) map[string][2]float64 { t.Helper(); return heldFor(t, ctx, op, jobID) }
	for range 2 { // the second Reserve finds everything made: idempotent
		if err := r.Reserve(ctx, j1, plan); err != nil {
			t.Fatal(err)
		}
		h := held(j1.ID)
		if len(h) != 2 || h[a] != [2]float64{2, 5120} || h[b] != [2]float64{1, 2560} {
			t.Fatalf("reserved %v; want %s: 2 cpus 5120 MiB, %s: 1 cpu 2560 MiB", h, a, b)
		}
	}
	for _, ag := range []string{a, b} {
		rec := jr.recs[j1.ID+"/"+ag]
		if rec.State != scheduler.ResReserved || rec.Role != role {
			t.Errorf("journal of %s: %+v; want reserved in role %s", ag, rec, role)
		}
	}
	if _, ok := jr.recs[j1.ID+"/"+c]; ok {
		t.Errorf("an agent of 0 executors is journalled")
	}
	if jr.states[0] != scheduler.ResReserving || jr.states[1] != scheduler.ResReserving || jr.states[2] != scheduler.ResReserved {
		t.Errorf("journal states %v; want reserving twice, then reserved", jr.states)
	}
	limit := func() (cpus, mem float64, ok bool) {
		t.Helper()
		cfgs, err := op.QuotaConfigs(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range cfgs {
			if q.Role == role && len(q.Limits) > 0 {
				return q.Limits["cpus"].Value, q.Limits["mem"].Value, true
			}
		}
		return 0, 0, false
	}
	if cpus, mem, ok := limit(); !ok || cpus != 3 || mem != 7680 {
		t.Errorf("quota limit of %s: %v cpus, %v MiB (%v); want 3 and 7680", role, cpus, mem, ok)
	}

	j2 := job("22222222-2222-2222-2222-222222222222")
	if err := r.Reserve(ctx, j2, placement.Plan{Assignments: []placement.Assignment{{AgentID: b, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	orphans, err := r.Orphans(ctx, func(id string) bool { return id == j1.ID })
	if err != nil || len(orphans) != 1 || orphans[0] != j2.ID {
		t.Fatalf("orphans %v, %v; want %s only", orphans, err, j2.ID)
	}

	if err := r.Release(ctx, j1.ID); err != nil {
		t.Fatal(err)
	}
	if h := held(j1.ID); len(h) != 0 {
		t.Fatalf("after Release %v is still reserved", h)
	}
	if h := held(j2.ID); h[b] != [2]float64{1, 2560} {
		t.Fatalf("Release of one job touched another's: %v", h)
	}
	for _, ag := range []string{a, b} {
		if rec := jr.recs[j1.ID+"/"+ag]; rec.State != scheduler.ResReleased {
			t.Errorf("journal of %s after Release: %+v; want released", ag, rec)
		}
	}
	if _, _, ok := limit(); ok {
		t.Errorf("the quota limit of %s is still set after Release", role)
	}

	// More executors than agent A has cpus: refused, nothing left.
	// The refusal is a race the caller handles (the job is placed again):
	// logged as information saying so, not as a warning no one can act on.
	j3 := job("33333333-3333-3333-3333-333333333333")
	big := placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Hostname: agents[0].Hostname, Executors: int(agents[0].CPUs) + 1}}}
	hookLog, hook := logtest.NewNullLogger()
	r.Log = hookLog
	err = r.Reserve(ctx, j3, big)
	r.Log = quiet
	refused := false
	for _, e := range hook.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			t.Errorf("a refused reservation logged at %s: %q %v", e.Level, e.Message, e.Data)
		}
		if strings.HasPrefix(e.Message, "reservation refused") {
			refused = true
			if !strings.Contains(e.Message, "placed again") || e.Data["job"] != j3.ID || e.Data["agent"] != agents[0].Hostname {
				t.Errorf("the refusal's line %q %v: want what happens next, the job and the agent's hostname", e.Message, e.Data)
			}
		}
	}
	if !refused {
		t.Errorf("the refusal is not logged: %v", hook.AllEntries())
	}
	if !errors.Is(err, ErrReserveConflict) || !strings.HasPrefix(err.Error(), "agent "+agents[0].Hostname+": ") {
		t.Fatalf("a plan beyond the agent's room: %v; want ErrReserveConflict naming agent %s by its hostname", err, agents[0].Hostname)
	}
	if h := held(j3.ID); len(h) != 0 {
		t.Fatalf("after a refused reservation %v is still reserved", h)
	}
}

// TestReserverTimeoutDefaults: ConfirmTimeout defaults to 30 s and Poll
// to 200 ms (their documentation); values set are kept.
func TestReserverTimeoutDefaults(t *testing.T) {
	if c, p := (&Reserver{}).timeouts(); c != 30*time.Second || p != 200*time.Millisecond {
		t.Errorf("defaults %v, %v; want 30s, 200ms", c, p)
	}
	if c, p := (&Reserver{ConfirmTimeout: time.Second, Poll: time.Millisecond}).timeouts(); c != time.Second || p != time.Millisecond {
		t.Errorf("set %v, %v; want 1s, 1ms", c, p)
	}
}

// TestReleaseOnADeactivatedAgent: GET_AGENTS lists a deactivated agent
// (power management's DEACTIVATE_AGENT, an operator's drain) inactive, as
// a disconnected one; a real 1.12 master still unreserves on it (see
// mesossim.TestUnreserveWhileDisconnectedIsLost). A job's reservation on
// such an agent is named an orphan by the sweep and released by Release,
// not left behind.
func TestReleaseOnADeactivatedAgent(t *testing.T) {
	_, _, quiet, op, ctx, agents := operatorOnEmulator(t, 2*time.Minute)
	a := agents[0].ID
	jr := &memJournal{}
	r := &Reserver{Op: op, Journal: jr, Log: quiet, Poll: 20 * time.Millisecond, ConfirmTimeout: time.Minute}
	j := scheduler.Job{Spec: scheduler.Spec{ID: "44444444-4444-4444-4444-444444444444", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024, MemoryOverheadMB: 384}}
	if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	if err := op.DeactivateAgent(ctx, a); err != nil {
		t.Fatal(err)
	}
	orphans, err := r.Orphans(ctx, func(string) bool { return false })
	if err != nil || !slices.Contains(orphans, j.ID) {
		t.Fatalf("orphans %v, %v; want %s, reserved on a deactivated agent", orphans, err, j.ID)
	}
	if err := r.Release(ctx, j.ID); err != nil {
		t.Fatal(err)
	}
	if h := heldFor(t, ctx, op, j.ID); len(h) != 0 {
		t.Fatalf("after Release %v is still reserved on the deactivated agent", h)
	}
	if rec := jr.recs[j.ID+"/"+a]; rec.State != scheduler.ResReleased {
		t.Errorf("journal after Release: %+v; want released", rec)
	}
}
