package mesossim

// The operator API's state calls as the master renders them: GET_AGENTS,
// GET_FRAMEWORKS, GET_TASKS, GET_STATE, GET_ROLES.

import (
	"sort"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/master"
)

var agentCapabilities = []mesos.AgentInfo_Capability{
	{Type: mesos.AgentInfo_Capability_MULTI_ROLE},
	{Type: mesos.AgentInfo_Capability_HIERARCHICAL_ROLE},
	{Type: mesos.AgentInfo_Capability_RESERVATION_REFINEMENT},
	{Type: mesos.AgentInfo_Capability_RESOURCE_PROVIDER},
	{Type: mesos.AgentInfo_Capability_RESIZE_VOLUME},
	{Type: mesos.AgentInfo_Capability_AGENT_OPERATION_FEEDBACK},
	{Type: mesos.AgentInfo_Capability_AGENT_DRAINING},
	{Type: mesos.AgentInfo_Capability_TASK_RESOURCE_LIMITS},
}

func (m *Master) agentInfoLocked(a *agent) mesos.AgentInfo {
	if a.info == nil {
		// An agent's info never changes: built once (GET_AGENTS lists
		// every agent, and a cluster may have tens of thousands).
		host := a.spec.Hostname
		port := int32(m.agentPort)
		a.info = &mesos.AgentInfo{
			Hostname:   host,
			Port:       &port,
			Resources:  a.base.proto(fmtBare, ""),
			Attributes: append([]mesos.Attribute(nil), a.attrs...),
			ID:         &mesos.AgentID{Value: a.id},
		}
	}
	return *a.info // callers only read it
}

// totalProto renders the agent's total resources, again only when
// they changed (Res values are never modified in place: a change is a new
// slice).
func (a *agent) totalProto() []mesos.Resource {
	if len(a.total) == 0 || len(a.totalSrc) != len(a.total) || &a.totalSrc[0] != &a.total[0] {
		a.totalSrc, a.totalPB = a.total, a.total.proto(fmtEndpoint, "")
	}
	return a.totalPB
}

// allocatedByRole returns the resources of the agent's tasks per role.
func allocatedByRole(a *agent) map[string]Res {
	out := map[string]Res{}
	for t := range a.tasks {
		if !t.released {
			out[t.role] = out[t.role].plus(t.res)
		}
	}
	return out
}

func protoByRole(byRole map[string]Res) []mesos.Resource {
	roles := make([]string, 0, len(byRole))
	for r := range byRole {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	var out []mesos.Resource
	for _, r := range roles {
		out = append(out, byRole[r].proto(fmtEndpoint, r)...)
	}
	return out
}

func (m *Master) getAgentsLocked() *master.Response_GetAgents {
	ga := &master.Response_GetAgents{}
	now := time.Now()
	m.markUnreachableLocked(now)
	for _, a := range m.sortedAgentsLocked() {
		if !m.listedLocked(a, now) {
			continue
		}
		m.updateDrainLocked(a)
		deactivated := a.deactivated
		pid := a.pid(m.agentPort)
		offered := map[string]Res{}
		for _, o := range a.offers {
			offered[o.role] = offered[o.role].plus(o.res)
		}
		ga.Agents = append(ga.Agents, master.Response_GetAgents_Agent{
			AgentInfo:          m.agentInfoLocked(a),
			Active:             !a.poweredOff && !a.deactivated && a.crashed == nil,
			Deactivated:        &deactivated,
			DrainInfo:          cloneDrain(a.drain),
			Version:            Version,
			PID:                &pid,
			RegisteredTime:     timeInfo(a.registered),
			ReregisteredTime:   optTimeInfo(a.reregistered),
			TotalResources:     a.totalProto(),
			AllocatedResources: protoByRole(allocatedByRole(a)),
			OfferedResources:   protoByRole(offered),
			Capabilities:       append([]mesos.AgentInfo_Capability(nil), agentCapabilities...),
		})
	}
	return ga
}

func (m *Master) frameworkProtoLocked(fw *framework) master.Response_GetFrameworks_Framework {
	fi := fw.info
	out := master.Response_GetFrameworks_Framework{
		FrameworkInfo:    fi,
		Active:           fw.connected && !fw.removed,
		Connected:        fw.connected && !fw.removed,
		Recovered:        fw.recovered,
		RegisteredTime:   timeInfo(fw.registered),
		ReregisteredTime: timeInfo(fw.reregistered),
	}
	if fw.removed {
		out.UnregisteredTime = timeInfo(fw.unregistered)
		return out
	}
	alloc := map[string]Res{}
	for _, t := range fw.tasks {
		if !t.released {
			alloc[t.role] = alloc[t.role].plus(t.res)
		}
	}
	offered := map[string]Res{}
	for _, id := range sortedOfferIDs(fw.offers) {
		o := fw.offers[id]
		out.Offers = append(out.Offers, m.offerProtoLocked(o, fmtRefined, false))
		offered[o.role] = offered[o.role].plus(o.res)
	}
	out.AllocatedResources = protoByRole(alloc)
	out.OfferedResources = protoByRole(offered)
	return out
}

func (m *Master) getFrameworksLocked() *master.Response_GetFrameworks {
	gf := &master.Response_GetFrameworks{}
	for _, fw := range m.sortedFrameworksLocked() {
		if fw.spark != nil && !fw.connected {
			continue
		}
		gf.Frameworks = append(gf.Frameworks, m.frameworkProtoLocked(fw))
	}
	for _, fw := range m.completed {
		gf.CompletedFrameworks = append(gf.CompletedFrameworks, m.frameworkProtoLocked(fw))
	}
	return gf
}

// taskProtoLocked renders a task as the operator API shows it: resources
// in the post-refinement format with their allocation role, every status
// update forwarded so far, and the TaskInfo fields the master keeps.
func (m *Master) taskProtoLocked(t *task) mesos.Task {
	state := t.state
	out := mesos.Task{
		Name:        t.info.Name,
		TaskID:      mesos.TaskID{Value: t.id},
		FrameworkID: mesos.FrameworkID{Value: t.fw.id},
		AgentID:     mesos.AgentID{Value: t.agent.id},
		State:       &state,
		Resources:   t.res.proto(fmtRefined, t.role),
		Labels:      t.info.Labels,
		Discovery:   t.info.Discovery,
		Container:   t.info.Container,
		HealthCheck: t.info.HealthCheck,
		KillPolicy:  t.info.KillPolicy,
	}
	if t.info.Executor != nil {
		out.ExecutorID = &mesos.ExecutorID{Value: t.executorID}
	}
	for i := range t.statuses {
		out.Statuses = append(out.Statuses, *cloneStatus(&t.statuses[i]))
	}
	if t.status != nil {
		s := t.status.GetState()
		out.StatusUpdateState = &s
		out.StatusUpdateUUID = append([]byte(nil), t.status.UUID...)
	}
	return out
}

// getTasksLocked lists the tasks of the registered frameworks (live, and
// ended but not yet acknowledged) and their completed tasks, as the real
// master does; the completed tasks of completed (removed) frameworks too
// when completedFrameworks is set. A real 1.12 master lists those in its
// JSON answer only: its protobuf GET_TASKS (and GET_STATE) keeps a
// completed framework only if the caller may not view it, so without an
// authorizer never (serializeGetTasks in src/master/readonly_handler.cpp;
// seen in integration/realmesos' TestE2EStrayReservationOfARunningJobIsDropped).
func (m *Master) getTasksLocked(completedFrameworks bool) *master.Response_GetTasks {
	gt := &master.Response_GetTasks{}
	for _, fw := range m.sortedFrameworksLocked() {
		ids := make([]string, 0, len(fw.tasks))
		for id := range fw.tasks {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			t := fw.tasks[id]
			if t.unreachable {
				gt.UnreachableTasks = append(gt.UnreachableTasks, m.taskProtoLocked(t))
				continue
			}
			gt.Tasks = append(gt.Tasks, m.taskProtoLocked(t))
		}
		for _, t := range fw.completedTasks {
			gt.CompletedTasks = append(gt.CompletedTasks, m.taskProtoLocked(t))
		}
	}
	if !completedFrameworks {
		return gt
	}
	for _, fw := range m.completed {
		for _, t := range fw.completedTasks {
			gt.CompletedTasks = append(gt.CompletedTasks, m.taskProtoLocked(t))
		}
	}
	return gt
}

// getStateLocked is GET_STATE's answer; completedFrameworks as for
// getTasksLocked (true in JSON, false in protobuf).
func (m *Master) getStateLocked(completedFrameworks bool) *master.Response_GetState {
	return &master.Response_GetState{
		GetTasks:      m.getTasksLocked(completedFrameworks),
		GetExecutors:  &master.Response_GetExecutors{},
		GetFrameworks: m.getFrameworksLocked(),
		GetAgents:     m.getAgentsLocked(),
	}
}

func (m *Master) getRolesLocked() *master.Response_GetRoles {
	names := map[string]bool{}
	for _, fw := range m.frameworks {
		if fw.connected || !fw.removed {
			for _, r := range fw.roles {
				names[r] = true
			}
		}
	}
	for _, a := range m.agents {
		for _, e := range a.total {
			if e.k.reserved() {
				names[e.k.role] = true
			}
		}
	}
	for r := range m.quotas {
		names[r] = true
	}
	sorted := make([]string, 0, len(names))
	for r := range names {
		sorted = append(sorted, r)
	}
	sort.Strings(sorted)
	gr := &master.Response_GetRoles{}
	for _, r := range sorted {
		role := mesos.Role{Name: r, Weight: 1}
		for _, fw := range m.sortedFrameworksLocked() {
			if fw.hasRole(r) {
				role.Frameworks = append(role.Frameworks, mesos.FrameworkID{Value: fw.id})
			}
		}
		var used Res
		for _, a := range m.agents {
			for t := range a.tasks {
				if !t.released && t.role == r {
					used = used.plus(t.res.stripReservations())
				}
			}
			for _, o := range a.offers {
				if o.role == r {
					used = used.plus(o.res.stripReservations())
				}
			}
		}
		used = used.filter(func(k rkey) bool { return k.name != "ports" })
		role.Resources = used.proto(fmtBare, "")
		gr.Roles = append(gr.Roles, role)
	}
	return gr
}
