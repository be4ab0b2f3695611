package offers

import (
	"context"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestRecoveredAgentsAreNotLost: just after a master failover a real
// Mesos 1.12 master lists the agents it has not heard from again only in
// recovered_agents (testdata/get_agents_recovered_mesos1.12.md). A running
// job whose executors' agent and driver's agent are listed so is not told
// they are lost (before: the driver's agent "gone" stopped the job); once
// they are listed again nothing happened, and an agent that leaves
// recovered_agents without coming back is lost then, once.
func TestRecoveredAgentsAreNotLost(t *testing.T) {
	ctx := context.Background()
	l := &agentsList{}
	A, B, C := getAgent("A", 4, 8192), getAgent("B", 4, 8192), getAgent("C", 8, 16384)
	l.set(A, B, C)
	c := NewCluster(ClusterConfig{Operator: agentsOperator(t, l), Store: newMemStore(), Log: quietLog()})
	refresh := func() {
		t.Helper()
		if err := c.refresh(ctx); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	j := testJob(0)
	j.ID = "run"
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "A", Executors: 1}, {AgentID: "B", Executors: 1}}}
	drv := scheduler.DriverRecord{TaskID: "t-C", AgentID: "C", State: "TASK_RUNNING", Started: true}
	lj := &liveJob{signal: make(chan struct{}, 1), st: lifecycle.New(lifecycle.Config{}, j, plan, lifecycle.Running, drv, time.Now())}
	lj.st.Busy = lifecycle.ActKillDriver // awaits an answer: an event is only recorded
	c.mu.Lock()
	c.jobs[j.ID] = lj
	c.mu.Unlock()
	told := func() (string, []string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return lj.st.Lost, append([]string(nil), lj.st.LostExecutors...)
	}

	// The failover: only B has re-registered; A and C are recovered.
	l.mu.Lock()
	l.agents = []master.Response_GetAgents_Agent{B}
	l.recovered = []mesos.AgentInfo{A.AgentInfo, C.AgentInfo}
	l.mu.Unlock()
	refresh()
	refresh()
	if lost, execs := told(); lost != "" || len(execs) != 0 {
		t.Fatalf("after a failover with A and C recovered: lost %q, lost executors %v; want nothing", lost, execs)
	}
	c.mu.Lock()
	if len(c.missing) != 0 || len(c.gone) != 0 {
		t.Errorf("missing %v, gone %v; want none while A and C are recovered", c.missing, c.gone)
	}
	c.mu.Unlock()

	// C re-registers; A stays recovered, then leaves recovered_agents
	// without coming back (agent_reregister_timeout): lost then, once.
	l.mu.Lock()
	l.agents = []master.Response_GetAgents_Agent{B, C}
	l.recovered = []mesos.AgentInfo{A.AgentInfo}
	l.mu.Unlock()
	refresh()
	if lost, execs := told(); lost != "" || len(execs) != 0 {
		t.Fatalf("C back, A recovered: lost %q, lost executors %v; want nothing", lost, execs)
	}
	l.mu.Lock()
	l.recovered = nil
	l.mu.Unlock()
	refresh()
	refresh()
	if lost, execs := told(); lost != "" || len(execs) != 1 || execs[0] != "A" {
		t.Fatalf("A gone from recovered_agents: lost %q, lost executors %v; want A recorded once, the job going on", lost, execs)
	}
}
