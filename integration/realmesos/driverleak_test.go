package realmesos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// TestE2EDriverLostWithTheMasterReleasesItsReservations (docs/deploy.md,
// "A driver does not survive a master restart here"): a job runs under
// fakespark, which exits 1 when it loses the master (Spark's libmesos
// driver would subscribe again). The real master is restarted: the
// driver's framework comes back recovered (active and connected false)
// with its executors still running on the job's reservations, and stays
// so. sparkpack ends the job when the driver's task ends, is refused the
// unreserve (the executors use it), tears that framework down (which
// kills its executors) and releases: the job reaches a terminal state
// and nothing of sparkpack's is left in Mesos. Before, the job stayed
// RUNNING and the reservations leaked.
func TestE2EDriverLostWithTheMasterReleasesItsReservations(t *testing.T) {
	c := privateCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	tg := clusterTarget(c)
	sp := startSparkpack(t, c.URL, pgtest.URL(t))
	const name = "lost-with-the-master"
	id := submit(t, sp.API, sparkJob(name, 2, 1, 1024, 3600))
	waitState(t, sp.API, id, 3*time.Minute, "RUNNING")
	deadline := time.Now().Add(3 * time.Minute)
	for tg.running(t, jobRole(id)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d executors of the job run after 3 minutes, want 2", tg.running(t, jobRole(id)))
		}
		time.Sleep(200 * time.Millisecond)
	}
	driverFramework := func() (Framework, bool) {
		fws, err := c.Observer().Frameworks(ctx)
		if err != nil {
			return Framework{}, false
		}
		for _, f := range fws {
			if len(f.Roles) == 1 && f.Roles[0] == jobRole(id) {
				return f, true
			}
		}
		return Framework{}, false
	}
	before, ok := driverFramework()
	if !ok || !before.Connected {
		t.Fatalf("the stand-in driver's framework before the restart: %+v (listed %v); want connected in the job's role", before, ok)
	}

	back, err := c.RestartMaster(ctx, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Until the agents are back the restarted master shows neither them
	// nor their reservations: sparkpack may end the job (its driver is
	// unknown to the master) and find nothing to release before then.
	// Once they are back, it lists the driver's framework as recovered,
	// neither active nor connected (its driver exited), until sparkpack
	// tears it down.
	var seen []string
	var first, last time.Duration // when the recovered framework was seen
	agentsBack := false
	until := time.Now().Add(5 * time.Minute)
	for time.Now().Before(until) {
		if !agentsBack {
			agentsBack = c.waitAgents(ctx, time.Millisecond) == nil
		}
		f, listed := driverFramework()
		if listed && f.ID == before.ID && !f.Completed {
			if first == 0 {
				first = time.Since(back)
			}
			last = time.Since(back)
			if s := fmt.Sprintf("%+v", f); len(seen) == 0 || seen[len(seen)-1] != s {
				t.Logf("%s after the restart GET_FRAMEWORKS shows the driver's framework %s", last.Round(time.Second), s)
				seen = append(seen, s)
			}
			if f.Connected || f.Active || !f.Recovered {
				t.Errorf("the gone driver's framework after the master restarted: %+v; want recovered, neither active nor connected", f)
			}
		}
		v, err := getJob(sp.API, id)
		if agentsBack && err == nil && v.State != "RUNNING" && (!listed || f.Completed) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !agentsBack {
		t.Fatalf("the agents were not all back 5 minutes after the master restarted")
	}
	t.Logf("the driver's framework was listed, not torn down, from %s to %s after the master answered again", first.Round(time.Second), last.Round(time.Second))
	v := waitState(t, sp.API, id, time.Minute, "FAILED", "FINISHED", "KILLED")
	t.Logf("the job ended %s: %+v", v.State, v.Events)
	// The agents are back: their reservations are visible again.
	tg.waitNoLeftovers(t, 3*time.Minute)
	if n := tg.running(t, jobRole(id)); n != 0 {
		t.Errorf("%d executors of the job still run", n)
	}
	if f, ok := driverFramework(); !ok || !f.Completed {
		t.Errorf("the gone driver's framework at the end: %+v (listed %v); want torn down (completed)", f, ok)
	}
	if log := sp.logText(); !strings.Contains(log, "tore down the job's framework") || !strings.Contains(log, before.ID) {
		t.Errorf("sparkpack's log does not say it tore down framework %s:\n%s", before.ID, tail(withoutRequests(log), 30))
	}
}
