package mesossim

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// subscribeRole subscribes a mesos-go framework in one role.
func subscribeRole(t *testing.T, base, role string) *mgoFramework {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &mgoFramework{t: t, caller: newCaller(base, "protobuf"), events: make(chan *scheduler.Event, 4096), cancel: cancel, done: make(chan struct{})}
	info := frameworkInfo("")
	info.Roles = []string{role}
	resp, err := f.caller.Call(ctx, calls.Subscribe(info))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer close(f.done)
		defer resp.Close()
		defer close(f.events)
		for {
			var ev scheduler.Event
			if err := resp.Decode(&ev); err != nil {
				return
			}
			select {
			case f.events <- &ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	f.id = f.next(scheduler.Event_SUBSCRIBED, 5*time.Second).Subscribed.FrameworkID.Value
	t.Cleanup(func() { cancel(); <-f.done })
	return f
}

func offered(o mesos.Offer) (reserved, unreserved float64) {
	for _, r := range o.Resources {
		if r.Name != "cpus" {
			continue
		}
		if len(r.Reservations) > 0 || (r.Role != nil && *r.Role != "*") {
			reserved += r.Scalar.Value
		} else {
			unreserved += r.Scalar.Value
		}
	}
	return
}

func postOperator(t *testing.T, base, body string) int {
	t.Helper()
	status, _ := postOperatorBody(t, base, body)
	return status
}

// postOperatorBody posts a JSON operator call and returns its status and
// body (trimmed).
func postOperatorBody(t *testing.T, base, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

// TestQuotaLimitCapsOffersNotReservations: a role's limit cuts the
// unreserved resources offered to it (reservations count as consumption),
// while operator reservations beyond the limit are still accepted.
func TestQuotaLimitCapsOffersNotReservations(t *testing.T) {
	_, base := testMaster(t, Config{})
	const role = "sparkpack-job-q"
	if st := postOperator(t, base, `{"type":"UPDATE_QUOTA","update_quota":{"force":true,"quota_configs":[{"role":"`+role+`","limits":{"cpus":{"value":2},"mem":{"value":4096}}}]}}`); st != 200 {
		t.Fatalf("UPDATE_QUOTA: %d", st)
	}
	f := subscribeRole(t, base, role)
	var unres float64
	ev := f.next(scheduler.Event_OFFERS, 5*time.Second)
	var ids []mesos.OfferID
	for _, o := range ev.Offers.Offers {
		_, u := offered(o)
		unres += u
		ids = append(ids, o.ID)
	}
	if unres > 2+1e-9 || unres == 0 {
		t.Fatalf("offers to a role limited to 2 cpus hold %g unreserved cpus", unres)
	}
	f.call(calls.Decline(ids...).With(calls.RefuseSeconds(0)))

	// Reserve 4 cpus (twice the limit): accepted, the limit does not cap it.
	res := `[{"name":"cpus","type":"SCALAR","scalar":{"value":4},"reservations":[{"type":"DYNAMIC","role":"` + role + `"}]},
	        {"name":"mem","type":"SCALAR","scalar":{"value":1024},"reservations":[{"type":"DYNAMIC","role":"` + role + `"}]}]`
	if st := postOperator(t, base, `{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"thesis14-S12"},"resources":`+res+`}}`); st != http.StatusAccepted {
		t.Fatalf("RESERVE_RESOURCES beyond the quota limit: %d, want 202 (limits do not cap reservations)", st)
	}
	// Now the role consumes 4 >= 2: only the reserved cpus are offered.
	// (Bounds for a loaded machine: each wait ends when the offer comes.)
	deadline := time.Now().Add(10 * time.Second)
	for {
		ev := f.next(scheduler.Event_OFFERS, 10*time.Second)
		var r, u float64
		var ids []mesos.OfferID
		for _, o := range ev.Offers.Offers {
			rr, uu := offered(o)
			r, u = r+rr, u+uu
			ids = append(ids, o.ID)
		}
		f.call(calls.Decline(ids...).With(calls.RefuseSeconds(0)))
		if r == 4 {
			if u != 0 {
				t.Fatalf("with 4 reserved cpus and a limit of 2, %g unreserved cpus were offered too", u)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no offer of the 4 reserved cpus (last: %g reserved, %g unreserved)", r, u)
		}
	}
}

// TestOperatorReserveConflictAndRescind: a reservation larger than the
// unallocated resources is refused with 409; one that fits while the
// resources are offered rescinds the offer to make room.
func TestOperatorReserveConflictAndRescind(t *testing.T) {
	_, base := testMaster(t, Config{Cluster: clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{{ID: "a1", Hostname: "a1", CPUs: 4, MemMB: 8192, PricePerHour: 0.1}}}})
	f := subscribeMGO(t, base, "")
	f.next(scheduler.Event_OFFERS, 5*time.Second) // a1 is now offered to f
	res := func(cpus string) string {
		return `{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"a1"},"resources":[{"name":"cpus","type":"SCALAR","scalar":{"value":` + cpus + `},"reservations":[{"type":"DYNAMIC","role":"r1"}]}]}}`
	}
	if st := postOperator(t, base, res("5")); st != http.StatusConflict {
		t.Fatalf("reserving 5 cpus on a 4-cpu agent: %d, want 409", st)
	}
	if st := postOperator(t, base, res("2")); st != http.StatusAccepted {
		t.Fatalf("reserving 2 cpus of an offered agent: %d, want 202", st)
	}
	f.next(scheduler.Event_RESCIND, 3*time.Second)
}

// TestFaultInjection covers the Go API and the /sim/ admin endpoints:
// failing a task, losing an agent, dropping the subscription and
// restarting the master.
func TestFaultInjection(t *testing.T) {
	m, base := testMaster(t, Config{})
	f := subscribeMGO(t, base, "")
	launchOn := func(name string) string {
		ev := f.next(scheduler.Event_OFFERS, 5*time.Second)
		o := ev.Offers.Offers[0]
		task := simTask(name, o.AgentID, "3600", nil)
		f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID)))
		return o.AgentID.Value
	}
	waitState := func(task string, want mesos.TaskState) {
		t.Helper()
		for {
			st := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status
			if len(st.UUID) > 0 {
				f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
			}
			if st.TaskID.Value == task && st.GetState() == want {
				return
			}
		}
	}

	// Fail a task through the admin endpoint.
	launchOn("doomed")
	waitState("doomed", mesos.TASK_RUNNING)
	resp, err := http.Post(base+"/sim/tasks/fail?task=doomed", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /sim/tasks/fail: %v %v", err, resp)
	}
	resp.Body.Close()
	waitState("doomed", mesos.TASK_FAILED)

	// Lose the agent of a running task: TASK_LOST, and it leaves GET_AGENTS.
	agent := launchOn("victim")
	waitState("victim", mesos.TASK_RUNNING)
	if err := m.LoseAgent(agent); err != nil {
		t.Fatal(err)
	}
	waitState("victim", mesos.TASK_LOST)
	if strings.Contains(string(mustJSON(t, operatorJSON(t, base, `{"type":"GET_AGENTS"}`))), `"`+agent+`"`) {
		t.Fatalf("lost agent %s is still in GET_AGENTS", agent)
	}

	// Add an agent over HTTP; it is offered.
	resp, err = http.Post(base+"/sim/agents", "application/json", strings.NewReader(`{"id":"new-1","hostname":"new-1","cpus":2,"memMB":4096,"pricePerHour":0.1}`))
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /sim/agents: %v %v", err, resp)
	}
	resp.Body.Close()
	if !strings.Contains(string(mustJSON(t, operatorJSON(t, base, `{"type":"GET_AGENTS"}`))), `"new-1"`) {
		t.Fatal("added agent missing from GET_AGENTS")
	}

	// A task that must survive the drop and the restart below.
	launchOn("survivor")
	waitState("survivor", mesos.TASK_RUNNING)

	// Drop the subscription: the stream ends; the framework can come back.
	m.DropConnections()
	deadline := time.After(3 * time.Second)
	for ended := false; !ended; {
		select {
		case _, ok := <-f.events:
			ended = !ok
		case <-deadline:
			t.Fatal("the stream did not end after DropConnections")
		}
	}
	f2 := subscribeMGO(t, base, f.id)
	if f2.id != f.id {
		t.Fatalf("re-subscribed as %s, want %s", f2.id, f.id)
	}

	// Restart the master: unavailable for the downtime, state kept.
	m.Restart(300 * time.Millisecond)
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1", strings.NewReader(`{"type":"GET_HEALTH"}`))
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Log("GET_HEALTH answered 200 during the restart's downtime")
		}
	}
	deadline2 := time.Now().Add(10 * time.Second) // (a bound for a loaded machine: the wait ends when it answers)
	for {
		var tasks int
		for _, ti := range m.Tasks() {
			if ti.State == mesos.TASK_RUNNING {
				tasks++
			}
		}
		if tasks == 0 {
			t.Fatal("running tasks vanished with the master restart")
		}
		st := postOperator(t, base, `{"type":"GET_HEALTH"}`)
		if st == 200 {
			break
		}
		if time.Now().After(deadline2) {
			t.Fatalf("master not back 10 s after a 300 ms restart (GET_HEALTH %d)", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	f4 := subscribeMGO(t, base, f.id)
	if f4.id != f.id {
		t.Fatalf("after the restart re-subscribed as %s, want %s", f4.id, f.id)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func discardLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// FuzzCalls sends arbitrary bodies to both APIs: the emulator answers,
// never panics, and only with statuses the real master uses.
func FuzzCalls(f *testing.F) {
	f.Add([]byte(fw1Subscribe), true, false)
	f.Add([]byte(`{"type":"RECONCILE","framework_id":{"value":"x"},"reconcile":{"tasks":[]}}`), true, false)
	f.Add([]byte(`{"type":"GET_AGENTS"}`), false, false)
	f.Add([]byte(`{"type":"UPDATE_QUOTA","update_quota":{"quota_configs":[{"role":"x","limits":{"cpus":{"value":-1}}}]}}`), false, false)
	f.Add([]byte(`{"type":"RESERVE_RESOURCES","reserve_resources":{"agent_id":{"value":"thesis14-S0"},"resources":[]}}`), false, false)
	f.Add([]byte{0x08, 0x01}, true, true)
	f.Add([]byte(`{"type":`), false, false)
	m, err := New(Config{Logger: discardLogger()})
	if err != nil {
		f.Fatal(err)
	}
	m.Start()
	defer m.Close()
	h := m.Handler()
	f.Fuzz(func(t *testing.T, body []byte, sched, protobuf bool) {
		path := "/api/v1"
		if sched {
			path = "/api/v1/scheduler"
		}
		media := "application/json"
		if protobuf {
			media = "application/x-protobuf"
		}
		// The parser itself, on both call types.
		var sc scheduler.Call
		schedErr := decodeCall(media, body, &sc, scheduler.Call_Type_value, schedPrefix)
		var mc master.Call
		masterErr := decodeCall(media, body, &mc, master.Call_Type_value, masterPrefix)
		// SUBSCRIBE opens a stream that lives until the client goes: the
		// lifecycle tests cover it; here it would only pile up streams.
		if (sched && schedErr == nil && sc.GetType() == scheduler.Call_SUBSCRIBE) || (!sched && masterErr == nil && mc.GetType() == master.Call_SUBSCRIBE) {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)).WithContext(ctx)
		req.Header.Set("Content-Type", media)
		req.Header.Set("Accept", media)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 202, 400, 403, 404, 405, 406, 409, 415, 501, 503: // 501: calls the emulator does not emulate
		default:
			t.Fatalf("status %d for %q", rec.Code, body)
		}
	})
}

// TestUpdateFaultsDuplicateAndDelay: with update faults on, every update
// still arrives (late), and duplicates carry the same uuid.
func TestUpdateFaultsDuplicateAndDelay(t *testing.T) {
	_, base := testMaster(t, Config{})
	resp, err := http.Post(base+"/sim/faults/updates?delay-max=100ms&duplicate=1", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /sim/faults/updates: %v %v", err, resp)
	}
	resp.Body.Close()
	if resp, _ := http.Post(base+"/sim/faults/updates?duplicate=7", "", nil); resp == nil || resp.StatusCode != 400 {
		t.Fatalf("a probability of 7 was accepted")
	}
	f := subscribeMGO(t, base, "")
	ev := f.next(scheduler.Event_OFFERS, 5*time.Second)
	o := ev.Offers.Offers[0]
	task := simTask("t", o.AgentID, "0.05", nil)
	f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID)))
	seen := map[string]int{}
	var order []string
	for !(seen["TASK_FINISHED"] >= 2) {
		st := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status
		s := st.GetState().String()
		if seen[s] == 0 {
			order = append(order, s)
		}
		seen[s]++
		f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
	}
	if strings.Join(order, ",") != "TASK_STARTING,TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("updates in order %v", order)
	}
	for s, n := range seen {
		if n < 2 {
			t.Errorf("%s arrived %d times with duplicate=1, want at least 2", s, n)
		}
	}
}

// TestUpdateFaultsTerminalOnly: with terminal-only on, a framework sees
// only its task's terminal update (the earlier ones count as forwarded and
// acknowledged: a reconciliation meanwhile answers TASK_RUNNING); off
// again, it sees every update.
func TestUpdateFaultsTerminalOnly(t *testing.T) {
	m, base := testMaster(t, Config{})
	if resp, _ := http.Post(base+"/sim/faults/updates?terminal-only=maybe", "", nil); resp == nil || resp.StatusCode != 400 {
		t.Fatalf("terminal-only=maybe was accepted")
	}
	resp, err := http.Post(base+"/sim/faults/updates?terminal-only=true", "", nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("POST /sim/faults/updates: %v %v", err, resp)
	}
	resp.Body.Close()
	f := subscribeMGO(t, base, "")
	launch := func(id, seconds string) {
		o := f.next(scheduler.Event_OFFERS, 5*time.Second).Offers.Offers[0]
		f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(simTask(id, o.AgentID, seconds, nil))}.WithOffers(o.ID)))
	}
	updates := func() []string {
		var states []string
		for {
			st := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status
			s := st.GetState().String()
			if st.GetReason() == mesos.REASON_RECONCILIATION {
				s = "reconciled " + s
			}
			states = append(states, s)
			if len(st.UUID) > 0 {
				f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
			}
			if st.GetState() == mesos.TASK_FINISHED || len(states) > 5 {
				return states
			}
		}
	}
	// A task that runs until it is finished by hand, reconciled while it runs.
	launch("long", "100000")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		ts := m.Tasks()
		if len(ts) == 1 && ts[0].State == mesos.TASK_RUNNING {
			f.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"long": ts[0].AgentID})))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the task did not run: %+v", ts)
		}
	}
	if st := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status; st.GetState() != mesos.TASK_RUNNING || st.GetReason() != mesos.REASON_RECONCILIATION {
		t.Fatalf("first update %s %s; want the reconciliation's TASK_RUNNING", st.GetState(), st.GetReason())
	}
	if err := m.FinishTask("", "long"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(updates(), ","); got != "TASK_FINISHED" {
		t.Fatalf("terminal-only: updates %s; want TASK_FINISHED alone", got)
	}
	m.SetUpdateFaults(UpdateFaults{})
	launch("short", "0.05")
	if got := strings.Join(updates(), ","); got != "TASK_STARTING,TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("faults off: updates %s", got)
	}
}
