package offers

import (
	"context"
	"fmt"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

// lockedReporter is a Reporter that several job followers may call.
type lockedReporter struct {
	mu sync.Mutex
	nopReporter
}

func (r *lockedReporter) Report(ctx context.Context, id string, to scheduler.State, why string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nopReporter.Report(ctx, id, to, why)
}

func (r *lockedReporter) ReportRan(ctx context.Context, id string, to scheduler.State, why string, run scheduler.RunStart) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.nopReporter.ReportRan(ctx, id, to, why, run)
}

// placeCluster is a small cluster for driver placement: two 4-cpu agents
// for plans (P1, P2), an 8-cpu agent (A) and a 12-cpu one (I, the roomiest).
func placeCluster() clusterspec.Cluster {
	agent := func(id string, cpus float64) clusterspec.Agent {
		return clusterspec.Agent{ID: id, Hostname: strings.ToLower(id), CPUs: cpus, MemMB: cpus * 4096, PricePerHour: cpus * 0.06}
	}
	return clusterspec.Cluster{Name: "driverplace", Agents: []clusterspec.Agent{agent("P1", 4), agent("P2", 4), agent("A", 8), agent("I", 12)}}
}

// placeJob is a job of n executors of 1 cpu and 1024 MiB (+384 overhead)
// with a driver of 1 cpu and 1024 MiB, running for an hour.
func placeJob(n int, id string) scheduler.Job {
	return scheduler.Job{Spec: scheduler.Spec{ID: id, Name: "place-" + id[:4],
		App:       scheduler.App{AppResource: "local:///a.jar", MainClass: "a.B"},
		Executors: n, ExecutorCores: 1, ExecutorMemoryMB: 1024,
		Driver: &scheduler.Driver{Cores: 1, MemoryMB: 1024}, EstimatedDurationSeconds: 3600}, State: scheduler.Reserving}
}

// driversOnEmulator runs sparkpack's framework and cluster adapter against
// the emulator on placeCluster, with busy reserving 2 cpus and 8 GiB on
// agent A for another role (A is active; a reservation not of sparkpack's),
// applies each job's plan together, and returns the agent each job's
// driver was launched on.
func driversOnEmulator(t *testing.T, busy bool, jobs []scheduler.Job, plans []placement.Plan) map[string]string {
	t.Helper()
	quiet := logrus.New()
	quiet.SetLevel(logrus.PanicLevel)
	m, err := mesossim.New(mesossim.Config{Logger: quiet, DisableSpark: true, Cluster: placeCluster(), OfferInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { m.Close() })
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "", WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	op := NewOperator(ep)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if busy {
		role := "analytics"
		var res []mesos.Resource
		for name, v := range map[string]float64{"cpus": 2, "mem": 8192} {
			res = append(res, mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v},
				Reservations: []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: &role}}})
		}
		if err := op.Reserve(ctx, "A", res); err != nil {
			t.Fatal(err)
		}
	}

	fw, _, obs, _ := runFramework(t, ep, FrameworkConfig{Role: "sparkpack"}, quiet)
	st := newMemStore(jobs...)
	cl := NewCluster(ClusterConfig{Operator: op, Framework: fw, Store: st,
		Reserver: &Reserver{Op: op, Journal: &memJournal{}, Log: quiet, Poll: 20 * time.Millisecond, ConfirmTimeout: time.Minute},
		Submit:   sparksubmit.Options{Master: ep.SparkMaster()}, Refresh: 100 * time.Millisecond, Sweep: time.Hour, Log: quiet})
	fw.mu.Lock()
	fw.sink = cl
	fw.mu.Unlock()
	cl.SetReporter(&lockedReporter{})
	waitUp(t, obs.ups, srv.URL)
	cctx, ccancel := context.WithCancel(ctx)
	defer func() { ccancel(); cl.Wait() }()
	if err := cl.Start(cctx); err != nil {
		t.Fatal(err)
	}
	// As in a pass that starts several jobs, or while others wait: offers
	// are in stock when the jobs' launches are queued, the roomiest (the
	// idle I) among them.
	fw.Expect(ctx, "another launch", nil)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		fw.mu.Lock()
		held := false
		for _, ho := range fw.offers {
			held = held || ho.offer.AgentID.Value == "I"
		}
		fw.mu.Unlock()
		if held {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no offer of agent I held within a minute")
		}
	}
	for i, j := range jobs {
		if err := cl.Apply(cctx, j, plans[i]); err != nil {
			t.Fatal(err)
		}
	}
	on := map[string]string{}
	for deadline := time.Now().Add(2 * time.Minute); len(on) < len(jobs); time.Sleep(20 * time.Millisecond) {
		for _, task := range m.Tasks() {
			for _, j := range jobs {
				if task.Name == "sparkpack driver "+j.ID {
					on[j.ID] = task.AgentID
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 2 minutes drivers launched %v; want one for each of the %d jobs", on, len(jobs))
		}
	}
	return on
}

// TestDriversRunOnTheirPlansAgents: on the emulator, with an idle 12-cpu
// agent offered all along, each job's driver runs on the agent of its
// plan where the cluster kept its room, not on the roomiest agent: it
// waits for the offer that follows its reservation there. When the plan's
// agent is full, the driver runs on an agent already active (one holding
// another role's reservation) rather than on the idle, roomier one, which
// would then be kept on (billed, never powered off) for the job's run.
// Before, every driver went to the idle 12-cpu agent: Launch marks the
// job's agents as just reserved on, so the offers held there were stale,
// and the roomiest offer elsewhere was taken at once.
func TestDriversRunOnTheirPlansAgents(t *testing.T) {
	t.Run("room on the plan", func(t *testing.T) {
		jobs := []scheduler.Job{placeJob(2, "11111111-1111-4111-8111-111111111111"), placeJob(2, "22222222-2222-4222-8222-222222222222")}
		plans := []placement.Plan{
			{Assignments: []placement.Assignment{{AgentID: "P1", Executors: 2}}},
			{Assignments: []placement.Assignment{{AgentID: "P2", Executors: 2}}},
		}
		on := driversOnEmulator(t, false, jobs, plans)
		for i, j := range jobs {
			if want := plans[i].Assignments[0].AgentID; on[j.ID] != want {
				t.Errorf("driver of job %s (plan on %s) launched on %s; want on its plan's agent %s (all: %v)", j.Name, want, on[j.ID], want, sorted(on))
			}
		}
	})
	t.Run("plan full", func(t *testing.T) {
		// P1's 4 cpus all go to the executors: no room for the driver there.
		jobs := []scheduler.Job{placeJob(4, "33333333-3333-4333-8333-333333333333")}
		plans := []placement.Plan{{Assignments: []placement.Assignment{{AgentID: "P1", Executors: 4}}}}
		on := driversOnEmulator(t, true, jobs, plans)
		if got := on[jobs[0].ID]; got != "A" {
			t.Errorf("driver of a job whose plan's agent is full launched on %s; want on A (active: another role's reservation), not on an idle agent (I is the roomiest)", got)
		}
	})
}

func sorted(m map[string]string) string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s:%s", k[:8], v))
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
