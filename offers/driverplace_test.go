package offers

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestChooseDriverOffer: the offer a driver of 1 cpu and 1024 MiB goes
// to, by table: the one on the agent its room was kept on; while it waits
// for that agent (the room on the job's own agents), none, unless that
// agent was offered again without the room; then one on an active agent,
// the roomiest, before any idle one; then the roomiest; never a stale one
// (received before a reservation on its agent) nor one without room.
func TestChooseDriverOffer(t *testing.T) {
	idle := offerSpot{ID: "O-idle", CPUs: 12, MemMB: 49152, Fresh: true}
	active := offerSpot{ID: "O-active", CPUs: 3, MemMB: 8192, Fresh: true, Active: true}
	active2 := offerSpot{ID: "O-active2", CPUs: 6, MemMB: 8192, Fresh: true, Active: true}
	room := offerSpot{ID: "O-room", CPUs: 2, MemMB: 4096, Fresh: true, OnRoom: true, Active: true}
	stale := func(o offerSpot) offerSpot { o.Fresh = false; return o }
	small := func(o offerSpot) offerSpot { o.CPUs = 0.5; return o }
	for _, c := range []struct {
		name   string
		wait   bool
		offers []offerSpot
		want   string // "" for none
	}{
		{"the room's agent, though others are roomier", false, []offerSpot{idle, active, room}, "O-room"},
		{"the room's agent, while waiting", true, []offerSpot{idle, room, active}, "O-room"},
		{"waiting: its offer is stale, none", true, []offerSpot{idle, active, stale(room)}, ""},
		{"waiting: no offer there yet, none", true, []offerSpot{idle, active}, ""},
		{"waiting: there again without the room, an active one", true, []offerSpot{idle, active, small(room)}, "O-active"},
		{"waited long enough: an active one", false, []offerSpot{idle, active, stale(room)}, "O-active"},
		{"the roomiest active one", false, []offerSpot{active, idle, active2}, "O-active2"},
		{"an active one too small: the idle one", false, []offerSpot{small(active), idle}, "O-idle"},
		{"an active one stale: the idle one", false, []offerSpot{stale(active), idle}, "O-idle"},
		{"only idle ones: the roomiest", false, []offerSpot{{ID: "O-b", CPUs: 4, MemMB: 4096, Fresh: true}, idle, {ID: "O-a", CPUs: 12, MemMB: 49152, Fresh: true}}, "O-a"},
		{"nothing with room", false, []offerSpot{small(idle), stale(active)}, ""},
		{"no offers", false, nil, ""},
	} {
		i := chooseDriverOffer(driverWant{CPUs: 1, MemMB: 1024, Wait: c.wait}, c.offers)
		got := ""
		if i >= 0 {
			got = c.offers[i].ID
		}
		if got != c.want {
			t.Errorf("%s: chose %q, want %q", c.name, got, c.want)
		}
	}
}

// TestDriverRoomAgent: where the overlay keeps a driver's room (1 cpu,
// 1024 MiB), by table: the first of the plan's agents with room, in plan
// order; else the active agent with the most free cpus, before any idle
// one; else the idle one with the most free cpus, the first on a tie;
// none without room.
func TestDriverRoomAgent(t *testing.T) {
	full := roomAgent{FreeCPUs: 0, FreeMemMB: 4096, Active: true}
	for _, c := range []struct {
		name   string
		agents []roomAgent
		plan   []int
		want   int
		onPlan bool
	}{
		{"the plan's first with room", []roomAgent{{12, 49152, false}, full, {2, 2048, true}, {3, 2048, true}}, []int{1, 2, 3}, 2, true},
		{"the plan's, though idle ones are roomier", []roomAgent{{12, 49152, false}, {1, 1024, true}}, []int{1}, 1, true},
		{"plan full: an active one before an idle roomier one", []roomAgent{{12, 49152, false}, full, {2, 2048, true}}, []int{1}, 2, false},
		{"plan full: the roomiest active one", []roomAgent{{2, 2048, true}, full, {5, 2048, true}, {12, 49152, false}}, []int{1}, 2, false},
		{"plan full, active ones full: the roomiest idle one", []roomAgent{{4, 16384, false}, full, {0.5, 8192, true}, {12, 49152, false}}, []int{1}, 3, false},
		{"a tie: the first", []roomAgent{full, {6, 8192, false}, {6, 8192, false}}, []int{0}, 1, false},
		{"memory short", []roomAgent{{4, 1000, true}, {4, 1024, false}}, []int{0}, 1, false},
		{"no room anywhere", []roomAgent{full, {0.5, 8192, false}}, []int{0}, -1, false},
		{"no plan agent listed", []roomAgent{{4, 8192, false}}, nil, 0, false},
	} {
		got, onPlan := driverRoomAgent(c.plan, len(c.agents), func(i int) roomAgent { return c.agents[i] }, 1, 1024)
		if got != c.want || onPlan != c.onPlan {
			t.Errorf("%s: agent %d (on the plan %v), want %d (%v)", c.name, got, onPlan, c.want, c.onPlan)
		}
	}
}

// TestAgentActive: an agent is active when anything is reserved or in use
// on it (free below total), or it lists a reservation or a driver of
// sparkpack's; an agent with everything free is idle.
func TestAgentActive(t *testing.T) {
	for _, c := range []struct {
		name string
		a    Agent
		want bool
	}{
		{"all free", Agent{CPUs: 8, MemMB: 16384, FreeCPUs: 8, FreeMemMB: 16384}, false},
		{"cpus in use", Agent{CPUs: 8, MemMB: 16384, FreeCPUs: 7, FreeMemMB: 16384}, true},
		{"memory in use", Agent{CPUs: 8, MemMB: 16384, FreeCPUs: 8, FreeMemMB: 16000}, true},
		{"a reservation of sparkpack's", Agent{CPUs: 8, MemMB: 16384, FreeCPUs: 8, FreeMemMB: 16384, Reservations: []Reserved{{JobID: "j"}}}, true},
		{"a driver", Agent{CPUs: 8, MemMB: 16384, FreeCPUs: 8, FreeMemMB: 16384, Drivers: []DriverTask{{JobID: "j"}}}, true},
	} {
		if got := agentActive(&c.a); got != c.want {
			t.Errorf("%s: active %v, want %v", c.name, got, c.want)
		}
	}
}

// TestLaunchWaitsForItsRoom: a launch whose room was kept on its job's
// agent is not sent with the roomier offers held elsewhere; it goes out
// with the offer from that agent that comes after the launch was queued.
// Without a wait (RoomWait over, or the room kept off the plan) it goes to
// an active agent's offer (SetActiveAgents) rather than the idle one's.
func TestLaunchWaitsForItsRoom(t *testing.T) {
	ctx := context.Background()
	held := func(fw *Framework) {
		fw.Event(ctx, offersEvent(
			driverOffer("O-idle", "I", 12, 49152, "sparkpack"),
			driverOffer("O-active", "A", 3, 8192, "sparkpack"),
			driverOffer("O-p-old", "P", 2, 4096, "sparkpack")))
	}
	activeA := func(ids []string) []bool {
		out := make([]bool, len(ids))
		for i, id := range ids {
			out[i] = id == "A"
		}
		return out
	}

	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.SetActiveAgents(activeA)
	held(fw)
	fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"}, Prefer: []string{"P"}, Room: "P", RoomOnPlan: true})
	if got := launchedOn(calls); len(got) != 0 {
		t.Fatalf("launched on %v while waiting for a fresh offer on P; want nothing yet", got)
	}
	fw.tryLaunch(ctx) // as the offer ticker does
	if got := launchedOn(calls); len(got) != 0 {
		t.Fatalf("launched on %v while waiting for a fresh offer on P; want nothing yet", got)
	}
	fw.Event(ctx, offersEvent(driverOffer("O-p-new", "P", 2, 4096, "sparkpack")))
	if got := launchedOn(calls); !slices.Equal(got, []string{"O-p-new"}) {
		t.Fatalf("launched on %v; want O-p-new, the offer on P after the launch was queued", got)
	}

	for _, c := range []struct {
		name string
		l    DriverLaunch
	}{
		{"the wait is over", DriverLaunch{Room: "P", RoomOnPlan: true}},
		{"the room was kept off the plan, where no offer is held", DriverLaunch{Room: "Q"}},
		{"no room was kept", DriverLaunch{}},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.cfg.OfferHold = time.Hour
		fw.cfg.RoomWait = time.Nanosecond
		fw.SetActiveAgents(activeA)
		held(fw)
		l := c.l
		l.JobID, l.TaskID, l.CPUs, l.MemMB, l.Argv, l.Prefer = "j", "t-j", 1, 1024, []string{"x"}, []string{"P"}
		fw.Launch(ctx, &l)
		if l.RoomOnPlan {
			time.Sleep(time.Millisecond) // past the nanosecond
			fw.tryLaunch(ctx)
		}
		if got := launchedOn(calls); !slices.Equal(got, []string{"O-active"}) {
			t.Errorf("%s: launched on %v; want O-active (agent A is active, I idle)", c.name, got)
		}
	}
}
