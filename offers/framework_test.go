package offers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// callLog is a master that answers every scheduler call 202 and keeps it.
type callLog struct {
	mu    sync.Mutex
	calls []scheduler.Call
}

func (l *callLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var c scheduler.Call
	if err := c.Unmarshal(body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (l *callLog) of(t scheduler.Call_Type) []scheduler.Call {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []scheduler.Call
	for _, c := range l.calls {
		if c.GetType() == t {
			out = append(out, c)
		}
	}
	return out
}

// sinkFunc is a StatusSink.
type sinkFunc func(jobID string, st mesos.TaskStatus) error

func (f sinkFunc) DriverStatus(_ context.Context, jobID string, st mesos.TaskStatus) error {
	return f(jobID, st)
}

// roleRec is a RoleHandler that keeps the operation updates it hears.
type roleRec struct{ ops []mesos.OperationStatus }

func (r *roleRec) Offer(mesos.Offer) []mesos.Offer_Operation { return nil }
func (r *roleRec) OperationStatus(st mesos.OperationStatus)  { r.ops = append(r.ops, st) }

// subscribedFramework is a Framework whose client holds an open
// subscription (stream id set) to a master that records its calls.
func subscribedFramework(t *testing.T, sink StatusSink) (*Framework, *callLog) {
	t.Helper()
	calls := &callLog{}
	srv := httptest.NewServer(calls)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	sc := NewSchedClient(ep, log)
	sc.streamID, sc.frameworkID = "stream-1", "F1"
	fw := NewFramework(FrameworkConfig{}, sc, nil, sink, log)
	fw.connected = true
	return fw, calls
}

// TestOperationStatusWithoutID (#32.6): an operation update that carries
// no operation id (Mesos sends none for operations sent without one) is
// passed to the role handlers and not acknowledged, instead of crashing
// the event loop; one with an id is acknowledged with it.
func TestOperationStatusWithoutID(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	h := &roleRec{}
	fw.extraRoles = map[string]RoleHandler{"sparkpack-job-x": h}
	agent := &mesos.AgentID{Value: "S1"}
	update := func(st mesos.OperationStatus) *scheduler.Event {
		return &scheduler.Event{Type: scheduler.Event_UPDATE_OPERATION_STATUS,
			UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{Status: st}}
	}
	fw.Event(ctx, update(mesos.OperationStatus{State: mesos.OPERATION_FINISHED, AgentID: agent, UUID: &mesos.UUID{Value: []byte("u1")}}))
	if len(h.ops) != 1 {
		t.Fatalf("role handler heard %d updates, want 1", len(h.ops))
	}
	if n := len(calls.of(scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS)); n != 0 {
		t.Fatalf("%d acknowledgements of an update without operation id, want 0", n)
	}
	fw.Event(ctx, update(mesos.OperationStatus{State: mesos.OPERATION_FINISHED, AgentID: agent, UUID: &mesos.UUID{Value: []byte("u2")},
		OperationID: &mesos.OperationID{Value: "op-1"}}))
	acks := calls.of(scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS)
	if len(acks) != 1 || acks[0].AcknowledgeOperationStatus.OperationID.Value != "op-1" || string(acks[0].AcknowledgeOperationStatus.UUID) != "u2" {
		t.Fatalf("acknowledgements %+v, want one of op-1/u2", acks)
	}
	// Without a uuid (a reconciliation answer) nothing is acknowledged.
	fw.Event(ctx, update(mesos.OperationStatus{State: mesos.OPERATION_FINISHED, AgentID: agent, OperationID: &mesos.OperationID{Value: "op-2"}}))
	if n := len(calls.of(scheduler.Call_ACKNOWLEDGE_OPERATION_STATUS)); n != 1 {
		t.Fatalf("%d acknowledgements, want still 1", n)
	}
}

// TestTaskStatusHandling: a driver's status reaches the sink (by the
// tracked task, or by the job id in the task id), is acknowledged only
// after the sink stored it and only when it carries a uuid; a terminal
// status ends the tracking.
func TestTaskStatusHandling(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var heard []string
	fail := false
	fw, calls := subscribedFramework(t, sinkFunc(func(jobID string, st mesos.TaskStatus) error {
		mu.Lock()
		defer mu.Unlock()
		if fail {
			return errors.New("database down")
		}
		heard = append(heard, jobID+" "+st.GetState().String())
		return nil
	}))
	task := DriverTaskID(testJobID, 1)
	update := func(s mesos.TaskState, uuid string) *scheduler.Event {
		st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: &s, AgentID: &mesos.AgentID{Value: "S1"}}
		if uuid != "" {
			st.UUID = []byte(uuid)
		}
		return &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}}
	}
	fw.Track(task, testJobID)

	fw.Event(ctx, update(mesos.TASK_RUNNING, "u1"))
	fail = true
	fw.Event(ctx, update(mesos.TASK_FINISHED, "u2")) // not stored: not acknowledged
	fail = false
	fw.Event(ctx, update(mesos.TASK_FINISHED, "")) // a reconciliation answer: stored, not acknowledged
	if acks := calls.of(scheduler.Call_ACKNOWLEDGE); len(acks) != 1 || string(acks[0].Acknowledge.UUID) != "u1" {
		t.Fatalf("acknowledgements %+v, want only u1", acks)
	}
	want := []string{testJobID + " TASK_RUNNING", testJobID + " TASK_FINISHED"}
	if len(heard) != len(want) || heard[0] != want[0] || heard[1] != want[1] {
		t.Fatalf("sink heard %v, want %v", heard, want)
	}
	fw.mu.Lock()
	_, tracked := fw.taskJob[task]
	fw.mu.Unlock()
	if tracked {
		t.Fatal("a task that ended is still tracked (reconciled forever)")
	}
	// A task of someone else (no job id in it) never reaches the sink.
	other := mesos.TASK_RUNNING
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{
		TaskID: mesos.TaskID{Value: "other-task"}, State: &other}}})
	if len(heard) != 2 {
		t.Fatalf("sink heard a foreign task: %v", heard)
	}
}

func driverOffer(id, agent string, cpus, mem float64, role string) mesos.Offer {
	return mesos.Offer{ID: mesos.OfferID{Value: id}, FrameworkID: mesos.FrameworkID{Value: "F1"}, AgentID: mesos.AgentID{Value: agent},
		Hostname: "host-" + agent, Resources: []mesos.Resource{scalarRes("cpus", cpus, role), scalarRes("mem", mem, role)}}
}

// TestOffersLaunchAndDecline: a queued driver goes to an offer with room
// in sparkpack's role (recorded by Sending before the ACCEPT, tracked
// after); offers with nothing in sparkpack's role are declined, smaller
// ones kept in stock; a withdrawn launch sends
// nothing; a rescinded offer is forgotten.
func TestOffersLaunchAndDecline(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	var sendingOn, sentOn []string
	task := DriverTaskID(testJobID, 1)
	fw.Launch(ctx, &DriverLaunch{JobID: testJobID, TaskID: task, CPUs: 1, MemMB: 1024, Argv: []string{"spark-submit", "x"},
		Sending: func(a string) error { sendingOn = append(sendingOn, a); return nil },
		Sent:    func(a string, err error) { sentOn = append(sentOn, a) }})
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
		driverOffer("O-small", "S1", 0.5, 512, "sparkpack"),
		driverOffer("O-other-role", "S2", 8, 8192, "other"),
		driverOffer("O-fits", "S3", 2, 4096, "sparkpack"),
	}}})
	accepts := calls.of(scheduler.Call_ACCEPT)
	if len(accepts) != 1 || accepts[0].Accept.OfferIDs[0].Value != "O-fits" {
		t.Fatalf("accepts %+v, want one of O-fits", accepts)
	}
	ops := accepts[0].Accept.Operations
	if len(ops) != 1 || ops[0].Type != mesos.Offer_Operation_LAUNCH || ops[0].Launch.TaskInfos[0].TaskID.Value != task ||
		ops[0].Launch.TaskInfos[0].Command.GetShell() {
		t.Fatalf("operations %+v, want the driver's LAUNCH as an argument vector", ops)
	}
	if len(sendingOn) != 1 || sendingOn[0] != "S3" || len(sentOn) != 1 {
		t.Fatalf("Sending on %v, Sent on %v; want S3 once each", sendingOn, sentOn)
	}
	fw.mu.Lock()
	tracked := fw.taskJob[task]
	_, smallHeld := fw.offers["O-small"]
	fw.mu.Unlock()
	if tracked != testJobID {
		t.Fatal("a sent driver task is not tracked for reconciliation")
	}
	if !smallHeld {
		t.Fatal("an offer in sparkpack's role is not kept in stock for the next driver")
	}
	declined := map[string]bool{}
	for _, c := range calls.of(scheduler.Call_DECLINE) {
		for _, id := range c.Decline.OfferIDs {
			declined[id.Value] = true
		}
	}
	if declined["O-small"] || !declined["O-other-role"] {
		t.Fatalf("declined %v, want O-other-role (nothing for sparkpack's role in it) only", declined)
	}

	// A withdrawn launch sends no ACCEPT; its offer stays held.
	fw.Launch(ctx, &DriverLaunch{JobID: "j2", TaskID: "t2", CPUs: 1, MemMB: 1024, Argv: []string{"x"},
		Sending: func(string) error { return ErrLaunchWithdrawn }})
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
		driverOffer("O-4", "S4", 2, 4096, "sparkpack")}}})
	if n := len(calls.of(scheduler.Call_ACCEPT)); n != 1 {
		t.Fatalf("%d accepts after a withdrawn launch, want still 1", n)
	}
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_RESCIND, Rescind: &scheduler.Event_Rescind{OfferID: mesos.OfferID{Value: "O-4"}}})
	fw.mu.Lock()
	_, held := fw.offers["O-4"]
	fw.mu.Unlock()
	if held {
		t.Fatal("a rescinded offer is still held")
	}
}

// TestReviveSuppress: offers are revived while a launch is announced or
// queued, and suppressed once none is.
func TestReviveSuppress(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.suppressed = true
	fw.Expect(ctx, testJobID, []string{"S1"})
	if n := len(calls.of(scheduler.Call_REVIVE)); n != 1 {
		t.Fatalf("%d REVIVEs after an announced launch, want 1", n)
	}
	fw.CancelLaunch(testJobID)
	fw.reviveOrSuppress(ctx)
	if n := len(calls.of(scheduler.Call_SUPPRESS)); n != 1 {
		t.Fatalf("%d SUPPRESSes once nothing waits, want 1", n)
	}
	fw.reviveOrSuppress(ctx) // no change: nothing sent
	if n := len(calls.of(scheduler.Call_SUPPRESS)) + len(calls.of(scheduler.Call_REVIVE)); n != 2 {
		t.Fatalf("%d REVIVE/SUPPRESS calls, want 2", n)
	}
}

// TestStockKeptWhileLaunchesAreAnnounced: an offer round that arrives while
// a pass's launches are still being announced is not cut to the launches
// announced so far (the later drivers would wait for the next REVIVE) but
// to that plus burstStock; the first check after the announcements stop
// cuts it to the stock.
func TestStockKeptWhileLaunchesAreAnnounced(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.Expect(ctx, "job-1", []string{"S-job-1"})
	var offers []mesos.Offer
	n := 1 + fw.cfg.OfferStock + burstStock + 7 // more than the burst keeps
	for i := range n {
		offers = append(offers, driverOffer(fmt.Sprintf("O-%d", i), fmt.Sprintf("S%d", i), 4, 8192, "sparkpack"))
	}
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: offers}})
	declined := func() int {
		n := 0
		for _, c := range calls.of(scheduler.Call_DECLINE) {
			n += len(c.Decline.OfferIDs)
		}
		return n
	}
	if got := declined(); got != 7 {
		t.Fatalf("%d offers declined while launches are being announced, want 7 (all but one per announced launch, the stock and burstStock)", got)
	}
	fw.declineUnneeded(ctx, true) // the periodic check, still within the burst
	if got := declined(); got != 7 {
		t.Fatalf("%d offers declined by the periodic check within the burst, want still 7", got)
	}
	fw.mu.Lock()
	fw.lastExpect = fw.lastExpect.Add(-expectBurst) // the announcements stopped
	fw.mu.Unlock()
	fw.declineUnneeded(ctx, true)
	if want := n - (1 + fw.cfg.OfferStock); declined() != want {
		t.Fatalf("%d offers declined after the burst, want %d (all but one per announced launch and the stock)", declined(), want)
	}
	fw.mu.Lock()
	held := len(fw.offers)
	fw.mu.Unlock()
	if held != 1+fw.cfg.OfferStock {
		t.Fatalf("%d offers held after the burst, want %d", held, 1+fw.cfg.OfferStock)
	}
}

// TestUpdatesDoNotHoldTheEventLoop: while Run runs, a task status update
// is recorded and acknowledged apart from the event loop, in the order
// updates came: the next events (offers a waiting driver needs) are
// handled while the store or the master is slow to answer for the update.
func TestUpdatesDoNotHoldTheEventLoop(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var heard []string
	fw, calls := subscribedFramework(t, sinkFunc(func(jobID string, st mesos.TaskStatus) error {
		<-release // a slow store
		mu.Lock()
		defer mu.Unlock()
		heard = append(heard, st.GetState().String())
		return nil
	}))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); fw.recordUpdates(ctx) }()
	defer func() { cancel(); wg.Wait() }()
	for ready := false; !ready; {
		fw.mu.Lock()
		ready = fw.updates != nil
		fw.mu.Unlock()
		if !ready {
			time.Sleep(time.Millisecond)
		}
	}
	task := DriverTaskID(testJobID, 1)
	fw.Track(task, testJobID)
	update := func(s mesos.TaskState, uuid string) *scheduler.Event {
		return &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{
			TaskID: mesos.TaskID{Value: task}, State: &s, AgentID: &mesos.AgentID{Value: "S1"}, UUID: []byte(uuid)}}}
	}
	handled := make(chan struct{})
	go func() {
		fw.Event(ctx, update(mesos.TASK_STARTING, "u1"))
		fw.Event(ctx, update(mesos.TASK_RUNNING, "u2"))
		fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
			driverOffer("O-1", "S1", 4, 8192, "sparkpack")}}})
		close(handled)
	}()
	select {
	case <-handled:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("the event loop waited for a status update to be recorded")
	}
	close(release)
	deadline := time.Now().Add(30 * time.Second)
	for len(calls.of(scheduler.Call_ACKNOWLEDGE)) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	acks := calls.of(scheduler.Call_ACKNOWLEDGE)
	if len(acks) != 2 || string(acks[0].Acknowledge.UUID) != "u1" || string(acks[1].Acknowledge.UUID) != "u2" {
		t.Fatalf("acknowledgements %+v, want u1 then u2", acks)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 2 || heard[0] != "TASK_STARTING" || heard[1] != "TASK_RUNNING" {
		t.Fatalf("sink heard %v, want TASK_STARTING then TASK_RUNNING", heard)
	}
}

// slowAccepts is a master that holds each ACCEPT until two are in flight
// (or a long while passes), and answers every other call at once.
type slowAccepts struct {
	callLog
	mu       sync.Mutex
	inFlight int
	both     chan struct{}
	once     sync.Once
}

func (m *slowAccepts) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var c scheduler.Call
	if err := c.Unmarshal(body); err == nil && c.GetType() == scheduler.Call_ACCEPT {
		m.mu.Lock()
		m.inFlight++
		if m.inFlight == 2 {
			m.once.Do(func() { close(m.both) })
		}
		m.mu.Unlock()
		select {
		case <-m.both:
		case <-time.After(20 * time.Second):
		}
		m.mu.Lock()
		m.inFlight--
		m.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	m.callLog.ServeHTTP(w, r)
}

// TestLaunchesAreSentTogether: drivers that held offers have room for are
// sent together, not one ACCEPT after the other's answer (a master that
// answers late would make the last of many drivers wait for all).
func TestLaunchesAreSentTogether(t *testing.T) {
	ctx := context.Background()
	master := &slowAccepts{both: make(chan struct{})}
	srv := httptest.NewServer(master)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	sc := NewSchedClient(ep, log)
	sc.streamID, sc.frameworkID = "stream-1", "F1"
	fw := NewFramework(FrameworkConfig{}, sc, nil, nil, log)
	fw.connected = true
	for _, j := range []string{"j1", "j2"} {
		fw.mu.Lock()
		fw.pending[j] = &DriverLaunch{JobID: j, TaskID: "t-" + j, CPUs: 1, MemMB: 1024, Argv: []string{"x"}}
		fw.mu.Unlock()
	}
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
		driverOffer("O-1", "S1", 2, 4096, "sparkpack"), driverOffer("O-2", "S2", 2, 4096, "sparkpack")}}})
	if n := len(master.of(scheduler.Call_ACCEPT)); n != 2 {
		t.Fatalf("%d ACCEPTs, want 2", n)
	}
	select {
	case <-master.both:
	default:
		t.Fatal("the second driver's ACCEPT was sent only after the first was answered")
	}
}
