package integration

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

type noPower struct{}

func (noPower) Name() string                                  { return "none" }
func (noPower) PowerOff(context.Context, power.Target) error  { return nil }
func (noPower) PowerOn(context.Context, power.Target) error   { return nil }
func (noPower) DeactivateAgent(context.Context, string) error { return nil }
func (noPower) ReactivateAgent(context.Context, string) error { return nil }

// TestE2EPowerReplacementSurvivesARestart: a job's plan names an agent
// that was booting (p-S0, on machine power-S0); the machine came back
// under a new agent id (p-S9, its work dir lost), power management moved
// its record there, and then sparkpack stopped before the job's follower
// learnt that p-S0 will never register (a crash, an upgrade, or a standby
// taking over). The next sparkpack must still know that p-S0 was
// replaced: the job is placed again at once, on p-S9, and finishes, well
// within the power-on timeout (10 minutes here) that the plan would
// otherwise wait for p-S0. (On main, before this, the replacement was
// known in memory only: the job waited the 10 minutes.)
//
// The state the stopped sparkpack left is written as it would have: the
// job placed (store.StartPlaced), and its power records as a Manager over
// the same database leaves them once it has seen p-S9 (Tick).
func TestE2EPowerReplacementSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	emu := startEmulator(t, mesossim.Config{Cluster: clusterspec.Cluster{Name: "newid", Agents: []clusterspec.Agent{
		{ID: "p-S9", Hostname: "power-S0", CPUs: 4, MemMB: 16384, PricePerHour: 0.20, InstanceType: "m.test", Location: "cloud"}}}})
	db := e2eDB(t)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(ctx, db, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	now := time.Now().UTC()
	if err := st.PutPowerRecord(ctx, power.Record{AgentID: "p-S0", Hostname: "power-S0", Attributes: map[string]string{"location": "cloud"},
		CPUs: 4, MemMB: 16384, PricePerHour: 0.20, State: power.StateBooting, Since: now.Add(-time.Minute), Requested: true,
		RegisteredAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var spec scheduler.Spec
	b, _ := json.Marshal(sparkJob("placed-on-the-old-id", 1, 1, 1024, 20))
	if err := json.Unmarshal(b, &spec); err != nil {
		t.Fatal(err)
	}
	spec.ID = uuid.NewString()
	if _, _, err := st.CreateJob(ctx, scheduler.Job{Spec: spec, SubmittedAt: now}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Transition(ctx, spec.ID, scheduler.Submitted, scheduler.Queued, "admitted", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := st.StartPlaced(ctx, scheduler.Placed{ID: spec.ID, PlacingReason: "placing with exact", ReservingReason: "on p-S0",
		Plan: placement.Plan{Policy: "exact", Assignments: []placement.Assignment{{AgentID: "p-S0", Executors: 1}}}}); err != nil {
		t.Fatal(err)
	}
	pm, err := power.NewManager(power.Config{OffAfter: time.Hour, PowerOnTimeout: 10 * time.Minute, Provider: noPower{}, Log: quiet}, st, noPower{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pm.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pm.Tick(ctx, []power.Agent{{ID: "p-S9", Hostname: "power-S0", Attributes: map[string]string{"location": "cloud"},
		CPUs: 4, MemMB: 16384, PricePerHour: 0.20, Listed: true, Active: true, RegisteredAt: now}}, nil); err != nil {
		t.Fatal(err)
	}
	if pm.ReplacedBy("p-S0") != "p-S9" {
		t.Fatalf("p-S0 replaced by %q, want p-S9", pm.ReplacedBy("p-S0"))
	}

	sp := startSparkpack(t, emu.URL, db, "--policy", "exact", "--power-off-after", "10m", "--power-provider", "emulator",
		"--power-tick", "100ms", "--power-on-timeout", "10m")
	v := waitState(t, sp.API, spec.ID, 3*time.Minute, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" {
		t.Fatalf("job ended %s (%s)", v.State, v.WaitingReason)
	}
	if len(v.Placement) != 1 || v.Placement[0].AgentID != "p-S9" {
		t.Errorf("the job ran on %+v, want p-S9", v.Placement)
	}
	if !strings.Contains(sp.logText(), "was not powered on; placing again without it") {
		t.Error("the log does not say that the job was placed again because p-S0 will not come")
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
