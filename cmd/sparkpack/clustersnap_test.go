package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/latest"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/power"
)

func testAgents(n int, freeCPUs float64) []offers.AgentState {
	out := make([]offers.AgentState, n)
	for i := range out {
		out[i].Agent = offers.Agent{ID: fmt.Sprintf("id-%d", i), Hostname: fmt.Sprintf("agent-%d", n-i), CPUs: 4, FreeCPUs: freeCPUs, MemMB: 8192, FreeMemMB: 8192}
	}
	return out
}

// The view's build: every agent in natural hostname order, its state, its
// jobs' names, the active count; the signature moves with what the
// dashboard shows and only then; a name not read makes it incomplete.
func TestBuildClusterSnap(t *testing.T) {
	agents := testAgents(12, 4)
	agents[3].Reservations = []offers.Reserved{{AgentID: "id-3", JobID: "j1", CPUs: 2, MemMB: 2048}}
	agents[3].Holdings = []offers.AgentHolding{{JobID: "j1", Executors: 2, CPUs: 2, MemMB: 2048}}
	agents[5].Drivers = []offers.DriverTask{{JobID: "j2", CPUs: 1, MemMB: 1024}}
	agents[7].Gone = true
	names := map[string]string{"j1": "etl", "j2": "report"}
	name := func(id string) (string, bool) { n, ok := names[id]; return n, ok }
	var hosts hostOrder
	snap, complete := buildClusterSnap(agents, name, &hosts)
	if !complete || len(snap.agents) != 12 || snap.active != 2 {
		t.Fatalf("complete %v, %d agents, %d active; want true, 12, 2", complete, len(snap.agents), snap.active)
	}
	byID := map[string]api.AgentView{}
	for i, v := range snap.agents {
		if want := fmt.Sprintf("agent-%d", i+1); v.Hostname != want {
			t.Fatalf("position %d: %s, want %s", i, v.Hostname, want)
		}
		byID[v.ID] = v
	}
	if v := byID["id-3"]; v.State != "active" || len(v.Reservations) != 1 || v.Reservations[0].JobName != "etl" || v.Reservations[0].Executors != 2 {
		t.Fatalf("agent with a reservation: %+v", v)
	}
	if v := byID["id-5"]; v.State != "active" || len(v.Drivers) != 1 || v.Drivers[0].JobName != "report" {
		t.Fatalf("agent with a driver: %+v", v)
	}
	if v := byID["id-7"]; v.State != "off" {
		t.Fatalf("gone agent: %+v", v)
	}
	if v := byID["id-0"]; v.State != "idle" || v.Reservations == nil || v.Drivers == nil {
		t.Fatalf("idle agent: %+v (its lists must be empty, not null)", v)
	}

	again, _ := buildClusterSnap(agents, name, &hosts)
	if again.sig != snap.sig {
		t.Fatal("the signature moved without a change")
	}
	agents[4].FreeCPUs = 1
	if moved, _ := buildClusterSnap(agents, name, &hosts); moved.sig == snap.sig {
		t.Fatal("the signature did not move with an agent's free cpus")
	}
	agents[4].FreeCPUs = 4
	agents[3].Holdings[0].Executors = 3
	if moved, _ := buildClusterSnap(agents, name, &hosts); moved.sig == snap.sig {
		t.Fatal("the signature did not move with a job's executors")
	}
	delete(names, "j2")
	if _, complete := buildClusterSnap(agents, name, &hosts); complete {
		t.Fatal("a view with a name not read is complete")
	}
}

// A request served while the view is being rebuilt answers at once with
// the view built before: the build is held by the test (a channel, no
// timing) for as long as the requests take.
func TestClusterServedWhileViewRebuilds(t *testing.T) {
	var free atomic.Value // float64: the cluster as the next build reads it
	free.Store(4.0)
	started, release := make(chan struct{}), make(chan struct{})
	var hosts hostOrder
	l := &live{}
	l.views = latest.New(func(ctx context.Context) (clusterSnap, bool) {
		agents := testAgents(100, free.Load().(float64))
		started <- struct{}{}
		<-release
		return buildClusterSnap(agents, func(string) (string, bool) { return "", true }, &hosts)
	}, latest.Options[clusterSnap]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.views.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The first request of a term waits for the first build.
	first := make(chan api.ClusterView)
	go func() {
		v, err := l.Cluster(context.Background())
		if err != nil {
			t.Error(err)
		}
		first <- v
	}()
	<-started
	release <- struct{}{}
	if v := <-first; len(v.Agents) != 100 || v.Agents[0].FreeCPUs != 4 {
		t.Fatalf("first view: %d agents, %g cpus free; want 100, 4", len(v.Agents), v.Agents[0].FreeCPUs)
	}

	free.Store(1.0)
	l.views.Changed()
	<-started // the rebuild has read the new cluster and is held
	for i := 0; i < 50; i++ {
		v, err := l.Cluster(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(v.Agents) != 100 || v.Agents[0].FreeCPUs != 4 {
			t.Fatalf("a request during the rebuild: %d agents, %g cpus free; want the previous view (100, 4)", len(v.Agents), v.Agents[0].FreeCPUs)
		}
	}
	release <- struct{}{}
	// Then the new view is served (waiting for the owner's step, not a
	// duration: the test's timeout bounds it).
	for {
		v, err := l.Cluster(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if v.Agents[0].FreeCPUs == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
}

// The work a request that found the view stale used to do (the agents'
// views, ordered), now done by the view's owner: `go test -run XXX -bench
// BuildClusterSnap ./cmd/sparkpack/`.
func BenchmarkBuildClusterSnap(b *testing.B) {
	for _, n := range []int{10000, 30000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			agents := testAgents(n, 4)
			for i := range agents {
				agents[i].Attributes = map[string]string{"instance_type": "m.xlarge"}
			}
			name := func(string) (string, bool) { return "", true }
			var hosts hostOrder
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				buildClusterSnap(agents, name, &hosts)
			}
		})
	}
}

// TestClusterViewKeepsUnlistedOffAgents: after a restart the adapter
// knows only the agents GET_AGENTS lists, and Mesos no longer lists one
// that has been off for a while: the view adds those power management
// holds off, powering off or booting (shown off, with their size and
// price), not those on (an agent gone on its own is not power
// management's to show), nor an id replaced by a new one, nor twice one
// that is listed. A restarted serve with 14 agents powered off showed
// "0 agents".
func TestClusterViewKeepsUnlistedOffAgents(t *testing.T) {
	listed := testAgents(2, 4) // id-0, id-1
	rec := func(id string, st power.State) power.Record {
		return power.Record{AgentID: id, Hostname: "host-" + id, CPUs: 8, MemMB: 32768, PricePerHour: 0.48, State: st,
			Attributes: map[string]string{"location": "cloud", "instance_type": "m.2xlarge"}}
	}
	replaced := rec("old", power.StateOff)
	replaced.ReplacedBy = "id-1"
	recs := []power.Record{rec("id-0", power.StateOn), rec("id-1", power.StateOff), rec("off1", power.StateOff),
		rec("boot1", power.StateBooting), rec("going1", power.StatePoweringOff), rec("gone-on", power.StateOn), replaced}
	var hosts hostOrder
	snap, _ := buildClusterSnap(withUnlistedOff(listed, recs), func(string) (string, bool) { return "", true }, &hosts)
	got := map[string]api.AgentView{}
	for _, v := range snap.agents {
		if _, dup := got[v.ID]; dup {
			t.Fatalf("agent %s shown twice", v.ID)
		}
		got[v.ID] = v
	}
	want := []string{"id-0", "id-1", "off1", "boot1", "going1"}
	if len(got) != len(want) {
		t.Fatalf("view shows %d agents %v, want %v", len(got), got, want)
	}
	for _, id := range want[2:] {
		v, ok := got[id]
		if !ok || v.State != "off" || v.Hostname != "host-"+id || v.CPUs != 8 || v.PricePerHour != 0.48 || v.InstanceType != "m.2xlarge" {
			t.Errorf("agent %s: %+v (shown %v), want it off with its hostname, size, price and instance type", id, v, ok)
		}
	}
	if len(listed) != 2 {
		t.Fatalf("the adapter's agents were changed: %d", len(listed))
	}
	if out := withUnlistedOff(listed, nil); len(out) != 2 {
		t.Fatalf("without records: %d agents, want the 2 listed", len(out))
	}
}
