package mesossim

import (
	"bytes"
	"path"
	"sort"
	"strconv"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/sirupsen/logrus"
)

// launchTaskLocked starts a validated task on its agent: TASK_STARTING and
// TASK_RUNNING after TaskStartDelay, then a terminal update after the task's
// simulated duration.
func (m *Master) launchTaskLocked(t *task) {
	ag := t.agent
	ag.used = ag.used.plus(t.res)
	ag.tasks[t] = true
	t.fw.tasks[t.id] = t
	m.activeCheckLocked(ag)
	m.launches[t.fw.id+"/"+t.id]++
	m.log.WithFields(logrus.Fields{"framework": t.fw.id, "task": t.id, "agent": ag.id, "resources": t.res.String()}).Info("task launched")
	m.publishTaskLocked(t)
	if job := m.sparkDriverFor(t); job != nil {
		t.spark = job
	}
	dur := m.taskDurationLocked(t)
	wall := time.Duration(float64(dur) * m.cfg.TimeScale)
	t.timers = append(t.timers, m.afterLocked(m.cfg.TaskStartDelay, func() {
		if t.actual != mesos.TASK_STAGING {
			return
		}
		// The command and default executors say TASK_STARTING first; a
		// custom executor (mesos-go's example executor, for one) goes
		// straight to TASK_RUNNING.
		if !t.customExecutor() {
			m.agentUpdateLocked(t, mesos.TASK_STARTING, nil, "")
		}
		m.agentUpdateLocked(t, mesos.TASK_RUNNING, nil, "")
		m.sandboxTaskStartedLocked(t)
		if t.spark != nil {
			m.sparkDriverRunningLocked(t.spark)
		}
		if t.executor != nil {
			return // executors run until their driver kills them
		}
		if t.spark != nil && m.cfg.PerfTruth != nil {
			return // timed once its executors are there (sparktruth.go)
		}
		t.finishAt = time.Now().Add(wall)
		t.timers = append(t.timers, m.afterLocked(wall, func() { m.finishTaskLocked(t) }))
	}))
}

// customExecutor: the task was launched with its own ExecutorInfo (not a
// task group, whose default executor behaves like the command executor).
func (t *task) customExecutor() bool {
	return t.info.Executor != nil && t.info.Executor.GetType() != mesos.ExecutorInfo_DEFAULT
}

// taskDurationLocked returns the simulated duration of a task: the
// DurationLabel, else Config.DurationFunc, else the N of a command that is
// just "sleep N" (as third-party frameworks such as mesos-execute send),
// else DefaultTaskDuration.
func (m *Master) taskDurationLocked(t *task) time.Duration {
	if t.info.Labels != nil {
		for _, l := range t.info.Labels.Labels {
			if l.Key == DurationLabel {
				if f, err := strconv.ParseFloat(l.GetValue(), 64); err == nil && f >= 0 && f < 1e9 {
					return time.Duration(f * float64(time.Second))
				}
			}
		}
	}
	if m.cfg.DurationFunc != nil {
		if d := m.cfg.DurationFunc(&t.info, t.agent.spec); d >= 0 {
			return d
		}
	}
	w := commandWords(t.info.Command)
	if c := t.info.Command; c != nil && c.Shell != nil && !*c.Shell && len(c.Arguments) > 0 {
		w = c.Arguments // argv: arguments[0] is the program's name
	}
	if len(w) == 2 && path.Base(w[0]) == "sleep" {
		if f, err := strconv.ParseFloat(w[1], 64); err == nil && f >= 0 && f < 1e9 {
			return time.Duration(f * float64(time.Second))
		}
	}
	return m.cfg.DefaultTaskDuration
}

// ExitCodeLabel is the task label that sets the exit status of a task's
// simulated command: a non-zero status ends it TASK_FAILED, as the command
// executor reports a command that exits that way.
const ExitCodeLabel = "sparkpack.sim/exit-code"

// exitCodeLocked is the task's simulated exit status (ExitCodeLabel).
func exitCode(info *mesos.TaskInfo) int {
	if info.Labels != nil {
		for _, l := range info.Labels.Labels {
			if l.Key == ExitCodeLabel {
				if n, err := strconv.Atoi(l.GetValue()); err == nil && n >= 0 && n < 256 {
					return n
				}
			}
		}
	}
	return 0
}

// finishTaskLocked ends a task normally (or as its ExitCodeLabel says),
// or with a failure or a loss under fault injection. The texts are the
// command executor's; a failed command carries no reason.
func (m *Master) finishTaskLocked(t *task) {
	if isTerminal(t.actual) {
		return
	}
	code := exitCode(&t.info)
	if t.spark != nil && code == 0 {
		code = sparkExitCode(t.info.Command)
	}
	if code != 0 {
		m.agentUpdateLocked(t, mesos.TASK_FAILED, nil, "Command exited with status "+strconv.Itoa(code))
		return
	}
	x := m.rng.Float64()
	switch {
	case x < m.cfg.TaskFailureRate:
		m.agentUpdateLocked(t, mesos.TASK_FAILED, nil, "Command exited with status 1")
	case x < m.cfg.TaskFailureRate+m.cfg.TaskLostRate:
		r := mesos.REASON_EXECUTOR_TERMINATED
		m.agentUpdateLocked(t, mesos.TASK_LOST, &r, "Simulated task loss")
	default:
		m.agentUpdateLocked(t, mesos.TASK_FINISHED, nil, "Command exited with status 0")
	}
}

// agentUpdateLocked is the agent generating a status update for t. Updates
// are forwarded one at a time: the next only after the previous was
// acknowledged, like the agent's status update manager.
func (m *Master) agentUpdateLocked(t *task, state mesos.TaskState, reason *mesos.TaskStatus_Reason, msg string) {
	if isTerminal(t.actual) {
		return
	}
	t.actual = state
	src := mesos.SOURCE_EXECUTOR
	ts := nowSeconds()
	st := &mesos.TaskStatus{
		TaskID:     mesos.TaskID{Value: t.id},
		State:      &state,
		Source:     &src,
		Reason:     reason,
		AgentID:    &mesos.AgentID{Value: t.agent.id},
		ExecutorID: &mesos.ExecutorID{Value: t.executorID},
		Timestamp:  &ts,
		UUID:       newUUIDBytes(),
		ContainerStatus: &mesos.ContainerStatus{
			ContainerID: &mesos.ContainerID{Value: t.containerID},
			ExecutorPID: &t.executorPID,
			NetworkInfos: []mesos.NetworkInfo{{IPAddresses: []mesos.NetworkInfo_IPAddress{{
				Protocol: mesos.IPv4.Enum(), IPAddress: strPtr("127.0.0.1")}}}},
		},
	}
	if msg != "" {
		st.Message = strPtr(msg)
	}
	if !isTerminal(state) && m.updateFaults.TerminalOnly && t.fw.spark == nil && len(t.pending) == 0 {
		// Forwarded and acknowledged at once, unseen (UpdateFaults).
		t.state, t.status = state, st
		t.statuses = append(t.statuses, *cloneStatus(st))
		m.publishTaskUpdatedLocked(t)
		return
	}
	if isTerminal(state) {
		for _, e := range t.timers {
			e.cancel()
		}
		t.timers = nil
		m.sandboxTaskEndedLocked(t, msg)
	}
	t.pending = append(t.pending, st)
	if len(t.pending) == 1 {
		m.forwardHeadLocked(t)
	}
}

func strPtr(s string) *string { return &s }

func cloneStatus(st *mesos.TaskStatus) *mesos.TaskStatus {
	c := *st
	return &c
}

// UpdateFaults disturbs the delivery of status updates to (non-simulated)
// frameworks, as a flaky network or master would: each update is held back
// for a random time up to DelayMax (so updates of different tasks arrive
// reordered), and sent twice with probability DuplicateRate.
//
// TerminalOnly shows a framework only the terminal update of each task it
// launches from then on: its TASK_STARTING and TASK_RUNNING count as
// forwarded and acknowledged (GET_TASKS and reconciliation show them) but
// never reach it. A real 1.12 master does not do this for a command task
// (its agent forwards the updates in order, each after the previous one was
// acknowledged: mesos-transcripts/07); it is what a framework sees of a
// task whose earlier updates a process of its own acknowledged without
// taking them (one that crashed after acknowledging TASK_RUNNING, or did
// not follow the job yet when they came), and what an executor that goes
// straight to a terminal state sends (Mesos does not require an executor
// to send TASK_RUNNING).
type UpdateFaults struct {
	DelayMax      time.Duration
	DuplicateRate float64
	TerminalOnly  bool
}

// SetUpdateFaults changes the status update faults (zero turns them off).
func (m *Master) SetUpdateFaults(f UpdateFaults) {
	m.mu.Lock()
	m.updateFaults = f
	m.mu.Unlock()
}

// sendUpdateLocked sends a status update through the configured faults.
func (m *Master) sendUpdateLocked(fw *framework, st *mesos.TaskStatus) {
	ev := &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: *cloneStatus(st)}}
	f := m.updateFaults
	if fw.spark != nil || (f.DelayMax <= 0 && f.DuplicateRate <= 0) {
		m.sendLocked(fw, ev)
		return
	}
	send := func() {
		if fw.removed {
			return
		}
		m.sendLocked(fw, ev)
		if m.rng.Float64() < f.DuplicateRate {
			m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: *cloneStatus(st)}})
		}
	}
	if f.DelayMax > 0 {
		m.afterLocked(time.Duration(m.rng.Int63n(int64(f.DelayMax))), send)
		return
	}
	send()
}

// forwardHeadLocked forwards the first pending update of t to its framework
// and arms the re-send timer.
func (m *Master) forwardHeadLocked(t *task) {
	st := t.pending[0]
	t.state = st.GetState()
	t.status = st
	if n := len(t.statuses); n == 0 || !bytes.Equal(t.statuses[n-1].UUID, st.UUID) {
		t.statuses = append(t.statuses, *cloneStatus(st))
	}
	if isTerminal(t.state) && !t.released {
		m.releaseTaskLocked(t)
	}
	m.publishTaskUpdatedLocked(t)
	m.sendUpdateLocked(t.fw, st)
	if t.delay == 0 {
		t.delay = m.cfg.StatusUpdateRetry
	}
	m.armRetryLocked(t, st.UUID)
}

func (m *Master) armRetryLocked(t *task, uuid []byte) {
	t.retry.cancel()
	t.retry = m.afterLocked(t.delay, func() {
		if len(t.pending) == 0 || !bytes.Equal(t.pending[0].UUID, uuid) || t.fw.removed {
			return
		}
		m.sendUpdateLocked(t.fw, t.pending[0])
		t.delay *= 2
		if t.delay > m.cfg.StatusUpdateRetryMax {
			t.delay = m.cfg.StatusUpdateRetryMax
		}
		m.armRetryLocked(t, uuid)
	})
}

// resendPendingLocked re-sends unacknowledged updates after a (re)subscribe.
func (m *Master) resendPendingLocked(fw *framework) {
	ids := make([]string, 0, len(fw.tasks))
	for id := range fw.tasks {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		t := fw.tasks[id]
		if len(t.pending) > 0 {
			m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: *cloneStatus(t.pending[0])}})
		}
	}
	for _, op := range fw.opUpdates {
		m.sendOperationLocked(fw, op)
	}
}

func (m *Master) acknowledgeLocked(fw *framework, taskID string, uuid []byte) {
	t := fw.tasks[taskID]
	if t == nil || len(t.pending) == 0 || !bytes.Equal(t.pending[0].UUID, uuid) {
		return // duplicate or stale acknowledgements are accepted and ignored
	}
	t.pending[0] = nil
	t.pending = t.pending[1:]
	t.retry.cancel()
	t.retry = nil
	t.delay = 0
	if len(t.pending) > 0 {
		m.forwardHeadLocked(t)
		return
	}
	if isTerminal(t.state) {
		m.forgetTaskLocked(t)
	}
}

// releaseTaskLocked returns a terminal task's resources to its agent.
func (m *Master) releaseTaskLocked(t *task) {
	if t.released {
		return
	}
	t.released = true
	t.agent.used = t.agent.used.minus(t.res)
	m.activeCheckLocked(t.agent)
	m.log.WithFields(logrus.Fields{"framework": t.fw.id, "task": t.id, "state": t.state.String()}).Info("task terminal")
	if t.spark != nil {
		m.sparkDriverEndedLocked(t.spark)
	}
	if t.executor != nil {
		m.sparkExecutorEndedLocked(t.executor, t)
	}
	m.kickAgentLocked(t.agent)
}

// forgetTaskLocked removes a terminal, acknowledged task: from now on the
// master reconciles it as unknown.
func (m *Master) forgetTaskLocked(t *task) {
	m.releaseTaskLocked(t)
	t.cancelTimers()
	t.retry.cancel()
	if t.fw.tasks[t.id] == t {
		delete(t.fw.tasks, t.id)
		t.fw.completedTasks = append(t.fw.completedTasks, t)
		if len(t.fw.completedTasks) > maxCompletedTasks {
			t.fw.completedTasks = t.fw.completedTasks[len(t.fw.completedTasks)-maxCompletedTasks:]
		}
	}
	delete(t.agent.tasks, t)
}

// maxCompletedTasks is Mesos' default --max_completed_tasks_per_framework.
const maxCompletedTasks = 1000

// removeTaskLocked drops a task without further updates (framework removal).
func (m *Master) removeTaskLocked(t *task) {
	t.actual = mesos.TASK_KILLED
	if !isTerminal(t.state) {
		t.state = mesos.TASK_KILLED
	}
	t.pending = nil
	m.forgetTaskLocked(t)
}

// masterUpdateLocked sends a master-generated update (no uuid, no ack).
func (m *Master) masterUpdateLocked(fw *framework, taskID, agentID string, state mesos.TaskState, reason mesos.TaskStatus_Reason, msg string) {
	src := mesos.SOURCE_MASTER
	ts := nowSeconds()
	st := mesos.TaskStatus{TaskID: mesos.TaskID{Value: taskID}, State: &state, Source: &src, Reason: &reason,
		Message: strPtr(msg), Timestamp: &ts}
	if agentID != "" {
		st.AgentID = &mesos.AgentID{Value: agentID}
	}
	m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
}

func (m *Master) killLocked(fw *framework, k *scheduler.Call_Kill) {
	t := fw.tasks[k.TaskID.Value]
	if t == nil {
		state := mesos.TASK_LOST
		if fw.partitionAware {
			state = mesos.TASK_UNKNOWN
		}
		aid := ""
		if k.AgentID != nil {
			aid = k.AgentID.Value
		}
		m.masterUpdateLocked(fw, k.TaskID.Value, aid, state, mesos.REASON_RECONCILIATION, "Attempted to kill an unknown task")
		return
	}
	m.killTaskLocked(t)
}

func (m *Master) killTaskLocked(t *task) {
	if isTerminal(t.actual) {
		return
	}
	if t.unreachable || t.agent.crashed != nil {
		// A real master cannot reach the agent: the kill is retried when
		// the agent re-registers.
		t.killAfterReturn = true
		return
	}
	var r *mesos.TaskStatus_Reason
	if t.actual == mesos.TASK_STAGING {
		x := mesos.REASON_TASK_KILLED_DURING_LAUNCH
		r = &x
	} else if t.fw.killingState && t.actual != mesos.TASK_KILLING {
		// The command executor says TASK_KILLING first to frameworks
		// that understand it.
		m.agentUpdateLocked(t, mesos.TASK_KILLING, nil, "")
	}
	m.agentUpdateLocked(t, mesos.TASK_KILLED, r, "Command terminated with signal Terminated")
}

// reconcileLocked answers RECONCILE: latest known states without uuid;
// unknown tasks (including finished and acknowledged ones) are TASK_LOST
// "Reconciliation: Task is unknown" (TASK_UNKNOWN if PARTITION_AWARE).
func (m *Master) reconcileLocked(fw *framework, want []scheduler.Call_Reconcile_Task) {
	latest := func(t *task) {
		var st mesos.TaskStatus
		if t.status != nil {
			st = *cloneStatus(t.status)
		} else {
			s := t.state
			st = mesos.TaskStatus{TaskID: mesos.TaskID{Value: t.id}, State: &s}
		}
		src := mesos.SOURCE_MASTER
		reason := mesos.REASON_RECONCILIATION
		ts := nowSeconds()
		st.Source, st.Reason, st.Timestamp = &src, &reason, &ts
		st.Message = strPtr("Reconciliation: Latest task state")
		st.UUID = nil
		st.ExecutorID = nil
		st.AgentID = &mesos.AgentID{Value: t.agent.id}
		m.sendLocked(fw, &scheduler.Event{Type: scheduler.Event_UPDATE, Update: &scheduler.Event_Update{Status: st}})
	}
	if len(want) == 0 {
		ids := make([]string, 0, len(fw.tasks))
		for id := range fw.tasks {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			latest(fw.tasks[id])
		}
		return
	}
	for _, w := range want {
		if t := fw.tasks[w.TaskID.Value]; t != nil {
			latest(t)
			continue
		}
		state := mesos.TASK_LOST
		if fw.partitionAware {
			state = mesos.TASK_UNKNOWN
		}
		aid := ""
		if w.AgentID != nil {
			aid = w.AgentID.Value
		}
		m.masterUpdateLocked(fw, w.TaskID.Value, aid, state, mesos.REASON_RECONCILIATION, "Reconciliation: Task is unknown")
	}
}
