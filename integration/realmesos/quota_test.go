package realmesos

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

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

type nopSink struct{}

func (nopSink) DriverStatus(context.Context, string, mesos.TaskStatus) error { return nil }

// quotaOutcome: where Spark put its executors.
type quotaOutcome struct {
	AnyOutside bool
	Inside     int // exact only with the cap; -1 when not compared
}

// TestQuotaCapKeepsSparkInsideItsReservations shows on a real master what
// sparkpack's quota limit is for (MESOS_PROTOCOL.md): Spark takes every
// offer of its role, reserved or not. Room for 4 executors of 2 cpus is
// reserved for a job's role on rm-a1 and rm-a3 (which leaves unreserved
// cpus only on rm-a2); the job's driver is launched through
// offers.Framework. With the limit, the role's unreserved cpus are never
// offered and every executor lands inside the reservations; without it,
// executors land on rm-a2's unreserved cpus.
func TestQuotaCapKeepsSparkInsideItsReservations(t *testing.T) {
	for _, withQuota := range []bool{false, true} {
		t.Run(fmt.Sprintf("quota=%v", withQuota), func(t *testing.T) {
			onBoth(t, func(t *testing.T, tg *target) quotaOutcome {
				outside, inside := runSparkWithReservations(t, tg, withQuota)
				t.Logf("%s: executors inside the reservations: %d, outside: %d", tg.name, inside, outside)
				if withQuota && (outside != 0 || inside != 4) {
					t.Errorf("%s: with the quota cap: %d executors outside the reservations and %d inside, want 0 and 4", tg.name, outside, inside)
				}
				if !withQuota && outside == 0 {
					t.Errorf("%s: without the quota cap every executor stayed inside the reservations: Spark (or its stand-in) does not take unreserved offers", tg.name)
				}
				o := quotaOutcome{AnyOutside: outside > 0, Inside: -1}
				if withQuota {
					o.Inside = inside
				}
				return o
			})
		})
	}
}

func runSparkWithReservations(t *testing.T, tg *target, withQuota bool) (outside, inside int) {
	ep, err := offers.NewEndpoint(tg.url, "", "")
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
	reservedOn := map[string]bool{"rm-a1": true, "rm-a3": true}
	if withQuota {
		if err := op.SetQuotaLimit(ctx, role, 4*cpu1, 4*mem1, true); err != nil {
			t.Fatal(err)
		}
	}
	for host := range reservedOn {
		if err := op.Reserve(ctx, tg.agentID(host), offers.ReservationResources(role, "", job.ID, 2*cpu1, 2*mem1)); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fw := offers.NewFramework(offers.FrameworkConfig{OfferHold: time.Second}, offers.NewSchedClient(ep, log), &memIDs{}, nopSink{}, log)
	done := make(chan struct{})
	go func() { defer close(done); _ = fw.Run(ctx, offers.RunOptions{}) }()
	defer func() { cancel(); <-done }()
	_, fake := binaries(t)
	argv, err := sparksubmit.Command(job, sparksubmit.Options{Master: ep.Host(), SparkSubmit: fake})
	if err != nil {
		t.Fatal(err)
	}
	fw.Launch(ctx, &offers.DriverLaunch{JobID: job.ID, TaskID: offers.DriverTaskID(job.ID, 1), CPUs: 1, MemMB: 1024, Argv: argv,
		Labels: map[string]string{offers.DurationLabel: "3600"}})

	// Wait until Spark holds all its cores (spark.cores.max = 8).
	deadline := time.Now().Add(time.Minute)
	for {
		ts, err := tg.obs.Tasks(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fws, _ := tg.obs.Frameworks(ctx)
		fwRole := map[string]string{}
		for _, f := range fws {
			if len(f.Roles) > 0 {
				fwRole[f.ID] = f.Roles[0]
			}
		}
		cores := 0.0
		outside, inside = 0, 0
		for _, x := range ts {
			r := x.Role
			if r == "" {
				r = fwRole[x.FrameworkID]
			}
			if r != role || x.State != "TASK_RUNNING" || x.Completed {
				continue
			}
			cores += x.ReservedCPUs + x.UnreservedCPUs
			if x.UnreservedCPUs > 0 || !reservedOn[tg.host(x.AgentID)] {
				outside++
			} else {
				inside++
			}
		}
		if cores >= 8 {
			return outside, inside
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Spark holds %g cores after a minute, want 8; tasks %+v", tg.name, cores, ts)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
