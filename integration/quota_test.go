package integration

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/sparksubmit"
)

type memIDs struct {
	mu sync.Mutex
	id string
}

func (m *memIDs) FrameworkID(context.Context) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.id, nil
}

func (m *memIDs) SetFrameworkID(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.id = id
	return nil
}

type statusLog struct {
	mu    sync.Mutex
	state map[string]mesos.TaskState
}

func (s *statusLog) DriverStatus(_ context.Context, _ string, st mesos.TaskStatus) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[st.TaskID.Value] = st.GetState()
	return nil
}

// TestQuotaCapKeepsSparkInsideItsReservations shows why sparkpack sets the
// job role's quota limit before reserving (MESOS_PROTOCOL.md): Spark's
// coarse-grained backend takes every offer made to its role, reserved or
// not. With the limit, the unreserved resources offered to the role are
// cut to nothing and every executor lands inside the reservations; without
// it, executors land on unreserved resources of other agents.
func TestQuotaCapKeepsSparkInsideItsReservations(t *testing.T) {
	for _, withQuota := range []bool{false, true} {
		t.Run(fmt.Sprintf("quota=%v", withQuota), func(t *testing.T) {
			outside, inside := runSparkWithReservations(t, withQuota)
			t.Logf("executors inside the reservations: %d, outside: %d", inside, outside)
			if withQuota && (outside != 0 || inside != 4) {
				t.Fatalf("with the quota cap: %d executors outside the reservations and %d inside, want 0 and 4", outside, inside)
			}
			if !withQuota && outside == 0 {
				t.Fatalf("without the quota cap every executor stayed inside the reservations: the emulated Spark does not behave like Spark, or the test cannot show what the cap is for")
			}
		})
	}
}

// runSparkWithReservations reserves room for 4 executors of 2 cpus on two
// agents for a job's role (with or without the quota limit), launches the
// job's driver through offers.Framework, and counts where the simulated
// Spark puts its executors.
func runSparkWithReservations(t *testing.T, withQuota bool) (outside, inside int) {
	emu := startEmulator(t, mesossim.Config{TimeScale: 1})
	ep, err := offers.NewEndpoint(emu.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	op := offers.NewOperator(ep)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	job := scheduler.Job{Spec: scheduler.Spec{ID: "0a1b2c3d-0000-4000-8000-000000000001", Name: "capped",
		App:       scheduler.App{AppResource: "local:///opt/spark/examples/jars/spark-examples.jar", MainClass: "org.apache.spark.examples.SparkPi"},
		Executors: 4, ExecutorCores: 2, ExecutorMemoryMB: 2048}}
	role := scheduler.Role(job.ID)
	cpu1, mem1 := offers.JobAmounts(job)
	// The last agents in the emulator's offer order, so that without the
	// cap Spark sees unreserved offers from other agents first, as it may
	// on a real cluster.
	reservedOn := map[string]bool{"thesis14-S12": true, "thesis14-S13": true}
	if withQuota {
		if err := op.SetQuotaLimit(ctx, role, 4*cpu1, 4*mem1, true); err != nil {
			t.Fatal(err)
		}
	}
	for agent := range reservedOn {
		if err := op.Reserve(ctx, agent, offers.ReservationResources(role, "", job.ID, 2*cpu1, 2*mem1)); err != nil {
			t.Fatal(err)
		}
	}

	log := logrus.New()
	log.SetOutput(io.Discard)
	sink := &statusLog{state: map[string]mesos.TaskState{}}
	fw := offers.NewFramework(offers.FrameworkConfig{OfferHold: time.Second}, offers.NewSchedClient(ep, log), &memIDs{}, sink, log)
	done := make(chan struct{})
	go func() { defer close(done); _ = fw.Run(ctx, offers.RunOptions{}) }()
	defer func() { cancel(); <-done }()
	argv, err := sparksubmit.Command(job, sparksubmit.Options{Master: ep.Host()})
	if err != nil {
		t.Fatal(err)
	}
	taskID := offers.DriverTaskID(job.ID, 1)
	fw.Launch(ctx, &offers.DriverLaunch{JobID: job.ID, TaskID: taskID, CPUs: 1, MemMB: 1024, Argv: argv,
		Labels: map[string]string{offers.DurationLabel: "3600"}})

	// Wait until Spark holds all its cores (spark.cores.max = 8), then
	// a little longer for anything beyond.
	deadline := time.Now().Add(20 * time.Second)
	for {
		cores := 0.0
		outside, inside = 0, 0
		for _, task := range emu.Tasks() {
			if task.SparkExecutor == "" || task.Role != role || task.State != mesos.TASK_RUNNING {
				continue
			}
			cores += task.ReservedCPUs + task.UnreservedCPUs
			if task.UnreservedCPUs > 0 || !reservedOn[task.AgentID] {
				outside++
			} else {
				inside++
			}
		}
		if cores >= 8 {
			break
		}
		if time.Now().After(deadline) {
			var tasks []string
			for _, task := range emu.Tasks() {
				tasks = append(tasks, fmt.Sprintf("%s %s %s %s", task.TaskID, task.Role, task.AgentID, task.State))
			}
			t.Fatalf("Spark holds %g cores after 20 s, want 8; tasks:\n%s", cores, strings.Join(tasks, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	return outside, inside
}
