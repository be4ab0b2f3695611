package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2ERequeuedJobsStrayReservationGoesWhenItsAgentReturns: an agent
// that holds executors of a running job powers off; then the job's driver
// fails and, with a retry left, the job goes back to the queue: its
// release cannot reach the powered-off agent (Mesos takes the unreserve,
// the agent comes back with what it checkpointed), and the job runs again
// on other agents. The agent comes back with the job's first plan's
// reservation, and sparkpack is killed (SIGKILL): the leak sweep of the
// restarted process releases that reservation although the job is not
// over, as its plan does not name the agent, and keeps the job's current
// ones. (The periodic sweep is made rare so that the reservation is seen
// back before the restart.) In both reservation modes (--reserve-mode):
// from offers, the sweep left such a reservation until the job ended.
func TestE2ERequeuedJobsStrayReservationGoesWhenItsAgentReturns(t *testing.T) {
	for _, mode := range []string{"operator", "offers"} {
		t.Run(mode, func(t *testing.T) { requeuedJobsStrayReservationGoes(t, mode) })
	}
}

func requeuedJobsStrayReservationGoes(t *testing.T, mode string) {
	emu := startEmulator(t, mesossim.Config{})
	db := e2eDB(t)
	args := []string{"--leak-sweep", "1h", "--reserve-mode", mode}
	sp := startSparkpack(t, emu.URL, db, args...)
	// 4 executors of 4 cpus: bfd spreads them over at least two agents.
	job := sparkJob("requeued", 4, 4, 4096, 3600)
	job["retries"] = 1
	id := submit(t, sp.API, job)
	waitState(t, sp.API, id, 60*time.Second, "RUNNING")
	var driver mesossim.TaskInfo
	for _, task := range emu.Tasks() {
		if task.SparkDriver && strings.Contains(task.TaskID, id) {
			driver = task
		}
	}
	victim := ""
	for _, r := range emu.Reservations() {
		if r.Labels["sparkpack-job"] == id && r.AgentID != driver.AgentID {
			victim = r.AgentID
		}
	}
	if driver.TaskID == "" || victim == "" {
		t.Fatalf("job %s: driver task %+v, want one, and a reserved agent other than its agent", id, driver)
	}
	if err := emu.PowerOff(victim); err != nil {
		t.Fatal(err)
	}
	if err := emu.FailTask(driver.FrameworkID, driver.TaskID); err != nil {
		t.Fatal(err)
	}
	// Back in the queue, then running again on the agents left.
	deadline := time.Now().Add(90 * time.Second)
	for {
		v, err := getJob(sp.API, id)
		runs := 0 // (the job is QUEUED once before its first run too)
		for _, e := range v.Events {
			if e.To == "RUNNING" {
				runs++
			}
		}
		if err == nil && runs >= 2 && v.State == "RUNNING" {
			break
		}
		if err == nil && (v.State == "FAILED" || v.State == "FINISHED" || v.State == "KILLED") {
			t.Fatalf("job ended %s after its driver failed; want it back in the queue and running again: %+v", v.State, v.Events)
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not running again after its driver failed: %+v (%v)", id, v, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	held := func() (stray, current []string) {
		for _, r := range emu.Reservations() {
			if r.Labels["sparkpack-job"] != id {
				continue
			}
			s := fmt.Sprintf("%s: %g cpus %g MiB", r.AgentID, r.CPUs, r.MemMB)
			if r.AgentID == victim {
				stray = append(stray, s)
			} else {
				current = append(current, s)
			}
		}
		return stray, current
	}
	// The agent comes back with the reservation of the job's first plan.
	if err := emu.PowerOn(victim); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(60 * time.Second)
	registered := func() bool {
		for _, a := range emu.Agents() {
			if a.ID == victim {
				return !a.PoweredOff && !a.Booting
			}
		}
		return false
	}
	for stray, _ := held(); len(stray) == 0 || !registered(); stray, _ = held() {
		if time.Now().After(deadline) {
			t.Fatalf("agent %s (registered %v) came back without the job's first plan's reservation: the test proves nothing", victim, registered())
		}
		time.Sleep(50 * time.Millisecond)
	}
	sp.kill()
	sp = startSparkpack(t, emu.URL, db, args...)
	deadline = time.Now().Add(60 * time.Second)
	for {
		stray, current := held()
		if len(stray) == 0 && len(current) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("60 s after the restart: the job holds %v on agent %s (its first plan's) and %v elsewhere; want nothing there, its current plan's kept", stray, victim, current)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if v, err := getJob(sp.API, id); err != nil || v.State != "RUNNING" {
		t.Errorf("job %s after the sweep: %s (%v); want RUNNING still", id, v.State, err)
	}
}
