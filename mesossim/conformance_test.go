package mesossim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli"
	"github.com/mesos/mesos-go/api/v1/lib/httpcli/httpsched"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// mgoFramework is a scheduler written with mesos-go's own client packages
// (httpcli, httpsched, calls), as a third-party framework would be.
type mgoFramework struct {
	t      *testing.T
	caller calls.Caller
	id     string
	events chan *scheduler.Event
	cancel context.CancelFunc
	done   chan struct{}
	// keepSkipped: next keeps the events it skips in backlog, in order
	// (an OFFERS event that came while the test waited for an UPDATE is
	// an outstanding offer, answered later, not lost); without it they
	// are dropped, which tests that only want fresh offers rely on.
	keepSkipped bool
	backlog     []*scheduler.Event
}

func newCaller(base string, mediaType string) calls.Caller {
	cli := httpcli.New(
		httpcli.Endpoint(base+"/api/v1/scheduler"),
		httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeProtobuf]),
		httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))),
	)
	if mediaType == "json" {
		cli = httpcli.New(
			httpcli.Endpoint(base+"/api/v1/scheduler"),
			httpcli.Codec(codecs.ByMediaType[codecs.MediaTypeJSON]),
			httpcli.Do(httpcli.With(httpcli.Timeout(10*time.Second))),
		)
	}
	return httpsched.NewCaller(cli)
}

func frameworkInfo(id string) *mesos.FrameworkInfo {
	fo := 2.0 // seconds
	cp := true
	info := &mesos.FrameworkInfo{User: "root", Name: "mesos-go-conformance", Roles: []string{"sparkpack"},
		FailoverTimeout: &fo, Checkpoint: &cp,
		Capabilities: []mesos.FrameworkInfo_Capability{{Type: mesos.FrameworkInfo_Capability_MULTI_ROLE},
			{Type: mesos.FrameworkInfo_Capability_RESERVATION_REFINEMENT}}}
	if id != "" {
		info.ID = &mesos.FrameworkID{Value: id}
	}
	return info
}

// subscribeMGO subscribes with the protobuf codec and reads events until the test ends.
func subscribeMGO(t *testing.T, base, id string) *mgoFramework {
	t.Helper()
	return subscribeMGOInfo(t, base, frameworkInfo(id))
}

// subscribeMGOInfo is subscribeMGO with a FrameworkInfo of the caller's.
func subscribeMGOInfo(t *testing.T, base string, info *mesos.FrameworkInfo) *mgoFramework {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f := &mgoFramework{t: t, caller: newCaller(base, "protobuf"), events: make(chan *scheduler.Event, 4096), cancel: cancel, done: make(chan struct{})}
	resp, err := f.caller.Call(ctx, calls.Subscribe(info))
	if err != nil {
		cancel()
		t.Fatalf("SUBSCRIBE with mesos-go: %v", err)
	}
	go func() {
		defer close(f.done)
		defer resp.Close()
		for {
			var ev scheduler.Event
			if err := resp.Decode(&ev); err != nil {
				close(f.events)
				return
			}
			select {
			case f.events <- &ev:
			case <-ctx.Done():
				close(f.events)
				return
			}
		}
	}()
	ev := f.next(scheduler.Event_SUBSCRIBED, 5*time.Second)
	f.id = ev.Subscribed.FrameworkID.Value
	if ev.Subscribed.GetHeartbeatIntervalSeconds() <= 0 {
		t.Fatalf("SUBSCRIBED without heartbeat_interval_seconds: %+v", ev.Subscribed)
	}
	t.Cleanup(func() { cancel(); <-f.done })
	return f
}

// next returns the next event of the given type, from the backlog first;
// the others it reads go to the backlog.
func (f *mgoFramework) next(typ scheduler.Event_Type, timeout time.Duration) *scheduler.Event {
	f.t.Helper()
	for i, ev := range f.backlog {
		if ev.GetType() == typ {
			f.backlog = append(f.backlog[:i], f.backlog[i+1:]...)
			return ev
		}
	}
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-f.events:
			if !ok {
				f.t.Fatalf("event stream ended while waiting for %s", typ)
			}
			if ev.GetType() == typ {
				return ev
			}
			if f.keepSkipped {
				f.backlog = append(f.backlog, ev)
			}
		case <-deadline:
			f.t.Fatalf("no %s event within %s", typ, timeout)
		}
	}
}

// pending takes the backlog's events of the given type.
func (f *mgoFramework) pending(typ scheduler.Event_Type) []*scheduler.Event {
	var out, keep []*scheduler.Event
	for _, ev := range f.backlog {
		if ev.GetType() == typ {
			out = append(out, ev)
		} else {
			keep = append(keep, ev)
		}
	}
	f.backlog = keep
	return out
}

// none asserts that no event of the type arrives within d.
func (f *mgoFramework) none(typ scheduler.Event_Type, d time.Duration) {
	f.t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-f.events:
			if !ok {
				return
			}
			if ev.GetType() == typ {
				f.t.Fatalf("unexpected %s event: %v", typ, ev)
			}
		case <-deadline:
			return
		}
	}
}

func (f *mgoFramework) call(c *scheduler.Call) {
	f.t.Helper()
	c = c.With(calls.Framework(f.id))
	if err := calls.CallNoData(context.Background(), f.caller, c); err != nil {
		f.t.Fatalf("%s: %v", c.GetType(), err)
	}
}

func scalarRes(name string, v float64, role string, labels map[string]string) mesos.Resource {
	r := mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v},
		AllocationInfo: &mesos.Resource_AllocationInfo{Role: &role}}
	if labels != nil {
		ls := &mesos.Labels{}
		for k, v := range labels {
			v := v
			ls.Labels = append(ls.Labels, mesos.Label{Key: k, Value: &v})
		}
		r.Reservations = []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: &role, Labels: ls}}
	}
	return r
}

// simTask is a task that runs dur simulated seconds on resources res
// (1 cpu and 128 MiB unreserved in role sparkpack when res is nil).
func simTask(name string, agent mesos.AgentID, dur string, res []mesos.Resource) mesos.TaskInfo {
	if res == nil {
		res = []mesos.Resource{scalarRes("cpus", 1, "sparkpack", nil), scalarRes("mem", 128, "sparkpack", nil)}
	}
	shell := false
	cmd := "/bin/sleep"
	return mesos.TaskInfo{Name: name, TaskID: mesos.TaskID{Value: name}, AgentID: agent, Resources: res,
		Command: &mesos.CommandInfo{Shell: &shell, Value: &cmd, Arguments: []string{"sleep", dur}},
		Labels:  &mesos.Labels{Labels: []mesos.Label{{Key: DurationLabel, Value: &dur}}}}
}

// operatorJSON posts a JSON operator call and decodes the answer.
func operatorJSON(t *testing.T, base, body string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("operator %s: %d %s", body, resp.StatusCode, b)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// labelledReservations lists agent -> cpus reserved with label key=value, from GET_AGENTS.
func labelledReservations(t *testing.T, base, key, value string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	m := operatorJSON(t, base, `{"type":"GET_AGENTS"}`)
	agents, _ := m["get_agents"].(map[string]any)["agents"].([]any)
	for _, a := range agents {
		am := a.(map[string]any)
		id := am["agent_info"].(map[string]any)["id"].(map[string]any)["value"].(string)
		res, _ := am["total_resources"].([]any)
		for _, r := range res {
			rm := r.(map[string]any)
			if rm["name"] != "cpus" {
				continue
			}
			rs, _ := rm["reservations"].([]any)
			for _, ri := range rs {
				labels, _ := ri.(map[string]any)["labels"].(map[string]any)
				ls, _ := labels["labels"].([]any)
				for _, l := range ls {
					lm := l.(map[string]any)
					if lm["key"] == key && lm["value"] == value {
						out[id] += rm["scalar"].(map[string]any)["value"].(float64)
					}
				}
			}
		}
	}
	return out
}

// TestMesosGoClientLifecycle drives the emulator with mesos-go's client:
// subscribe, offers, reserve + launch in one ACCEPT, status updates re-sent
// until acknowledged, explicit reconciliation, unreserve, decline filters,
// suppress / revive, teardown.
func TestMesosGoClientLifecycle(t *testing.T) {
	_, base := testMaster(t, Config{StatusUpdateRetry: 150 * time.Millisecond})
	f := subscribeMGO(t, base, "")
	f.keepSkipped = true

	// Offers carry allocation_info for our role.
	ev := f.next(scheduler.Event_OFFERS, 5*time.Second)
	if len(ev.Offers.Offers) == 0 {
		t.Fatal("empty OFFERS")
	}
	offer := ev.Offers.Offers[0]
	for _, r := range offer.Resources {
		if r.AllocationInfo.GetRole() != "sparkpack" {
			t.Fatalf("offer resource %s allocated to %q, want sparkpack", r.Name, r.AllocationInfo.GetRole())
		}
	}
	agent := offer.AgentID.Value
	var others []mesos.OfferID
	for _, o := range ev.Offers.Offers[1:] {
		others = append(others, o.ID)
	}

	// One ACCEPT: reserve (labelled) then launch a task on what was reserved.
	labels := map[string]string{"owner": "conformance"}
	reserved := []mesos.Resource{scalarRes("cpus", 1, "sparkpack", labels), scalarRes("mem", 256, "sparkpack", labels)}
	task := simTask("t1", offer.AgentID, "0.3", reserved)
	f.call(calls.Accept(calls.OfferOperations{calls.OpReserve(reserved...), calls.OpLaunch(task)}.WithOffers(offer.ID)))
	// The other agents are declined for a minute: declined for a second,
	// they came back whenever the steps below took longer than that (a
	// loaded machine), into the "no offers" check after UNRESERVE.
	if len(others) > 0 {
		f.call(calls.Decline(others...).With(calls.RefuseSeconds(time.Minute)))
	}
	if got := labelledReservations(t, base, "owner", "conformance"); got[agent] != 1 {
		t.Fatalf("GET_AGENTS shows %v cpus reserved with the label, want 1 on %s", got, agent)
	}

	// The first update is not acknowledged: it must come again, same uuid.
	up := f.next(scheduler.Event_UPDATE, 5*time.Second)
	first := up.Update.Status
	if len(first.UUID) == 0 || first.TaskID.Value != "t1" {
		t.Fatalf("first update %v: want one for t1 with a uuid", first)
	}
	again := f.next(scheduler.Event_UPDATE, 5*time.Second)
	if again.Update.Status.GetState() != first.GetState() || string(again.Update.Status.UUID) != string(first.UUID) {
		t.Fatalf("unacknowledged %s was followed by %s: want it re-sent with the same uuid", first.GetState(), again.Update.Status.GetState())
	}
	states := []string{first.GetState().String()}
	ack := func(st mesos.TaskStatus) {
		f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
	}
	ack(first)
	for states[len(states)-1] != "TASK_FINISHED" {
		st := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status
		if string(st.UUID) == string(first.UUID) {
			continue // a re-send that crossed our acknowledgement
		}
		states = append(states, st.GetState().String())
		ack(st)
	}
	if strings.Join(states, ",") != "TASK_STARTING,TASK_RUNNING,TASK_FINISHED" {
		t.Fatalf("task states %v, want TASK_STARTING,TASK_RUNNING,TASK_FINISHED", states)
	}

	// Explicit reconciliation of a known and an unknown task: no uuid.
	f.call(calls.Reconcile(calls.ReconcileTasks(map[string]string{"nope": ""})))
	rec := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status
	if rec.TaskID.Value != "nope" || len(rec.UUID) != 0 || rec.GetReason() != mesos.REASON_RECONCILIATION {
		t.Fatalf("reconciling an unknown task gave %v", rec)
	}

	// The reservation comes back in an offer; UNRESERVE it.
	var withRes *mesos.Offer
	for withRes == nil {
		ev := f.next(scheduler.Event_OFFERS, 10*time.Second)
		var decline []mesos.OfferID
		for i, o := range ev.Offers.Offers {
			has := false
			for _, r := range o.Resources {
				has = has || len(r.Reservations) > 0
			}
			if has && withRes == nil {
				withRes = &ev.Offers.Offers[i]
			} else {
				decline = append(decline, o.ID)
			}
		}
		if len(decline) > 0 {
			f.call(calls.Decline(decline...).With(calls.RefuseSeconds(time.Minute)))
		}
	}
	// Offers that came with it (while the test waited for updates) are
	// declined for a minute too.
	for _, ev := range f.pending(scheduler.Event_OFFERS) {
		var decline []mesos.OfferID
		for _, o := range ev.Offers.Offers {
			decline = append(decline, o.ID)
		}
		f.call(calls.Decline(decline...).With(calls.RefuseSeconds(time.Minute)))
	}
	var unres []mesos.Resource
	for _, r := range withRes.Resources {
		if len(r.Reservations) > 0 {
			unres = append(unres, r)
		}
	}
	f.call(calls.Accept(calls.OfferOperations{calls.OpUnreserve(unres...)}.WithOffers(withRes.ID)).With(calls.RefuseSeconds(time.Minute)))
	deadline := time.Now().Add(3 * time.Second)
	for len(labelledReservations(t, base, "owner", "conformance")) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the reservation is still there after UNRESERVE")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// Everything is declined for a minute: no offers, until REVIVE.
	f.none(scheduler.Event_OFFERS, 400*time.Millisecond)
	f.call(calls.Revive())
	ev = f.next(scheduler.Event_OFFERS, 3*time.Second)
	var all []mesos.OfferID
	for _, o := range ev.Offers.Offers {
		all = append(all, o.ID)
	}
	f.call(calls.Suppress())
	f.call(calls.Decline(all...).With(calls.RefuseSeconds(0)))
	f.none(scheduler.Event_OFFERS, 400*time.Millisecond)

	// TEARDOWN ends the stream.
	f.call(&scheduler.Call{Type: scheduler.Call_TEARDOWN})
	deadline = time.Now().Add(3 * time.Second)
	for {
		select {
		case _, ok := <-f.events:
			if !ok {
				return
			}
		case <-time.After(time.Until(deadline)):
			t.Fatal("the event stream did not end after TEARDOWN")
		}
	}
}

// TestFailoverKeepsTasksWithinTimeout: a framework that re-subscribes with
// its id within failover_timeout keeps its task; one that stays away
// longer loses it.
func TestFailoverKeepsTasksWithinTimeout(t *testing.T) {
	m, base := testMaster(t, Config{})
	launch := func(f *mgoFramework, id string) {
		ev := f.next(scheduler.Event_OFFERS, 5*time.Second)
		o := ev.Offers.Offers[0]
		task := simTask(id, o.AgentID, "3600", nil)
		f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(task)}.WithOffers(o.ID)))
		for {
			st := f.next(scheduler.Event_UPDATE, 5*time.Second).Update.Status
			f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
			if st.GetState() == mesos.TASK_RUNNING {
				return
			}
		}
	}
	running := func(task string) bool {
		for _, ti := range m.Tasks() {
			if ti.TaskID == task && ti.State == mesos.TASK_RUNNING {
				return true
			}
		}
		return false
	}

	f := subscribeMGO(t, base, "")
	launch(f, "kept")
	id := f.id
	f.cancel() // the scheduler goes away
	<-f.done
	time.Sleep(500 * time.Millisecond) // well within the 2 s failover timeout
	f2 := subscribeMGO(t, base, id)
	if f2.id != id || !running("kept") {
		t.Fatalf("re-subscribed as %s (was %s); task running: %v", f2.id, id, running("kept"))
	}
	launch(f2, "lost")
	f2.cancel()
	<-f2.done
	deadline := time.Now().Add(6 * time.Second)
	for running("kept") || running("lost") {
		if time.Now().After(deadline) {
			t.Fatal("tasks of a framework gone past its failover_timeout still run")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestMesosGoJSONCodecFailsOnSubscribedLikeARealMaster: a 1.12 master
// sends the QUOTA_V2 capability, which mesos-go v0.0.11's JSON codec cannot
// decode; the emulator must reproduce that trap (protobuf works, above).
func TestMesosGoJSONCodecFailsOnSubscribedLikeARealMaster(t *testing.T) {
	_, base := testMaster(t, Config{})
	caller := newCaller(base, "json")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := caller.Call(ctx, calls.Subscribe(frameworkInfo("")))
	if err != nil {
		if strings.Contains(err.Error(), "QUOTA_V2") || strings.Contains(fmt.Sprint(err), "MasterInfo") {
			return
		}
		t.Fatalf("SUBSCRIBE with the JSON codec failed, but not on the capability: %v", err)
	}
	defer resp.Close()
	var ev scheduler.Event
	err = resp.Decode(&ev)
	if err == nil {
		t.Fatalf("mesos-go's JSON codec decoded SUBSCRIBED (%v); a real 1.12 master's SUBSCRIBED breaks it", ev.GetType())
	}
	t.Logf("as against a real master: %v", err)
}
