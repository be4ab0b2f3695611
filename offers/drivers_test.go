package offers

import (
	"context"
	"reflect"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/scheduler"
)

func scalarRes(name string, v float64, allocRole string) mesos.Resource {
	star := "*"
	r := mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}, Role: &star}
	if allocRole != "" {
		ar := allocRole
		r.AllocationInfo = &mesos.Resource_AllocationInfo{Role: &ar}
	}
	return r
}

func getAgent(id string, cpus, mem float64, allocated ...mesos.Resource) master.Response_GetAgents_Agent {
	return master.Response_GetAgents_Agent{
		AgentInfo:          mesos.AgentInfo{ID: &mesos.AgentID{Value: id}, Hostname: "host-" + id, Attributes: []mesos.Attribute{{Name: "price", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "0.5"}}}},
		Active:             true,
		TotalResources:     []mesos.Resource{scalarRes("cpus", cpus, ""), scalarRes("mem", mem, "")},
		AllocatedResources: allocated,
	}
}

// TestDriversCount: an agent running only one of sparkpack's drivers is
// busy (listed with the driver, active in the placement snapshot, so the
// cost meter counts it), and its free resources hold the driver whether
// or not GET_AGENTS shows the driver's allocation yet; ended drivers and
// other frameworks' tasks do not count as sparkpack's.
func TestDriversCount(t *testing.T) {
	raw := []master.Response_GetAgents_Agent{
		// A: the driver's launch was sent after the last GET_AGENTS.
		getAgent("A", 4, 8192),
		// B: GET_AGENTS shows the driver allocated to sparkpack's role.
		getAgent("B", 4, 8192, scalarRes("cpus", 1, "sparkpack"), scalarRes("mem", 1024, "sparkpack")),
		// C: another framework's task only.
		getAgent("C", 4, 8192, scalarRes("cpus", 2, "other"), scalarRes("mem", 2048, "other")),
		// D: a driver that ended.
		getAgent("D", 4, 8192),
	}
	agents, _ := AgentsFromMesos(raw, nil)
	c := NewCluster(ClusterConfig{})
	c.agents = agents
	c.statuses = StatusesFromMesos(raw, nil)
	c.loaded = true
	job := func(id string) scheduler.Job {
		return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024,
			Driver: &scheduler.Driver{Cores: 1, MemoryMB: 1024}}}
	}
	live := func(id string, ph lifecycle.Phase, drv scheduler.DriverRecord) *liveJob {
		return &liveJob{st: lifecycle.State{Job: job(id), Phase: ph, Driver: drv}}
	}
	c.jobs["j-a"] = live("j-a", lifecycle.Launching, scheduler.DriverRecord{JobID: "j-a", TaskID: "t-a", AgentID: "A", State: "LAUNCH_SENT"})
	c.jobs["j-b"] = live("j-b", lifecycle.Running, scheduler.DriverRecord{JobID: "j-b", TaskID: "t-b", AgentID: "B", State: "TASK_RUNNING"})
	c.jobs["j-d"] = live("j-d", lifecycle.Releasing, scheduler.DriverRecord{JobID: "j-d", TaskID: "t-d", AgentID: "D", State: "TASK_FINISHED", Ended: true})

	byID := map[string]AgentState{}
	for _, a := range c.Agents() {
		byID[a.ID] = a
	}
	for _, tc := range []struct {
		id               string
		drivers          int
		freeCPU, freeMem float64
	}{
		{"A", 1, 3, 7168},
		{"B", 1, 3, 7168},
		{"C", 0, 2, 6144},
		{"D", 0, 4, 8192},
	} {
		a := byID[tc.id]
		if len(a.Drivers) != tc.drivers || a.FreeCPUs != tc.freeCPU || a.FreeMemMB != tc.freeMem || a.HasOurWork() != (tc.drivers > 0) {
			t.Errorf("agent %s: %d drivers, free %g cpus %g MiB, busy %v; want %d drivers, free %g/%g",
				tc.id, len(a.Drivers), a.FreeCPUs, a.FreeMemMB, a.HasOurWork(), tc.drivers, tc.freeCPU, tc.freeMem)
		}
	}
	if d := byID["A"].Drivers; len(d) == 1 && (d[0].JobID != "j-a" || d[0].TaskID != "t-a" || d[0].CPUs != 1 || d[0].MemMB != 1024) {
		t.Errorf("driver on A: %+v", d[0])
	}
	snap := Snapshot(c.overlayLocked())
	// The scheduler's snapshot (the refreshed agents converted once, the
	// changed ones patched) is the same.
	if got, err := c.Snapshot(context.Background()); err != nil || !reflect.DeepEqual(got, snap) {
		t.Errorf("Snapshot %+v (%v), want %+v", got, err, snap)
	}
	for _, a := range snap.Agents {
		want := a.ID == "A" || a.ID == "B"
		if a.Active != want {
			t.Errorf("snapshot: agent %s active %v, want %v (an agent running a driver of ours is active)", a.ID, a.Active, want)
		}
	}
	// Power management never powers off an agent running a driver of
	// ours: it is busy, even before GET_AGENTS shows the driver (A).
	for _, st := range c.AgentStatuses() {
		want := st.ID != "D"
		if st.Busy != want {
			t.Errorf("power status: agent %s busy %v, want %v (a driver of ours, or anyone's task, keeps it busy)", st.ID, st.Busy, want)
		}
	}
}
