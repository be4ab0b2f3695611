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
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"
)

// Tests written for the mutants of framework.go that mutation testing
// found alive (scripts/mutation.sh --only '^framework\.go$' offers;
// docs/testing.md). Expected values come from the doc comments and the
// Mesos scheduler API (MESOS_PROTOCOL.md), worked out by hand.

// failingMaster answers every scheduler call 202 and keeps it, but
// answers 400 to the call types in fail (a master that refuses them).
type failingMaster struct {
	callLog
	mu   sync.Mutex
	fail map[scheduler.Call_Type]bool
}

func (m *failingMaster) failing(t scheduler.Call_Type, on bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail == nil {
		m.fail = map[scheduler.Call_Type]bool{}
	}
	m.fail[t] = on
}

func (m *failingMaster) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := httptest.NewRecorder()
	m.callLog.ServeHTTP(rec, r)
	if rec.Code != http.StatusAccepted {
		w.WriteHeader(rec.Code)
		return
	}
	m.callLog.mu.Lock()
	last := m.callLog.calls[len(m.callLog.calls)-1].GetType()
	m.callLog.mu.Unlock()
	m.mu.Lock()
	fail := m.fail[last]
	m.mu.Unlock()
	if fail {
		http.Error(w, "refused by the test master", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// frameworkOn is a subscribed Framework (stream id set, connected) with
// cfg on a master serving h; its log goes to the returned hook.
func frameworkOn(t *testing.T, h http.Handler, cfg FrameworkConfig, ids IDStore, sink StatusSink) (*Framework, *logtest.Hook) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	log, hook := logtest.NewNullLogger()
	log.SetLevel(logrus.DebugLevel)
	sc := NewSchedClient(ep, log)
	sc.streamID, sc.frameworkID = "stream-1", "F1"
	fw := NewFramework(cfg, sc, ids, sink, log)
	fw.connected = true
	return fw, hook
}

// TestNewFrameworkDefaultsByHand: every unset (zero) or negative setting
// takes its documented default (FrameworkConfig's comments: the name and
// role "sparkpack", user root, a week's failover timeout, a 30 s decline
// filter, offers held 5 s, a stock of 4, a 5 s wait for the offer where
// a driver's room was kept, reconciliation every 10
// minutes); a positive setting is kept.
func TestNewFrameworkDefaultsByHand(t *testing.T) {
	defaults := FrameworkConfig{Name: "sparkpack", Role: "sparkpack", User: "root", FailoverTimeout: 7 * 24 * time.Hour,
		RefuseSeconds: 30, OfferHold: 5 * time.Second, OfferStock: 4, RoomWait: 5 * time.Second, ReconcileEvery: 10 * time.Minute}
	given := FrameworkConfig{Name: "n", Role: "r", User: "u", FailoverTimeout: time.Hour,
		RefuseSeconds: 7, OfferHold: 3 * time.Second, OfferStock: 2, RoomWait: 2 * time.Second, ReconcileEvery: time.Minute}
	negative := FrameworkConfig{FailoverTimeout: -time.Second, RefuseSeconds: -1, OfferHold: -time.Second, OfferStock: -1, RoomWait: -time.Second, ReconcileEvery: -time.Second}
	for _, c := range []struct {
		name    string
		in, out FrameworkConfig
	}{
		{"zero", FrameworkConfig{}, defaults},
		{"negative", negative, defaults},
		{"given", given, given},
	} {
		got := NewFramework(c.in, nil, nil, nil, logrus.New()).cfg
		if got.Observer == nil {
			t.Errorf("%s: no observer (a nil one would crash on the first offer)", c.name)
		}
		got.Observer = nil
		if got != c.out {
			t.Errorf("%s: config %+v, want %+v", c.name, got, c.out)
		}
	}
}

// idStore is an IDStore that answers id and err, and keeps what is stored.
type idStore struct {
	mu       sync.Mutex
	id       string
	err      error // of FrameworkID
	setErr   error // of SetFrameworkID
	setCalls int
}

func (s *idStore) FrameworkID(context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.err
}

func (s *idStore) SetFrameworkID(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setCalls++
	if s.setErr != nil {
		return s.setErr
	}
	s.id = id
	return nil
}

// TestInfoByHand: FrameworkInfo carries the optional principal, hostname
// and web UI only when they are set, the failover timeout in seconds, the
// framework's role first and the job roles after it in order, and the
// stored id when there is one; an id store that cannot be read fails
// Info (subscribing without the id would register a second framework).
func TestInfoByHand(t *testing.T) {
	ctx := context.Background()
	fw := NewFramework(FrameworkConfig{Principal: "ops", Hostname: "sched-1", WebUIURL: "http://ui", FailoverTimeout: 90 * time.Minute},
		nil, &idStore{id: "F-9"}, nil, logrus.New())
	fw.extraRoles = map[string]RoleHandler{"sparkpack-job-b": noRoleOffers{}, "sparkpack-job-a": noRoleOffers{}}
	info, err := fw.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.GetPrincipal() != "ops" || info.GetHostname() != "sched-1" || info.GetWebUiURL() != "http://ui" || info.GetID().GetValue() != "F-9" {
		t.Errorf("info %+v; want principal ops, hostname sched-1, web UI http://ui, id F-9", info)
	}
	if info.GetFailoverTimeout() != 5400 || info.GetUser() != "root" || info.GetName() != "sparkpack" || !info.GetCheckpoint() {
		t.Errorf("failover %v s, user %q, name %q, checkpoint %v; want 5400 (90 minutes), root, sparkpack, true",
			info.GetFailoverTimeout(), info.GetUser(), info.GetName(), info.GetCheckpoint())
	}
	if !slices.Equal(info.Roles, []string{"sparkpack", "sparkpack-job-a", "sparkpack-job-b"}) {
		t.Errorf("roles %v; want sparkpack, then the job roles in order", info.Roles)
	}

	bare := NewFramework(FrameworkConfig{}, nil, &idStore{}, nil, logrus.New())
	info, err = bare.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Principal != nil || info.Hostname != nil || info.WebUiURL != nil || info.ID != nil {
		t.Errorf("info %+v; want no principal, hostname, web UI or id", info)
	}
	if !slices.Equal(info.Roles, []string{"sparkpack"}) {
		t.Errorf("roles %v; want [sparkpack]", info.Roles)
	}

	broken := NewFramework(FrameworkConfig{}, nil, &idStore{err: errors.New("database down")}, nil, logrus.New())
	if _, err := broken.Info(ctx); err == nil || !strings.Contains(err.Error(), "database down") {
		t.Errorf("Info with an unreadable id: %v; want the store's error", err)
	}
}

// TestReconcileByHand: Reconcile asks for the given tasks (one explicit
// RECONCILE naming them), then for all (an implicit RECONCILE naming
// none); with no task given only the implicit one goes out.
func TestReconcileByHand(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.Reconcile(ctx, nil)
	rc := calls.of(scheduler.Call_RECONCILE)
	if len(rc) != 1 || len(rc[0].Reconcile.Tasks) != 0 {
		t.Fatalf("RECONCILE calls %+v; want one implicit", rc)
	}
	fw.Reconcile(ctx, []string{"t1", "t2"})
	rc = calls.of(scheduler.Call_RECONCILE)
	if len(rc) != 3 || len(rc[1].Reconcile.Tasks) != 2 || rc[1].Reconcile.Tasks[0].TaskID.Value != "t1" ||
		rc[1].Reconcile.Tasks[1].TaskID.Value != "t2" || len(rc[2].Reconcile.Tasks) != 0 {
		t.Fatalf("RECONCILE calls %+v; want the implicit one, then t1 and t2, then an implicit one", rc)
	}
}

// upObserver counts what the observer hears of the subscription.
type upObserver struct {
	nopObserver
	mu        sync.Mutex
	ups, down int
}

func (o *upObserver) ObserveConnected(up bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if up {
		o.ups++
	} else {
		o.down++
	}
}

// TestSubscribedByHand: a subscription stores the framework id, voids the
// offers held, is observed "connected" only then, reconciles the tracked
// tasks and (nothing waiting, offers no longer suppressed by the new
// subscription) suppresses offers. When the id cannot be stored and the
// context ends, nothing else happens. Disconnected voids the offers.
func TestSubscribedByHand(t *testing.T) {
	m := &failingMaster{}
	ids := &idStore{}
	obs := &upObserver{}
	fw, _ := frameworkOn(t, m, FrameworkConfig{Observer: obs}, ids, nil)
	fw.connected = false
	fw.offers["O-old"] = heldOffer{offer: driverOffer("O-old", "S1", 2, 4096, "sparkpack"), since: time.Now(), cpus: 2, mem: 4096}
	fw.suppressed = true
	fw.Track("t-1", "job-1")
	ctx := context.Background()
	fw.Subscribed(ctx, &scheduler.Event_Subscribed{FrameworkID: &mesos.FrameworkID{Value: "F-new"}})
	if ids.id != "F-new" || !fw.Connected() || len(fw.offers) != 0 || obs.ups != 1 {
		t.Fatalf("after Subscribed: id %q, connected %v, %d offers held, %d ups; want F-new, true, 0, 1", ids.id, fw.Connected(), len(fw.offers), obs.ups)
	}
	rc := m.of(scheduler.Call_RECONCILE)
	if len(rc) != 2 || len(rc[0].Reconcile.Tasks) != 1 || rc[0].Reconcile.Tasks[0].TaskID.Value != "t-1" {
		t.Fatalf("RECONCILE calls %+v; want t-1, then all", rc)
	}
	if n := len(m.of(scheduler.Call_SUPPRESS)); n != 1 {
		t.Fatalf("%d SUPPRESS calls after subscribing with nothing waiting, want 1", n)
	}

	fw.offers["O-2"] = heldOffer{offer: driverOffer("O-2", "S1", 2, 4096, "sparkpack"), since: time.Now(), cpus: 2, mem: 4096}
	fw.Disconnected(errors.New("stream closed"))
	if fw.Connected() || len(fw.offers) != 0 || obs.down != 1 {
		t.Fatalf("after Disconnected: connected %v, %d offers held, %d downs; want false, 0, 1", fw.Connected(), len(fw.offers), obs.down)
	}

	m2 := &failingMaster{}
	obs2 := &upObserver{}
	down := &idStore{setErr: errors.New("database down")}
	fw2, _ := frameworkOn(t, m2, FrameworkConfig{Observer: obs2}, down, nil)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	fw2.Subscribed(cctx, &scheduler.Event_Subscribed{FrameworkID: &mesos.FrameworkID{Value: "F-new"}})
	if obs2.ups != 0 || down.setCalls != 1 || len(m2.of(scheduler.Call_RECONCILE)) != 0 {
		t.Fatalf("id not stored: %d ups, %d tries, %d RECONCILEs; want 0, 1, 0", obs2.ups, down.setCalls, len(m2.of(scheduler.Call_RECONCILE)))
	}
}

// TestEventsWithoutBody: an event whose body is missing (a master may send
// a type this client does not decode) is ignored: no call goes out and
// nothing crashes.
func TestEventsWithoutBody(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, sinkFunc(func(string, mesos.TaskStatus) error {
		t.Error("the sink heard an update from an event without one")
		return nil
	}))
	fw.extraRoles = map[string]RoleHandler{"sparkpack-job-x": &roleRec{}}
	for _, typ := range []scheduler.Event_Type{scheduler.Event_OFFERS, scheduler.Event_RESCIND, scheduler.Event_UPDATE,
		scheduler.Event_UPDATE_OPERATION_STATUS, scheduler.Event_FAILURE} {
		fw.Event(ctx, &scheduler.Event{Type: typ})
	}
	if len(calls.calls) != 0 {
		t.Fatalf("calls %+v after events without body; want none", calls.calls)
	}
}

// TestAgentFailureLogged: Mesos' FAILURE event for an agent (no executor
// named) is logged as an agent lost; one for an executor, or without an
// agent, is not.
func TestAgentFailureLogged(t *testing.T) {
	ctx := context.Background()
	fw, hook := frameworkOn(t, &failingMaster{}, FrameworkConfig{}, nil, nil)
	agent := &mesos.AgentID{Value: "S7"}
	for _, f := range []*scheduler.Event_Failure{
		{ExecutorID: &mesos.ExecutorID{Value: "e1"}, AgentID: &mesos.AgentID{Value: "S-exec"}},
		{ExecutorID: &mesos.ExecutorID{Value: "e2"}},
		{},
		{AgentID: agent},
	} {
		fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_FAILURE, Failure: f})
	}
	var lost []string
	for _, e := range hook.AllEntries() {
		if strings.Contains(e.Message, "agent lost") {
			lost = append(lost, e.Data["agent"].(string))
		}
	}
	if !slices.Equal(lost, []string{"S7"}) {
		t.Fatalf("agents logged lost: %v; want S7 once (the failure without executor)", lost)
	}
}

// TestUpdateOfAnyTrackedTask: a tracked task's updates reach the sink with
// the job it was tracked for, whatever its name; an untracked driver task
// names its job (DriverTaskID); with no sink an update is still
// acknowledged; an update with a uuid but no agent is not (the ACKNOWLEDGE
// needs both); every terminal state and TASK_UNKNOWN end the tracking,
// the others do not.
func TestUpdateOfAnyTrackedTask(t *testing.T) {
	ctx := context.Background()
	var heard []string
	fw, calls := subscribedFramework(t, sinkFunc(func(jobID string, st mesos.TaskStatus) error {
		heard = append(heard, jobID)
		return nil
	}))
	running := mesos.TASK_RUNNING
	update := func(task string, s mesos.TaskState, agent bool) {
		st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: &s, UUID: []byte("u-" + task + "-" + s.String())}
		if agent {
			st.AgentID = &mesos.AgentID{Value: "S1"}
		}
		fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	}
	fw.Track("custom-task", "job-x")
	update("custom-task", running, true)
	update(DriverTaskID(testJobID, 3), running, false)
	if !slices.Equal(heard, []string{"job-x", testJobID}) {
		t.Fatalf("sink heard %v; want job-x (tracked), then %s (by the task id)", heard, testJobID)
	}
	if acks := calls.of(scheduler.Call_ACKNOWLEDGE); len(acks) != 1 || acks[0].Acknowledge.TaskID.Value != "custom-task" {
		t.Fatalf("acknowledgements %+v; want custom-task's only (the other has no agent)", acks)
	}

	// Which states end the tracking: Mesos' terminal states and TASK_UNKNOWN.
	ends := map[mesos.TaskState]bool{
		mesos.TASK_FINISHED: true, mesos.TASK_FAILED: true, mesos.TASK_KILLED: true, mesos.TASK_LOST: true,
		mesos.TASK_ERROR: true, mesos.TASK_DROPPED: true, mesos.TASK_GONE: true, mesos.TASK_GONE_BY_OPERATOR: true,
		mesos.TASK_UNKNOWN: true,
		mesos.TASK_STAGING: false, mesos.TASK_STARTING: false, mesos.TASK_RUNNING: false, mesos.TASK_KILLING: false,
		mesos.TASK_UNREACHABLE: false,
	}
	for s, end := range ends {
		fw.Track("t", "job-t")
		update("t", s, true)
		fw.mu.Lock()
		_, tracked := fw.taskJob["t"]
		fw.mu.Unlock()
		if tracked == end {
			t.Errorf("%s: still tracked %v, want %v", s, tracked, !end)
		}
	}
	// A status without a state is not terminal.
	fw.Track("t-nil", "job-t")
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{TaskID: mesos.TaskID{Value: "t-nil"}}}})
	if _, tracked := fw.taskJob["t-nil"]; !tracked {
		t.Error("a status without a state ended the tracking")
	}

	// No sink: acknowledged all the same.
	bare, bareCalls := subscribedFramework(t, nil)
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: DriverTaskID(testJobID, 1)}, State: &running, UUID: []byte("u9"), AgentID: &mesos.AgentID{Value: "S1"}}
	bare.Event(ctx, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	if acks := bareCalls.of(scheduler.Call_ACKNOWLEDGE); len(acks) != 1 || string(acks[0].Acknowledge.UUID) != "u9" {
		t.Fatalf("acknowledgements without a sink %+v; want u9", acks)
	}
}

// TestJobOfTaskByHand: a driver task id is "sparkpack-driver-", the job's
// 36-character id, "-" and the attempt; the job id is read back from any
// id with that prefix and more than the 36 characters after it, and from
// no other.
func TestJobOfTaskByHand(t *testing.T) {
	job := testJobID // 36 characters
	for _, c := range []struct{ task, want string }{
		{"sparkpack-driver-" + job + "-1", job},
		{"sparkpack-driver-" + job + "-", job},
		{"sparkpack-driver-" + job, ""},
		{"sparkpack-driver-" + job[:35] + "-", ""},
		{"other-driver-" + job + "-1", ""},
		{"", ""},
	} {
		if got := jobOfTask(c.task); got != c.want {
			t.Errorf("jobOfTask(%q) = %q, want %q", c.task, got, c.want)
		}
	}
	if got := DriverTaskID(job, 12); got != "sparkpack-driver-"+job+"-12" {
		t.Errorf("DriverTaskID = %q", got)
	}
}

// TestExpireOffersStopsWithItsContext: the expiry loop's tickers are made
// from the defaults of a zero config (a ticker of a non-positive period
// panics), and the loop returns when its context ends.
func TestExpireOffersStopsWithItsContext(t *testing.T) {
	fw := NewFramework(FrameworkConfig{}, nil, nil, nil, logrus.New())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	fw.expireOffers(ctx)
}

// TestRefusedCallsLogged: a refused RECONCILE (explicit or implicit) or
// ACKNOWLEDGE is logged as a warning; accepted ones log nothing, and an
// update without uuid is not acknowledged (nor does it try to be).
func TestRefusedCallsLogged(t *testing.T) {
	ctx := context.Background()
	running := mesos.TASK_RUNNING
	ack := &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{
		TaskID: mesos.TaskID{Value: "t-1"}, State: &running, UUID: []byte("u1"), AgentID: &mesos.AgentID{Value: "S1"}}}}
	for _, refuse := range []bool{false, true} {
		m := &failingMaster{}
		m.failing(scheduler.Call_RECONCILE, refuse)
		m.failing(scheduler.Call_ACKNOWLEDGE, refuse)
		fw, hook := frameworkOn(t, m, FrameworkConfig{}, nil, nil)
		fw.Reconcile(ctx, []string{"t-1"})
		fw.Event(ctx, ack)
		// A reconciliation answer (no uuid) is not acknowledged at all.
		noUUID := *ack.Update
		noUUID.Status.UUID = nil
		fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &noUUID})
		if n := len(m.of(scheduler.Call_ACKNOWLEDGE)); n != 1 {
			t.Errorf("refused %v: %d ACKNOWLEDGE calls, want 1 (u1 only)", refuse, n)
		}
		var warned []string
		for _, e := range hook.AllEntries() {
			if e.Level <= logrus.WarnLevel {
				warned = append(warned, e.Message)
			}
		}
		var want []string
		if refuse {
			again := "; it is retried at the next reconciliation (and at every resubscription); if it keeps failing, check the Mesos master"
			want = []string{"explicit reconciliation failed" + again, "implicit reconciliation failed" + again, "acknowledge failed; Mesos will re-send the update"}
		}
		if !slices.Equal(warned, want) {
			t.Errorf("refused %v: warnings %q, want %q", refuse, warned, want)
		}
	}
}
