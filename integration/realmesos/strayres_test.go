package realmesos

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// strayOutcome is what the stray-reservation scenario observes.
type strayOutcome struct {
	Requeued       bool // the job ran a second time
	NewPlanAvoids  bool // its second plan does not name the lost agent
	SeenBack       bool // the agent came back with the first plan's reservation (seen, or sparkpack said so)
	StrayDropped   bool // ... which sparkpack dropped while the job ran
	CurrentKept    bool // ... keeping the second plan's reservations
	StateAfterDrop string
	// The first run's Spark framework, torn down when its driver stopped:
	// are its executors in GET_TASKS, in protobuf and in JSON? (A real
	// 1.12 master lists them in JSON only: Observer.JSON.)
	FirstSparkTasksInProtobuf, FirstSparkTasksInJSON bool
}

// TestE2EStrayReservationOfARunningJobIsDropped (the integration suite's
// TestE2ERequeuedJobsStrayReservationGoesWhenItsAgentReturns, against the
// real master): an agent holding only executors of a running job is lost
// (real: SIGKILL of the agent; the master marks it unreachable), then the
// job's driver fails (real: SIGTERM to fakespark, which stops its Spark
// framework and exits 143) and, with a retry left, the job goes back to
// the queue: its release misses the lost agent, and the job runs again on
// the agents left. The agent comes back (real: restarted on its work
// directory) with the first plan's checkpointed reservation: a stray of a
// running job, which the leak sweep drops (operator mode: an UNRESERVE
// call; --reserve-mode offers: from the job role's offers of the agent)
// while the job keeps running and keeps its current reservations. About
// 12 s per mode and target.
func TestE2EStrayReservationOfARunningJobIsDropped(t *testing.T) {
	for _, mode := range []string{"operator", "offers"} {
		t.Run(mode, func(t *testing.T) { strayReservationOfARunningJobIsDropped(t, mode) })
	}
}

func strayReservationOfARunningJobIsDropped(t *testing.T, mode string) {
	onBoth(t, func(t *testing.T, tg *target) strayOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t), "--leak-sweep", "1s", "--reserve-mode", mode)
		// 3 executors of 3 cpus and a 2-cpu driver (11 cpus): on at least
		// two agents (4, 8 and 4 cpus); a 4-cpu agent lost leaves room for
		// the job again. The driver launches where its plan kept room
		// (offers/driverplace.go): a 4-cpu agent holding an executor has 1
		// cpu left, so the driver runs beside the 8-cpu agent's executors,
		// never on the 4-cpu executor agent the test loses.
		job := sparkJob("stray", 3, 3, 2048, 600)
		job["driver"] = map[string]any{"cores": 2}
		job["retries"] = 1
		id := submit(t, sp.API, job)
		v := waitState(t, sp.API, id, time.Minute, "RUNNING")
		deadline := time.Now().Add(time.Minute)
		for tg.running(t, jobRole(id)) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d executors of the job run after a minute, want 3", tg.name, tg.running(t, jobRole(id)))
			}
			time.Sleep(200 * time.Millisecond)
		}
		ts, err := tg.obs.Tasks(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var driver Task
		firstSpark := ""
		for _, x := range ts {
			if strings.HasPrefix(x.ID, "sparkpack-driver-"+id) && !x.Completed {
				driver = x
			}
			if x.Role == jobRole(id) && !x.Completed {
				firstSpark = x.FrameworkID
			}
		}
		victim := ""
		for agent := range v.planned() {
			if agent != driver.AgentID && tg.host(agent) != "rm-a2" && (victim == "" || agent < victim) {
				victim = agent
			}
		}
		if driver.ID == "" || victim == "" {
			t.Fatalf("%s: driver task %+v, placement %v: want a driver and a 4-cpu executor agent apart from its", tg.name, driver, v.planned())
		}
		host := tg.host(victim)
		tg.loseAgent(t, host)
		lost := time.Now()
		for present := true; present; {
			agents, err := tg.obs.Agents(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			present = false
			for _, a := range agents {
				present = present || a.ID == victim
			}
			if present && time.Since(lost) > time.Minute {
				t.Fatalf("%s: agent %s still in GET_AGENTS a minute after it died", tg.name, host)
			}
			time.Sleep(100 * time.Millisecond)
		}
		tg.failDriver(t, driver.FrameworkID, driver.ID)
		var out strayOutcome
		// Back in the queue (its release misses the lost agent), then
		// running again on the agents left.
		deadline = time.Now().Add(90 * time.Second)
		for {
			v, err = getJob(sp.API, id)
			// (The agent's loss is an event of the running job too.)
			retried, again := false, false
			for _, e := range v.Events {
				retried = retried || strings.Contains(e.Reason, "retry 1 of 1")
				again = again || (retried && e.To == "RUNNING" && strings.Contains(e.Reason, "driver running"))
			}
			if err == nil && again && v.State == "RUNNING" {
				break
			}
			if err == nil && (v.State == "FAILED" || v.State == "FINISHED" || v.State == "KILLED") {
				t.Fatalf("%s: job ended %s after its driver failed; want it back in the queue and running again: %+v", tg.name, v.State, v.Events)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: job %s not running again 90 s after its driver failed: %s %+v (%v)", tg.name, id, v.State, v.Events, err)
			}
			time.Sleep(200 * time.Millisecond)
		}
		out.Requeued = true
		listed := func(obs *Observer) bool {
			ts, err := obs.Tasks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(ts, func(x Task) bool { return x.FrameworkID == firstSpark })
		}
		jsonObs := NewObserver(tg.url)
		jsonObs.JSON = true
		out.FirstSparkTasksInProtobuf, out.FirstSparkTasksInJSON = listed(tg.obs), listed(jsonObs)
		out.NewPlanAvoids = v.planned()[victim] == 0
		if !out.NewPlanAvoids {
			t.Fatalf("%s: the job's second plan %v names agent %s, which is away", tg.name, v.planned(), host)
		}
		// Its Spark runs its executors again before the agent comes back:
		// from offers there is no quota limit, and a Spark still short of
		// executors takes the stray when it is offered (it is the job's
		// role), which then stays in use for as long as the job runs (seen
		// on the emulator when the agent came back too soon).
		deadline = time.Now().Add(time.Minute)
		for tg.running(t, jobRole(id)) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d executors of the job's second run run after a minute, want 3", tg.name, tg.running(t, jobRole(id)))
			}
			time.Sleep(200 * time.Millisecond)
		}
		held := func() (stray, current []string) {
			rs, err := tg.obs.Reservations(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.Labels["sparkpack-job"] != id {
					continue
				}
				s := fmt.Sprintf("%s: %g cpus %g MiB", tg.host(r.AgentID), r.CPUs, r.MemMB)
				if r.AgentID == victim {
					stray = append(stray, s)
				} else {
					current = append(current, s)
				}
			}
			sort.Strings(current)
			return stray, current
		}
		_, before := held()
		// The agent comes back with the first plan's reservation: seen by
		// a poll, or, if the sweep was quicker (the real cluster's restart
		// returns once the master shows the agent active), by sparkpack's
		// note that it unreserves the job's reservations off its plan.
		tg.returnAgent(t, host)
		noted := func() bool {
			for _, l := range strings.Split(sp.LogText(), "\n") {
				if strings.Contains(l, "its plan does not name") && strings.Contains(l, id) {
					return true
				}
			}
			return false
		}
		deadline = time.Now().Add(20 * time.Second)
		for !out.SeenBack && time.Now().Before(deadline) {
			stray, _ := held()
			out.SeenBack = len(stray) > 0 || noted()
			time.Sleep(50 * time.Millisecond)
		}
		if !out.SeenBack {
			t.Fatalf("%s: agent %s came back without the job's first plan's reservation, and sparkpack did not see it: the test proves nothing", tg.name, host)
		}
		back := time.Now()
		deadline = back.Add(60 * time.Second)
		for {
			stray, current := held()
			if len(stray) == 0 {
				out.StrayDropped = true
				out.CurrentKept = fmt.Sprint(current) == fmt.Sprint(before)
				if !out.CurrentKept {
					t.Errorf("%s: the job held %v before the agent came back and %v after its stray was dropped; want the same", tg.name, before, current)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: 60 s after agent %s came back the running job still holds %v there (its first plan's) and %v elsewhere", tg.name, host, stray, current)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Logf("%s: the stray on %s was dropped %s after it was seen back", tg.name, host, time.Since(back).Round(100*time.Millisecond))
		if v, err := getJob(sp.API, id); err == nil {
			out.StateAfterDrop = v.State
		}
		if out.StateAfterDrop != "RUNNING" {
			t.Errorf("%s: job %s after its stray was dropped, want RUNNING still", tg.name, out.StateAfterDrop)
		}
		return out
	})
}
