package realmesos

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// The end-to-end scenarios of integration/e2e_test.go, run with the real
// sparkpack binary against the real master (fakespark as the driver) and,
// at the same time, against the emulator (its simulated Spark as the
// driver); onBoth requires the same outcome from both.

// jobOutcome is what a scenario observes of one job, in a form that does
// not depend on ids or timing.
type jobOutcome struct {
	Name   string
	State  string
	States []string // the job's states, in order
	// Executors is how many Spark executors ran; Outside how many of them
	// used unreserved cpus or ran on an agent the plan did not name.
	Executors, Outside int
	// AsPlanned: executors per agent and the reservations seen per agent
	// are exactly the placement.
	AsPlanned bool
}

// observeJob checks a finished job against what the master showed.
func observeJob(t *testing.T, tg *target, w *watch, v jobView, cores int) jobOutcome {
	t.Helper()
	o := jobOutcome{Name: v.Name, State: v.State, States: eventStates(v)}
	planned := map[string]int{}
	for id, n := range v.planned() {
		planned[tg.host(id)] = n
	}
	ran := map[string]int{}
	for _, x := range w.executors(jobRole(v.ID)) {
		h := tg.host(x.AgentID)
		o.Executors++
		ran[h]++
		if x.UnreservedCPUs > 0 || planned[h] == 0 {
			o.Outside++
			t.Errorf("%s: executor %s of job %s ran on %s with %g unreserved cpus; placement %v", tg.name, x.ID, v.Name, h, x.UnreservedCPUs, planned)
		}
		for _, r := range x.Reservations {
			if r.Role != jobRole(v.ID) || r.Labels["sparkpack-job"] != v.ID {
				t.Errorf("%s: executor %s of job %s uses a reservation of %s labelled %v", tg.name, x.ID, v.Name, r.Role, r.Labels)
			}
		}
	}
	reserved := w.reserved(jobRole(v.ID))
	wantReserved := map[string]float64{}
	for h, n := range planned {
		wantReserved[h] = float64(n * cores)
	}
	o.AsPlanned = fmt.Sprint(ran) == fmt.Sprint(planned) && fmt.Sprint(reserved) == fmt.Sprint(wantReserved)
	if !o.AsPlanned {
		t.Errorf("%s: job %s: executors ran %v, reservations seen (cpus) %v; placement %v", tg.name, v.Name, ran, reserved, planned)
	}
	return o
}

// requireSteps checks that a job's timeline holds the given event texts.
func requireSteps(t *testing.T, tg *target, v jobView, steps ...string) {
	t.Helper()
	var reasons []string
	for _, e := range v.Events {
		reasons = append(reasons, e.To+": "+e.Reason)
	}
	joined := strings.Join(reasons, "\n")
	for _, s := range steps {
		if !strings.Contains(joined, s) {
			t.Errorf("%s: job %s: no event %q in its timeline:\n%s", tg.name, v.Name, s, joined)
		}
	}
}

type runOutcome struct {
	Jobs      []jobOutcome
	Leftovers []string
}

// TestE2EJobsRunInsideTheirReservations: jobs submitted over REST get
// their quota cap and reservations on exactly the planned agents
// (confirmed with GET_AGENTS), their driver runs, its executors run only
// inside the reservations, and everything is given back.
func TestE2EJobsRunInsideTheirReservations(t *testing.T) {
	onBoth(t, func(t *testing.T, tg *target) runOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t))
		w := startWatch(tg)
		defer w.finish()
		type spec struct {
			name                        string
			executors, cores, mem, secs int
		}
		specs := []spec{{"wordcount-a", 3, 2, 2048, 8}, {"sort-b", 2, 3, 4096, 6}, {"pi-c", 1, 1, 1024, 5}}
		var ids []string
		for _, s := range specs {
			ids = append(ids, submit(t, sp.API, sparkJob(s.name, s.executors, s.cores, s.mem, float64(s.secs))))
		}
		var out runOutcome
		for i, id := range ids {
			v := waitState(t, sp.API, id, 2*time.Minute, "FINISHED", "FAILED", "KILLED", "REJECTED")
			if v.State != "FINISHED" {
				t.Fatalf("%s: job %s ended %s; events %+v", tg.name, v.Name, v.State, v.Events)
			}
			requireSteps(t, tg, v, "RESERVING: reserved", "LAUNCHING: reservations confirmed", "RUNNING: driver running",
				"TASK_FINISHED", "reservations released", "FINISHED: driver TASK_FINISHED")
			if !strings.Contains(strings.Join(v.DriverCommand, " "), "spark.mesos.role="+jobRole(id)) {
				t.Errorf("%s: job %s: driver command %q lacks its role", tg.name, v.Name, v.DriverCommand)
			}
			// Its driver's log, read from the sandbox on the agent.
			requireDriverLog(t, tg, sp.API, id, "fakespark (a stand-in for Spark 3.5")
			_ = i
		}
		tg.waitNoLeftovers(t, 30*time.Second)
		w.finish()
		for i, id := range ids {
			v, err := getJob(sp.API, id)
			if err != nil {
				t.Fatal(err)
			}
			o := observeJob(t, tg, w, v, specs[i].cores)
			if o.Executors != specs[i].executors {
				t.Errorf("%s: job %s: %d executors ran, want %d", tg.name, v.Name, o.Executors, specs[i].executors)
			}
			out.Jobs = append(out.Jobs, o)
		}
		out.Leftovers = tg.leftovers(t)
		return out
	})
}

// TestE2EDeadlineJobOvertakesARegularOne: while a job holds most of the
// cluster, a regular job and then a deadline job wait; when it ends the
// deadline job starts first, and the regular one only after it.
func TestE2EDeadlineJobOvertakesARegularOne(t *testing.T) {
	onBoth(t, func(t *testing.T, tg *target) runOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t))
		w := startWatch(tg)
		defer w.finish()
		// 16 cpus: 4 executors of 3 cpus leave at most 2 free on any agent
		// (and a driver takes 1), so neither waiting job fits before the
		// blocker ends; afterwards the regular job (12 cpus) and the
		// deadline job (3 cpus) do not fit together with their drivers.
		blocker := submit(t, sp.API, sparkJob("blocker", 4, 3, 2048, 8))
		waitState(t, sp.API, blocker, time.Minute, "RUNNING")
		regular := submit(t, sp.API, sparkJob("regular-big", 4, 3, 2048, 5))
		dl := sparkJob("deadline-small", 1, 3, 2048, 5)
		dl["deadline"] = 600
		deadline := submit(t, sp.API, dl)
		time.Sleep(time.Second)
		for _, id := range []string{regular, deadline} {
			if v, _ := getJob(sp.API, id); v.State != "QUEUED" || v.WaitingReason == "" {
				t.Fatalf("%s: job %s is %s (%q) while the blocker runs; want QUEUED with a reason", tg.name, v.Name, v.State, v.WaitingReason)
			}
		}
		for _, id := range []string{blocker, deadline, regular} {
			v := waitState(t, sp.API, id, 2*time.Minute, "FINISHED", "FAILED", "KILLED")
			if v.State != "FINISHED" {
				t.Fatalf("%s: job %s ended %s: %+v", tg.name, v.Name, v.State, v.Events)
			}
		}
		tg.waitNoLeftovers(t, 30*time.Second)
		w.finish()
		var out runOutcome
		for _, id := range []string{blocker, deadline, regular} {
			v, _ := getJob(sp.API, id)
			out.Jobs = append(out.Jobs, observeJob(t, tg, w, v, 3))
		}
		d, _ := getJob(sp.API, deadline)
		r, _ := getJob(sp.API, regular)
		if d.StartedAt == nil || r.StartedAt == nil || !d.StartedAt.Before(*r.StartedAt) {
			t.Errorf("%s: the deadline job started %v, the regular one %v: the deadline job must go first", tg.name, d.StartedAt, r.StartedAt)
		}
		out.Leftovers = tg.leftovers(t)
		return out
	})
}

// TestE2EDeleteKillsARunningJob: DELETE of a running job kills its driver
// (fakespark stops its executors and its framework) and gives back its
// reservations and quota.
func TestE2EDeleteKillsARunningJob(t *testing.T) {
	onBoth(t, func(t *testing.T, tg *target) runOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t))
		id := submit(t, sp.API, sparkJob("long", 3, 2, 2048, 3600))
		waitState(t, sp.API, id, time.Minute, "RUNNING")
		deadline := time.Now().Add(time.Minute)
		for tg.running(t, jobRole(id)) < 3 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d executors of the job run after a minute, want 3", tg.name, tg.running(t, jobRole(id)))
			}
			time.Sleep(200 * time.Millisecond)
		}
		if code := deleteJob(t, sp.API, id); code != http.StatusAccepted && code != http.StatusOK {
			t.Fatalf("%s: DELETE: %d", tg.name, code)
		}
		v := waitState(t, sp.API, id, time.Minute, "KILLED", "FAILED", "FINISHED")
		if v.State != "KILLED" {
			t.Fatalf("%s: job ended %s, want KILLED", tg.name, v.State)
		}
		tg.waitNoLeftovers(t, 30*time.Second)
		if n := tg.running(t, jobRole(id)); n != 0 {
			t.Errorf("%s: %d executors of the killed job still run", tg.name, n)
		}
		return runOutcome{Jobs: []jobOutcome{{Name: v.Name, State: v.State, States: eventStates(v)}}, Leftovers: tg.leftovers(t)}
	})
}

// sortedStates lists job name: final state, sorted.
func sortedStates(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+": "+v)
	}
	sort.Strings(out)
	return out
}

// TestE2ESIGKILLAndRestartCompletesEveryJob kills sparkpack with SIGKILL
// twice while jobs reserve, launch and run, and starts it again on the
// same database: it fails over to its framework, every job finishes and
// nothing of sparkpack's is left in Mesos. (Which step each job is at
// when sparkpack dies depends on timing, so only the end is compared.)
func TestE2ESIGKILLAndRestartCompletesEveryJob(t *testing.T) {
	onBoth(t, func(t *testing.T, tg *target) runOutcome {
		db := pgtest.URL(t)
		sp := startSparkpack(t, tg.url, db)
		w := startWatch(tg)
		defer w.finish()
		sizes := [][4]int{{2, 1, 1024, 6}, {1, 2, 2048, 9}, {2, 2, 2048, 6}, {1, 1, 1024, 10}, {3, 1, 1024, 7}, {1, 3, 2048, 6}}
		var ids []string
		for i, s := range sizes {
			ids = append(ids, submit(t, sp.API, sparkJob(fmt.Sprintf("job-%d", i), s[0], s[1], s[2], float64(s[3]))))
		}
		inFlight := 0
		for round := 0; round < 2; round++ {
			time.Sleep(time.Duration(1500+2500*round) * time.Millisecond)
			states := map[string]int{}
			for _, id := range ids {
				if v, err := getJob(sp.API, id); err == nil {
					states[v.State]++
				}
			}
			inFlight += states["RESERVING"] + states["LAUNCHING"] + states["RUNNING"]
			sp.kill()
			t.Logf("%s: round %d: sparkpack killed with SIGKILL with jobs %v", tg.name, round, states)
			sp = startSparkpack(t, tg.url, db)
		}
		if inFlight == 0 {
			t.Fatalf("%s: no job was reserving, launching or running when sparkpack was killed: the test proves nothing", tg.name)
		}
		final := map[string]string{}
		for _, id := range ids {
			v := waitState(t, sp.API, id, 3*time.Minute, "FINISHED", "FAILED", "KILLED")
			if v.State != "FINISHED" {
				t.Errorf("%s: job %s ended %s after the crashes: %+v", tg.name, v.Name, v.State, v.Events)
			}
			final[v.Name] = v.State
		}
		tg.waitNoLeftovers(t, time.Minute)
		w.finish()
		for _, id := range ids {
			if n := tg.running(t, jobRole(id)); n != 0 {
				t.Errorf("%s: %d executors of job %s still run after every job ended", tg.name, n, id)
			}
			// A job may have been placed again after a crash, so only
			// "inside some reservation of the job" is checked here.
			for _, x := range w.executors(jobRole(id)) {
				if x.UnreservedCPUs > 0 || len(x.Reservations) == 0 {
					t.Errorf("%s: executor %s of job %s ran on %s with %g unreserved cpus", tg.name, x.ID, id, tg.host(x.AgentID), x.UnreservedCPUs)
				}
			}
		}
		var out runOutcome
		for _, s := range sortedStates(final) {
			out.Jobs = append(out.Jobs, jobOutcome{Name: s})
		}
		out.Leftovers = tg.leftovers(t)
		return out
	})
}

// lostAgentOutcome is what the agent-loss scenario observes.
type lostAgentOutcome struct {
	RunningWhenGone  bool
	State            string
	LossRecorded     bool
	ShownOff         bool
	LeftoversWhenOff []string
	// SeenBack: the agent was seen back with the job's reservation, by a
	// poll or in sparkpack's note that it releases it (required from
	// offers; left false with the operator API, as before).
	SeenBack       bool
	LeftoversAtEnd []string
}

// TestE2ELostExecutorAgentDoesNotFailTheJob (#34): an agent holding only
// executors of a running job dies (real: its process is killed with
// SIGKILL and the master marks it unreachable after its ping timeouts;
// emulator: CrashAgent, unreachable after as long). Spark carries on
// without those executors: the loss is recorded as an event of the job,
// the job keeps running and ends FINISHED when its driver exits 0; what it
// held is given back, the cluster view shows the agent off, and when the
// agent comes back with its checkpointed reservation the leak sweep
// releases that too. In both reservation modes (--reserve-mode): from
// offers, the job's release skips the agent that is not offered, and the
// sweep unreserves what it brings back from the job role's offers of it
// once it is back and active.
func TestE2ELostExecutorAgentDoesNotFailTheJob(t *testing.T) {
	for _, mode := range []string{"operator", "offers"} {
		t.Run(mode, func(t *testing.T) { lostExecutorAgentDoesNotFailTheJob(t, mode) })
	}
}

func lostExecutorAgentDoesNotFailTheJob(t *testing.T, mode string) {
	onBoth(t, func(t *testing.T, tg *target) lostAgentOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t), "--leak-sweep", "1s", "--reserve-mode", mode)
		// 3 executors of 3 cpus: at least two agents; 45 s of run.
		id := submit(t, sp.API, sparkJob("survivor", 3, 3, 2048, 45))
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
		driverAgent := ""
		for _, x := range ts {
			if strings.HasPrefix(x.ID, "sparkpack-driver-"+id) && !x.Completed {
				driverAgent = x.AgentID
			}
		}
		victim := ""
		for agent := range v.planned() {
			if agent != driverAgent && (victim == "" || agent < victim) {
				victim = agent
			}
		}
		if victim == "" {
			t.Fatalf("%s: no executor agent apart from the driver's (%s) in placement %v", tg.name, driverAgent, v.planned())
		}
		host := tg.host(victim)
		lost := time.Now()
		tg.loseAgent(t, host)
		// The master marks the agent unreachable (it leaves GET_AGENTS)
		// after its ping timeouts.
		for {
			agents, err := tg.obs.Agents(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			gone := true
			for _, a := range agents {
				gone = gone && a.ID != victim
			}
			if gone {
				break
			}
			if time.Since(lost) > time.Minute {
				t.Fatalf("%s: agent %s still in GET_AGENTS a minute after it died", tg.name, host)
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("%s: agent %s left GET_AGENTS %s after it died", tg.name, host, time.Since(lost).Round(100*time.Millisecond))
		var out lostAgentOutcome
		time.Sleep(3 * time.Second) // a few refreshes of sparkpack's view
		if now, err := getJob(sp.API, id); err == nil {
			out.RunningWhenGone = now.State == "RUNNING"
			if !out.RunningWhenGone {
				t.Errorf("%s: job %s after agent %s (executors only) was lost, want still RUNNING", tg.name, now.State, host)
			}
		}
		v = waitState(t, sp.API, id, 2*time.Minute, "FAILED", "FINISHED", "KILLED")
		out.State = v.State
		if v.State != "FINISHED" {
			t.Errorf("%s: job ended %s after losing agent %s that held only executors, want FINISHED: %+v", tg.name, v.State, host, v.Events)
		}
		// Agents are named by hostname, as everywhere sparkpack shows them.
		for _, e := range v.Events {
			out.LossRecorded = out.LossRecorded || (strings.Contains(e.Reason, host) && strings.Contains(e.Reason, "executors"))
		}
		if !out.LossRecorded {
			t.Errorf("%s: no event of the job records the loss of agent %s (%s): %+v", tg.name, host, victim, v.Events)
		}
		tg.waitNoLeftovers(t, 30*time.Second)
		out.LeftoversWhenOff = tg.leftovers(t)
		out.ShownOff = agentState(t, sp.API, victim) == "off"
		tg.returnAgent(t, host)
		back := false
		deadline = time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && !back {
			rs, _ := tg.obs.Reservations(context.Background())
			for _, r := range rs {
				back = back || (r.AgentID == victim && r.Labels["sparkpack-job"] == id)
			}
			time.Sleep(50 * time.Millisecond)
		}
		returned := time.Now()
		t.Logf("%s: the returning agent's reservation for the job was seen: %v (the sweep may free it before a poll sees it)", tg.name, back)
		tg.waitNoLeftovers(t, 60*time.Second)
		if mode == "offers" {
			// Seen by the poll, or else in sparkpack's note that its sweep
			// releases the ended job's reservation.
			noted := false
			for _, l := range strings.Split(sp.LogText(), "\n") {
				noted = noted || (strings.Contains(l, "releasing reservations of a job that is over") && strings.Contains(l, id))
			}
			out.SeenBack = back || noted
			if !out.SeenBack {
				t.Errorf("%s: agent %s came back without the job's reservation, and sparkpack released none: the test proves nothing", tg.name, host)
			}
		}
		t.Logf("%s: nothing of the job's left %s after the agent's reservation was seen back", tg.name, time.Since(returned).Round(100*time.Millisecond))
		deadline = time.Now().Add(20 * time.Second)
		for agentState(t, sp.API, victim) == "off" {
			if time.Now().After(deadline) {
				t.Fatalf("%s: agent %s still shown off after it came back", tg.name, victim)
			}
			time.Sleep(100 * time.Millisecond)
		}
		out.LeftoversAtEnd = tg.leftovers(t)
		return out
	})
}

// driverLossOutcome is what the driver-agent-loss scenario observes.
type driverLossOutcome struct {
	State          string
	DriverGone     bool
	LeftoversAtEnd []string
}

// TestE2ELostDriverAgentFailsTheJob (#34): the agent running a job's
// driver dies (real: SIGKILL of its process; emulator: CrashAgent). Once
// the master marks it unreachable the driver is lost (TASK_UNREACHABLE)
// and the job, without retries, is FAILED; when the agent comes back, the
// driver it still runs is killed and everything is given back.
func TestE2ELostDriverAgentFailsTheJob(t *testing.T) {
	onBoth(t, func(t *testing.T, tg *target) driverLossOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t), "--leak-sweep", "1s")
		id := submit(t, sp.API, sparkJob("driverless", 3, 3, 2048, 600))
		waitState(t, sp.API, id, time.Minute, "RUNNING")
		driverTask := func() (string, string) {
			ts, err := tg.obs.Tasks(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range ts {
				if strings.HasPrefix(x.ID, "sparkpack-driver-"+id) && !x.Completed {
					return x.ID, x.AgentID
				}
			}
			return "", ""
		}
		_, driverAgent := driverTask()
		if driverAgent == "" {
			t.Fatalf("%s: no driver task of job %s", tg.name, id)
		}
		host := tg.host(driverAgent)
		tg.loseAgent(t, host)
		v := waitState(t, sp.API, id, 2*time.Minute, "FAILED", "FINISHED", "KILLED")
		var out driverLossOutcome
		out.State = v.State
		if v.State != "FAILED" {
			t.Errorf("%s: job ended %s after its driver's agent %s was lost, want FAILED: %+v", tg.name, v.State, host, v.Events)
		}
		tg.returnAgent(t, host)
		deadline := time.Now().Add(time.Minute)
		for {
			if task, _ := driverTask(); task == "" {
				out.DriverGone = true
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s: the given-up driver still runs a minute after its agent came back", tg.name)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		tg.waitNoLeftovers(t, time.Minute)
		out.LeftoversAtEnd = tg.leftovers(t)
		return out
	})
}

// TestE2EFailingDriverIsRetriedThenFails: a driver that exits non-zero
// (fakespark with FAKESPARK_EXIT_CODE in the job's environment; the
// emulator's Spark honours it too) fails its attempt; the job is placed
// again once (retries: 1), fails again and ends FAILED, with everything
// given back.
func TestE2EFailingDriverIsRetriedThenFails(t *testing.T) {
	onBoth(t, func(t *testing.T, tg *target) runOutcome {
		sp := startSparkpack(t, tg.url, pgtest.URL(t))
		body := sparkJob("failing", 2, 1, 1024, 3)
		body["retries"] = 1
		body["app"].(map[string]any)["environment"] = map[string]string{"FAKESPARK_EXIT_CODE": "3"}
		id := submit(t, sp.API, body)
		v := waitState(t, sp.API, id, 2*time.Minute, "FAILED", "FINISHED", "KILLED")
		if v.State != "FAILED" {
			t.Fatalf("%s: job ended %s, want FAILED: %+v", tg.name, v.State, v.Events)
		}
		requireSteps(t, tg, v, "TASK_FAILED", "retry 1 of 1")
		tg.waitNoLeftovers(t, 30*time.Second)
		return runOutcome{Jobs: []jobOutcome{{Name: v.Name, State: v.State, States: eventStates(v)}}, Leftovers: tg.leftovers(t)}
	})
}
