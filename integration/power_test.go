package integration

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/mesossim"
)

// powerCluster: two cheap small agents and two dear big ones.
func powerCluster() clusterspec.Cluster {
	c := clusterspec.Cluster{Name: "power4"}
	for i, a := range []struct {
		cpus  float64
		price float64
	}{{4, 0.20}, {4, 0.24}, {8, 0.48}, {8, 0.52}} {
		id := []string{"p-S0", "p-S1", "p-S2", "p-S3"}[i]
		c.Agents = append(c.Agents, clusterspec.Agent{ID: id, Hostname: "power-" + id[2:], CPUs: a.cpus, MemMB: 16384 * a.cpus / 4,
			PricePerHour: a.price, InstanceType: "m.test", Location: "cloud"})
	}
	return c
}

// agentWatch records, every few milliseconds, what the emulator shows of
// each agent: it catches an agent powered off while it held work.
type agentWatch struct {
	mu         sync.Mutex
	violations []string
	offTimes   map[string]int // times each agent was seen going off
	stop, done chan struct{}
}

func watchPower(m *mesossim.Master) *agentWatch {
	w := &agentWatch{offTimes: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		prev := map[string]mesossim.AgentInfo{}
		for last := false; !last; {
			select {
			case <-w.stop:
				last = true // one more look, then stop
			case <-time.After(5 * time.Millisecond):
			}
			held := map[string]bool{}
			for _, r := range m.Reservations() {
				held[r.AgentID] = true
			}
			for _, a := range m.Agents() {
				p, seen := prev[a.ID]
				if seen && !p.PoweredOff && a.PoweredOff {
					w.mu.Lock()
					w.offTimes[a.ID]++
					// Tasks are lost by the power-off itself: look at the
					// last view before it, and at the reservations now.
					if p.Tasks > 0 || held[a.ID] {
						w.violations = append(w.violations, a.ID+" powered off while it held work")
					}
					w.mu.Unlock()
				}
				prev[a.ID] = a
			}
		}
	}()
	return w
}

func (w *agentWatch) finish() ([]string, map[string]int) {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.violations, w.offTimes
}

func emulatorBill(t *testing.T, base string) mesossim.Bill {
	t.Helper()
	resp, err := http.Get(base + "/sim/bill")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b mesossim.Bill
	if err := json.NewDecoder(resp.Body).Decode(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func allOff(m *mesossim.Master, want int) bool {
	n := 0
	for _, a := range m.Agents() {
		if a.PoweredOff && !a.Booting {
			n++
		}
	}
	return n == want
}

// TestE2EPowerManagement: idle agents are deactivated in Mesos and powered
// off; a job that needs room powers the cheapest suitable agent on, runs
// there and finishes; its agent goes off again afterwards; no agent that
// held work was ever powered off; the emulator's bill (the referee) is
// well below what the cluster would have cost always on.
func TestE2EPowerManagement(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: powerCluster(), BootTime: 20 * time.Second, UnreachableAfter: 2 * time.Second})
	watch := watchPower(emu.Master)
	// exact: the plan of least hourly price, so "the cheapest suitable
	// agents" is well defined.
	sp := startSparkpack(t, emu.URL, e2eDB(t), "--policy", "exact", "--power-off-after", "1s", "--power-provider", "emulator",
		"--power-tick", "100ms", "--power-on-timeout", "60s")

	waitUntil(t, 30*time.Second, "every idle agent to be powered off", func() bool { return allOff(emu.Master, 4) })

	// 3 executors of 2 cpus (+1 cpu for the driver): the cheapest agents
	// that hold them are the two 4-cpu ones ($0.44/h), not an 8-cpu one.
	id := submit(t, sp.API, sparkJob("needs-room", 3, 2, 1024, 20))
	v := waitState(t, sp.API, id, 90*time.Second, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" {
		t.Fatalf("job %s ended %s (%s)", id, v.State, v.WaitingReason)
	}
	var planned []string
	for _, a := range v.Placement {
		planned = append(planned, a.AgentID)
	}
	if !slices.Equal(planned, []string{"p-S0", "p-S1"}) {
		t.Errorf("the job ran on %v; want the two cheap 4-cpu agents", planned)
	}
	// The cluster view shows power states.
	var cv struct {
		Agents []struct {
			ID    string `json:"id"`
			Power string `json:"power"`
		} `json:"agents"`
	}
	getJSON(t, sp.API+"/api/v1/cluster", &cv)
	if len(cv.Agents) != 4 || cv.Agents[0].Power == "" {
		t.Fatalf("cluster view %+v", cv)
	}
	waitUntil(t, 30*time.Second, "the agents to be powered off again after the job", func() bool { return allOff(emu.Master, 4) })
	violations, offs := watch.finish()
	if len(violations) > 0 {
		t.Fatalf("agents powered off while holding work: %v", violations)
	}
	if want := map[string]int{"p-S0": 2, "p-S1": 2, "p-S2": 1, "p-S3": 1}; !maps.Equal(offs, want) {
		t.Errorf("agents went off %v times; want %v (the job's agents before and after it, the others once)", offs, want)
	}
	// While everything is off the bill stands still and the always-on
	// bill grows: it falls below half of it.
	var b mesossim.Bill
	waitUntil(t, 30*time.Second, "the bill to fall below half the always-on bill", func() bool {
		b = emulatorBill(t, emu.URL)
		return b.TotalUSD < 0.5*b.AlwaysOnUSD
	})
	t.Logf("emulator bill $%.4f against $%.4f always on (%.0f%%) over %.0f simulated s", b.TotalUSD, b.AlwaysOnUSD, 100*b.TotalUSD/b.AlwaysOnUSD, b.Seconds)
	var cost struct {
		Bill *struct {
			TotalUSD float64 `json:"totalUSD"`
		} `json:"bill"`
	}
	getJSON(t, sp.API+"/api/v1/cost", &cost)
	if cost.Bill == nil || cost.Bill.TotalUSD <= 0 {
		t.Fatalf("/api/v1/cost does not show the bill: %+v", cost)
	}
	waitNoLeftovers(t, emu.Master, 30*time.Second)
}

func waitUntil(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
