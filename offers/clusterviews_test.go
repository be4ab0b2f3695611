package offers

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/master"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/scheduler"
)

// TestViewsFollowChanges: the views and the snapshot are built once per
// change and shared, yet a job's step or a job forgotten shows at once,
// and a caller changing its snapshot does not change the next one.
func TestViewsFollowChanges(t *testing.T) {
	raw := []master.Response_GetAgents_Agent{getAgent("A", 4, 8192), getAgent("B", 4, 8192)}
	agents, _ := AgentsFromMesos(raw, nil)
	c := NewCluster(ClusterConfig{})
	c.agents, c.statuses, c.loaded = agents, StatusesFromMesos(raw, nil), true
	job := scheduler.Job{Spec: scheduler.Spec{ID: "j", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024,
		Driver: &scheduler.Driver{Cores: 1, MemoryMB: 1024}}}
	lj := &liveJob{st: lifecycle.State{Job: job, Phase: lifecycle.Running,
		Driver: scheduler.DriverRecord{JobID: "j", TaskID: "t", AgentID: "A", State: "TASK_RUNNING", Started: true}},
		signal: make(chan struct{}, 1)}
	c.mu.Lock()
	c.jobs["j"] = lj
	c.version++
	c.mu.Unlock()
	drivers := func() int {
		n := 0
		for _, a := range c.Agents() {
			n += len(a.Drivers)
		}
		return n
	}
	if n := drivers(); n != 1 {
		t.Fatalf("%d drivers in the view, want 1", n)
	}
	if c.Agents()[0].ID != "A" || &c.Agents()[0] != &c.Agents()[0] {
		t.Fatal("the view is not shared between calls without a change")
	}
	ctx := context.Background()
	snap, err := c.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !snap.Agents[0].Active || snap.Agents[0].FreeCPUs != 3 {
		t.Fatalf("snapshot agent A: %+v, want active with 3 cpus free", snap.Agents[0])
	}
	snap.Agents[0].FreeCPUs = -1 // the pass marks its starts on its copy
	if again, _ := c.Snapshot(ctx); again.Agents[0].FreeCPUs != 3 {
		t.Fatalf("a caller's change to its snapshot shows in the next: %g cpus free", again.Agents[0].FreeCPUs)
	}

	// The driver ends: the machine's step changes the views.
	ended := lj.st.Driver
	ended.State, ended.Ended = "TASK_FINISHED", true
	c.mu.Lock()
	c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvDriverRecorded, Driver: ended, At: time.Now()})
	c.mu.Unlock()
	if n := drivers(); n != 0 {
		t.Fatalf("%d drivers in the view after the driver ended, want 0", n)
	}
	if s, _ := c.Snapshot(ctx); s.Agents[0].Active || s.Agents[0].FreeCPUs != 4 {
		t.Fatalf("snapshot agent A after the driver ended: %+v, want idle with 4 cpus free", s.Agents[0])
	}
}

// TestOnChangeFollowsVersion: every move of Version is told to
// ClusterConfig.OnChange (the cluster view's owner rebuilds on it), with
// the version it moved to.
func TestOnChangeFollowsVersion(t *testing.T) {
	raw := []master.Response_GetAgents_Agent{getAgent("A", 4, 8192)}
	agents, _ := AgentsFromMesos(raw, nil)
	var told []uint64
	var c *Cluster
	c = NewCluster(ClusterConfig{OnChange: func() { told = append(told, c.version) }}) // c.mu is held
	c.agents, c.statuses, c.loaded = agents, StatusesFromMesos(raw, nil), true
	job := scheduler.Job{Spec: scheduler.Spec{ID: "j", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024}}
	lj := &liveJob{st: lifecycle.State{Job: job, Phase: lifecycle.Running,
		Driver: scheduler.DriverRecord{JobID: "j", TaskID: "t", AgentID: "A", State: "TASK_RUNNING", Started: true}},
		signal: make(chan struct{}, 1)}
	c.mu.Lock()
	c.jobs["j"] = lj
	ended := lj.st.Driver
	ended.State, ended.Ended = "TASK_FINISHED", true
	before := c.version
	c.postLocked(lj, lifecycle.Event{Kind: lifecycle.EvDriverRecorded, Driver: ended, At: time.Now()})
	c.mu.Unlock()
	if v := c.Version(); v == before || len(told) == 0 || told[len(told)-1] != v {
		t.Fatalf("a job's step moved the version %d -> %d and told %v", before, v, told)
	}
	c.mu.Lock()
	lj.st.Phase = lifecycle.Done
	c.mu.Unlock()
	n := len(told)
	if err := c.Release(context.Background(), "j"); err != nil {
		t.Fatal(err)
	}
	if v := c.Version(); len(told) != n+1 || told[n] != v {
		t.Fatalf("forgetting a job: version %d, told %v", v, told[n:])
	}
}

// Agents' build per version at 30,000 agents (the cluster view's owner
// calls it after every change): `go test -run XXX -bench AgentsBuild ./offers/`.
func BenchmarkAgentsBuild30000(b *testing.B) {
	raw := make([]master.Response_GetAgents_Agent, 30000)
	for i := range raw {
		raw[i] = getAgent(fmt.Sprintf("A%d", i), 4, 8192)
	}
	agents, _ := AgentsFromMesos(raw, nil)
	c := NewCluster(ClusterConfig{})
	c.agents, c.loaded = agents, true
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.mu.Lock()
		c.agentsLocked()
		c.mu.Unlock()
	}
}
