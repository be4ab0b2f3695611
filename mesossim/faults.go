package mesossim

import (
	"fmt"
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// AddAgent registers a new simulated agent.
func (m *Master) AddAgent(spec clusterspec.Agent) error {
	if spec.ID == "" || spec.CPUs <= 0 || spec.MemMB <= 0 {
		return fmt.Errorf("mesossim: agent needs an id, cpus and memMB")
	}
	if spec.Hostname == "" {
		spec.Hostname = spec.ID
	}
	if spec.Location == "" {
		spec.Location = "cloud"
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.agents[spec.ID]; ok {
		return fmt.Errorf("mesossim: agent %q already exists", spec.ID)
	}
	a := m.addAgentLocked(spec)
	m.publishAgentLocked(a, true)
	m.log.WithField("agent", spec.ID).Info("agent added")
	m.kickAllocator()
	return nil
}

// RemoveAgent removes an agent for good: its tasks are lost, its
// reservations disappear with it.
func (m *Master) RemoveAgent(agentID string) error {
	return m.dropAgent(agentID, false, mesos.REASON_AGENT_REMOVED_BY_OPERATOR, "Agent removed by operator")
}

// LoseAgent simulates an agent that crashes and never comes back: its tasks
// go TASK_LOST (TASK_UNREACHABLE for PARTITION_AWARE frameworks) and it is
// removed with its reservations.
func (m *Master) LoseAgent(agentID string) error {
	return m.dropAgent(agentID, false, mesos.REASON_AGENT_REMOVED, "Agent lost")
}

// CrashAgent kills an agent's process, as SIGKILL would; its executors
// keep running. The master, which cannot tell a dead process from a dead
// machine, reacts as a real Mesos 1.12 master does (recorded in
// testdata/real/probe.json): at once the agent is disconnected (listed by
// GET_AGENTS as inactive, its offers rescinded, a KILL waits for it) and
// the tasks of frameworks that do not checkpoint go TASK_LOST "Agent
// <host> disconnected" (REASON_AGENT_DISCONNECTED); only after
// UnreachableAfter (a real master: agent_ping_timeout 15 s x
// max_agent_ping_timeouts 5 = 75 s) is it marked unreachable: it leaves
// GET_AGENTS, the tasks of PARTITION_AWARE frameworks go TASK_UNREACHABLE
// "health check timed out" (REASON_AGENT_REMOVED, with unreachable_time)
// and are listed as unreachable, those of other checkpointing frameworks
// go TASK_LOST with the same reason, and every framework gets a FAILURE
// event naming the agent. RestartAgent brings it back, before or after.
func (m *Master) CrashAgent(agentID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[agentID]
	if a == nil || a.poweredOff || a.crashed != nil {
		return fmt.Errorf("mesossim: no running agent %q", agentID)
	}
	for _, id := range sortedOfferIDs(a.offers) {
		m.removeOfferLocked(a.offers[id], true)
	}
	now := time.Now()
	for _, t := range a.sortedTasks() {
		if isTerminal(t.actual) || t.unreachable || t.fw.info.GetCheckpoint() {
			continue
		}
		m.dropTaskLocked(t, mesos.TASK_LOST)
		m.lostUpdateLocked(a, t, mesos.TASK_LOST, mesos.REASON_AGENT_DISCONNECTED, "Agent "+a.spec.Hostname+" disconnected", now)
	}
	a.crashed = m.afterLocked(m.cfg.UnreachableAfter, func() {
		a.crashed = nil
		m.agentGoneLocked(a, true)
	})
	a.recovery = m.afterLocked(m.cfg.AgentRecoveryTimeout, func() {
		// The executors waited long enough for their agent: they end,
		// and a simulated Spark driver among them ends its application.
		a.recovery = nil
		for _, t := range a.sortedTasks() {
			if isTerminal(t.actual) {
				continue
			}
			t.gaveUp = true
			t.cancelTimers()
			if t.spark != nil {
				m.sparkDriverEndedLocked(t.spark)
			}
		}
		m.log.WithField("agent", agentID).Info("the executors of the crashed agent gave up waiting for it")
	})
	m.log.WithFields(logrus.Fields{"agent": agentID, "unreachable_in": m.cfg.UnreachableAfter}).Info("agent process died; disconnected")
	m.kickAllocator()
	return nil
}

// RestartAgent starts a crashed agent again: it re-registers with its id,
// its checkpointed reservations and the executors that survived. Before
// it was marked unreachable its tasks simply run on (a KILL sent meanwhile
// reaches them now); after, the PARTITION_AWARE frameworks get
// TASK_RUNNING "Unreachable agent re-reregistered"
// (REASON_AGENT_REREGISTERED) for their tasks there.
func (m *Master) RestartAgent(agentID string) error {
	m.mu.Lock()
	a := m.agents[agentID]
	if a != nil && a.crashed != nil {
		defer m.mu.Unlock()
		a.crashed.cancel()
		a.crashed = nil
		a.recovery.cancel()
		a.recovery = nil
		a.reregistered = time.Now()
		a.restoreCheckpoint()
		for _, t := range a.sortedTasks() {
			if t.killAfterReturn {
				t.killAfterReturn = false
				m.killTaskLocked(t)
			}
		}
		m.log.WithField("agent", agentID).Info("agent restarted before it was marked unreachable")
		m.kickAllocator()
		return nil
	}
	m.mu.Unlock()
	return m.agentBack(agentID, "agent restarted")
}

// sortedTasks is the agent's tasks by id.
func (a *agent) sortedTasks() []*task {
	tasks := make([]*task, 0, len(a.tasks))
	for t := range a.tasks {
		tasks = append(tasks, t)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].id < tasks[j].id })
	return tasks
}

// lostUpdateLocked sends the master's update about a task of an agent
// that is gone.
func (m *Master) lostUpdateLocked(a *agent, t *task, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string, now time.Time) *mesos.TaskStatus {
	ts := float64(now.UnixNano()) / 1e9
	src := mesos.SOURCE_MASTER
	st := &mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: &state, Source: &src, Reason: &reason,
		Message: strPtr(msg), AgentID: &mesos.AgentID{Value: a.id}, Timestamp: &ts}
	if state == mesos.TASK_UNREACHABLE {
		st.UnreachableTime = timeInfo(now)
	}
	m.sendLocked(t.fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: *cloneStatus(st)}})
	return st
}

// agentGoneLocked marks a disconnected agent unreachable, as a real
// master does after its ping timeouts; with survive its executors live on
// and the unreachable tasks of partition-aware frameworks come back with
// it.
func (m *Master) agentGoneLocked(a *agent, survive bool) {
	for _, id := range sortedOfferIDs(a.offers) {
		m.removeOfferLocked(a.offers[id], true)
	}
	now := time.Now()
	for _, t := range a.sortedTasks() {
		fw := t.fw
		if isTerminal(t.actual) || t.unreachable {
			if !t.unreachable {
				m.removeTaskLocked(t)
			}
			continue
		}
		switch {
		case !fw.info.GetCheckpoint():
			m.dropTaskLocked(t, mesos.TASK_LOST)
			m.lostUpdateLocked(a, t, mesos.TASK_LOST, mesos.REASON_AGENT_DISCONNECTED, "Agent "+a.spec.Hostname+" disconnected", now)
		case fw.partitionAware && survive:
			st := m.lostUpdateLocked(a, t, mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED, "health check timed out", now)
			m.unreachableLocked(t, st)
		case fw.partitionAware:
			m.dropTaskLocked(t, mesos.TASK_UNREACHABLE)
			m.lostUpdateLocked(a, t, mesos.TASK_UNREACHABLE, mesos.REASON_AGENT_REMOVED, "health check timed out", now)
		default:
			m.dropTaskLocked(t, mesos.TASK_LOST)
			m.lostUpdateLocked(a, t, mesos.TASK_LOST, mesos.REASON_AGENT_REMOVED, "health check timed out", now)
		}
	}
	a.used = nil
	// Gone from GET_AGENTS (marked unreachable); its machine runs on, so
	// it is still billed.
	a.poweredOff, a.unreachable, a.offAt = true, true, now
	for _, fw := range m.sortedFrameworksLocked() {
		if fw.connected {
			m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_FAILURE, Failure: &scheduler.Event_Failure{AgentID: &mesos.AgentID{Value: a.id}}})
		}
	}
	m.publishAgentLocked(a, false)
	m.log.WithFields(logrus.Fields{"agent": a.id, "executors_survive": survive}).Info("agent gone (unreachable)")
	m.kickAllocator()
}

// dropTaskLocked forgets a task the master considers ended in state.
func (m *Master) dropTaskLocked(t *task, state mesos.TaskState) {
	t.actual, t.state = state, state
	t.pending = nil
	m.forgetTaskLocked(t)
}

// unreachableLocked parks a task of a partition-aware framework on an
// unreachable agent: its resources are free, its simulated run stops
// until the agent comes back.
func (m *Master) unreachableLocked(t *task, st *mesos.TaskStatus) {
	t.unreachable = true
	if !t.finishAt.IsZero() {
		t.remaining = time.Until(t.finishAt)
	}
	t.cancelTimers()
	t.retry.cancel()
	t.pending = nil
	t.state, t.status = mesos.TASK_UNREACHABLE, st
	t.statuses = append(t.statuses, *cloneStatus(st))
	if !t.released {
		t.released = true
		t.agent.used = t.agent.used.minus(t.res)
	}
}

// agentBack brings a gone agent back: its unreachable tasks run again.
func (m *Master) agentBack(agentID, why string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[agentID]
	if a == nil {
		return fmt.Errorf("mesossim: no agent %q", agentID)
	}
	if !a.poweredOff {
		return nil
	}
	if !a.unreachable || a.booting != nil {
		return fmt.Errorf("mesossim: agent %q did not crash (use PowerOn for a powered-off one)", agentID)
	}
	a.poweredOff, a.unreachable = false, false
	a.recovery.cancel()
	a.recovery = nil
	// Back from unreachable: a real 1.12 master registers it anew, so
	// registered_time moves too (scripts/mesos-agent-crash.sh).
	a.registered = time.Now()
	a.reregistered = a.registered
	a.used = nil
	a.restoreCheckpoint()
	tasks := make([]*task, 0, len(a.tasks))
	for t := range a.tasks {
		if t.unreachable {
			tasks = append(tasks, t)
		}
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].id < tasks[j].id })
	for _, t := range tasks {
		if t.gaveUp {
			// Its executor is gone: the agent reports the task failed.
			m.dropTaskLocked(t, mesos.TASK_FAILED)
			m.lostUpdateLocked(a, t, mesos.TASK_FAILED, mesos.REASON_EXECUTOR_TERMINATED,
				"Executor did not re-register within the recovery timeout", time.Now())
			continue
		}
		t.unreachable, t.released = false, false
		a.used = a.used.plus(t.res)
		running, src, reason := mesos.TASK_RUNNING, mesos.SOURCE_MASTER, mesos.REASON_AGENT_REREGISTERED
		ts := nowSeconds()
		st := &mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: &running, Source: &src, Reason: &reason,
			Message: strPtr("Unreachable agent re-reregistered"), AgentID: &mesos.AgentID{Value: a.id}, Timestamp: &ts}
		for i := len(t.statuses) - 1; i >= 0; i-- {
			if cs := t.statuses[i].ContainerStatus; cs != nil {
				st.ContainerStatus = cs
				break
			}
		}
		t.state, t.status = running, st
		t.statuses = append(t.statuses, *cloneStatus(st))
		m.sendLocked(t.fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: *cloneStatus(st)}})
		if t.killAfterReturn {
			t.killAfterReturn = false
			m.killTaskLocked(t)
			continue
		}
		if t.executor == nil && t.remaining > 0 {
			tt := t
			t.finishAt = time.Now().Add(t.remaining)
			t.timers = append(t.timers, m.afterLocked(t.remaining, func() { m.finishTaskLocked(tt) }))
		}
	}
	m.publishAgentLocked(a, true)
	m.log.WithField("agent", agentID).Info(why)
	m.kickAllocator()
	return nil
}

func (m *Master) dropAgent(agentID string, powerOff bool, reason mesos.TaskStatus_Reason, msg string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a := m.agents[agentID]
	if a == nil || (a.poweredOff && powerOff) {
		return fmt.Errorf("mesossim: no running agent %q", agentID)
	}
	for _, id := range sortedOfferIDs(a.offers) {
		m.removeOfferLocked(a.offers[id], true)
	}
	tasks := make([]*task, 0, len(a.tasks))
	for t := range a.tasks {
		tasks = append(tasks, t)
	}
	sort.Slice(tasks, func(i, j int) bool { return tasks[i].id < tasks[j].id })
	for _, t := range tasks {
		fw := t.fw
		lost := !isTerminal(t.actual)
		m.removeTaskLocked(t)
		if lost {
			state := mesos.TASK_LOST
			if fw.partitionAware {
				state = mesos.TASK_UNREACHABLE
				if reason == mesos.REASON_AGENT_REMOVED_BY_OPERATOR {
					state = mesos.TASK_GONE_BY_OPERATOR
				}
			}
			m.masterUpdateLocked(fw, t.id, a.id, state, reason, msg)
		}
	}
	a.used = nil
	now := time.Now()
	if powerOff {
		a.poweredOff, a.offAt, a.unreachable = true, now, false
		m.billCloseLocked(agentID, now, false)
	} else {
		m.billCloseLocked(agentID, now, true)
		m.activeEndLocked(agentID, now)
		delete(m.agents, agentID)
		for i, id := range m.agentOrder {
			if id == agentID {
				m.agentOrder = append(m.agentOrder[:i], m.agentOrder[i+1:]...)
				break
			}
		}
	}
	m.publishAgentLocked(a, false)
	m.log.WithFields(logrus.Fields{"agent": agentID, "why": msg}).Info("agent gone")
	m.kickAllocator()
	return nil
}

func (m *Master) publishAgentLocked(a *agent, added bool) {
	if len(m.opSubs) == 0 {
		return
	}
	if added {
		f := false
		pid := a.pid(m.agentPort)
		m.publishLocked(&master.Event{Type: master.Event_AGENT_ADDED, AgentAdded: &master.Event_AgentAdded{Agent: master.Response_GetAgents_Agent{
			AgentInfo: m.agentInfoLocked(a), Active: true, Deactivated: &f, Version: Version, PID: &pid,
			RegisteredTime: timeInfo(a.registered), ReregisteredTime: optTimeInfo(a.reregistered), TotalResources: a.total.proto(fmtEndpoint, ""),
			Capabilities: append([]mesos.AgentInfo_Capability(nil), agentCapabilities...)}}})
		return
	}
	m.publishLocked(&master.Event{Type: master.Event_AGENT_REMOVED, AgentRemoved: &master.Event_AgentRemoved{AgentID: a.agentID()}})
}

// FailTask makes a running task fail (TASK_FAILED from its executor).
func (m *Master) FailTask(frameworkID, taskID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.findTaskLocked(frameworkID, taskID)
	if t == nil || isTerminal(t.actual) {
		return fmt.Errorf("mesossim: no live task %q of framework %q", taskID, frameworkID)
	}
	// What the command executor reports for a command that exits 1 (no
	// reason, as on a real agent).
	m.agentUpdateLocked(t, mesos.TASK_FAILED, nil, "Command exited with status 1")
	return nil
}

// FinishTask ends a running task now with TASK_FINISHED.
func (m *Master) FinishTask(frameworkID, taskID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.findTaskLocked(frameworkID, taskID)
	if t == nil || isTerminal(t.actual) {
		return fmt.Errorf("mesossim: no live task %q of framework %q", taskID, frameworkID)
	}
	m.agentUpdateLocked(t, mesos.TASK_FINISHED, nil, "Command exited with status 0")
	return nil
}

func (m *Master) findTaskLocked(frameworkID, taskID string) *task {
	if frameworkID != "" {
		if fw := m.frameworks[frameworkID]; fw != nil {
			return fw.tasks[taskID]
		}
		return nil
	}
	for _, fw := range m.sortedFrameworksLocked() {
		if t := fw.tasks[taskID]; t != nil {
			return t
		}
	}
	return nil
}

// DropConnections closes every scheduler subscription stream, as a network
// failure would. Frameworks must re-subscribe within their failover timeout.
func (m *Master) DropConnections() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, fw := range m.sortedFrameworksLocked() {
		if fw.stream != nil {
			fw.stream.close()
			m.disconnectLocked(fw)
		}
	}
	m.log.Info("dropped all scheduler connections")
}

// Restart simulates a master failover: every stream (scheduler and
// operator) ends, outstanding offers vanish, and for downtime the API
// answers 503. Agents, tasks, reservations and quotas are kept (recovered
// from the agents and the registry, as a new leading master does);
// frameworks stay registered until they re-subscribe with their id.
func (m *Master) Restart(downtime time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, fw := range m.sortedFrameworksLocked() {
		if fw.spark != nil {
			continue
		}
		fw.recovered = true
		fw.failover.cancel()
		if fw.stream != nil {
			fw.stream.close()
		}
		fw.stream = nil
		fw.connected = false
		for _, o := range fw.offers {
			m.removeOfferLocked(o, false)
		}
		fw.filters = nil
		fw.suppressed = map[string]bool{}
	}
	for s := range m.opSubs {
		s.close()
		delete(m.opSubs, s)
	}
	m.unavailUntil = time.Now().Add(downtime)
	m.log.WithField("downtime", downtime).Info("master restarted")
}

// ---- snapshots for tests and tools ----

// ReservationInfo is one reservation on an agent.
type ReservationInfo struct {
	AgentID   string
	Role      string
	Principal string
	Labels    map[string]string
	CPUs      float64
	MemMB     float64
	DiskMB    float64
}

// AgentInfo is a snapshot of a simulated agent.
type AgentInfo struct {
	ID         string
	Hostname   string
	PoweredOff bool
	// Booting: powered on, not registered again yet.
	Booting bool
	// Deactivated by DEACTIVATE_AGENT or DRAIN_AGENT.
	Deactivated bool
	Attributes  map[string]string
	CPUs        float64 // total
	MemMB       float64
	UsedCPUs    float64 // by tasks
	UsedMemMB   float64
	Offered     string // resources in outstanding offers (Mesos notation)
	Total       string // total resources with reservations (Mesos notation)
	Tasks       int
}

// TaskInfo is a snapshot of a task the master knows.
type TaskInfo struct {
	FrameworkID string
	TaskID      string
	Name        string
	AgentID     string
	Role        string
	State       mesos.TaskState // the master's view
	Resources   string          // Mesos notation
	// ReservedCPUs/UnreservedCPUs split the task's cpus by reservation.
	ReservedCPUs   float64
	UnreservedCPUs float64
	// SparkDriver is set when the task is a simulated Spark driver;
	// SparkExecutor when it is an executor of one (the driver's task id).
	SparkDriver   bool
	SparkExecutor string
}

// FrameworkInfo is a snapshot of a framework.
type FrameworkInfo struct {
	ID        string
	Name      string
	Roles     []string
	Connected bool
	Simulated bool // a simulated Spark framework
	Tasks     int
	Offers    int
	StreamID  string
}

// Agents returns all agents (including powered-off ones), sorted by id.
func (m *Master) Agents() []AgentInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []AgentInfo
	for _, a := range m.sortedAgentsLocked() {
		out = append(out, AgentInfo{
			ID: a.id, Hostname: a.spec.Hostname, PoweredOff: a.poweredOff, Booting: a.booting != nil, Deactivated: a.deactivated,
			Attributes: a.spec.AllAttributes(),
			CPUs:       fromMilli(a.total.scalar("cpus")), MemMB: fromMilli(a.total.scalar("mem")),
			UsedCPUs: fromMilli(a.used.scalar("cpus")), UsedMemMB: fromMilli(a.used.scalar("mem")),
			Offered: a.offered.String(), Total: a.total.String(), Tasks: len(a.tasks),
		})
	}
	return out
}

// Reservations returns every dynamic reservation the agents hold, sorted
// by agent and role. A disconnected agent holds what it checkpointed: an
// operator's change taken (202) while it is away shows in GET_AGENTS but
// never reaches it, and it comes back with its checkpoint. So a leak
// check (the chaos suite's /sim/reservations) does not miss a reservation
// a release "gave back" while the agent was away.
func (m *Master) Reservations() []ReservationInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ReservationInfo
	for _, a := range m.sortedAgentsLocked() {
		type key struct{ role, principal, labels string }
		groups := map[key]*ReservationInfo{}
		var keys []key
		held := a.total
		if a.disconnected() && a.checkpointSet {
			held = a.checkpoint
		}
		for _, e := range held {
			if !e.k.reserved() || e.ranges {
				continue
			}
			k := key{e.k.role, e.k.principal, e.k.labels}
			r := groups[k]
			if r == nil {
				r = &ReservationInfo{AgentID: a.id, Role: e.k.role, Principal: e.k.principal, Labels: map[string]string{}}
				if l := decodeLabels(e.k.labels); l != nil {
					for _, x := range l.Labels {
						r.Labels[x.Key] = x.GetValue()
					}
				}
				groups[k] = r
				keys = append(keys, k)
			}
			switch e.k.name {
			case "cpus":
				r.CPUs += fromMilli(e.v)
			case "mem":
				r.MemMB += fromMilli(e.v)
			case "disk":
				r.DiskMB += fromMilli(e.v)
			}
		}
		for _, k := range keys {
			out = append(out, *groups[k])
		}
	}
	return out
}

// Launches returns how many times each task was launched, by
// "frameworkID/taskID" (a framework that launches a task id twice shows
// a count above 1).
func (m *Master) Launches() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]int, len(m.launches))
	for k, v := range m.launches {
		out[k] = v
	}
	return out
}

// Tasks returns the tasks the master knows (live ones and terminal ones
// whose last update is not acknowledged yet), sorted by framework and id.
func (m *Master) Tasks() []TaskInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []TaskInfo
	for _, fw := range m.sortedFrameworksLocked() {
		ids := make([]string, 0, len(fw.tasks))
		for id := range fw.tasks {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			t := fw.tasks[id]
			ti := TaskInfo{FrameworkID: fw.id, TaskID: t.id, Name: t.info.Name, AgentID: t.agent.id, Role: t.role,
				State: t.state, Resources: t.res.String(),
				UnreservedCPUs: fromMilli(t.res.unreserved().scalar("cpus")),
				SparkDriver:    t.spark != nil}
			ti.ReservedCPUs = fromMilli(t.res.scalar("cpus")) - ti.UnreservedCPUs
			if t.executor != nil {
				ti.SparkExecutor = t.executor.driver.id
			}
			out = append(out, ti)
		}
	}
	return out
}

// Frameworks returns the registered frameworks, sorted by id.
func (m *Master) Frameworks() []FrameworkInfo {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []FrameworkInfo
	for _, fw := range m.sortedFrameworksLocked() {
		fi := FrameworkInfo{ID: fw.id, Name: fw.info.Name, Roles: append([]string(nil), fw.roles...),
			Connected: fw.connected, Simulated: fw.spark != nil, Tasks: len(fw.tasks), Offers: len(fw.offers)}
		if fw.stream != nil {
			fi.StreamID = fw.stream.id
		}
		out = append(out, fi)
	}
	return out
}

// Quotas returns the quota limits per role (Mesos notation, "" if none).
func (m *Master) Quotas() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]string{}
	for r, q := range m.quotas {
		out[r] = fmtQuotaMap(q.limits, 0)
	}
	return out
}
