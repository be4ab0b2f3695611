package offers

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// viewCluster is a Cluster whose last refresh listed agents, following
// one job (its phase, plan and driver).
func viewCluster(agents []Agent, job scheduler.Job, ph lifecycle.Phase, plan placement.Plan, drv scheduler.DriverRecord) *Cluster {
	c := NewCluster(ClusterConfig{})
	c.agents, c.loaded = agents, true
	c.jobs[job.ID] = &liveJob{st: lifecycle.State{Job: job, Phase: ph, Plan: plan, Driver: drv}, signal: make(chan struct{}, 1)}
	c.version++
	return c
}

// TestSnapshotCountsPlansInFlightByHand: the snapshot takes out of the
// agents' free resources what a plan handed to Apply still needs beyond
// what GET_AGENTS shows reserved for it, and room for its driver not yet
// launched: on the first agent of its plan with room, else on the active
// agent with the most free cpus (else on the agent with the most free
// cpus: TestDriverRoomFallbackByHand). Worked out by hand: executors of 1 cpu and
// 1024 + 512 MiB, a driver of 1 cpu and 2048 MiB.
func TestSnapshotCountsPlansInFlightByHand(t *testing.T) {
	job := scheduler.Job{Spec: scheduler.Spec{ID: "j", Executors: 3, ExecutorCores: 1, ExecutorMemoryMB: 1024, MemoryOverheadMB: 512,
		Driver: &scheduler.Driver{Cores: 1, MemoryMB: 2048}}}
	agents := func() []Agent {
		return []Agent{
			// A: 8 cpus, one of the job's executors reserved already.
			{ID: "A", CPUs: 8, MemMB: 16384, FreeCPUs: 7, FreeMemMB: 14848,
				Reservations: []Reserved{{AgentID: "A", JobID: "j", CPUs: 1, MemMB: 1536}}},
			{ID: "B", CPUs: 4, MemMB: 8192, FreeCPUs: 4, FreeMemMB: 8192},
			{ID: "C", CPUs: 16, MemMB: 32768, FreeCPUs: 16, FreeMemMB: 32768},
			// D: 8192 MiB of which 1536 are another framework's.
			{ID: "D", CPUs: 4, MemMB: 8192, FreeCPUs: 4, FreeMemMB: 6656},
		}
	}
	type free struct{ cpus, mem float64 }
	for _, c := range []struct {
		name     string
		plan     placement.Plan
		want     map[string]free
		holdings map[string]placement.Holding
	}{
		{"driver on the plan's first agent with room",
			// C's assignment of 0 executors takes nothing and holds nothing.
			placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 2}, {AgentID: "B", Executors: 1}, {AgentID: "C", Executors: 0}}},
			// A: 7 - 1 more executor - the driver = 5 cpus, 14848 - 1536 - 2048 = 11264 MiB; B: 4 - 1, 8192 - 1536.
			map[string]free{"A": {5, 11264}, "B": {3, 6656}, "C": {16, 32768}, "D": {4, 6656}},
			map[string]placement.Holding{"A": {JobID: "j", CPUs: 2, MemMB: 3072}, "B": {JobID: "j", CPUs: 1, MemMB: 1536}}},
		{"driver on the active agent with the most free cpus when the plan's have none",
			placement.Plan{Assignments: []placement.Assignment{{AgentID: "B", Executors: 4}}},
			// B full (4 x 1 cpu); A and D are active (a reservation, another
			// framework's memory), A has more cpus free; idle C, with 16,
			// is left alone (a driver there would keep it powered on).
			map[string]free{"A": {6, 12800}, "B": {0, 2048}, "C": {16, 32768}, "D": {4, 6656}},
			map[string]placement.Holding{"A": {JobID: "j", CPUs: 1, MemMB: 1536}, "B": {JobID: "j", CPUs: 4, MemMB: 6144}}},
		{"driver on a plan's agent with exactly its room left",
			placement.Plan{Assignments: []placement.Assignment{{AgentID: "D", Executors: 3}}},
			// D: 4 - 3 = 1 cpu, 6656 - 3 x 1536 = 2048 MiB left: exactly the driver's.
			map[string]free{"A": {7, 14848}, "B": {4, 8192}, "C": {16, 32768}, "D": {0, 0}},
			map[string]placement.Holding{"A": {JobID: "j", CPUs: 1, MemMB: 1536}, "D": {JobID: "j", CPUs: 3, MemMB: 4608}}},
	} {
		cl := viewCluster(agents(), job, lifecycle.Reserving, c.plan, scheduler.DriverRecord{})
		snap, err := cl.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range snap.Agents {
			if w := c.want[a.ID]; a.FreeCPUs != w.cpus || a.FreeMemMB != w.mem {
				t.Errorf("%s: agent %s free %v cpus, %v MiB; want %v, %v", c.name, a.ID, a.FreeCPUs, a.FreeMemMB, w.cpus, w.mem)
			}
			if want := c.holdings[a.ID].JobID != ""; a.Active != want {
				t.Errorf("%s: agent %s active %v, want %v", c.name, a.ID, a.Active, want)
			}
		}
		for id, want := range c.holdings {
			if h := snap.Holdings[id]; len(h) != 1 || h[0] != want {
				t.Errorf("%s: holdings on %s %+v, want %+v", c.name, id, h, want)
			}
		}
		if len(snap.Holdings) != len(c.holdings) {
			t.Errorf("%s: holdings on %d agents, want %d", c.name, len(snap.Holdings), len(c.holdings))
		}
	}
}

// TestReservedPlanAddsNothing: a plan whose reservations GET_AGENTS shows
// made takes nothing more and lists no more reservations: the agent's view
// has the one GET_AGENTS shows (the job runs: no driver room either).
func TestReservedPlanAddsNothing(t *testing.T) {
	job := scheduler.Job{Spec: scheduler.Spec{ID: "j", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024, MemoryOverheadMB: 512}}
	agents := []Agent{{ID: "A", CPUs: 8, MemMB: 16384, FreeCPUs: 7, FreeMemMB: 14848,
		Reservations: []Reserved{{AgentID: "A", JobID: "j", CPUs: 1, MemMB: 1536}}}}
	cl := viewCluster(agents, job, lifecycle.Running, placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 1}}},
		scheduler.DriverRecord{})
	v := cl.Agents()
	if len(v) != 1 || len(v[0].Reservations) != 1 || v[0].FreeCPUs != 7 || v[0].FreeMemMB != 14848 {
		t.Fatalf("view of A: %+v; want its one reservation and 7 cpus, 14848 MiB free", v)
	}
	if h := v[0].Holdings; len(h) != 1 || h[0] != (AgentHolding{JobID: "j", Executors: 1, CPUs: 1, MemMB: 1536}) {
		t.Fatalf("holdings on A: %+v; want j: 1 executor, 1 cpu, 1536 MiB", h)
	}
}

// TestSnapshotRefreshesFirst: a cluster that has not listed its agents yet
// asks GET_AGENTS for them (the emulator's 14) before its first snapshot.
func TestSnapshotRefreshesFirst(t *testing.T) {
	m, _ := emulator(t)
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	cl := NewCluster(ClusterConfig{Operator: NewOperator(ep)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := cl.Snapshot(ctx)
	if err != nil || len(snap.Agents) != 14 {
		t.Fatalf("first snapshot: %d agents, %v; want the 14 of thesis14", len(snap.Agents), err)
	}
}

// TestDriverRoomFallbackByHand: when no agent of the plan has room for the
// driver (1 cpu, 2048 MiB), the room is taken on an active agent (one with
// something reserved or running) that fits it, however roomier an idle one
// is; among idle agents (or active ones) on the one with the most free
// cpus, the first listed on a tie; one with exactly the driver's room fits.
func TestDriverRoomFallbackByHand(t *testing.T) {
	job := scheduler.Job{Spec: scheduler.Spec{ID: "j", Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 1024, MemoryOverheadMB: 512,
		Driver: &scheduler.Driver{Cores: 1, MemoryMB: 2048}}}
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "P", Executors: 2}}}
	p := Agent{ID: "P", CPUs: 2, MemMB: 4096, FreeCPUs: 2, FreeMemMB: 4096} // full once the plan's 2 executors are counted
	for _, c := range []struct {
		name   string
		agents []Agent               // in the order GET_AGENTS lists them
		want   map[string][2]float64 // free cpus, MiB after
	}{
		{"the most free cpus, listed first", []Agent{
			{ID: "A", CPUs: 8, MemMB: 16384, FreeCPUs: 8, FreeMemMB: 16384}, p,
			{ID: "B", CPUs: 2, MemMB: 4096, FreeCPUs: 2, FreeMemMB: 4096},
		}, map[string][2]float64{"A": {7, 14336}, "B": {2, 4096}}},
		{"a tie: the first listed", []Agent{
			p, {ID: "Q", CPUs: 6, MemMB: 8192, FreeCPUs: 6, FreeMemMB: 8192},
			{ID: "R", CPUs: 6, MemMB: 8192, FreeCPUs: 6, FreeMemMB: 8192},
		}, map[string][2]float64{"Q": {5, 6144}, "R": {6, 8192}}},
		{"exactly the driver's room", []Agent{
			p, {ID: "Q", CPUs: 4, MemMB: 8192, FreeCPUs: 1, FreeMemMB: 2048},
		}, map[string][2]float64{"Q": {0, 0}}},
		{"an active agent before a roomier idle one", []Agent{
			{ID: "I", CPUs: 12, MemMB: 49152, FreeCPUs: 12, FreeMemMB: 49152}, p,
			{ID: "Q", CPUs: 8, MemMB: 16384, FreeCPUs: 2, FreeMemMB: 4096},
			{ID: "R", CPUs: 8, MemMB: 16384, FreeCPUs: 3, FreeMemMB: 4096},
		}, map[string][2]float64{"I": {12, 49152}, "Q": {2, 4096}, "R": {2, 2048}}},
		{"active by another job's driver", []Agent{
			{ID: "I", CPUs: 12, MemMB: 49152, FreeCPUs: 12, FreeMemMB: 49152}, p,
			{ID: "Q", CPUs: 8, MemMB: 16384, FreeCPUs: 8, FreeMemMB: 16384, Drivers: []DriverTask{{JobID: "k", TaskID: "t-k"}}},
		}, map[string][2]float64{"I": {12, 49152}, "Q": {7, 14336}}},
	} {
		cl := viewCluster(c.agents, job, lifecycle.Reserving, plan, scheduler.DriverRecord{})
		snap, err := cl.Snapshot(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range snap.Agents {
			want, ok := c.want[a.ID]
			if !ok {
				want = [2]float64{0, 1024} // P: 2 x (1 cpu, 1536 MiB) taken
			}
			if a.FreeCPUs != want[0] || a.FreeMemMB != want[1] {
				t.Errorf("%s: agent %s free %v cpus, %v MiB; want %v, %v", c.name, a.ID, a.FreeCPUs, a.FreeMemMB, want[0], want[1])
			}
		}
	}
}

// TestOverlayOncePerVersion: the overlay is built once per Version and
// shared by every reader (the snapshot, the view, and agentRooms, which
// the framework calls on every offers event and launch attempt); a job's
// step (a new Version) or a refresh's new agents build it again, and the
// readers see the change.
func TestOverlayOncePerVersion(t *testing.T) {
	job := scheduler.Job{Spec: scheduler.Spec{ID: "j", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024,
		Driver: &scheduler.Driver{Cores: 1, MemoryMB: 1024}}}
	agents := []Agent{
		{ID: "A", CPUs: 4, MemMB: 8192, FreeCPUs: 4, FreeMemMB: 8192},
		{ID: "B", CPUs: 4, MemMB: 8192, FreeCPUs: 4, FreeMemMB: 8192},
	}
	c := viewCluster(agents, job, lifecycle.Reserving, placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 1}}}, scheduler.DriverRecord{})
	c.mu.Lock()
	first := c.overlayPatchLocked()
	c.mu.Unlock()
	if r := c.agentRooms([]string{"A", "B"}); r[0].FreeCPUs != 2 || r[1].FreeCPUs != 4 {
		t.Fatalf("rooms %+v; want A with 2 cpus free (an executor and the driver), B with 4", r)
	}
	if _, err := c.Snapshot(context.Background()); err != nil {
		t.Fatal(err)
	}
	c.Agents()
	c.mu.Lock()
	again := c.overlayPatchLocked()
	c.mu.Unlock()
	if again != first {
		t.Fatal("the overlay was built again at the same Version")
	}

	// A step moves the plan to B: a new Version, a new overlay.
	c.mu.Lock()
	c.jobs["j"].st.Plan = placement.Plan{Assignments: []placement.Assignment{{AgentID: "B", Executors: 1}}}
	c.changedLocked()
	c.mu.Unlock()
	if r := c.agentRooms([]string{"A", "B"}); r[0].FreeCPUs != 4 || r[1].FreeCPUs != 2 {
		t.Fatalf("rooms after the step %+v; want A with 4 cpus free, B with 2", r)
	}

	// A refresh lists other agents: built again even at the same Version.
	c.mu.Lock()
	c.agents = []Agent{{ID: "A", CPUs: 8, MemMB: 8192, FreeCPUs: 8, FreeMemMB: 8192}, agents[1]}
	c.index = nil
	c.mu.Unlock()
	if r := c.agentRooms([]string{"A"}); r[0].FreeCPUs != 8 {
		t.Fatalf("rooms after a refresh %+v; want A with 8 cpus free", r)
	}
}
