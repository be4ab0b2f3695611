package offers

import (
	"context"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/placement"
	sp "github.com/sparkpack/sparkpack/scheduler"
)

// standInDriver subscribes a framework in role (legacy role field, as
// Spark's driver does) and launches one long task on the first offer
// carrying the role's reservation, using all of it; it returns
// once the task runs, with the open stream and the framework id.
func standInDriver(t *testing.T, ctx context.Context, url string, log logrus.FieldLogger, role, jobID string, failover float64) (*Stream, string) {
	t.Helper()
	ep, err := NewEndpoint(url, "", "")
	if err != nil {
		t.Fatal(err)
	}
	sc := NewSchedClient(ep, log)
	r := role
	s, err := sc.Subscribe(ctx, mesos.FrameworkInfo{User: "root", Name: "stand-in driver of " + jobID, Role: &r, FailoverTimeout: &failover})
	if err != nil {
		t.Fatal(err)
	}
	fwID := s.Subscribed.FrameworkID.Value
	launched := false
	for {
		ev, err := s.Next()
		if err != nil {
			t.Fatalf("the stand-in driver's stream: %v", err)
		}
		switch ev.GetType() {
		case scheduler.Event_OFFERS:
			for _, o := range ev.Offers.Offers {
				var res []mesos.Resource
				for _, x := range o.Resources {
					// The legacy format (the framework is not MULTI_ROLE).
					if x.GetRole() == role && (x.Name == "cpus" || x.Name == "mem") {
						res = append(res, x)
					}
				}
				if launched || len(res) == 0 {
					continue
				}
				cmd := "sleep 3600"
				task := mesos.TaskInfo{Name: "executor 0", TaskID: mesos.TaskID{Value: "executor-0"}, AgentID: o.AgentID,
					Resources: res, Command: &mesos.CommandInfo{Value: &cmd}}
				err := sc.Call(ctx, &scheduler.Call{Type: scheduler.Call_ACCEPT, Accept: &scheduler.Call_Accept{
					OfferIDs: []mesos.OfferID{o.ID},
					Operations: []mesos.Offer_Operation{{Type: mesos.Offer_Operation_LAUNCH,
						Launch: &mesos.Offer_Operation_Launch{TaskInfos: []mesos.TaskInfo{task}}}}}})
				if err != nil {
					t.Fatal(err)
				}
				launched = true
			}
		case scheduler.Event_UPDATE:
			st := ev.Update.Status
			if st.UUID != nil {
				_ = sc.Call(ctx, &scheduler.Call{Type: scheduler.Call_ACKNOWLEDGE, Acknowledge: &scheduler.Call_Acknowledge{
					AgentID: *st.AgentID, TaskID: st.TaskID, UUID: st.UUID}})
			}
			if st.GetState() == mesos.TASK_RUNNING {
				return s, fwID
			}
			if isTerminal(st.State) {
				t.Fatalf("the stand-in's executor ended %s: %s", st.GetState(), st.GetMessage())
			}
		}
	}
}

// TestReleaseTearsDownTheFrameworkOfAGoneDriver: a job's executor runs
// on its reservation under a stand-in driver subscribed in the job's
// role. While that framework is connected (a live driver), Release is
// refused and never tears it down. Once the driver is gone, its
// framework disconnected (failover timeout not expired) or recovered
// after a master failover and never subscribed again (as the real 1.12
// master showed it, docs/deploy.md), Release tears it down, which kills
// the executor, and releases everything; a framework of another job's
// role is left alone.
func TestReleaseTearsDownTheFrameworkOfAGoneDriver(t *testing.T) {
	m, url, quiet, op, ctx, agents := operatorOnEmulator(t, 4*time.Minute)
	r := &Reserver{Op: op, Journal: &memJournal{}, Log: quiet, Poll: 20 * time.Millisecond, ConfirmTimeout: 20 * time.Second, TeardownGrace: time.Second}
	job := func(id string) sp.Job {
		return sp.Job{Spec: sp.Spec{ID: id, Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024, MemoryOverheadMB: 384}}
	}
	reserve := func(j sp.Job, agent string) {
		t.Helper()
		if err := r.Reserve(ctx, j, placement.Plan{Assignments: []placement.Assignment{{AgentID: agent, Executors: 1}}}); err != nil {
			t.Fatal(err)
		}
	}
	framework := func(id string) (mesossim.FrameworkInfo, bool) { return frameworkOf(m, id) }
	held := func(jobID string) map[string][2]float64 { t.Helper(); return heldFor(t, ctx, op, jobID) }

	j1, j2 := job("11111111-1111-1111-1111-111111111111"), job("22222222-2222-2222-2222-222222222222")
	reserve(j1, agents[0].ID)
	reserve(j2, agents[1].ID)
	s1, fw1 := standInDriver(t, ctx, url, quiet, sp.Role(j1.ID), j1.ID, 3600)
	s2, fw2 := standInDriver(t, ctx, url, quiet, sp.Role(j2.ID), j2.ID, 0)

	// A live driver: refused, not torn down (one Release of 3 s, grace 1 s).
	short := *r
	short.ConfirmTimeout = 3 * time.Second
	if err := short.Release(ctx, j1.ID); err == nil || !strings.Contains(err.Error(), "still present") {
		t.Fatalf("Release under a connected driver: %v; want refused (reservations still present)", err)
	}
	if f, ok := framework(fw1); !ok || !f.Connected || f.Tasks != 1 {
		t.Fatalf("the connected driver's framework after Release: %+v (listed %v); want connected with its executor", f, ok)
	}

	// The driver of job 1 exits (its failover timeout of an hour runs):
	// disconnected, its executor runs on.
	s1.Close()
	deadline := time.Now().Add(time.Minute)
	for f, _ := framework(fw1); f.Connected; f, _ = framework(fw1) {
		if time.Now().After(deadline) {
			t.Fatal("the emulator did not see the stand-in driver disconnect")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := r.Release(ctx, j1.ID); err != nil {
		t.Fatalf("Release after the driver disconnected: %v", err)
	}
	if f, ok := framework(fw1); ok {
		t.Errorf("the disconnected driver's framework is still registered: %+v", f)
	}
	if h := held(j1.ID); len(h) != 0 {
		t.Errorf("job 1 still holds %v", h)
	}
	if f, ok := framework(fw2); !ok || !f.Connected || f.Tasks != 1 {
		t.Errorf("job 2's driver after job 1's release: %+v (listed %v); want untouched", f, ok)
	}

	// The master fails over; job 2's driver (failover timeout 0, like
	// Spark's) does not subscribe again: recovered, its executor runs on.
	m.Restart(0)
	s2.Close()
	if f, ok := framework(fw2); !ok || f.Connected || f.Tasks != 1 {
		t.Fatalf("job 2's driver after the master restarted: %+v (listed %v); want a recovered framework with its executor", f, ok)
	}
	if err := r.Release(ctx, j2.ID); err != nil {
		t.Fatalf("Release after the master restarted: %v", err)
	}
	if f, ok := framework(fw2); ok {
		t.Errorf("the recovered framework is still registered: %+v", f)
	}
	if h := held(j2.ID); len(h) != 0 {
		t.Errorf("job 2 still holds %v", h)
	}
	for _, x := range m.Tasks() {
		if x.State == mesos.TASK_RUNNING {
			t.Errorf("task %s of framework %s still runs", x.TaskID, x.FrameworkID)
		}
	}
}
