package offers

import (
	"context"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

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
