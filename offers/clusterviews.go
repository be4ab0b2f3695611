package offers

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// ---- scheduler.Cluster ----------------------------------------------------

// Snapshot implements scheduler.Cluster: the agents as GET_AGENTS last
// showed them, with every plan handed to Apply and not yet given back
// counted as used even where its reservations are not made yet.
func (c *Cluster) Snapshot(ctx context.Context) (placement.Snapshot, error) {
	c.mu.Lock()
	loaded, started := c.loaded, c.ctx != nil
	c.mu.Unlock()
	if !loaded && started {
		// The refresh loop (or Start's first look) is asking GET_AGENTS:
		// a scheduling pass does not wait on the master, nor on
		// ZooKeeper naming one (up to zkLeaderWait, twice when it joins
		// a fetch begun earlier). It fails at once and is retried; the
		// first answer wakes the core (ClusterChanged).
		c.kick()
		return placement.Snapshot{}, errors.New("mesos cluster snapshot: GET_AGENTS has not answered yet; retrying in the background (is the Mesos master reachable? check it and --mesos-master)")
	}
	if !loaded {
		if err := c.refresh(ctx); err != nil {
			return placement.Snapshot{}, fmt.Errorf("mesos cluster snapshot: %w", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// The agents as the last refresh listed them are converted once per
	// refresh; a snapshot is a copy with the agents live plans and drivers
	// change converted again.
	if len(c.agents) != len(c.snapBase) || len(c.agents) > 0 && &c.agents[0] != &c.snapOf[0] {
		base := Snapshot(c.agents)
		c.snapBase, c.snapHold, c.snapOf = base.Agents, base.Holdings, c.agents
	}
	ov := c.overlayPatchLocked()
	snap := placement.Snapshot{Agents: slices.Clone(c.snapBase), Holdings: maps.Clone(c.snapHold)}
	for i, a := range ov.patch {
		snap.Agents[i] = snapshotAgent(*a)
		if h := holdingsOf(*a); len(h) > 0 {
			if snap.Holdings == nil {
				snap.Holdings = map[string][]placement.Holding{}
			}
			snap.Holdings[a.ID] = h
		} else {
			delete(snap.Holdings, a.ID)
		}
	}
	if c.cfg.Unavailable != nil {
		for i := range snap.Agents {
			if c.cfg.Unavailable(snap.Agents[i].ID) {
				snap.Agents[i].FreeCPUs, snap.Agents[i].FreeMemMB = 0, 0
			}
		}
	}
	return snap, nil
}

// AgentStatuses is every agent GET_AGENTS last listed, whatever its state,
// for power management. An agent counts as busy while GET_AGENTS shows a
// task or reservation of anyone there, or while a plan of sparkpack's
// still counts on it (its reservations may not be made yet).
func (c *Cluster) AgentStatuses() []AgentStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.agentStatusesLocked()
}

func (c *Cluster) agentStatusesLocked() []AgentStatus {
	planned := map[string]bool{}
	for _, lj := range c.jobs {
		if lj.st.Phase == lifecycle.Done {
			continue
		}
		for _, as := range lj.st.Plan.Assignments {
			planned[as.AgentID] = true
		}
		if lj.st.Driver.AgentID != "" && !lj.st.Driver.Ended {
			planned[lj.st.Driver.AgentID] = true
		}
	}
	out := make([]AgentStatus, len(c.statuses))
	for i, st := range c.statuses {
		out[i] = st
		out[i].Reservations = append([]Reserved(nil), st.Reservations...)
		if planned[st.ID] {
			out[i].Busy = true
		}
	}
	return out
}

// AgentName is the name people know an agent by: its hostname, or its
// Mesos id when the agent was never seen. Events and logs use it, as the
// dashboard and the CLI do.
func (c *Cluster) AgentName(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nameLocked(id)
}

func (c *Cluster) nameLocked(id string) string {
	if a, ok := c.seen[id]; ok && a.Hostname != "" {
		return a.Hostname
	}
	return id
}

// registeredLocked reports whether GET_AGENTS lists the agent as active.
func (c *Cluster) registeredLocked(id string) bool {
	_, ok := c.indexLocked()[id]
	return ok
}

// indexLocked maps agent ids to their position in c.agents; refresh keeps
// it, and it is built again if c.agents was set without it.
func (c *Cluster) indexLocked() map[string]int {
	if len(c.index) != len(c.agents) {
		c.index = make(map[string]int, len(c.agents))
		for i, a := range c.agents {
			c.index[a.ID] = i
		}
	}
	return c.index
}

// overlay is the agents as the last refresh listed them (base, shared,
// never modified) with copies of the few that live plans and drivers
// change (patch, by position): on a cluster of tens of thousands of agents
// a plan touches a handful, and copying every agent for every pass and
// view was most of what serve allocated.
type overlay struct {
	base  []Agent
	patch map[int]*Agent
	// driverRoom: where the room of each queued driver was kept, by job.
	driverRoom map[string]keptRoom
}

// keptRoom is the agent a queued driver's room was kept on, and its kind.
type keptRoom struct {
	agent string
	kind  RoomKind
}

// driverRoomLocked is where the overlay keeps the room of the job's driver
// not launched yet (the agent "" when none has room).
func (c *Cluster) driverRoomLocked(jobID string) keptRoom {
	return c.overlayPatchLocked().driverRoom[jobID]
}

// agentRooms reports each agent as the overlay shows it (AgentRoom): what
// the framework asks about the agents of the offers it holds
// (Framework.SetAgentRooms). An agent GET_AGENTS does not list is not
// Known; one power management is turning off has no room, as in Snapshot.
func (c *Cluster) agentRooms(ids []string) []AgentRoom {
	c.mu.Lock()
	defer c.mu.Unlock()
	ov := c.overlayPatchLocked()
	index := c.indexLocked()
	out := make([]AgentRoom, len(ids))
	for k, id := range ids {
		i, ok := index[id]
		if !ok {
			continue
		}
		a := ov.get(i)
		out[k] = AgentRoom{Known: true, Active: agentActive(a), FreeCPUs: a.FreeCPUs, FreeMemMB: a.FreeMemMB}
		if c.cfg.Unavailable != nil && c.cfg.Unavailable(id) {
			out[k].FreeCPUs, out[k].FreeMemMB = 0, 0
		}
	}
	return out
}

// get returns agent i as the overlay shows it (not to be modified).
func (o *overlay) get(i int) *Agent {
	if a := o.patch[i]; a != nil {
		return a
	}
	return &o.base[i]
}

// mut returns agent i's own copy, made on the first change.
func (o *overlay) mut(i int) *Agent {
	if a := o.patch[i]; a != nil {
		return a
	}
	a := o.base[i]
	a.Reservations = append([]Reserved(nil), a.Reservations...)
	a.Drivers = append([]DriverTask(nil), a.Drivers...)
	o.patch[i] = &a
	return &a
}

// all returns every agent with the patches applied (a shallow copy: the
// unpatched agents share their slices and maps with base).
func (o *overlay) all() []Agent {
	out := make([]Agent, len(o.base))
	copy(out, o.base)
	for i, a := range o.patch {
		out[i] = *a
	}
	return out
}

// overlayLocked returns the agents with the resources of live plans that
// GET_AGENTS does not show reserved yet taken out.
func (c *Cluster) overlayLocked() []Agent {
	return c.overlayPatchLocked().all()
}

// overlayPatchLocked is overlayLocked as patches over c.agents. It is
// built once per Version (and refresh) and shared: the scheduling pass's
// snapshot, the cluster view and the framework's every look at the agents
// of the offers it holds (agentRooms, on each offers event and launch
// attempt) read the same one; none may modify it.
func (c *Cluster) overlayPatchLocked() *overlay {
	if c.ov != nil && c.ovVer == c.version && sameAgents(c.ovOf, c.agents) {
		return c.ov
	}
	ov := c.buildOverlayLocked()
	c.ov, c.ovVer, c.ovOf = ov, c.version, c.agents
	return ov
}

// sameAgents reports whether a and b are the same slice (one refresh's
// agents).
func sameAgents(a, b []Agent) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// buildOverlayLocked builds the overlay (overlayPatchLocked) anew.
func (c *Cluster) buildOverlayLocked() *overlay {
	ov := &overlay{base: c.agents, patch: map[int]*Agent{}}
	index := c.indexLocked()
	for id, lj := range c.jobs {
		if lj.st.Phase == lifecycle.Done {
			continue
		}
		cpu1, mem1 := JobAmounts(lj.st.Job)
		for _, as := range lj.st.Plan.Assignments {
			i, ok := index[as.AgentID]
			if !ok || as.Executors <= 0 {
				continue
			}
			a := ov.mut(i)
			var haveC, haveM float64
			for _, r := range a.Reservations {
				if r.JobID == id {
					haveC += r.CPUs
					haveM += r.MemMB
				}
			}
			needC, needM := cpu1*float64(as.Executors), mem1*float64(as.Executors)
			dc, dm := math.Max(needC-haveC, 0), math.Max(needM-haveM, 0)
			a.FreeCPUs = math.Max(a.FreeCPUs-dc, 0)
			a.FreeMemMB = math.Max(a.FreeMemMB-dm, 0)
			if dc > 0 || dm > 0 || haveC == 0 {
				a.Reservations = append(a.Reservations, Reserved{AgentID: a.ID, JobID: id, Role: scheduler.Role(id), CPUs: dc, MemMB: dm})
			}
		}
	}
	ids := make([]string, 0, len(c.jobs))
	for id := range c.jobs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	c.overlayDriversLocked(ov, index, ids)
	// Room for the drivers not launched yet: without it, plans could
	// reserve every cpu and leave the drivers of the reserved jobs nowhere
	// to run. It is taken where the framework will launch the driver
	// (driverRoomAgent, driverplace.go): on the job's own agents when they
	// have it, else on an active agent, else on the roomiest.
	at := func(i int) roomAgent {
		a := ov.get(i)
		return roomAgent{FreeCPUs: a.FreeCPUs, FreeMemMB: a.FreeMemMB, Active: agentActive(a)}
	}
	var offPlan []string
	keep := func(id string, best int, kind RoomKind, dc, dm float64) {
		a := ov.mut(best)
		a.FreeCPUs -= dc
		a.FreeMemMB -= dm
		if ov.driverRoom == nil {
			ov.driverRoom = map[string]keptRoom{}
		}
		ov.driverRoom[id] = keptRoom{agent: a.ID, kind: kind}
	}
	// First every driver whose own agents have room, then the others:
	// a driver off its plan must not take the room a later job's driver
	// has on that job's own agents.
	for _, id := range ids {
		lj := c.jobs[id]
		if (lj.st.Phase != lifecycle.Reserving && lj.st.Phase != lifecycle.Launching) || lj.st.Driver.State != "" {
			continue
		}
		d := lj.st.Job.DriverOrDefault()
		dc, dm := d.Cores, float64(d.MemoryMB)
		plan := make([]int, 0, len(lj.st.Plan.Assignments))
		for _, as := range lj.st.Plan.Assignments {
			if i, ok := index[as.AgentID]; ok {
				plan = append(plan, i)
			}
		}
		if best, kind := driverRoomAgent(plan, 0, at, dc, dm); best >= 0 {
			keep(id, best, kind, dc, dm)
		} else {
			offPlan = append(offPlan, id)
		}
	}
	for _, id := range offPlan {
		d := c.jobs[id].st.Job.DriverOrDefault()
		dc, dm := d.Cores, float64(d.MemoryMB)
		if best, kind := driverRoomAgent(nil, len(ov.base), at, dc, dm); best >= 0 {
			keep(id, best, kind, dc, dm)
		}
	}
	return ov
}

// overlayDriversLocked lists on each agent the drivers launched there that
// have not ended, and takes from its free resources what GET_AGENTS does
// not show allocated to sparkpack's role yet (a launch sent since the last
// refresh).
func (c *Cluster) overlayDriversLocked(ov *overlay, index map[string]int, ids []string) {
	role := "sparkpack"
	if c.cfg.Framework != nil {
		role = c.cfg.Framework.cfg.Role
	}
	withDrivers := map[int]bool{}
	for _, id := range ids {
		lj := c.jobs[id]
		drv := lj.st.Driver
		if lj.st.Phase == lifecycle.Done || drv.AgentID == "" || drv.State == "" || drv.Ended {
			continue
		}
		i, ok := index[drv.AgentID]
		if !ok {
			continue
		}
		d := lj.st.Job.DriverOrDefault()
		a := ov.mut(i)
		a.Drivers = append(a.Drivers, DriverTask{JobID: id, TaskID: drv.TaskID, CPUs: d.Cores, MemMB: float64(d.MemoryMB)})
		withDrivers[i] = true
	}
	for i := range withDrivers {
		a := ov.mut(i)
		var needC, needM float64
		for _, d := range a.Drivers {
			needC += d.CPUs
			needM += d.MemMB
		}
		have := a.allocByRole[role]
		a.FreeCPUs = math.Max(a.FreeCPUs-math.Max(needC-have[0], 0), 0)
		a.FreeMemMB = math.Max(a.FreeMemMB-math.Max(needM-have[1], 0), 0)
	}
}

// Apply implements scheduler.Cluster: it starts following the job and
// returns at once.
// ---- views ----------------------------------------------------------------

// AgentHolding is what one job holds on one agent.
type AgentHolding struct {
	JobID     string
	Executors int
	CPUs      float64
	MemMB     float64
}

// AgentState is an agent with what sparkpack's jobs hold on it.
type AgentState struct {
	Agent
	Holdings []AgentHolding
	// Gone is set for an agent seen before that GET_AGENTS no longer
	// lists (powered off, or lost).
	Gone bool
}

// Version changes whenever what Snapshot and Agents show may have changed
// (a refresh, a job's step, a job started or forgotten): a view built
// from Agents stays valid while Version is the same.
func (c *Cluster) Version() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// changedLocked moves Version and tells ClusterConfig.OnChange.
func (c *Cluster) changedLocked() {
	c.version++
	if c.cfg.OnChange != nil {
		c.cfg.OnChange()
	}
}

// Agents returns the agents as the core sees them (with plans in flight
// counted) and, per agent, the jobs holding resources there. It is built
// once per Version and shared: callers must not modify it.
func (c *Cluster) Agents() []AgentState {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.view == nil || c.viewVer != c.version {
		c.view, c.viewVer = c.agentsLocked(), c.version
	}
	return c.view
}

func (c *Cluster) agentsLocked() []AgentState {
	// Straight from the overlay: a copy of every agent (overlayLocked)
	// made only to be copied again into out was 4-5 MiB of garbage per
	// version at 30,000 agents.
	ov := c.overlayPatchLocked()
	out := make([]AgentState, len(ov.base), len(ov.base)+len(c.gone))
	for i := range ov.base {
		a := ov.get(i)
		out[i].Agent = *a
		if len(a.Reservations) == 0 {
			continue
		}
		per := map[string]*AgentHolding{}
		var order []string
		for _, r := range a.Reservations {
			h := per[r.JobID]
			if h == nil {
				h = &AgentHolding{JobID: r.JobID}
				per[r.JobID] = h
				order = append(order, r.JobID)
			}
			h.CPUs += r.CPUs
			h.MemMB += r.MemMB
		}
		for _, id := range order {
			h := per[id]
			if lj := c.jobs[id]; lj != nil {
				for _, as := range lj.st.Plan.Assignments {
					if as.AgentID == a.ID {
						h.Executors = as.Executors
					}
				}
			}
			out[i].Holdings = append(out[i].Holdings, *h)
		}
	}
	ids := make([]string, 0, len(c.gone))
	for id := range c.gone {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		a := c.gone[id]
		a.FreeCPUs, a.FreeMemMB, a.Reservations = 0, 0, nil
		out = append(out, AgentState{Agent: a, Gone: true})
	}
	return out
}
