package mesossim

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/quota"

	"github.com/sparkpack/sparkpack/integration/realmesos"
)

// TestSparkStandInAgainstTheEmulator runs fakespark, the stand-in for
// spark-submit that integration/realmesos runs on real agents, straight
// against the emulator: a framework in one legacy role, no MULTI_ROLE, as
// Spark registers. With its role's quota capped and room for its 4
// executors reserved on two agents, it launches them inside the
// reservations, runs its time, stops them, tears its framework down and
// exits 0; the completed tasks stay visible in GET_TASKS in JSON, and not
// in protobuf, as on a real 1.12 master (realmesos.Observer.JSON says why).
func TestSparkStandInAgainstTheEmulator(t *testing.T) {
	fake, err := realmesos.BuildFakeSpark(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, base := testMaster(t, Config{Cluster: realmesos.ThreeAgents(), OfferInterval: 100 * time.Millisecond})
	obs := realmesos.NewObserver(base)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	role := "sparkpack-job-standin"
	scalar := func(name string, v float64) mesos.Resource {
		r := role
		return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v},
			Reservations: []mesos.Resource_ReservationInfo{{Type: mesos.Resource_ReservationInfo_DYNAMIC.Enum(), Role: &r,
				Labels: &mesos.Labels{Labels: []mesos.Label{{Key: "sparkpack-job", Value: strPtr("standin")}}}}}}
	}
	force := true
	if _, err := obs.Call(ctx, &master.Call{Type: master.Call_UPDATE_QUOTA, UpdateQuota: &master.Call_UpdateQuota{Force: &force,
		QuotaConfigs: []quota.QuotaConfig{{Role: role, Limits: map[string]mesos.Value_Scalar{"cpus": {Value: 8}, "mem": {Value: 4 * 2432}}}}}}); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"rm-S0", "rm-S2"} {
		if _, err := obs.Call(ctx, &master.Call{Type: master.Call_RESERVE_RESOURCES, ReserveResources: &master.Call_ReserveResources{
			AgentID: mesos.AgentID{Value: agent}, Resources: []mesos.Resource{scalar("cpus", 4), scalar("mem", 2*2432)}}}); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.CommandContext(ctx, fake, "--master", "mesos://"+strings.TrimPrefix(base, "http://"), "--deploy-mode", "client",
		"--class", "org.apache.spark.examples.SparkPi", "--name", "standin",
		"--conf", "spark.mesos.role="+role, "--conf", "spark.cores.max=8", "--conf", "spark.executor.cores=2",
		"--conf", "spark.executor.memory=2048m", "--conf", "spark.mesos.rejectOfferDuration=1s", "local:///x/spark-examples.jar", "100")
	cmd.Env = append(os.Environ(), "FAKESPARK_DURATION_SECONDS=2")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("fakespark against the emulator: %v; its log:\n%s", err, out)
	}
	tasks, err := obs.Tasks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tasks {
		if x.Role == role {
			t.Errorf("protobuf GET_TASKS lists task %+v of the torn-down framework; a real 1.12 master lists none", x)
		}
	}
	jsonObs := realmesos.NewObserver(base)
	jsonObs.JSON = true
	if tasks, err = jsonObs.Tasks(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, x := range tasks {
		if x.Role != role {
			continue
		}
		n++
		if !x.Completed || x.UnreservedCPUs > 0 || x.ReservedCPUs != 2 || (x.AgentID != "rm-S0" && x.AgentID != "rm-S2") || x.Name != "standin "+x.ID {
			t.Errorf("executor %+v: want a completed task named \"standin <id>\" of 2 reserved cpus on rm-S0 or rm-S2", x)
		}
	}
	if n != 4 {
		t.Errorf("%d executors in GET_TASKS, want 4; fakespark's log:\n%s", n, out)
	}
	fws, err := obs.Frameworks(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fws {
		if f.Name == "standin" && !f.Completed {
			t.Errorf("fakespark's framework %s is still registered", f.ID)
		}
	}
}
