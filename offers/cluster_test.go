package offers

import (
	"context"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// memStore is an in-memory JobStore for the adapter's decisions.
type memStore struct {
	mu      sync.Mutex
	jobs    map[string]scheduler.Job
	drivers map[string]scheduler.DriverRecord
	counted map[string]string // job -> task counted last
	notes   []string
}

func newMemStore(jobs ...scheduler.Job) *memStore {
	s := &memStore{jobs: map[string]scheduler.Job{}, drivers: map[string]scheduler.DriverRecord{}, counted: map[string]string{}}
	for _, j := range jobs {
		s.jobs[j.ID] = j
	}
	return s
}

func (s *memStore) GetJob(_ context.Context, id string) (scheduler.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j, ok := s.jobs[id]
	if !ok {
		return j, scheduler.ErrNotFound
	}
	return j, nil
}
func (s *memStore) Unfinished(context.Context) ([]scheduler.Job, error) { return nil, nil }
func (s *memStore) Plan(context.Context, string) (placement.Plan, error) {
	return placement.Plan{}, scheduler.ErrNotFound
}
func (s *memStore) PutDriver(_ context.Context, d scheduler.DriverRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drivers[d.JobID] = d
	return nil
}
func (s *memStore) Driver(_ context.Context, id string) (scheduler.DriverRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.drivers[id]
	if !ok {
		return d, scheduler.ErrNotFound
	}
	return d, nil
}
func (s *memStore) CountFailedRun(_ context.Context, id, task string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.jobs[id]
	if s.counted[id] != task {
		j.FailedRuns++
		s.counted[id] = task
		s.jobs[id] = j
	}
	return j.FailedRuns, nil
}
func (s *memStore) Note(_ context.Context, id, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, reason)
	return nil
}

const testJobID = "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"

func testJob(retries int) scheduler.Job {
	return scheduler.Job{Spec: scheduler.Spec{ID: testJobID, Retries: retries,
		App:       scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
		Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}, State: scheduler.Running}
}

type nopReporter struct {
	reports []scheduler.State
	ran     []scheduler.RunStart // the runs of ReportRan
}

func (r *nopReporter) Report(_ context.Context, _ string, to scheduler.State, _ string) error {
	r.reports = append(r.reports, to)
	return nil
}
func (r *nopReporter) ReportRan(ctx context.Context, id string, to scheduler.State, why string, run scheduler.RunStart) error {
	r.ran = append(r.ran, run)
	return r.Report(ctx, id, to, why)
}
func (r *nopReporter) ClusterChanged() {}

// TestDriverStatusCounts: updates about a task never sent are ignored; a
// launch lost before the driver started is counted unless the master
// refused it for an invalid offer; a started driver is never a lost launch.
func TestDriverStatusCounts(t *testing.T) {
	ctx := context.Background()
	status := func(task string, s mesos.TaskState, reason *mesos.TaskStatus_Reason) mesos.TaskStatus {
		return mesos.TaskStatus{TaskID: mesos.TaskID{Value: task}, State: &s, Reason: reason}
	}
	setup := func(state string) (*Cluster, *liveJob, *memStore) {
		st := newMemStore(testJob(0))
		cl := NewCluster(ClusterConfig{Store: st})
		rep := &nopReporter{}
		cl.SetReporter(rep)
		lj := &liveJob{signal: make(chan struct{}, 1), st: lifecycle.New(lifecycle.Config{}, testJob(0), placement.Plan{}, lifecycle.Launching,
			scheduler.DriverRecord{JobID: testJobID, Attempt: 1, TaskID: "t-1", State: state}, time.Now())}
		lj.st.Busy = lifecycle.ActKillDriver // no decisions: only the record is looked at
		cl.jobs[testJobID] = lj
		return cl, lj, st
	}

	cl, lj, _ := setup("")
	if err := cl.DriverStatus(ctx, testJobID, status("t-1", mesos.TASK_UNKNOWN, nil)); err != nil {
		t.Fatal(err)
	}
	if lj.st.Driver.Ended || lj.st.Driver.LostLaunches != 0 {
		t.Fatalf("an answer about a task never sent changed the record: %+v", lj.st.Driver)
	}

	cl, lj, st := setup(LaunchSent)
	if err := cl.DriverStatus(ctx, testJobID, status("t-1", mesos.TASK_UNKNOWN, nil)); err != nil {
		t.Fatal(err)
	}
	if !lj.st.Driver.Ended || lj.st.Driver.LostLaunches != 1 || !lifecycle.LostBeforeStart(lj.st.Driver) {
		t.Fatalf("lost launch: %+v", lj.st.Driver)
	}
	if d, _ := st.Driver(ctx, testJobID); d.LostLaunches != 1 || !d.Ended {
		t.Fatalf("not stored before the acknowledgement: %+v", d)
	}

	cl, lj, _ = setup(LaunchSent)
	invalid := mesos.REASON_INVALID_OFFERS
	if err := cl.DriverStatus(ctx, testJobID, status("t-1", mesos.TASK_DROPPED, &invalid)); err != nil {
		t.Fatal(err)
	}
	if !lifecycle.LostBeforeStart(lj.st.Driver) || lj.st.Driver.LostLaunches != 0 {
		t.Fatalf("a launch refused for an invalid offer was counted: %+v", lj.st.Driver)
	}

	cl, lj, st = setup(LaunchSent)
	var startedAt time.Time // RunningAt: when TASK_STARTING was taken, stored with it, not moved by TASK_RUNNING
	for _, s := range []mesos.TaskState{mesos.TASK_STARTING, mesos.TASK_RUNNING, mesos.TASK_LOST} {
		before := time.Now()
		if err := cl.DriverStatus(ctx, testJobID, status("t-1", s, nil)); err != nil {
			t.Fatal(err)
		}
		d, _ := st.Driver(ctx, testJobID)
		if s == mesos.TASK_STARTING {
			startedAt = d.RunningAt
			if d.RunningAt.Before(before) || d.RunningAt.After(time.Now()) {
				t.Fatalf("TASK_STARTING taken between %v and now, stored running at %v", before, d.RunningAt)
			}
		}
		if !d.RunningAt.Equal(startedAt) || !lj.st.Driver.RunningAt.Equal(startedAt) {
			t.Fatalf("after %s: running at %v (stored %v), want %v", s, lj.st.Driver.RunningAt, d.RunningAt, startedAt)
		}
	}
	if !lj.st.Driver.Started || !lj.st.Driver.Ended || lifecycle.LostBeforeStart(lj.st.Driver) || lj.st.Driver.LostLaunches != 0 {
		t.Fatalf("a driver that ran and was lost is a failed run, not a lost launch: %+v", lj.st.Driver)
	}
	if err := cl.DriverStatus(ctx, testJobID, status("t-0", mesos.TASK_FAILED, nil)); err != nil {
		t.Fatal(err)
	}
	if lj.st.Driver.TaskID != "t-1" || lj.st.Driver.State != "TASK_LOST" {
		t.Fatalf("an older launch's update changed the record: %+v", lj.st.Driver)
	}

	// An end the driver's executor sent without a reason proves it ran
	// (its command exited); from the agent, or with a reason, it does not.
	for _, c := range []struct {
		source mesos.TaskStatus_Source
		reason *mesos.TaskStatus_Reason
		ran    bool
	}{
		{mesos.SOURCE_EXECUTOR, nil, true},
		{mesos.SOURCE_AGENT, nil, false},
		{mesos.SOURCE_EXECUTOR, mesos.REASON_COMMAND_EXECUTOR_FAILED.Enum(), false},
	} {
		cl, lj, _ = setup(LaunchSent)
		u := status("t-1", mesos.TASK_FAILED, c.reason)
		u.Source = c.source.Enum()
		if err := cl.DriverStatus(ctx, testJobID, u); err != nil {
			t.Fatal(err)
		}
		if got := lifecycle.DriverRan(lj.st.Driver); got != c.ran || lj.st.Driver.Started {
			t.Fatalf("TASK_FAILED from %s, reason %v: ran %v, started %v; want ran %v", c.source, c.reason, got, lj.st.Driver.Started, c.ran)
		}
	}
}
