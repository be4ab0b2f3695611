package offers

import (
	"context"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	sched "github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// chanReporter passes every report on.
type chanReporter struct {
	mu      sync.Mutex
	reports chan sched.State
}

func (r *chanReporter) Report(_ context.Context, _ string, to sched.State, _ string) error {
	r.reports <- to
	return nil
}
func (r *chanReporter) ReportRan(ctx context.Context, id string, to sched.State, why string, _ sched.RunStart) error {
	return r.Report(ctx, id, to, why)
}
func (r *chanReporter) ClusterChanged() {}

// TestExecutorRunsAJob: the executor carries one job through the machine's
// actions against a framework on a recording master: reserved, the driver
// named and stored, LAUNCHING, launched from an offer (LAUNCH_SENT stored
// before the ACCEPT), RUNNING on its status, and, once it finished,
// released and reported FINISHED; then the adapter forgets it.
func TestExecutorRunsAJob(t *testing.T) {
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	st := newMemStore(testJob(0))
	rep := &chanReporter{reports: make(chan sched.State, 16)}
	fw, calls := subscribedFramework(t, nil)
	p := &orderPinner{fw: fw, reserved: make(chan struct{}, 1)}
	cl := NewCluster(ClusterConfig{Store: st, Framework: fw, Reserver: p, Log: log,
		Submit: sparksubmit.Options{Master: "mesos://127.0.0.1:5050"}})
	fw.sink = cl
	cl.SetReporter(rep)
	ctx, cancel := context.WithCancel(context.Background())
	defer func() { cancel(); cl.Wait() }()
	cl.mu.Lock()
	cl.ctx = ctx
	cl.agents = []Agent{{ID: "S1", Hostname: "host-1", CPUs: 4, FreeCPUs: 4, FreeMemMB: 8192}}
	cl.loaded = true
	cl.mu.Unlock()

	expect := func(want sched.State) {
		t.Helper()
		select {
		case got := <-rep.reports:
			if got != want {
				t.Fatalf("reported %s, want %s", got, want)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s report", want)
		}
	}
	if err := cl.Apply(ctx, testJob(0), placement.Plan{Assignments: []placement.Assignment{{AgentID: "S1", Executors: 1}}}); err != nil {
		t.Fatal(err)
	}
	expect(sched.Launching)
	task := DriverTaskID(testJobID, 1)
	// Queued with the framework; an offer with room comes.
	deadline := time.Now().Add(20 * time.Second)
	for {
		fw.mu.Lock()
		_, queued := fw.pending[testJobID]
		fw.mu.Unlock()
		if queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the driver's launch was never queued")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_OFFERS, Offers: &scheduler.Event_Offers{Offers: []mesos.Offer{
		driverOffer("O1", "S1", 2, 4096, "sparkpack")}}})
	if d, _ := st.Driver(ctx, testJobID); d.TaskID != task || d.State != LaunchSent || d.AgentID != "S1" {
		t.Fatalf("stored driver %+v, want %s LAUNCH_SENT on S1 before the ACCEPT", d, task)
	}
	if n := len(calls.of(scheduler.Call_ACCEPT)); n != 1 {
		t.Fatalf("%d ACCEPTs, want 1", n)
	}
	update := func(s mesos.TaskState) {
		fw.Event(ctx, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: mesos.TaskStatus{
			TaskID: mesos.TaskID{Value: task}, State: &s, AgentID: &mesos.AgentID{Value: "S1"}, UUID: []byte(s.String())}}})
	}
	update(mesos.TASK_RUNNING)
	expect(sched.Running)
	update(mesos.TASK_FINISHED)
	if d, _ := st.Driver(ctx, testJobID); !d.Ended || d.State != "TASK_FINISHED" {
		t.Fatalf("stored driver %+v, want ended TASK_FINISHED (stored before the acknowledgement)", d)
	}
	expect(sched.Finished)
	deadline = time.Now().Add(20 * time.Second)
	for {
		cl.mu.Lock()
		_, followed := cl.jobs[testJobID]
		cl.mu.Unlock()
		if !followed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the adapter still follows a finished job")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := len(calls.of(scheduler.Call_ACKNOWLEDGE)); n != 2 {
		t.Fatalf("%d acknowledgements, want 2", n)
	}
}

// TestGivenUpDriverThatRunsIsKilled (#34): a driver sparkpack gave up (it
// ended TASK_UNREACHABLE when its agent missed its pings) that reports
// RUNNING again when its agent comes back is killed, as is a running task
// of a job the adapter no longer follows; a driver that is wanted is not.
func TestGivenUpDriverThatRunsIsKilled(t *testing.T) {
	ctx := context.Background()
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	fw, calls := subscribedFramework(t, nil)
	st := newMemStore(testJob(0))
	cl := NewCluster(ClusterConfig{Store: st, Framework: fw, Log: log})
	running := mesos.TASK_RUNNING
	status := func(task string) mesos.TaskStatus {
		return mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: &running, AgentID: &mesos.AgentID{Value: "S1"}}
	}
	lj := &liveJob{signal: make(chan struct{}, 1), st: lifecycle.New(lifecycle.Config{}, testJob(0), placement.Plan{}, lifecycle.Releasing,
		sched.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: "t-1", AgentID: "S1", State: "TASK_UNREACHABLE", Started: true, Ended: true}, time.Now())}
	lj.st.Busy = lifecycle.ActGiveBack
	cl.jobs[testJobID] = lj

	if err := cl.DriverStatus(ctx, testJobID, status("t-1")); err != nil {
		t.Fatal(err)
	}
	if err := cl.DriverStatus(ctx, "job-not-followed", status("t-9")); err != nil {
		t.Fatal(err)
	}
	var killed []string
	for _, c := range calls.of(scheduler.Call_KILL) {
		killed = append(killed, c.Kill.TaskID.Value)
	}
	if len(killed) != 2 || killed[0] != "t-1" || killed[1] != "t-9" {
		t.Fatalf("killed %v, want the given-up driver t-1 and the unfollowed t-9", killed)
	}

	// The wanted driver of a job: its RUNNING is recorded, not killed.
	lj.st = lifecycle.New(lifecycle.Config{}, testJob(0), placement.Plan{}, lifecycle.Launching,
		sched.DriverRecord{JobID: testJobID, Attempt: 2, TaskID: "t-2", AgentID: "S1", State: LaunchSent}, time.Now())
	lj.st.Busy = lifecycle.ActKillDriver
	if err := cl.DriverStatus(ctx, testJobID, status("t-2")); err != nil {
		t.Fatal(err)
	}
	if n := len(calls.of(scheduler.Call_KILL)); n != 2 {
		t.Fatalf("%d kills after the wanted driver's RUNNING, want still 2", n)
	}
	if !lj.st.Driver.Started {
		t.Fatal("the wanted driver's RUNNING was not recorded")
	}
}
