package offers

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	sched "github.com/sparkpack/sparkpack/scheduler"
)

// crashAgent is a GET_AGENTS agent on hostname host, registered at reg
// (seconds), active or not (disconnected: its process died).
func crashAgent(id, host string, reg int64, active bool) master.Response_GetAgents_Agent {
	a := getAgent(id, 4, 8192)
	a.AgentInfo.Hostname = host
	a.Active = active
	a.RegisteredTime = &mesos.TimeInfo{Nanoseconds: reg * int64(time.Second)}
	return a
}

// TestPlanOnAnAgentBackUnderANewID: a job waits in RESERVING for the
// agents of its plan. An agent's machine crashed and came back under a new
// agent id (its work dir was lost), as a real Mesos 1.12 master shows it
// (scripts/mesos-agent-crash.sh): at the same address the old agent is
// removed at once; at a new address it stays listed inactive (until its
// ping timeouts) beside the new agent, registered after it. Either way the
// job is placed again at the plan's next check of its agents, not after
// AgentWait, naming the new id. An agent that is only slow to register
// again (listed inactive, or not listed at all: a restarted master lists
// it as recovered, an unreachable one may come back) is waited for, as is
// one beside an older agent on its hostname (ambiguous), and one whose
// "new" agent registered before it.
func TestPlanOnAnAgentBackUnderANewID(t *testing.T) {
	ctx := context.Background()
	A := crashAgent("A", "m-1", 100, true)
	Adown := crashAgent("A", "m-1", 100, false)
	A2 := crashAgent("A2", "m-1", 200, true)
	A2old := crashAgent("A2", "m-1", 50, true) // registered before A
	B := crashAgent("B", "m-1", 10, true)      // another agent on m-1 all along
	Z := crashAgent("Z", "m-9", 10, true)
	// B, another agent of the machine, back first under its own id after
	// it was marked unreachable (or after a master failover): a real 1.12
	// master sets its registered_time anew too, after A's.
	Bback := crashAgent("B", "m-1", 300, true)
	Bback.ReregisteredTime = &mesos.TimeInfo{Nanoseconds: 300 * int64(time.Second)}
	type listing = []master.Response_GetAgents_Agent
	for _, c := range []struct {
		name     string
		plan     []string
		listings []listing // refreshed in turn before the check
		replaced string    // "": the job waits (a timer)
		agent    string    // the agent named in the reason
	}{
		{"same address: the old agent removed", []string{"A"}, []listing{{A, Z}, {Adown, Z}, {A2, Z}}, "A2", "A"},
		{"same address, no refresh saw it down", []string{"A"}, []listing{{A, Z}, {A2, Z}}, "A2", "A"},
		{"new address: the old agent listed inactive", []string{"A"}, []listing{{A, Z}, {Adown, A2, Z}}, "A2", "A"},
		{"new address, the old one never seen active (a restart)", []string{"A"}, []listing{{Adown, A2, Z}}, "A2", "A"},
		{"a booting agent first in the plan", []string{"X", "A", "Z"}, []listing{{A, Z}, {A2, Z}}, "A2", "A"},
		{"slow restart: listed inactive", []string{"A"}, []listing{{A, Z}, {Adown, Z}}, "", ""},
		{"not listed: unreachable, or recovered after a master restart", []string{"A"}, []listing{{A, Z}, {Z}}, "", ""},
		{"an older agent on the hostname", []string{"A"}, []listing{{A, B, Z}, {Adown, B, Z}}, "", ""},
		{"an older agent on the hostname, A removed", []string{"A"}, []listing{{A, B, Z}, {B, Z}}, "", ""},
		{"the other agent registered before the old one", []string{"A"}, []listing{{Adown, A2old, Z}}, "", ""},
		{"two new agents on the hostname", []string{"A"}, []listing{{A, Z}, {A2, crashAgent("C", "m-1", 200, true), Z}}, "", ""},
		{"the machine's other agent back first under its own id", []string{"A"}, []listing{{Adown, Bback, Z}}, "", ""},
		// Two agents share the hostname, the second added after A: A only
		// restarts (slow, its id kept); the other was listed beside it.
		{"a newer agent listed beside it before it went", []string{"A"}, []listing{{A, A2, Z}, {Adown, A2, Z}}, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := &agentsList{}
			cl := NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: newMemStore(), Log: quietLog()})
			var plan placement.Plan
			for _, a := range c.plan {
				plan.Assignments = append(plan.Assignments, placement.Assignment{AgentID: a, Executors: 1})
			}
			st := lifecycle.New(cl.lifecycleConfig(), testJob(0), plan, lifecycle.Reserving, sched.DriverRecord{}, time.Now())
			st.Busy = lifecycle.ActCheckAgents
			lj := &liveJob{st: st, signal: make(chan struct{}, 1)}
			cl.jobs[testJobID] = lj
			for _, ls := range c.listings {
				l.set(ls...)
				if err := cl.refresh(ctx); err != nil {
					t.Fatal(err)
				}
			}
			acts := cl.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActCheckAgents})
			cl.mu.Lock()
			got := lj.st
			cl.mu.Unlock()
			if c.replaced == "" {
				if got.Phase != lifecycle.Reserving || len(acts) != 1 || acts[0].Kind != lifecycle.ActTimer {
					t.Fatalf("phase %s (%q), actions %v; want it to wait (Reserving, a timer)", got.Phase, got.Reason, kinds(acts))
				}
				return
			}
			want := "agent m-1 came back under a new Mesos agent id (" + c.replaced + ", was " + c.agent + ";"
			if got.Phase != lifecycle.Releasing || !strings.HasPrefix(got.Reason, want) {
				t.Fatalf("phase %s, reason %q; want Releasing, %q...", got.Phase, got.Reason, want)
			}
		})
	}
}

// TestReplacedForgotten: a replacement is kept while a followed job's plan
// names the old id, and dropped once none does and AgentWait has passed
// since it was found (no plan waits longer for an agent), or at once when
// the old id is listed active again.
func TestReplacedForgotten(t *testing.T) {
	cl := NewCluster(ClusterConfig{Store: newMemStore(), Log: quietLog(), AgentWait: time.Minute})
	t0 := time.Now()
	found := map[string]replacement{"A": {by: "A2", host: "m-1"}, "C": {by: "C2", host: "m-3"}}
	cl.noteReplacedLocked(found, nil, t0)
	st := lifecycle.New(cl.lifecycleConfig(), testJob(0), placement.Plan{Assignments: []placement.Assignment{{AgentID: "A"}}},
		lifecycle.Reserving, sched.DriverRecord{}, t0)
	cl.jobs[testJobID] = &liveJob{st: st}
	cl.noteReplacedLocked(nil, nil, t0.Add(59*time.Second))
	if cl.replacedLocked("A").by != "A2" || cl.replacedLocked("C").by != "C2" {
		t.Fatalf("before AgentWait: %+v", cl.replaced)
	}
	cl.noteReplacedLocked(nil, nil, t0.Add(time.Minute))
	if cl.replacedLocked("A").by != "A2" || cl.replacedLocked("C").by != "" {
		t.Fatalf("after AgentWait, A named by a plan: %+v; want A kept, C dropped", cl.replaced)
	}
	cl.noteReplacedLocked(nil, map[string]bool{"A": true}, t0.Add(time.Minute))
	if len(cl.replaced) != 0 {
		t.Fatalf("A listed active again: %+v; want it dropped", cl.replaced)
	}
}

// TestPlanOnACrashedMachineBackUnderANewIDOnTheEmulator: the same on the
// emulator, which follows a real 1.12 master here (mesossim
// AgentsLoseWorkDir): the machine of a plan's agent stops (a crash: not
// power management's doing) and comes back as a new agent at its old
// address. While it is down the job waits for it; once the new agent is
// listed the job is placed again at its next check, naming the new id.
func TestPlanOnACrashedMachineBackUnderANewIDOnTheEmulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := mesossim.New(mesossim.Config{Logger: quietLog(), DisableSpark: true, Cluster: clusterspec.Cluster{Name: "one", Agents: []clusterspec.Agent{
		{ID: "one-S0", Hostname: "agent-1", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, Location: "cloud"},
		{ID: "one-S1", Hostname: "agent-2", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, Location: "cloud"}}},
		TimeScale: 0.001, BootTime: 10 * time.Second, UnreachableAfter: time.Hour, AgentsLoseWorkDir: true})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(func() { m.Close() })
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	ep, err := NewEndpoint(srv.URL, "", "")
	if err != nil {
		t.Fatal(err)
	}
	cl := NewCluster(ClusterConfig{Operator: NewOperator(ep), Store: newMemStore(), Log: quietLog()})
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "one-S1", Executors: 1}, {AgentID: "one-S0", Executors: 1}}}
	lj := &liveJob{signal: make(chan struct{}, 1)}
	cl.jobs[testJobID] = lj
	check := func() lifecycle.State {
		t.Helper()
		if err := cl.refresh(ctx); err != nil {
			t.Fatal(err)
		}
		cl.mu.Lock()
		lj.st = lifecycle.New(cl.lifecycleConfig(), testJob(0), plan, lifecycle.Reserving, sched.DriverRecord{}, time.Now())
		lj.st.Busy = lifecycle.ActCheckAgents
		cl.mu.Unlock()
		cl.perform(ctx, lj, lifecycle.Action{Kind: lifecycle.ActCheckAgents})
		cl.mu.Lock()
		defer cl.mu.Unlock()
		return lj.st
	}
	if st := check(); !st.Reserved && st.Busy != lifecycle.ActReserve {
		t.Fatalf("with both agents up: busy %s, phase %s; want the reservations made next", st.Busy, st.Phase)
	}
	if err := m.PowerOff("one-S0"); err != nil {
		t.Fatal(err)
	}
	if st := check(); st.Phase != lifecycle.Reserving || st.Reason != "" {
		t.Fatalf("one-S0 down: phase %s (%q); want the job waiting for it", st.Phase, st.Reason)
	}
	if err := m.PowerOn("one-S0"); err != nil {
		t.Fatal(err)
	}
	for {
		if a := m.Agents(); len(a) == 2 && a[0].ID != "one-S0" && a[1].ID != "one-S0" && !a[0].PoweredOff && !a[1].PoweredOff {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the machine did not come back: %+v", m.Agents())
		}
		time.Sleep(10 * time.Millisecond)
	}
	st := check()
	if st.Phase != lifecycle.Releasing || !strings.HasPrefix(st.Reason, "agent agent-1 came back under a new Mesos agent id (one-S2, was one-S0;") {
		t.Fatalf("one-S0's machine back as a new agent: phase %s, reason %q; want Releasing, naming one-S2", st.Phase, st.Reason)
	}
}
