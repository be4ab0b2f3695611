package integration

import (
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2EBootAware: boot-aware placement on the emulator, with every agent
// off. A deadline job with slack that needs a big agent waits in the queue
// while the cheapest one that holds it boots, with the reason naming the
// agent and its ready time; the cluster summary counts the agent booting;
// a second job that fits in what is left of that agent shares its boot (no
// other agent is powered on); both run there and the deadline job meets
// its deadline.
//
// Robust under load: the emulated boot lasts 5 s of wall time (100
// simulated seconds at the tests' time scale), and the test only asserts
// what it saw while polling through it (the reason is looked for while
// the first job waits; the second job's reason is not required, only where
// it ran and that nothing else was powered on).
func TestE2EBootAware(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: powerCluster(), BootTime: 100 * time.Second, UnreachableAfter: 2 * time.Second})
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--policy", "exact", "--power-off-after", "1s", "--power-provider", "emulator",
		"--power-tick", "100ms", "--power-on-timeout", "120s", "--power-boot-time", "5s")
	waitUntil(t, 60*time.Second, "every idle agent to be powered off", func() bool { return allOff(emu.Master, 4) })

	// Which agents are ever powered on from here.
	var mu sync.Mutex
	woke := map[string]bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			for _, a := range emu.Master.Agents() {
				if !a.PoweredOff || a.Booting {
					mu.Lock()
					woke[a.ID] = true
					mu.Unlock()
				}
			}
		}
	}()

	// 5 cpus (+1 for the driver): only the 8-cpu agents hold it; exact
	// takes the cheaper, p-S2 (power-S2).
	big := sparkJob("boot-big", 1, 5, 1024, 20)
	big["deadline"] = 600
	id := submit(t, sp.API, big)
	// 1 cpu (+1 for the driver): fits in what p-S2 has left.
	small := sparkJob("boot-small", 1, 1, 1024, 20)
	small["deadline"] = 900
	id2 := submit(t, sp.API, small)

	reason := regexp.MustCompile(`^waiting for power-S2 to boot, (ready by (\d{4}-\d\d-\d\d )?\d\d:\d\d(:\d\d)? UTC|ready any moment)$`)
	var reasons []string
	sawReason, sawBooting := false, false
	deadline := time.Now().Add(120 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("job %s did not start within 120 s; its reasons: %q", id, reasons)
		}
		v, err := getJob(sp.API, id)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if v.State != "QUEUED" && v.State != "SUBMITTED" {
			break
		}
		if v.WaitingReason != "" && (len(reasons) == 0 || reasons[len(reasons)-1] != v.WaitingReason) {
			reasons = append(reasons, v.WaitingReason)
		}
		if reason.MatchString(v.WaitingReason) {
			sawReason = true
			var cv struct {
				Summary *struct {
					ByPower map[string]int `json:"byPower"`
				} `json:"summary"`
			}
			getJSON(t, sp.API+"/api/v1/cluster", &cv)
			if cv.Summary != nil && cv.Summary.ByPower["booting"] >= 1 {
				sawBooting = true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !sawReason {
		t.Fatalf("job %s never waited with the boot reason; its reasons: %q", id, reasons)
	}
	if !sawBooting {
		t.Errorf("the cluster summary never counted the agent booting while job %s waited for it", id)
	}
	for _, j := range []string{id, id2} {
		v := waitState(t, sp.API, j, 120*time.Second, "FINISHED", "FAILED", "KILLED")
		if v.State != "FINISHED" {
			t.Fatalf("job %s ended %s (%s)", j, v.State, v.WaitingReason)
		}
		if len(v.Placement) != 1 || v.Placement[0].AgentID != "p-S2" {
			t.Errorf("job %s ran on %+v; want p-S2 alone (the boot it shares)", j, v.Placement)
		}
		var dv struct {
			DeadlineAt *time.Time `json:"deadlineAt"`
			FinishedAt *time.Time `json:"finishedAt"`
		}
		getJSON(t, sp.API+"/api/v1/jobs/"+j, &dv)
		if dv.DeadlineAt == nil || dv.FinishedAt == nil || dv.FinishedAt.After(*dv.DeadlineAt) {
			t.Errorf("job %s missed its deadline (finished %v, deadline %v)", j, dv.FinishedAt, dv.DeadlineAt)
		}
	}
	close(stop)
	<-done
	mu.Lock()
	var on []string
	for a := range woke {
		on = append(on, a)
	}
	mu.Unlock()
	slices.Sort(on)
	if !slices.Equal(on, []string{"p-S2"}) {
		t.Errorf("agents powered on: %v; want p-S2 alone (the second job shares its boot)", on)
	}
	t.Logf("reasons of %s while it waited: %q", id, reasons)
}
