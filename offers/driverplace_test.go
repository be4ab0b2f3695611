package offers

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"

	"github.com/sparkpack/sparkpack/offers/lifecycle"
	"github.com/sparkpack/sparkpack/placement"
	sp "github.com/sparkpack/sparkpack/scheduler"
)

// TestChooseDriverOffer: the offer a driver of 1 cpu and 1024 MiB goes
// to, by table: the one on the agent its room was kept on; while it waits
// for that agent (one of the job's own, or another active one), none; then
// one on an active agent, the roomiest, before any idle one; then the
// roomiest.
// A wait ends when the room's agent is offered again without the room.
// Other than on the room's agent, an offer whose room the overlay keeps for
// other jobs (not Spare) only once nothing else is left and no wait is.
// Never a stale offer (received before a reservation on its agent) nor one
// without room.
func TestChooseDriverOffer(t *testing.T) {
	idle := offerSpot{ID: "O-idle", CPUs: 12, MemMB: 49152, Fresh: true, Spare: true}
	active := offerSpot{ID: "O-active", CPUs: 3, MemMB: 8192, Fresh: true, Active: true, Spare: true}
	active2 := offerSpot{ID: "O-active2", CPUs: 6, MemMB: 8192, Fresh: true, Active: true, Spare: true}
	// The overlay keeps the driver's room there: none to spare beyond it.
	room := offerSpot{ID: "O-room", CPUs: 2, MemMB: 4096, Fresh: true, OnRoom: true, Active: true}
	stale := func(o offerSpot) offerSpot { o.Fresh = false; return o }
	small := func(o offerSpot) offerSpot { o.CPUs = 0.5; return o }
	// Mesos offers the room, but the overlay keeps it for another job.
	counted := func(o offerSpot) offerSpot { o.Spare = false; return o }
	for _, c := range []struct {
		name   string
		room   RoomKind
		wait   bool
		offers []offerSpot
		want   string // "" for none
	}{
		{"the room's agent, though others are roomier", RoomOnPlan, false, []offerSpot{idle, active, room}, "O-room"},
		{"the room's agent, while waiting", RoomOnPlan, true, []offerSpot{idle, room, active}, "O-room"},
		{"on the plan, waiting: its offer is stale, none", RoomOnPlan, true, []offerSpot{idle, active, stale(room)}, ""},
		{"on the plan, waiting: no offer there yet, none", RoomOnPlan, true, []offerSpot{idle, active}, ""},
		{"on the plan, waiting: there again without the room, an active one", RoomOnPlan, true, []offerSpot{idle, active, small(room)}, "O-active"},
		{"on the plan, waited long enough: an active one", RoomOnPlan, false, []offerSpot{idle, active, stale(room)}, "O-active"},
		{"on the plan, waited long enough, no active one: the idle one", RoomOnPlan, false, []offerSpot{idle, stale(room)}, "O-idle"},
		{"on an active agent: its offer", RoomActive, true, []offerSpot{idle, active, room}, "O-room"},
		{"on an active agent, waiting: not another active one", RoomActive, true, []offerSpot{idle, active}, ""},
		{"on an active agent, waited long enough: another active one", RoomActive, false, []offerSpot{idle, active}, "O-active"},
		{"on an active agent, waiting, no active one: not the idle one", RoomActive, true, []offerSpot{idle, small(active)}, ""},
		{"on an active agent, there again without the room: the idle one", RoomActive, true, []offerSpot{idle, small(room)}, "O-idle"},
		{"on an active agent, waited long enough: the idle one", RoomActive, false, []offerSpot{idle, small(active)}, "O-idle"},
		{"on an idle agent, no offer there: the roomiest active one", RoomIdle, true, []offerSpot{idle, active, active2}, "O-active2"},
		{"on an idle agent, no active one: another idle one at once", RoomIdle, true, []offerSpot{idle}, "O-idle"},
		{"no room kept: the roomiest active one", RoomNone, false, []offerSpot{active, idle, active2}, "O-active2"},
		{"an active one too small: the idle one", RoomNone, false, []offerSpot{small(active), idle}, "O-idle"},
		{"an active one stale: the idle one", RoomNone, false, []offerSpot{stale(active), idle}, "O-idle"},
		{"only idle ones: the roomiest", RoomNone, false, []offerSpot{{ID: "O-b", CPUs: 4, MemMB: 4096, Fresh: true, Spare: true}, idle, {ID: "O-a", CPUs: 12, MemMB: 49152, Fresh: true, Spare: true}}, "O-a"},
		{"an active one with room counted for another: an idle one with room to spare", RoomIdle, false, []offerSpot{counted(active2), idle}, "O-idle"},
		{"an idle one with room counted for another: an active one", RoomNone, false, []offerSpot{counted(idle), active}, "O-active"},
		{"on the plan, waiting: not room counted for another", RoomOnPlan, true, []offerSpot{counted(idle), counted(active)}, ""},
		{"on an active agent, waiting: not room counted for another", RoomActive, true, []offerSpot{counted(idle), counted(active)}, ""},
		{"there again without the room: room counted for another, the roomiest", RoomActive, true, []offerSpot{counted(idle), counted(active), small(room)}, "O-idle"},
		{"waited long enough: room counted for another, the roomiest", RoomActive, false, []offerSpot{counted(active), counted(idle)}, "O-idle"},
		{"no room kept anywhere: room counted for another, the roomiest", RoomNone, false, []offerSpot{counted(active), counted(idle)}, "O-idle"},
		{"nothing with room", RoomNone, false, []offerSpot{small(idle), stale(active)}, ""},
		{"no offers", RoomOnPlan, true, nil, ""},
	} {
		i := chooseDriverOffer(driverWant{CPUs: 1, MemMB: 1024, Room: c.room, Wait: c.wait}, c.offers)
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
		kind   RoomKind
	}{
		{"the plan's first with room", []roomAgent{{12, 49152, false}, full, {2, 2048, true}, {3, 2048, true}}, []int{1, 2, 3}, 2, RoomOnPlan},
		{"the plan's, though idle ones are roomier", []roomAgent{{12, 49152, false}, {1, 1024, true}}, []int{1}, 1, RoomOnPlan},
		{"plan full: an active one before an idle roomier one", []roomAgent{{12, 49152, false}, full, {2, 2048, true}}, []int{1}, 2, RoomActive},
		{"plan full: the roomiest active one", []roomAgent{{2, 2048, true}, full, {5, 2048, true}, {12, 49152, false}}, []int{1}, 2, RoomActive},
		{"plan full, active ones full: the roomiest idle one", []roomAgent{{4, 16384, false}, full, {0.5, 8192, true}, {12, 49152, false}}, []int{1}, 3, RoomIdle},
		{"a tie: the first", []roomAgent{full, {6, 8192, false}, {6, 8192, false}}, []int{0}, 1, RoomIdle},
		{"memory short", []roomAgent{{4, 1000, true}, {4, 1024, false}}, []int{0}, 1, RoomIdle},
		{"no room anywhere", []roomAgent{full, {0.5, 8192, false}}, []int{0}, -1, RoomNone},
		{"no plan agent listed", []roomAgent{{4, 8192, false}}, nil, 0, RoomIdle},
	} {
		got, kind := driverRoomAgent(c.plan, len(c.agents), func(i int) roomAgent { return c.agents[i] }, 1, 1024)
		if got != c.want || kind != c.kind {
			t.Errorf("%s: agent %d (%s), want %d (%s)", c.name, got, kind, c.want, c.kind)
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
// an active agent's offer (SetAgentRooms) rather than the idle one's.
func TestLaunchWaitsForItsRoom(t *testing.T) {
	ctx := context.Background()
	held := func(fw *Framework) {
		fw.Event(ctx, offersEvent(
			driverOffer("O-idle", "I", 12, 49152, "sparkpack"),
			driverOffer("O-active", "A", 3, 8192, "sparkpack"),
			driverOffer("O-p-old", "P", 2, 4096, "sparkpack")))
	}
	activeA := func(ids []string) []AgentRoom {
		out := make([]AgentRoom, len(ids))
		for i, id := range ids {
			out[i] = AgentRoom{Known: true, Active: id == "A", FreeCPUs: 12, FreeMemMB: 49152}
		}
		return out
	}

	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour
	fw.SetAgentRooms(activeA)
	held(fw)
	fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"}, Prefer: []string{"P"}, Room: "P", RoomKind: RoomOnPlan})
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
		{"the wait is over", DriverLaunch{Room: "P", RoomKind: RoomOnPlan}},
		{"the room was kept on another active agent, where no offer is held", DriverLaunch{Room: "Q", RoomKind: RoomActive}},
		{"no room was kept", DriverLaunch{}},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.cfg.OfferHold = time.Hour
		fw.cfg.RoomWait = time.Nanosecond
		fw.SetAgentRooms(activeA)
		held(fw)
		l := c.l
		l.JobID, l.TaskID, l.CPUs, l.MemMB, l.Argv, l.Prefer = "j", "t-j", 1, 1024, []string{"x"}, []string{"P"}
		fw.Launch(ctx, &l)
		if l.RoomKind != RoomNone {
			time.Sleep(time.Millisecond) // past the nanosecond
			fw.tryLaunch(ctx)
		}
		if got := launchedOn(calls); !slices.Equal(got, []string{"O-active"}) {
			t.Errorf("%s: launched on %v; want O-active (agent A is active, I idle)", c.name, got)
		}
	}
}

// TestStockKeepsActiveAgentsOffersFirst: beyond the stock (no launch
// waiting: the 4 of OfferStock) the offers of idle agents are declined
// before those of active agents (SetAgentRooms), however roomier: a
// driver goes to an active agent first. An offer on the agent a waiting
// launch's room was kept on is kept whatever its room.
func TestStockKeepsActiveAgentsOffersFirst(t *testing.T) {
	ctx := context.Background()
	fw, calls := subscribedFramework(t, nil)
	fw.cfg.OfferHold = time.Hour // no offer expires however slow the machine
	fw.SetAgentRooms(func(ids []string) []AgentRoom {
		out := make([]AgentRoom, len(ids))
		for i, id := range ids {
			out[i] = AgentRoom{Known: true, Active: id == "S1" || id == "S2", FreeCPUs: 8, FreeMemMB: 8192}
		}
		return out
	})
	fw.Event(ctx, offersEvent(
		driverOffer("O-a", "S1", 1, 4096, "sparkpack"), driverOffer("O-b", "S2", 2, 4096, "sparkpack"),
		driverOffer("O-c", "S3", 3, 4096, "sparkpack"), driverOffer("O-d", "S4", 4, 4096, "sparkpack"),
		driverOffer("O-e", "S5", 5, 4096, "sparkpack"), driverOffer("O-f", "S6", 6, 4096, "sparkpack")))
	if d := declinedIDs(calls); len(d) != 2 || !d["O-c"] || !d["O-d"] {
		t.Fatalf("declined %v; want O-c and O-d (the least roomy of the idle agents' offers)", d)
	}

	// A launch too big for any offer, its room kept on S7 (off its plan).
	fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 16, MemMB: 1024, Argv: []string{"x"}, Room: "S7", RoomKind: RoomActive})
	fw.Event(ctx, offersEvent(driverOffer("O-g", "S7", 0.5, 512, "sparkpack"),
		driverOffer("O-h", "S8", 7, 4096, "sparkpack"), driverOffer("O-i", "S9", 8, 4096, "sparkpack")))
	// A stock of 5 (the launch and 4): O-a, O-b, O-i, O-h, O-f, and O-g kept.
	if d := declinedIDs(calls); d["O-g"] || !d["O-e"] {
		t.Fatalf("declined %v; want O-e and not O-g (on S7, where the waiting launch's room was kept)", d)
	}
}

// TestOwnAgentsRoomFirst: the overlay keeps the room of every driver whose
// own agents have it before any driver off its plan: job "a" (first by
// id), whose plan's agent is full, does not take the room left on X, the
// agent of job "b"'s plan, though X is the only active agent with room;
// it goes to the idle I. The framework is shown X without room to spare
// (agentRooms) and I with it.
func TestOwnAgentsRoomFirst(t *testing.T) {
	exec1 := sp.Spec{Executors: 1, ExecutorCores: 4, ExecutorMemoryMB: 1024, MemoryOverheadMB: 512,
		Driver: &sp.Driver{Cores: 1, MemoryMB: 1024}}
	a, b := sp.Job{Spec: exec1}, sp.Job{Spec: exec1}
	a.ID, b.ID = "a", "b"
	c := NewCluster(ClusterConfig{})
	c.agents, c.loaded = []Agent{
		{ID: "P", CPUs: 4, MemMB: 8192, FreeCPUs: 4, FreeMemMB: 8192},
		{ID: "X", CPUs: 8, MemMB: 8192, FreeCPUs: 5, FreeMemMB: 6656}, // 3 cpus of someone else's
		{ID: "I", CPUs: 12, MemMB: 49152, FreeCPUs: 12, FreeMemMB: 49152},
	}, true
	for _, j := range []struct {
		job   sp.Job
		agent string
	}{{a, "P"}, {b, "X"}} {
		c.jobs[j.job.ID] = &liveJob{st: lifecycle.State{Job: j.job, Phase: lifecycle.Launching,
			Plan: placement.Plan{Assignments: []placement.Assignment{{AgentID: j.agent, Executors: 1}}}}, signal: make(chan struct{}, 1)}
	}
	c.mu.Lock()
	ra, rb := c.driverRoomLocked("a"), c.driverRoomLocked("b")
	c.mu.Unlock()
	if rb != (keptRoom{agent: "X", kind: RoomOnPlan}) || ra != (keptRoom{agent: "I", kind: RoomIdle}) {
		t.Fatalf("rooms kept: a %+v, b %+v; want a on I (idle), b on X (its plan)", ra, rb)
	}
	rooms := c.agentRooms([]string{"X", "I", "gone"})
	if want := []AgentRoom{{Known: true, Active: true, FreeCPUs: 0, FreeMemMB: 5120 - 1024}, {Known: true, Active: true, FreeCPUs: 11, FreeMemMB: 48128}, {}}; !slices.Equal(rooms, want) {
		t.Fatalf("agent rooms %+v, want %+v", rooms, want)
	}
	c.cfg.Unavailable = func(id string) bool { return id == "I" }
	if r := c.agentRooms([]string{"I"}); r[0].FreeCPUs != 0 || r[0].FreeMemMB != 0 {
		t.Fatalf("an agent being powered off: %+v; want no room", r[0])
	}
}

// TestAcceptFilterWhileOthersWait: a driver's ACCEPT carries the
// RefuseSeconds filter when no other launch waits or is announced, and
// none (0 s) when one does: what the driver leaves on its agent, now
// active, is offered again at the next allocation, for a driver whose
// room was kept there, rather than after the filter or a REVIVE.
func TestAcceptFilterWhileOthersWait(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		others func(fw *Framework)
		want   float64
	}{
		{"alone", func(*Framework) {}, 7},
		{"another launch waits", func(fw *Framework) {
			fw.Launch(ctx, &DriverLaunch{JobID: "k", TaskID: "t-k", CPUs: 64, MemMB: 1024, Argv: []string{"x"}})
		}, 0},
		{"another launch announced", func(fw *Framework) { fw.Expect(ctx, "k", []string{"S9"}) }, 0},
	} {
		fw, calls := subscribedFramework(t, nil)
		fw.cfg.OfferHold, fw.cfg.RefuseSeconds = time.Hour, 7
		c.others(fw)
		fw.Launch(ctx, &DriverLaunch{JobID: "j", TaskID: "t-j", CPUs: 1, MemMB: 1024, Argv: []string{"x"}})
		fw.Event(ctx, offersEvent(driverOffer("O-1", "S1", 2, 4096, "sparkpack")))
		acc := calls.of(scheduler.Call_ACCEPT)
		if len(acc) != 1 {
			t.Fatalf("%s: %d ACCEPTs, want 1", c.name, len(acc))
		}
		if got := acc[0].Accept.Filters.GetRefuseSeconds(); got != c.want {
			t.Errorf("%s: ACCEPT filter %v s, want %v", c.name, got, c.want)
		}
	}
}

// TestDriverCandidatesKeepTheChoice: chooseDriverOffer on the offers
// driverCandidates keeps gives the offer it gives on all of them, for
// random held offers (few distinct sizes, so that ties on cpus and mem are
// common; any mix of fresh, on the room's agent, on the job's own agents
// (active for this launch only), active, spare) and launches (every room
// kind, waiting or not). pickLocked decides on the candidates only.
func TestDriverCandidatesKeepTheChoice(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 30000))
	sizes := []float64{0.5, 1, 2, 4}
	mems := []float64{512, 1024, 2048}
	chosen := 0
	for trial := range 20000 {
		n := rng.IntN(12)
		offers := make([]offerSpot, n)
		var extra, activeAnyway []int
		for k := range offers {
			offers[k] = offerSpot{ID: fmt.Sprintf("O-%02d", rng.IntN(100)*100+k), CPUs: sizes[rng.IntN(len(sizes))], MemMB: mems[rng.IntN(len(mems))],
				Fresh: rng.IntN(5) > 0, OnRoom: rng.IntN(4) == 0, Active: rng.IntN(2) == 0, Spare: rng.IntN(3) > 0}
			own := rng.IntN(5) == 0 // on the job's own agents: active for this launch only
			if offers[k].OnRoom || own {
				extra = append(extra, k)
			}
			if own {
				offers[k].Active = true
			} else if offers[k].Active {
				activeAnyway = append(activeAnyway, k)
			}
		}
		order := make([]int, n)
		for k := range order {
			order[k] = k
		}
		slices.SortFunc(order, func(a, b int) int {
			if roomierSpot(offers[a], offers[b]) {
				return -1
			}
			return 1
		})
		var active []int
		for _, k := range order {
			if slices.Contains(activeAnyway, k) {
				active = append(active, k)
			}
		}
		want := driverWant{CPUs: sizes[rng.IntN(len(sizes))], MemMB: mems[rng.IntN(len(mems))], Room: RoomKind(rng.IntN(4)), Wait: rng.IntN(2) == 0}
		all := chooseDriverOffer(want, offers)
		cand := driverCandidates(want, order, active, extra, func(k int) offerSpot { return offers[k] })
		sub := make([]offerSpot, len(cand))
		for i, k := range cand {
			sub[i] = offers[k]
		}
		got := chooseDriverOffer(want, sub)
		if got >= 0 {
			got = cand[got]
			chosen++
		}
		if got != all {
			t.Fatalf("trial %d: want %+v, offers %+v: on the candidates %v the choice is %d; on all, %d", trial, want, offers, cand, got, all)
		}
	}
	if chosen < 5000 {
		t.Fatalf("only %d of 20000 trials chose an offer: the cases do not exercise the choice", chosen)
	}
}
