package offers

import (
	"fmt"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	sp "github.com/sparkpack/sparkpack/scheduler"
)

// launchBench is a Cluster of n agents (the proportions of
// scripts/bench-cluster.sh: 6:5:3 of 4, 8 and 12 cpus) wired to its
// Framework (SetAgentRooms), following jobs of 2 executors of 1 cpu
// (bench-cluster's 51 jobs) in LAUNCHING, their drivers not launched:
// each job's plan is on one agent, and the first offPlan of them on an
// agent with no room left, so the overlay keeps their drivers' room off
// their plans (a scan of every agent). The framework holds held offers,
// on agents spread over the cluster, and a queued launch per job, each
// still waiting (RoomWait) for the fresh offer on its own agent: every
// launch looks at every held offer and finds none, the most a pick costs.
func launchBench(b *testing.B, n, jobs, offPlan, held int) (*Cluster, *Framework) {
	b.Helper()
	log := logrus.New()
	log.SetLevel(logrus.PanicLevel)
	fw := NewFramework(FrameworkConfig{}, NewSchedClient(nil, log), nil, nil, log)
	c := NewCluster(ClusterConfig{Framework: fw, Log: log})
	agents := make([]Agent, n)
	for i := range agents {
		cpus := 4.0
		switch {
		case i%14 >= 11:
			cpus = 12
		case i%14 >= 6:
			cpus = 8
		}
		mem := cpus * 4096
		agents[i] = Agent{ID: fmt.Sprintf("S%d", i), Hostname: fmt.Sprintf("h%d", i), CPUs: cpus, MemMB: mem, FreeCPUs: cpus, FreeMemMB: mem}
	}
	spec := sp.Spec{Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 1024, Driver: &sp.Driver{Cores: 1, MemoryMB: 1024}}
	now := time.Now()
	fw.mu.Lock()
	for k := range jobs {
		j := sp.Job{Spec: spec}
		j.ID = fmt.Sprintf("job-%03d", k)
		at := (k * 97) % n
		if k < offPlan {
			agents[at].FreeCPUs = 2 // someone else's work: room for the executors, none for the driver
		}
		plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: agents[at].ID, Executors: 2}}}
		c.jobs[j.ID] = &liveJob{st: lifecycle.State{Job: j, Phase: lifecycle.Launching, Plan: plan}, signal: make(chan struct{}, 1)}
		fw.pending[j.ID] = &DriverLaunch{JobID: j.ID, TaskID: "t-" + j.ID, CPUs: 1, MemMB: 1024, Argv: []string{"x"},
			Prefer: []string{agents[at].ID}, Room: agents[at].ID, RoomKind: RoomOnPlan, waitUntil: now.Add(time.Hour)}
		fw.touched[agents[at].ID] = now
	}
	for k := range held {
		a := agents[(k*7919+13)%n]
		o := driverOffer(fmt.Sprintf("O-%d", k), a.ID, a.FreeCPUs, a.FreeMemMB, "sparkpack")
		ho := heldOffer{offer: o, since: now.Add(-time.Second)}
		ho.cpus, ho.mem = fw.driverRoom(o)
		fw.offers[o.ID.Value] = ho
	}
	fw.mu.Unlock()
	c.agents, c.loaded = agents, true
	c.version++
	return c, fw
}

// BenchmarkDriverLaunchDecision30000: what deciding where the queued
// drivers go costs at 30,000 agents, as tryLaunch does it on every offers
// event and launch (heldRooms, then pickLocked), with the offer stock held
// between allocations (55 offers) and after a REVIVE (an offer of nearly
// every agent), all drivers' room on their plans or 25 of 51 off them.
// Outside the default run:
//
//	go test -run XXX -bench DriverLaunchDecision ./offers/
func BenchmarkDriverLaunchDecision30000(b *testing.B) {
	for _, c := range []struct {
		name            string
		offPlan, offers int
	}{
		{"stock/on-plan", 0, 55},
		{"stock/off-plan", 25, 55},
		{"revive/on-plan", 0, 30000},
		{"revive/off-plan", 25, 30000},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, fw := launchBench(b, 30000, 51, c.offPlan, c.offers)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				rooms := fw.heldRooms()
				fw.mu.Lock()
				if l, _, ok := fw.pickLocked(rooms); ok {
					b.Fatalf("launch %s picked; every launch waits for its own agent", l.JobID)
				}
				fw.mu.Unlock()
			}
		})
	}
}

// BenchmarkOffersEventRooms30000: what an offers event's look at the
// overlay costs (roomsOf, before the offers are held): one offer, or one of
// every agent (a REVIVE), at 30,000 agents with 25 of 51 drivers off
// their plans.
func BenchmarkOffersEventRooms30000(b *testing.B) {
	for _, n := range []int{1, 30000} {
		b.Run(fmt.Sprintf("offers=%d", n), func(b *testing.B) {
			c, fw := launchBench(b, 30000, 51, 25, 0)
			ids := make([]string, n)
			for i := range ids {
				ids[i] = c.agents[i].ID
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if r := fw.roomsOf(ids); len(r) != n {
					b.Fatalf("%d rooms for %d agents", len(r), n)
				}
			}
		})
	}
}
