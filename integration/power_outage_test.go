package integration

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2EPowerPausedDuringAMasterOutage (a UAT: power management began
// draining 5 agents 34 s into a Mesos outage, on the view from before it):
// agents idle past --power-off-after while the master does not answer
// are neither drained nor powered off during the outage; the operator is
// told once that power decisions are paused, and when they resume; the
// outage does not count as idle time, so afterwards an agent goes off
// only once current views have shown it idle for --power-off-after in
// all, and only if it still is: the agents of a job submitted as the
// master comes back stay on while it runs, and go off after it.
func TestE2EPowerPausedDuringAMasterOutage(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: powerCluster(), BootTime: 20 * time.Second, UnreachableAfter: 2 * time.Second})
	watch := watchPower(emu.Master)
	const offAfter = 8 * time.Second
	sparkpackBinary(t)    // built first: not in the time counted below
	started := time.Now() // power management's idle timers start after this
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--policy", "exact", "--power-off-after", offAfter.String(), "--power-provider", "emulator",
		"--power-tick", "100ms", "--power-on-timeout", "60s")

	// Power management has a view of the agents (GET_AGENTS answered: the
	// cluster view is built from it) and ticks every 100 ms: a few ticks.
	waitUntil(t, 60*time.Second, "the first view of the agents", func() bool {
		var cv struct {
			Agents []struct {
				ID string `json:"id"`
			} `json:"agents"`
		}
		resp, err := http.Get(sp.API + "/api/v1/cluster")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&cv) == nil && len(cv.Agents) == 4
	})
	time.Sleep(time.Second)

	// The master goes away for well over --power-off-after.
	const outage = 20 * time.Second
	downAt := time.Now()
	emu.Restart(outage)
	upAt := downAt.Add(outage)
	for time.Now().Before(upAt.Add(-300 * time.Millisecond)) {
		for _, a := range emu.Master.Agents() {
			if a.PoweredOff {
				t.Fatalf("%s powered off %s into the master's outage", a.ID, time.Since(downAt).Round(time.Millisecond))
			}
		}
		if strings.Contains(sp.logText(), `"msg":"agent power: draining"`) {
			t.Fatalf("an agent was drained %s into the master's outage, on the view from before it:\n%s", time.Since(downAt).Round(time.Millisecond),
				grepLines(sp.logText(), "agent power"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if n := strings.Count(sp.logText(), `"msg":"power management paused: `); n != 1 {
		t.Fatalf("%d 'power management paused' warnings during a %s outage, want 1 (then one each 30 s):\n%s", n, outage, grepLines(sp.logText(), "power management"))
	}
	for time.Now().Before(upAt) {
		time.Sleep(20 * time.Millisecond)
	}

	// As the master comes back, a job that needs two agents (3 executors
	// of 2 cpus and its driver), running 300 simulated seconds (15 s).
	id := submit(t, sp.API, sparkJob("after-the-outage", 3, 2, 1024, 300))
	// From now on, when each agent is first seen off.
	var mu sync.Mutex
	offAt := map[string]time.Time{}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			for _, a := range emu.Master.Agents() {
				mu.Lock()
				if a.PoweredOff && offAt[a.ID].IsZero() {
					offAt[a.ID] = time.Now()
				}
				mu.Unlock()
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	run := waitState(t, sp.API, id, 60*time.Second, "RUNNING", "FINISHED", "FAILED", "KILLED")
	held := map[string]bool{}
	for _, a := range run.Placement {
		held[a.AgentID] = true
	}
	// The others go off, but not before current views showed them idle
	// for --power-off-after: what was counted before the outage is at
	// most its start minus sparkpack's.
	notBefore := upAt.Add(offAfter - downAt.Sub(started))
	waitUntil(t, 60*time.Second, "the idle agents to be powered off after the outage", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, a := range emu.Master.Agents() {
			if !held[a.ID] && offAt[a.ID].IsZero() {
				return false
			}
		}
		return true
	})
	mu.Lock()
	var offs []string
	for id, at := range offAt {
		if at.Before(notBefore) {
			t.Errorf("%s powered off %s after the outage, before %s of idle time seen on current views (the outage counted as idle time)",
				id, at.Sub(upAt).Round(time.Millisecond), notBefore.Sub(upAt).Round(time.Millisecond))
		}
		offs = append(offs, id+" "+at.Sub(upAt).Round(time.Millisecond).String())
	}
	mu.Unlock()
	slices.Sort(offs)
	t.Logf("outage from %s after sparkpack's start; the job held %v; agents off after the outage: %v (not before %s)", downAt.Sub(started).Round(time.Millisecond),
		slices.Sorted(maps.Keys(held)), offs, notBefore.Sub(upAt).Round(time.Millisecond))
	if !strings.Contains(sp.logText(), `"msg":"power management resumed: `) {
		t.Errorf("no 'power management resumed' line:\n%s", grepLines(sp.logText(), "power management"))
	}

	v := waitState(t, sp.API, id, 90*time.Second, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" {
		t.Fatalf("job %s ended %s (%s)", id, v.State, v.WaitingReason)
	}
	waitUntil(t, 60*time.Second, "the job's agents to be powered off after it", func() bool { return allOff(emu.Master, 4) })
	violations, _ := watch.finish()
	if len(violations) > 0 {
		t.Fatalf("agents powered off while holding work: %v", violations)
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}
