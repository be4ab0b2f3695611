package simulate

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/internal/manualclock"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// VirtualClock is a scheduler.Clock that only moves when told to (Set,
// Advance).
type VirtualClock = manualclock.Clock

// NewVirtualClock starts at t.
func NewVirtualClock(t time.Time) *VirtualClock { return manualclock.New(t) }

type allocation struct {
	plan       placement.Plan
	cpus, mem  float64 // per executor
	agentIndex []int
}

// Cluster is a simulated cluster implementing scheduler.Cluster: plans
// take effect at once, and an agent is active while any job holds
// executors on it. It leaves the agents' RemainingActive at zero: the
// scheduler core fills it from its jobs' estimates, live and here alike.
type Cluster struct {
	mu      sync.Mutex
	clock   scheduler.Clock
	agents  []placement.Agent
	index   map[string]int
	allocs  map[string]*allocation
	started []string
	// preempted are the jobs the core asked to evict, in order.
	preempted []string
	// Power management (power.go): per agent, indexed like agents.
	power []agentPower
	// unavailable names agents power management is taking out of
	// service: the snapshot shows them with nothing free.
	unavailable func(agentID string) bool
}

// NewCluster builds a simulated cluster from a cluster spec, all idle.
func NewCluster(spec clusterspec.Cluster, clock scheduler.Clock) *Cluster {
	c := &Cluster{clock: clock, index: map[string]int{}, allocs: map[string]*allocation{}}
	for _, a := range spec.Agents {
		loc := placement.Location(a.Location)
		if loc == "" {
			loc = placement.LocationCloud
		}
		c.index[a.ID] = len(c.agents)
		c.power = append(c.power, agentPower{onSince: clock.Now()})
		c.agents = append(c.agents, placement.Agent{
			ID: a.ID, Hostname: a.Hostname, Attributes: a.AllAttributes(),
			CPUs: a.CPUs, MemMB: a.MemMB, FreeCPUs: a.CPUs, FreeMemMB: a.MemMB,
			PriceMicroUSDPerHour: clusterspec.PriceMicroUSD(a.PricePerHour), Location: loc,
		})
	}
	return c
}

// Snapshot implements scheduler.Cluster.
func (c *Cluster) Snapshot(context.Context) (placement.Snapshot, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	all := slices.Clone(c.agents)
	for _, id := range c.sortedJobs() {
		for _, i := range c.allocs[id].agentIndex {
			all[i].Active = true
		}
	}
	// Agents that are off or booting are not in Mesos' view; power
	// management offers them to the core as standby agents.
	s := placement.Snapshot{Agents: all[:0]}
	for i, a := range all {
		if !c.power[i].registered() {
			continue
		}
		if c.unavailable != nil && c.unavailable(a.ID) {
			a.FreeCPUs, a.FreeMemMB = 0, 0
		}
		s.Agents = append(s.Agents, a)
	}
	return s, nil
}

func (c *Cluster) sortedJobs() []string {
	ids := make([]string, 0, len(c.allocs))
	for id := range c.allocs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Apply implements scheduler.Cluster: the plan's executors take their
// resources at once. It refuses a plan that does not fit.
func (c *Cluster) Apply(_ context.Context, j scheduler.Job, plan placement.Plan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.allocs[j.ID]; dup {
		return fmt.Errorf("simulated cluster: job %s already placed", j.ID)
	}
	d := scheduler.DemandOf(&j)
	al := &allocation{plan: plan, cpus: d.CPUs, mem: d.MemMB}
	for _, as := range plan.Assignments {
		i, ok := c.index[as.AgentID]
		if !ok {
			return fmt.Errorf("simulated cluster: unknown agent %s", as.AgentID)
		}
		ag := &c.agents[i]
		n := float64(as.Executors)
		if ag.FreeCPUs+1e-9 < n*d.CPUs || ag.FreeMemMB+1e-9 < n*d.MemMB {
			return fmt.Errorf("simulated cluster: %d executors of job %s do not fit on %s", as.Executors, j.ID, as.AgentID)
		}
		al.agentIndex = append(al.agentIndex, i)
	}
	for k, as := range plan.Assignments {
		ag := &c.agents[al.agentIndex[k]]
		n := float64(as.Executors)
		ag.FreeCPUs -= n * d.CPUs
		ag.FreeMemMB -= n * d.MemMB
	}
	c.allocs[j.ID] = al
	c.started = append(c.started, j.ID)
	return nil
}

// Release implements scheduler.Cluster.
func (c *Cluster) Release(_ context.Context, jobID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	al, ok := c.allocs[jobID]
	if !ok {
		return nil
	}
	for k, as := range al.plan.Assignments {
		ag := &c.agents[al.agentIndex[k]]
		n := float64(as.Executors)
		ag.FreeCPUs = min(ag.CPUs, ag.FreeCPUs+n*al.cpus)
		ag.FreeMemMB = min(ag.MemMB, ag.FreeMemMB+n*al.mem)
	}
	delete(c.allocs, jobID)
	return nil
}

// Preempt implements scheduler.Cluster: the job is evicted at once (the
// simulation loop reports it back to the queue; TakePreempted).
func (c *Cluster) Preempt(_ context.Context, jobID, _ string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.allocs[jobID]; !ok {
		return fmt.Errorf("simulated cluster: evict job %s: %w", jobID, scheduler.ErrNotFound)
	}
	if !slices.Contains(c.preempted, jobID) {
		c.preempted = append(c.preempted, jobID)
	}
	return nil
}

// Kill implements scheduler.Cluster. A simulation has no one to cancel a
// running job (its jobs end by their run times), so the core never asks.
func (c *Cluster) Kill(_ context.Context, jobID string) error {
	return fmt.Errorf("simulated cluster: kill job %s: the simulator does not kill running jobs", jobID)
}

// TakePreempted returns the jobs evicted since the last call, in order.
func (c *Cluster) TakePreempted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.preempted
	c.preempted = nil
	return out
}

// TakeStarted returns the jobs applied since the last call whose agents
// all run (a plan on an agent being powered on waits for its boot), in
// order.
func (c *Cluster) TakeStarted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out, wait []string
	for _, id := range c.started {
		ready := true
		if al := c.allocs[id]; al != nil {
			for _, i := range al.agentIndex {
				ready = ready && c.power[i].registered()
			}
		}
		if ready {
			out = append(out, id)
		} else {
			wait = append(wait, id)
		}
	}
	c.started = wait
	return out
}

// Pending reports whether a placed job waits for an agent to boot.
func (c *Cluster) Pending() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.started) > 0
}

// AgentIDs are the agents of job's placement, in Shares' order.
func (c *Cluster) AgentIDs(jobID string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	al, ok := c.allocs[jobID]
	if !ok {
		return nil
	}
	out := make([]string, 0, len(al.plan.Assignments))
	for _, as := range al.plan.Assignments {
		out = append(out, as.AgentID)
	}
	return out
}

// Shares describes job's placement for the performance model: per agent,
// its executors, the agent's cpus and the cpus in use on it now.
func (c *Cluster) Shares(jobID string) []workload.AgentShare {
	c.mu.Lock()
	defer c.mu.Unlock()
	al, ok := c.allocs[jobID]
	if !ok {
		return nil
	}
	out := make([]workload.AgentShare, 0, len(al.agentIndex))
	for k, as := range al.plan.Assignments {
		ag := c.agents[al.agentIndex[k]]
		out = append(out, workload.AgentShare{Executors: as.Executors, CPUs: ag.CPUs, UsedCPUs: ag.CPUs - ag.FreeCPUs})
	}
	return out
}
