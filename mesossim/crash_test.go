package mesossim

import (
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"
)

// listedAgent reports whether GET_AGENTS lists the agent, and as active.
func listedAgent(t *testing.T, base, id string) (listed, active bool) {
	t.Helper()
	ga, _ := operatorJSON(t, base, `{"type":"GET_AGENTS"}`)["get_agents"].(map[string]any)
	agents, _ := ga["agents"].([]any)
	for _, x := range agents {
		a, _ := x.(map[string]any)
		info, _ := a["agent_info"].(map[string]any)
		aid, _ := info["id"].(map[string]any)
		if aid["value"] == id {
			act, _ := a["active"].(bool)
			return true, act
		}
	}
	return false, false
}

// TestCrashedAgentIsUnreachableOnlyAfterItsPingTimeouts (#34): like a
// real master, the emulator keeps a crashed agent listed (inactive) and
// its checkpointed tasks alive until UnreachableAfter has passed (a real
// 1.12 master: agent_ping_timeout 15 s x max_agent_ping_timeouts 5); only
// then are the tasks lost and the agent gone. An agent restarted before
// that simply carries on.
func TestCrashedAgentIsUnreachableOnlyAfterItsPingTimeouts(t *testing.T) {
	const unreachable = 1500 * time.Millisecond
	m, base := testMaster(t, Config{UnreachableAfter: unreachable})
	f := subscribeMGO(t, base, "")
	offers := f.next(scheduler.Event_OFFERS, 5*time.Second).Offers.Offers
	if len(offers) < 2 {
		t.Fatalf("%d offers, want one per agent (at least 2)", len(offers))
	}
	launch := func(name string) string {
		o := offers[0]
		offers = offers[1:]
		f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(simTask(name, o.AgentID, "3600", nil))}.WithOffers(o.ID)))
		return o.AgentID.Value
	}
	next := func() mesos.TaskStatus {
		t.Helper()
		st := f.next(scheduler.Event_UPDATE, 10*time.Second).Update.Status
		if len(st.UUID) > 0 {
			f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
		}
		return st
	}
	waitRunning := func(task string) {
		t.Helper()
		for st := next(); st.TaskID.Value != task || st.GetState() != mesos.TASK_RUNNING; st = next() {
		}
	}

	agent := launch("victim")
	waitRunning("victim")
	crashed := time.Now()
	if err := m.CrashAgent(agent); err != nil {
		t.Fatal(err)
	}
	if listed, active := listedAgent(t, base, agent); !listed || active {
		t.Fatalf("right after the crash GET_AGENTS lists %s: %v, active %v; want listed, inactive", agent, listed, active)
	}
	st := next()
	if st.TaskID.Value != "victim" || st.GetState() != mesos.TASK_LOST || st.GetReason() != mesos.REASON_AGENT_REMOVED {
		t.Fatalf("update %s %s (%s), want victim TASK_LOST REASON_AGENT_REMOVED", st.TaskID.Value, st.GetState(), st.GetReason())
	}
	if took := time.Since(crashed); took < unreachable {
		t.Fatalf("the checkpointed task was lost %s after the crash, before the agent's ping timeouts (%s)", took, unreachable)
	}
	if listed, _ := listedAgent(t, base, agent); listed {
		t.Fatalf("agent %s still listed once unreachable", agent)
	}

	// Restarted before its ping timeouts: nothing is lost.
	other := launch("survivor")
	waitRunning("survivor")
	if err := m.CrashAgent(other); err != nil {
		t.Fatal(err)
	}
	if err := m.RestartAgent(other); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * unreachable)
	if listed, active := listedAgent(t, base, other); !listed || !active {
		t.Fatalf("agent %s restarted in time: listed %v, active %v; want both", other, listed, active)
	}
	for _, task := range m.Tasks() {
		if task.TaskID == "survivor" && task.State != mesos.TASK_RUNNING {
			t.Fatalf("task survivor is %s after its agent came back in time, want TASK_RUNNING", task.State)
		}
	}
}

// TestExecutorsOfACrashedAgentGiveUp: the executors of an agent that stays
// down longer than AgentRecoveryTimeout (an agent's --recovery_timeout)
// end; when the agent comes back it reports their tasks failed instead of
// running.
func TestExecutorsOfACrashedAgentGiveUp(t *testing.T) {
	m, base := testMaster(t, Config{UnreachableAfter: 200 * time.Millisecond, AgentRecoveryTimeout: 600 * time.Millisecond})
	info := frameworkInfo("")
	info.Capabilities = append(info.Capabilities, mesos.FrameworkInfo_Capability{Type: mesos.FrameworkInfo_Capability_PARTITION_AWARE})
	f := subscribeMGOInfo(t, base, info)
	o := f.next(scheduler.Event_OFFERS, 5*time.Second).Offers.Offers[0]
	f.call(calls.Accept(calls.OfferOperations{calls.OpLaunch(simTask("waiter", o.AgentID, "3600", nil))}.WithOffers(o.ID)))
	next := func() mesos.TaskStatus {
		t.Helper()
		st := f.next(scheduler.Event_UPDATE, 10*time.Second).Update.Status
		if len(st.UUID) > 0 {
			f.call(calls.Acknowledge(st.AgentID.Value, st.TaskID.Value, st.UUID))
		}
		return st
	}
	for st := next(); st.GetState() != mesos.TASK_RUNNING; st = next() {
	}
	if err := m.CrashAgent(o.AgentID.Value); err != nil {
		t.Fatal(err)
	}
	if st := next(); st.GetState() != mesos.TASK_UNREACHABLE {
		t.Fatalf("update %s once unreachable, want TASK_UNREACHABLE (PARTITION_AWARE)", st.GetState())
	}
	time.Sleep(time.Second) // past the recovery timeout
	if err := m.RestartAgent(o.AgentID.Value); err != nil {
		t.Fatal(err)
	}
	if st := next(); st.TaskID.Value != "waiter" || st.GetState() != mesos.TASK_FAILED || st.GetReason() != mesos.REASON_EXECUTOR_TERMINATED {
		t.Fatalf("update %s %s (%s) when the agent came back, want waiter TASK_FAILED REASON_EXECUTOR_TERMINATED (its executor gave up)",
			st.TaskID.Value, st.GetState(), st.GetReason())
	}
}
