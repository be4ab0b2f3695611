package offers

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	mscheduler "github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants of offermode.go (scripts/mutation.sh
// --only '^offermode\.go$' offers; docs/testing.md): the reservations made
// from offers in a job's role (MESOS_PROTOCOL.md, "without operator
// credentials"). Expected values are worked out by hand.

func newRoleWork(release bool, want map[string][2]float64) *roleWork {
	return &roleWork{role: "sparkpack-job-j", jobID: "j", princ: "ops", want: want, release: release,
		pending: map[string]string{}, done: map[string]bool{}, changed: make(chan struct{}, 1)}
}

// roleOffer is an offer in the job's role on agent with unreserved cpus
// and mem, and the given reserved resources.
func roleOffer(agent string, cpus, mem float64, reserved ...mesos.Resource) mesos.Offer {
	return mesos.Offer{ID: mesos.OfferID{Value: "O-" + agent}, AgentID: mesos.AgentID{Value: agent},
		Resources: append([]mesos.Resource{scalarRes("cpus", cpus, "sparkpack-job-j"), scalarRes("mem", mem, "sparkpack-job-j")}, reserved...)}
}

// TestRoleWorkReservesWhatIsWanted: an offer on a planned agent that holds
// the amount still wanted (exactly, or short of it by at most 1e-9) is
// accepted with one RESERVE of it, labelled for the job, in the job's
// role, allocated to it, with an operation id naming the agent and a
// sequence number counting up from 1; an offer on another agent, one too
// small, one on an agent done, or one on an agent with an operation under
// way gets nothing.
func TestRoleWorkReservesWhatIsWanted(t *testing.T) {
	two, mem := 2.0, 1024.0
	w := newRoleWork(false, map[string][2]float64{"A": {2, 4096}, "B": {two + 1e-9, 1024}, "C": {1, 1024}, "D": {1, 1024}, "F": {1, mem + 1e-9}})
	w.done["D"] = true
	ops := w.Offer(roleOffer("A", 2, 4096))
	if len(ops) != 1 || ops[0].Type != mesos.Offer_Operation_RESERVE || ops[0].GetID().GetValue() != "sparkpack-reserve-A-1" {
		t.Fatalf("offer on A: %+v; want one RESERVE with id sparkpack-reserve-A-1", ops)
	}
	res := ops[0].Reserve.Resources
	if len(res) != 2 || res[0].Name != "cpus" || res[0].Scalar.Value != 2 || res[1].Name != "mem" || res[1].Scalar.Value != 4096 {
		t.Fatalf("reserved %+v; want cpus 2 and mem 4096", res)
	}
	for _, r := range res {
		ri := r.Reservations[len(r.Reservations)-1]
		if r.AllocationInfo.GetRole() != "sparkpack-job-j" || ri.GetRole() != "sparkpack-job-j" || ri.GetPrincipal() != "ops" {
			t.Errorf("%s: allocated to %q, reserved for %q by %q; want the job's role, by ops", r.Name, r.AllocationInfo.GetRole(), ri.GetRole(), ri.GetPrincipal())
		}
		if id, _, ok := jobLabel(r); !ok || id != "j" {
			t.Errorf("%s: labelled %q (%v); want j", r.Name, id, ok)
		}
	}
	if w.pending["sparkpack-reserve-A-1"] != "A" {
		t.Fatalf("pending %v; want the operation on A", w.pending)
	}
	if ops := w.Offer(roleOffer("A", 8, 16384)); ops != nil {
		t.Errorf("a second offer on A while its RESERVE is under way: %+v; want nothing", ops)
	}
	if ops := w.Offer(roleOffer("B", 2, 1024)); len(ops) != 1 || ops[0].GetID().GetValue() != "sparkpack-reserve-B-2" {
		t.Errorf("offer on B, 1e-9 cpus short: %+v; want a RESERVE with id sparkpack-reserve-B-2", ops)
	}
	if ops := w.Offer(roleOffer("F", 1, 1024)); len(ops) != 1 || ops[0].GetID().GetValue() != "sparkpack-reserve-F-3" {
		t.Errorf("offer on F, 1e-9 MiB short: %+v; want a RESERVE with id sparkpack-reserve-F-3", ops)
	}
	for _, c := range []struct {
		name string
		o    mesos.Offer
	}{
		{"C, 1 MiB short", roleOffer("C", 1, 1023)},
		{"C, 2e-9 cpus short", roleOffer("C", 1-2e-9, 1024)},
		{"D, done", roleOffer("D", 4, 4096)},
		{"E, not planned", roleOffer("E", 4, 4096)},
	} {
		if ops := w.Offer(c.o); ops != nil {
			t.Errorf("offer on %s: %+v; want nothing", c.name, ops)
		}
	}
	// Reserved resources in the offer are not room for more.
	held := ReservationResources("sparkpack-job-j", "ops", "j", 4, 4096)
	if ops := w.Offer(roleOffer("C", 0, 0, held...)); ops != nil {
		t.Errorf("offer on C holding only reserved resources: %+v; want nothing", ops)
	}
	if len(w.pending) != 3 {
		t.Errorf("pending %v; want A's, B's and F's operations only", w.pending)
	}
}

// TestRoleWorkUnreservesTheJobsOnly: to release, an offer is accepted with
// one UNRESERVE of the resources labelled for the job, as offered; an
// offer without any (another job's, or none) gets nothing.
func TestRoleWorkUnreservesTheJobsOnly(t *testing.T) {
	w := newRoleWork(true, nil)
	mine := ReservationResources("sparkpack-job-j", "ops", "j", 2, 4096)
	other := ReservationResources("sparkpack-job-k", "ops", "k", 1, 1024)
	ops := w.Offer(roleOffer("A", 4, 8192, append(append([]mesos.Resource{}, other...), mine...)...))
	if len(ops) != 1 || ops[0].Type != mesos.Offer_Operation_UNRESERVE || ops[0].GetID().GetValue() != "sparkpack-unreserve-A-1" {
		t.Fatalf("offer on A: %+v; want one UNRESERVE with id sparkpack-unreserve-A-1", ops)
	}
	got := ops[0].Unreserve.Resources
	if len(got) != 2 || got[0].Name != "cpus" || got[0].Scalar.Value != 2 || got[1].Name != "mem" || got[1].Scalar.Value != 4096 {
		t.Fatalf("unreserved %+v; want job j's cpus 2 and mem 4096", got)
	}
	if ops := w.Offer(roleOffer("B", 4, 8192, other...)); ops != nil {
		t.Errorf("offer with another job's reservation: %+v; want nothing", ops)
	}
	if len(w.pending) != 1 || w.pending["sparkpack-unreserve-A-1"] != "A" {
		t.Errorf("pending %v; want A's operation only", w.pending)
	}
}

// TestRoleWorkOperationStatus: OPERATION_FINISHED marks the agent done,
// OPERATION_PENDING keeps waiting, any other state of a RESERVE fails the
// work with the agent, state and message (of an UNRESERVE it does not:
// the release looks at what is left); updates without an operation id or
// for an operation not under way change nothing. Each update that changes
// something wakes the waiting run.
func TestRoleWorkOperationStatus(t *testing.T) {
	op := func(id string, s mesos.OperationState) mesos.OperationStatus {
		st := mesos.OperationStatus{State: s, Message: ptr("no room")}
		if id != "" {
			st.OperationID = &mesos.OperationID{Value: id}
		}
		return st
	}
	woken := func(w *roleWork) bool {
		select {
		case <-w.changed:
			return true
		default:
			return false
		}
	}
	w := newRoleWork(false, map[string][2]float64{"A": {1, 1}, "B": {1, 1}})
	w.pending["op-a"], w.pending["op-b"] = "A", "B"
	w.OperationStatus(op("", mesos.OPERATION_FINISHED))
	w.OperationStatus(op("op-x", mesos.OPERATION_FINISHED))
	if len(w.done) != 0 || len(w.pending) != 2 || woken(w) {
		t.Fatalf("updates without id or of no pending operation: done %v, pending %v", w.done, w.pending)
	}
	w.OperationStatus(op("op-a", mesos.OPERATION_PENDING))
	if w.pending["op-a"] != "A" || len(w.done) != 0 || !woken(w) {
		t.Fatalf("OPERATION_PENDING: pending %v, done %v; want op-a still pending", w.pending, w.done)
	}
	w.OperationStatus(op("op-a", mesos.OPERATION_FINISHED))
	if !w.done["A"] || len(w.done) != 1 || w.pending["op-a"] != "" || !woken(w) || w.failed != "" {
		t.Fatalf("OPERATION_FINISHED: done %v, pending %v, failed %q; want A done", w.done, w.pending, w.failed)
	}
	w.OperationStatus(op("op-b", mesos.OPERATION_FAILED))
	if w.failed != "reserve on agent B: OPERATION_FAILED no room" || w.done["B"] || len(w.pending) != 0 || !woken(w) {
		t.Fatalf("OPERATION_FAILED: failed %q, done %v, pending %v", w.failed, w.done, w.pending)
	}

	rel := newRoleWork(true, nil)
	rel.pending["op-u"] = "A"
	rel.OperationStatus(op("op-u", mesos.OPERATION_ERROR))
	if rel.failed != "" || len(rel.pending) != 0 {
		t.Fatalf("a failed UNRESERVE: failed %q, pending %v; want no failure, nothing pending", rel.failed, rel.pending)
	}
}

// TestOfferReserverTimeoutDefault: Timeout defaults to 30 s (its
// documentation); a value set is kept. Reservations are made from offers.
func TestOfferReserverTimeoutDefault(t *testing.T) {
	if d := (&OfferReserver{}).timeout(); d != 30*time.Second {
		t.Errorf("default %v, want 30s", d)
	}
	if d := (&OfferReserver{Timeout: -time.Second}).timeout(); d != 30*time.Second {
		t.Errorf("negative: %v, want 30s", d)
	}
	if d := (&OfferReserver{Timeout: time.Second}).timeout(); d != time.Second {
		t.Errorf("set: %v, want 1s", d)
	}
	if !(&OfferReserver{}).FromOffers() {
		t.Error("an OfferReserver does not reserve from offers")
	}
}

// TestOfferReserverAgainstTheEmulator: the offer-mode reserver on the
// Mesos emulator, through a running framework. A plan of 2 executors on
// agent A, 1 on B and 0 on C, each executor 1 cpu and 2048 + 512 MiB,
// reserves 2 cpus and 5120 MiB on A and 1 cpu and 2560 MiB on B, labelled
// for the job in its role (worked out by hand); journalled reserving,
// then reserved; the framework holds the job's role only meanwhile.
// Reserving again, or a plan the reservations already hold, takes on no
// role; a larger plan reserves only the difference. Release leaves
// nothing labelled and the journal released. A plan beyond an agent's
// room is a conflict once the timeout passes, rolled back.
func TestOfferReserverAgainstTheEmulator(t *testing.T) {
	m, quiet := emulator(t)
	_, addr := listenOn(t, m.Handler(), "127.0.0.1:0")
	ep, err := NewEndpoint(addr, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	fw, _, obs, ctx := runFramework(t, ep, FrameworkConfig{Role: "sparkpack"}, quiet)
	waitUp(t, obs.ups, "http://"+addr)
	op := NewOperator(ep)
	raw, err := op.GetAgents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	agents, _ := AgentsFromMesos(raw, nil)
	if len(agents) < 3 || agents[0].FreeCPUs < 2 || agents[0].FreeMemMB < 5120 || agents[1].FreeCPUs < 1 || agents[1].FreeMemMB < 2560 {
		t.Fatalf("the emulator's agents %+v: want 3, the first two with room for the plan", agents)
	}
	a, b, c := agents[0].ID, agents[1].ID, agents[2].ID
	job := func(id string) scheduler.Job {
		return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: 3, ExecutorCores: 1, ExecutorMemoryMB: 2048, MemoryOverheadMB: 512}}
	}
	held := func(jobID string) map[string][2]float64 { t.Helper(); return heldFor(t, ctx, op, jobID) }
	jobRoles := func() []string {
		var out []string
		for _, f := range m.Frameworks() {
			if f.Name == fw.cfg.Name {
				for _, r := range f.Roles {
					if r != "sparkpack" {
						out = append(out, r)
					}
				}
			}
		}
		return out
	}
	jr := &memJournal{}
	r := &OfferReserver{Framework: fw, Op: op, Journal: jr, Log: quiet, Timeout: 2 * time.Minute}
	j1 := job("11111111-1111-1111-1111-111111111111")
	role := scheduler.Role(j1.ID)

	// A first plan of 1 executor on A, then the full plan: only the
	// difference is reserved the second time.
	if err := r.Reserve(ctx, j1, placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	if h := held(j1.ID); len(h) != 1 || h[a] != [2]float64{1, 2560} {
		t.Fatalf("reserved %v; want %s: 1 cpu 2560 MiB", h, a)
	}
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: 2}, {AgentID: b, Executors: 1}, {AgentID: c, Executors: 0}}}
	for range 2 { // the second finds everything made
		if err := r.Reserve(ctx, j1, plan); err != nil {
			t.Fatal(err)
		}
		if h := held(j1.ID); len(h) != 2 || h[a] != [2]float64{2, 5120} || h[b] != [2]float64{1, 2560} {
			t.Fatalf("reserved %v; want %s: 2 cpus 5120 MiB, %s: 1 cpu 2560 MiB", h, a, b)
		}
		if roles := jobRoles(); len(roles) != 0 {
			t.Fatalf("the framework still holds %v after Reserve", roles)
		}
	}
	for _, ag := range []string{a, b} {
		if rec := jr.recs[j1.ID+"/"+ag]; rec.State != scheduler.ResReserved || rec.Role != role {
			t.Errorf("journal of %s: %+v; want reserved in role %s", ag, rec, role)
		}
	}
	if rec := jr.recs[j1.ID+"/"+a]; rec.CPUs != 2 || rec.MemMB != 5120 {
		t.Errorf("journal of %s: %v cpus, %v MiB; want the plan's 2 and 5120", a, rec.CPUs, rec.MemMB)
	}
	if _, ok := jr.recs[j1.ID+"/"+c]; ok {
		t.Errorf("an agent of 0 executors is journalled")
	}
	// reserving, reserved (the 1-executor plan); reserving twice, reserved
	// twice (the full plan, once made and once found made); again.
	want := []scheduler.ReservationState{scheduler.ResReserving, scheduler.ResReserved,
		scheduler.ResReserving, scheduler.ResReserving, scheduler.ResReserved, scheduler.ResReserved,
		scheduler.ResReserving, scheduler.ResReserving, scheduler.ResReserved, scheduler.ResReserved}
	if !slices.Equal(jr.states, want) {
		t.Errorf("journal states %v; want %v", jr.states, want)
	}

	if err := r.Release(ctx, j1.ID); err != nil {
		t.Fatal(err)
	}
	if h := held(j1.ID); len(h) != 0 {
		t.Fatalf("after Release %v is still reserved", h)
	}
	for _, ag := range []string{a, b} {
		if rec := jr.recs[j1.ID+"/"+ag]; rec.State != scheduler.ResReleased {
			t.Errorf("journal of %s after Release: %+v; want released", ag, rec)
		}
	}
	if roles := jobRoles(); len(roles) != 0 {
		t.Fatalf("the framework still holds %v after Release", roles)
	}

	// More executors than agent A has cpus: no offer ever holds them.
	r.Timeout = time.Second
	j3 := job("33333333-3333-3333-3333-333333333333")
	big := placement.Plan{Assignments: []placement.Assignment{{AgentID: a, Executors: int(agents[0].CPUs) + 1}}}
	err = r.Reserve(ctx, j3, big)
	if !errors.Is(err, ErrReserveConflict) || !strings.Contains(err.Error(), "did not allow the operation within 1s") {
		t.Fatalf("a plan beyond the agent's room: %v; want ErrReserveConflict after the 1 s timeout", err)
	}
	if h := held(j3.ID); len(h) != 0 {
		t.Fatalf("after a refused reservation %v is still reserved", h)
	}
}

// failJournal is a Journal whose writes fail.
type failJournal struct{ memJournal }

func (j *failJournal) PutReservation(context.Context, scheduler.Reservation) error {
	return errors.New("database down")
}

// TestOfferReserverRunByHand: run takes on the job's role, and gives it up
// again whatever the outcome: done, a failed RESERVE (a conflict naming
// it), or the context's end; a role that cannot be taken on is run's error.
func TestOfferReserverRunByHand(t *testing.T) {
	ctx := context.Background()
	m := &failingMaster{}
	fw, hook := frameworkOn(t, m, FrameworkConfig{}, &idStore{}, nil)
	r := &OfferReserver{Framework: fw, Log: fw.log, Timeout: time.Hour}
	updates := func() [][]string {
		var out [][]string
		for _, c := range m.of(mscheduler.Call_UPDATE_FRAMEWORK) {
			out = append(out, frameworkRoles(c))
		}
		return out
	}
	taken := []string{"sparkpack", "sparkpack-job-j"}
	given := []string{"sparkpack"}

	if err := r.run(ctx, newRoleWork(false, nil), func() bool { return true }); err != nil {
		t.Fatal(err)
	}
	w := newRoleWork(false, nil)
	w.failed = "reserve on agent A: OPERATION_FAILED no room"
	err := r.run(ctx, w, func() bool { return false })
	if !errors.Is(err, ErrReserveConflict) || !strings.HasPrefix(err.Error(), w.failed+": ") {
		t.Fatalf("a failed RESERVE: %v; want a conflict starting with %q", err, w.failed)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The context ends once the role is taken on (done is first asked then).
	if err := r.run(cctx, newRoleWork(false, nil), func() bool { cancel(); return false }); !errors.Is(err, context.Canceled) {
		t.Fatalf("context ended: %v; want context.Canceled", err)
	}
	want := [][]string{taken, given, taken, given, taken, given}
	if got := updates(); len(got) != len(want) {
		t.Fatalf("UPDATE_FRAMEWORK roles %v; want %v", got, want)
	} else {
		for i := range want {
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("UPDATE_FRAMEWORK roles %v; want %v", got, want)
			}
		}
	}

	if warned := warnings(hook); len(warned) != 0 {
		t.Fatalf("warnings %q; want none (every role given up)", warned)
	}
	// The role cannot be given up: logged (the next subscription drops it).
	if err := r.run(ctx, newRoleWork(false, nil), func() bool { m.failing(mscheduler.Call_UPDATE_FRAMEWORK, true); return true }); err != nil {
		t.Fatal(err)
	}
	if warned := warnings(hook); !slices.Equal(warned, []string{"could not give up the job role; the next subscription will"}) {
		t.Fatalf("warnings %q; want the role not given up", warned)
	}
	err = r.run(ctx, newRoleWork(false, nil), func() bool { return true })
	if err == nil || !strings.HasPrefix(err.Error(), "take on role sparkpack-job-j: ") {
		t.Fatalf("role refused: %v; want \"take on role sparkpack-job-j: ...\"", err)
	}

	// Not subscribed (a start, before the subscription): no role is
	// asked for; run waits for the subscription within its timeout.
	m.failing(mscheduler.Call_UPDATE_FRAMEWORK, false)
	before := len(updates())
	fw.mu.Lock()
	fw.connected = false
	fw.mu.Unlock()
	r.Timeout = 50 * time.Millisecond
	err = r.run(ctx, newRoleWork(false, nil), func() bool { return true })
	if err == nil || err.Error() != "take on role sparkpack-job-j: not subscribed to the Mesos master within 50ms" || len(updates()) != before {
		t.Fatalf("not subscribed: %v, %d role updates; want \"take on role sparkpack-job-j: not subscribed to the Mesos master within 50ms\", none", err, len(updates())-before)
	}
	r.Timeout = time.Hour
	cctx, cancel = context.WithCancel(ctx)
	cancel()
	if err := r.run(cctx, newRoleWork(false, nil), func() bool { return true }); !errors.Is(err, context.Canceled) || len(updates()) != before {
		t.Fatalf("not subscribed, context ended: %v; want context.Canceled, no role update", err)
	}
}

// TestOfferReserverOneRunPerRole: while a run holds a job's role (the
// leak sweep dropping a running job's strays), a second run on that role
// (the job's release) waits for its turn and takes the role on only once
// the first has given it up: roles taken, given, taken, given. Without
// turns the second took the role on beside the first and gave it up under
// it.
func TestOfferReserverOneRunPerRole(t *testing.T) {
	ctx := context.Background()
	m := &failingMaster{}
	fw, _ := frameworkOn(t, m, FrameworkConfig{}, &idStore{}, nil)
	r := &OfferReserver{Framework: fw, Log: fw.log, Timeout: time.Hour}
	updates := func() (out [][]string) {
		for _, c := range m.of(mscheduler.Call_UPDATE_FRAMEWORK) {
			out = append(out, frameworkRoles(c))
		}
		return out
	}
	holding, finish := make(chan struct{}), make(chan struct{})
	first, second := make(chan error, 1), make(chan error, 1)
	go func() {
		var once sync.Once
		first <- r.run(ctx, newRoleWork(true, nil), func() bool { once.Do(func() { close(holding) }); <-finish; return true })
	}()
	<-holding
	go func() { second <- r.run(ctx, newRoleWork(true, nil), func() bool { return true }) }()
	deadline := time.Now().Add(time.Minute)
	for {
		r.turns.mu.Lock()
		waiting := r.turns.waiting
		r.turns.mu.Unlock()
		if waiting == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second run on the role never waited for its turn; role updates %v", updates())
		}
		time.Sleep(time.Millisecond)
	}
	if got := updates(); len(got) != 1 {
		t.Fatalf("role updates %v while the first run holds the role; want only its taking", got)
	}
	// Waiting ends with the context, or when run's timeout passes.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.turns.take(cctx, "sparkpack-job-j", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("waiting for a turn, context ended: %v; want context.Canceled", err)
	}
	stop := make(chan time.Time, 1)
	stop <- time.Now()
	if _, err := r.turns.take(ctx, "sparkpack-job-j", stop); err == nil || err.Error() != "another operation held it" {
		t.Errorf("waiting for a turn, timed out: %v; want \"another operation held it\"", err)
	}
	close(finish)
	for _, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	taken, given := []string{"sparkpack", "sparkpack-job-j"}, []string{"sparkpack"}
	if got := updates(); len(got) != 4 || !slices.Equal(got[0], taken) || !slices.Equal(got[1], given) || !slices.Equal(got[2], taken) || !slices.Equal(got[3], given) {
		t.Fatalf("role updates %v; want taken, given, taken, given", got)
	}
}

// TestOfferReserverRoleGivenUpWhenTakingFails: a run whose taking on of
// the job role fails (its REVIVE refused after the UPDATE_FRAMEWORK went
// through) gives the role up: the framework keeps no handler for it (it
// would reserve from the role's offers after Reserve had failed and rolled
// back) and the master is told it no longer holds it. Before, the role
// stayed taken until another run on it, and every resubscription took it
// on again.
func TestOfferReserverRoleGivenUpWhenTakingFails(t *testing.T) {
	ctx := context.Background()
	m := &failingMaster{}
	fw, _ := frameworkOn(t, m, FrameworkConfig{}, &idStore{}, nil)
	r := &OfferReserver{Framework: fw, Log: fw.log, Timeout: time.Hour}
	m.failing(mscheduler.Call_REVIVE, true)
	err := r.run(ctx, newRoleWork(false, map[string][2]float64{"A": {1, 1024}}), func() bool { return false })
	if err == nil || !strings.HasPrefix(err.Error(), "take on role ") {
		t.Fatalf("run, REVIVE refused: %v; want \"take on role ...\"", err)
	}
	if got := fw.roles(); !slices.Equal(got, []string{"sparkpack"}) {
		t.Errorf("framework roles after a failed taking on: %v; want [sparkpack]", got)
	}
	o, role := roleOffer("A", 4, 8192), "sparkpack-job-j"
	o.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &role}
	if ops := fw.roleOffers(ctx, []mesos.Offer{o}, time.Now()); len(ops) != 0 || len(m.of(mscheduler.Call_ACCEPT)) != 0 {
		t.Errorf("an offer in the role after the run: %d own, %d ACCEPTs; want it declined", len(ops), len(m.of(mscheduler.Call_ACCEPT)))
	}
	updates := m.of(mscheduler.Call_UPDATE_FRAMEWORK)
	if len(updates) != 2 || !slices.Equal(frameworkRoles(updates[1]), []string{"sparkpack"}) {
		var got [][]string
		for _, c := range updates {
			got = append(got, frameworkRoles(c))
		}
		t.Fatalf("role updates %v; want taken, then given up", got)
	}
}

// hangingUpdate is a master that never answers its nth UPDATE_FRAMEWORK
// (1: a run taking its role on; 2: giving it up) until release is closed.
type hangingUpdate struct {
	failingMaster
	nth     int
	release chan struct{}
	hung    bool
}

func (m *hangingUpdate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	m.failingMaster.ServeHTTP(rec, r)
	m.mu.Lock()
	hang := !m.hung && len(m.of(mscheduler.Call_UPDATE_FRAMEWORK)) == m.nth
	m.hung = m.hung || hang
	m.mu.Unlock()
	if hang {
		<-m.release
	}
	w.WriteHeader(rec.Code)
}

// TestOfferReserverRoleUpdatesWithinTimeout: a master that never answers
// the UPDATE_FRAMEWORK taking a job role on, or giving it up, holds neither
// the run nor the role's turn for ever: both are bounded by the timeout,
// and the next operation on the role gets its turn. Before, the run waited
// for the answer without end (the giving up even once its context ended),
// holding the turn, so every later Reserve or Release of the job failed.
func TestOfferReserverRoleUpdatesWithinTimeout(t *testing.T) {
	for nth, what := range map[int]string{1: "taking the role on", 2: "giving the role up"} {
		t.Run(what, func(t *testing.T) {
			ctx := context.Background()
			m := &hangingUpdate{nth: nth, release: make(chan struct{})}
			fw, _ := frameworkOn(t, m, FrameworkConfig{}, &idStore{}, nil)
			t.Cleanup(func() { close(m.release) }) // before the master's server closes
			r := &OfferReserver{Framework: fw, Log: fw.log, Timeout: 2 * time.Second}
			ran := make(chan error, 1)
			go func() { ran <- r.run(ctx, newRoleWork(true, nil), func() bool { return true }) }()
			select {
			case err := <-ran:
				if (err != nil) != (nth == 1) {
					t.Fatalf("run: %v; want an error only when the role could not be taken on", err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("the run did not return within a minute: %s waits for a master that never answers", what)
			}
			tctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			give, err := r.turns.take(tctx, "sparkpack-job-j", nil)
			if err != nil {
				t.Fatalf("the role's next turn: %v; want it given back", err)
			}
			give()
			if got := fw.roles(); !slices.Equal(got, []string{"sparkpack"}) {
				t.Errorf("framework roles after the run: %v; want [sparkpack]", got)
			}
		})
	}
}

// TestOfferReserverErrors: GET_AGENTS failing is Reserve's and Release's
// error; a journal that cannot be written fails Reserve before any role is
// taken on; a role that cannot be taken on fails Reserve, which rolls back
// (Release: the journal marked released), and a failed rollback is named
// in the error.
func TestOfferReserverErrors(t *testing.T) {
	ctx := context.Background()
	job := scheduler.Job{Spec: scheduler.Spec{ID: "11111111-1111-1111-1111-111111111111", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}}
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 1}}}

	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no", http.StatusBadRequest) }))
	t.Cleanup(down.Close)
	downEp, err := NewEndpoint(down.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	m := &failingMaster{}
	fw, _ := frameworkOn(t, m, FrameworkConfig{}, &idStore{}, nil)
	r := &OfferReserver{Framework: fw, Op: NewOperator(downEp), Journal: &memJournal{}, Log: fw.log, Timeout: time.Hour}
	if err := r.Reserve(ctx, job, plan); err == nil {
		t.Error("Reserve with GET_AGENTS failing: nil")
	}
	if err := r.Release(ctx, job.ID); err == nil {
		t.Error("Release with GET_AGENTS failing: nil")
	}

	// GET_AGENTS answers (no reservation anywhere).
	emu, quiet := emulator(t)
	srv := httptest.NewServer(emu.Handler())
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	r = &OfferReserver{Framework: fw, Op: NewOperator(ep), Journal: &failJournal{}, Log: fw.log, Timeout: time.Hour}
	if err := r.Reserve(ctx, job, plan); err == nil || len(m.of(mscheduler.Call_UPDATE_FRAMEWORK)) != 0 {
		t.Errorf("Reserve with the journal failing: %v, %d role updates; want an error, none", err, len(m.of(mscheduler.Call_UPDATE_FRAMEWORK)))
	}
	jr := &memJournal{}
	r = &OfferReserver{Framework: fw, Op: NewOperator(ep), Journal: jr, Log: fw.log, Timeout: time.Hour}
	// Nothing to reserve (no executor planned) or to release (nothing
	// labelled for the job): no role is taken on.
	if err := r.Reserve(ctx, job, placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 0}}}); err != nil {
		t.Fatal(err)
	}
	if err := r.Release(ctx, job.ID); err != nil {
		t.Fatal(err)
	}
	if n := len(m.of(mscheduler.Call_UPDATE_FRAMEWORK)); n != 0 || len(jr.recs) != 0 {
		t.Fatalf("nothing to reserve or release: %d role updates, journal %v; want none, empty", n, jr.recs)
	}
	m.failing(mscheduler.Call_UPDATE_FRAMEWORK, true)
	err = r.Reserve(ctx, job, plan)
	if err == nil || !strings.HasPrefix(err.Error(), "take on role ") || strings.Contains(err.Error(), "rolling back") {
		t.Fatalf("role refused: %v; want \"take on role ...\", rolled back", err)
	}
	if rec := jr.recs[job.ID+"/A"]; rec.State != scheduler.ResReleased {
		t.Fatalf("journal after the rollback: %+v; want released", rec)
	}
	r.Journal = &rollbackFails{}
	err = r.Reserve(ctx, job, plan)
	if err == nil || !strings.Contains(err.Error(), "(and rolling back failed: ") {
		t.Fatalf("role refused, rollback failing: %v; want both named", err)
	}
}

// rollbackFails is a Journal that takes writes but cannot be read (the
// rollback's markReleased reads it).
type rollbackFails struct{ memJournal }

func (j *rollbackFails) Reservations(context.Context, string, ...scheduler.ReservationState) ([]scheduler.Reservation, error) {
	return nil, errors.New("database down")
}

// warnings are the messages logged at warning level or above.
func warnings(h *logtest.Hook) []string {
	var out []string
	for _, e := range h.AllEntries() {
		if e.Level <= logrus.WarnLevel {
			out = append(out, e.Message)
		}
	}
	return out
}
