package mesossim

import (
	"fmt"
	"sort"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// acceptLocked applies an ACCEPT: offers are validated, then the operations
// are applied in order against the pooled offer resources, each validated
// on its own; invalid ones are dropped (with OPERATION_ERROR if they carry an
// id, TASK_ERROR for tasks). Unused resources are declined with the
// ACCEPT's filters.
func (m *Master) acceptLocked(fw *framework, a *scheduler.Call_Accept) {
	var offers []*offer
	invalid := ""
	seen := map[string]bool{}
	if len(a.OfferIDs) == 0 {
		invalid = "No offers specified"
	}
	for _, id := range a.OfferIDs {
		o := m.offers[id.Value]
		if o == nil || o.fw != fw {
			if invalid == "" {
				invalid = fmt.Sprintf("Offer %s is no longer valid", id.Value)
			}
			continue
		}
		if seen[o.id] {
			if invalid == "" {
				invalid = fmt.Sprintf("Offer %s is duplicated", o.id)
			}
			continue
		}
		seen[o.id] = true
		offers = append(offers, o)
	}
	if invalid == "" {
		for _, o := range offers[1:] {
			if o.agent != offers[0].agent {
				invalid = "Aggregated offers must belong to one single agent"
				break
			}
			if o.role != offers[0].role {
				invalid = "Aggregated offers must be allocated to the same role"
				break
			}
		}
	}
	var pool Res
	for _, o := range offers {
		pool = pool.plus(o.res)
		m.removeOfferLocked(o, false)
	}
	if invalid != "" {
		m.log.WithFields(logrus.Fields{"framework": fw.id, "reason": invalid}).Info("ACCEPT with invalid offers")
		for i := range a.Operations {
			op := &a.Operations[i]
			if op.ID != nil {
				m.operationErrorLocked(fw, op.ID.Value, "Operation attempted with invalid offers: "+invalid)
			}
			for _, ti := range launchTasks(op) {
				state := mesos.TASK_LOST
				if fw.partitionAware {
					state = mesos.TASK_DROPPED
				}
				m.masterUpdateLocked(fw, ti.TaskID.Value, "", state, mesos.REASON_INVALID_OFFERS,
					"Task launched with invalid offers: "+invalid)
			}
		}
		m.kickAllocator()
		return
	}
	ag := offers[0].agent
	role := offers[0].role
	for i := range a.Operations {
		op := &a.Operations[i]
		switch op.Type {
		case mesos.Offer_Operation_RESERVE:
			m.applyReserveLocked(fw, ag, role, &pool, op, true)
		case mesos.Offer_Operation_UNRESERVE:
			m.applyReserveLocked(fw, ag, role, &pool, op, false)
		case mesos.Offer_Operation_LAUNCH, mesos.Offer_Operation_LAUNCH_GROUP:
			m.applyLaunchLocked(fw, ag, role, &pool, op)
		default:
			msg := fmt.Sprintf("Operation %s is not supported by the emulator", op.Type)
			m.log.WithField("framework", fw.id).Warn(msg)
			if op.ID != nil {
				m.operationErrorLocked(fw, op.ID.Value, msg)
			}
		}
	}
	if !pool.isEmpty() {
		m.addFilterLocked(fw, role, ag.id, pool, a.Filters)
	}
	m.kickAgentLocked(ag)
}

func launchTasks(op *mesos.Offer_Operation) []mesos.TaskInfo {
	switch {
	case op.Type == mesos.Offer_Operation_LAUNCH && op.Launch != nil:
		return op.Launch.TaskInfos
	case op.Type == mesos.Offer_Operation_LAUNCH_GROUP && op.LaunchGroup != nil:
		return op.LaunchGroup.TaskGroup.Tasks
	}
	return nil
}

func rolesString(roles []string) string {
	s := append([]string(nil), roles...)
	sort.Strings(s)
	return "{ " + strings.Join(s, ", ") + " }"
}

// applyReserveLocked validates and applies one RESERVE (reserve=true) or
// UNRESERVE operation of an ACCEPT.
func (m *Master) applyReserveLocked(fw *framework, ag *agent, offerRole string, pool *Res, op *mesos.Offer_Operation, reserve bool) {
	kind := "RESERVE"
	var in []mesos.Resource
	if reserve {
		if op.Reserve != nil {
			in = op.Reserve.Resources
		}
	} else {
		kind = "UNRESERVE"
		if op.Unreserve != nil {
			in = op.Unreserve.Resources
		}
	}
	fail := func(msg string) {
		msg += "; on agent " + ag.describe(m.agentPort)
		m.log.WithFields(logrus.Fields{"framework": fw.id, "agent": ag.id}).Infof("Dropping %s operation: %s", kind, msg)
		if op.ID != nil {
			m.operationErrorLocked(fw, op.ID.Value, msg)
		}
	}
	p, err := parseResources(in)
	if err != nil {
		fail(fmt.Sprintf("Invalid %s Operation: %v", kind, err))
		return
	}
	if len(in) == 0 || p.res.isEmpty() {
		fail(fmt.Sprintf("Invalid %s Operation: no resources specified", kind))
		return
	}
	allocRole := p.allocRole
	if allocRole == "\x00" {
		fail(fmt.Sprintf("Invalid %s Operation: resources are allocated to different roles", kind))
		return
	}
	if allocRole == "" {
		allocRole = offerRole
	}
	if !fw.hasRole(allocRole) {
		fail(fmt.Sprintf("A %s operation was attempted for a resource allocated to role '%s', but the framework only has roles '%s'",
			strings.ToLower(kind), allocRole, rolesString(fw.roles)))
		return
	}
	for _, e := range p.res {
		if !e.k.reserved() || p.static {
			fail(fmt.Sprintf("Invalid %s Operation: Resource %s is not dynamically reserved", kind, Res{e}))
			return
		}
		if e.k.role != allocRole {
			fail(fmt.Sprintf("A %s operation was attempted for a resource with role '%s', but the resource was allocated to role '%s'",
				strings.ToLower(kind), e.k.role, allocRole))
			return
		}
		if fw.info.Principal != nil && e.k.principal != "" && e.k.principal != fw.info.GetPrincipal() && reserve {
			fail(fmt.Sprintf("A reserve operation was attempted by principal '%s', but there is a reserved resource in the request with principal '%s' set in `ReservationInfo`",
				fw.info.GetPrincipal(), e.k.principal))
			return
		}
	}
	if allocRole != offerRole {
		fail(fmt.Sprintf("Invalid %s Operation: resources are allocated to role '%s' but the offers to role '%s'", kind, allocRole, offerRole))
		return
	}
	plain := p.res.stripReservations()
	if reserve {
		if !pool.unreserved().contains(plain) {
			fail(fmt.Sprintf("Invalid RESERVE Operation: %s does not contain %s", *pool, plain))
			return
		}
		*pool = pool.minus(plain).plus(p.res)
		ag.total = ag.total.minus(plain).plus(p.res)
	} else {
		if !pool.contains(p.res) {
			fail(fmt.Sprintf("Invalid UNRESERVE Operation: %s does not contain %s", *pool, p.res))
			return
		}
		*pool = pool.minus(p.res).plus(plain)
		ag.total = ag.total.minus(p.res).plus(plain)
	}
	m.activeCheckLocked(ag)
	m.log.WithFields(logrus.Fields{"framework": fw.id, "agent": ag.id}).Infof("applied %s of %s", kind, p.res)
	if op.ID != nil {
		m.operationFinishedLocked(fw, op.ID.Value, ag)
	}
}

// applyLaunchLocked validates and launches the tasks of a LAUNCH or
// LAUNCH_GROUP operation.
func (m *Master) applyLaunchLocked(fw *framework, ag *agent, offerRole string, pool *Res, op *mesos.Offer_Operation) {
	tasks := launchTasks(op)
	taskErr := func(ti *mesos.TaskInfo, msg string) {
		m.log.WithFields(logrus.Fields{"framework": fw.id, "task": ti.TaskID.Value}).Info("invalid task: " + msg)
		m.masterUpdateLocked(fw, ti.TaskID.Value, ag.id, mesos.TASK_ERROR, mesos.REASON_TASK_INVALID, msg)
	}
	if op.ID != nil {
		for i := range tasks {
			taskErr(&tasks[i], "The `id` field is not supported for LAUNCH and LAUNCH_GROUP operations")
		}
		return
	}
	group := op.Type == mesos.Offer_Operation_LAUNCH_GROUP
	var execRes Res
	if group {
		if op.LaunchGroup == nil {
			return
		}
		ex := op.LaunchGroup.Executor
		p, err := parseResources(ex.Resources)
		msg := ""
		switch {
		case err != nil:
			msg = "Executor uses invalid resources: " + err.Error()
		case ex.ExecutorID.Value == "":
			msg = "Executor ID must not be empty"
		case p.allocRole != "" && p.allocRole != offerRole:
			msg = fmt.Sprintf("Executor resources are allocated to role '%s' but the offers to role '%s'", p.allocRole, offerRole)
		}
		if msg != "" {
			for i := range tasks {
				taskErr(&tasks[i], msg)
			}
			return
		}
		execRes = p.res
	}
	type prepared struct {
		ti  *mesos.TaskInfo
		res Res
	}
	var ok []prepared
	total := execRes
	errs := map[int]string{}
	ids := map[string]bool{}
	for i := range tasks {
		ti := &tasks[i]
		p, err := parseResources(ti.Resources)
		var msg string
		switch {
		case ti.TaskID.Value == "":
			msg = "Task ID must not be empty"
		case ids[ti.TaskID.Value] || fw.tasks[ti.TaskID.Value] != nil:
			msg = fmt.Sprintf("Task has duplicate ID: %s", ti.TaskID.Value)
		case ti.AgentID.Value != ag.id:
			msg = fmt.Sprintf("Task uses invalid agent: %s", ti.AgentID.Value)
		case err != nil:
			msg = "Task uses invalid resources: " + err.Error()
		case p.res.isEmpty():
			msg = "Task uses no resources"
		case p.allocRole != "" && p.allocRole != offerRole:
			msg = fmt.Sprintf("Task resources are allocated to role '%s' but the offers to role '%s'", p.allocRole, offerRole)
		case !group && (ti.Command == nil) == (ti.Executor == nil):
			msg = "Task should have at least one (but not both) of CommandInfo or ExecutorInfo present"
		case group && ti.Executor != nil:
			msg = "'TaskInfo.executor' must not be set"
		}
		ids[ti.TaskID.Value] = true
		if msg != "" {
			errs[i] = msg
			continue
		}
		res := p.res
		if !group && ti.Executor != nil {
			if ep, err := parseResources(ti.Executor.Resources); err == nil {
				res = res.plus(ep.res)
			}
		}
		total = total.plus(res)
		ok = append(ok, prepared{ti, res})
	}
	if !pool.contains(total) {
		msg := fmt.Sprintf("Task uses more resources %s than available %s", total, *pool)
		for i := range tasks {
			if _, bad := errs[i]; !bad {
				errs[i] = msg
			}
		}
		ok = nil
	}
	if group && len(errs) > 0 {
		for i := range tasks {
			if msg, bad := errs[i]; bad {
				taskErr(&tasks[i], msg)
			} else {
				taskErr(&tasks[i], "Task group is invalid")
			}
		}
		return
	}
	for i := range tasks {
		if msg, bad := errs[i]; bad {
			taskErr(&tasks[i], msg)
		}
	}
	for n, pr := range ok {
		res := pr.res
		if group && n == 0 {
			res = res.plus(execRes) // the executor's share rides with the first task
		}
		*pool = pool.minus(res)
		execID := pr.ti.TaskID.Value
		if group {
			execID = op.LaunchGroup.Executor.ExecutorID.Value
		} else if pr.ti.Executor != nil {
			execID = pr.ti.Executor.ExecutorID.Value
		}
		t := &task{
			id:          pr.ti.TaskID.Value,
			fw:          fw,
			agent:       ag,
			info:        *pr.ti,
			res:         res,
			role:        offerRole,
			executorID:  execID,
			containerID: newUUID(),
			executorPID: uint32(10000 + m.rng.Intn(50000)),
			launched:    time.Now(),
			state:       mesos.TASK_STAGING,
			actual:      mesos.TASK_STAGING,
		}
		m.launchTaskLocked(t)
	}
}

// operationErrorLocked sends OPERATION_ERROR for a dropped operation. Like
// the real master it carries neither uuid nor agent id and needs no ack.
func (m *Master) operationErrorLocked(fw *framework, opID, msg string) {
	st := mesos.OperationStatus{OperationID: &mesos.OperationID{Value: opID}, State: mesos.OPERATION_ERROR, Message: &msg}
	m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE_OPERATION_STATUS,
		UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{Status: st}})
}

// operationFinishedLocked sends OPERATION_FINISHED, re-sent until acked.
func (m *Master) operationFinishedLocked(fw *framework, opID string, ag *agent) {
	op := &opStatus{opID: opID, agentID: ag.id, uuid: newUUIDBytes(), state: mesos.OPERATION_FINISHED,
		delay: m.cfg.StatusUpdateRetry}
	fw.opUpdates = append(fw.opUpdates, op)
	m.sendOperationLocked(fw, op)
	m.scheduleOpRetryLocked(fw, op)
}

func (m *Master) sendOperationLocked(fw *framework, op *opStatus) {
	st := mesos.OperationStatus{OperationID: &mesos.OperationID{Value: op.opID}, State: op.state,
		UUID: &mesos.UUID{Value: append([]byte(nil), op.uuid...)}, AgentID: &mesos.AgentID{Value: op.agentID}}
	m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE_OPERATION_STATUS,
		UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{Status: st}})
}

func (m *Master) scheduleOpRetryLocked(fw *framework, op *opStatus) {
	op.retry = m.afterLocked(op.delay, func() {
		for _, x := range fw.opUpdates {
			if x == op && !fw.removed {
				m.sendOperationLocked(fw, op)
				op.delay *= 2
				if op.delay > m.cfg.StatusUpdateRetryMax {
					op.delay = m.cfg.StatusUpdateRetryMax
				}
				m.scheduleOpRetryLocked(fw, op)
				return
			}
		}
	})
}

func (m *Master) ackOperationLocked(fw *framework, a *scheduler.Call_AcknowledgeOperationStatus) {
	for i, op := range fw.opUpdates {
		if string(op.uuid) == string(a.UUID) {
			op.retry.cancel()
			fw.opUpdates = append(fw.opUpdates[:i], fw.opUpdates[i+1:]...)
			return
		}
	}
}

// reconcileOperationsLocked answers with the latest state of the operations
// still awaiting acknowledgement; unknown operations are OPERATION_UNKNOWN.
func (m *Master) reconcileOperationsLocked(fw *framework, c *scheduler.Call_ReconcileOperations) {
	send := func(opID string, state mesos.OperationState, agentID string) {
		st := mesos.OperationStatus{OperationID: &mesos.OperationID{Value: opID}, State: state}
		if agentID != "" {
			st.AgentID = &mesos.AgentID{Value: agentID}
		}
		m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE_OPERATION_STATUS,
			UpdateOperationStatus: &scheduler.Event_UpdateOperationStatus{Status: st}})
	}
	if len(c.Operations) == 0 {
		for _, op := range fw.opUpdates {
			send(op.opID, op.state, op.agentID)
		}
		return
	}
	for _, want := range c.Operations {
		found := false
		for _, op := range fw.opUpdates {
			if op.opID == want.OperationID.Value {
				send(op.opID, op.state, op.agentID)
				found = true
				break
			}
		}
		if !found {
			aid := ""
			if want.AgentID != nil {
				aid = want.AgentID.Value
			}
			send(want.OperationID.Value, mesos.OPERATION_UNKNOWN, aid)
		}
	}
}
