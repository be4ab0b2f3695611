package offers

import "slices"

// Where a waiting driver goes. Two pure decisions, one rule: the cluster's
// driver-room overlay (clusterviews.go) keeps a queued driver's room by
// driverRoomAgent, and the framework (frameworklaunch.go) picks the offer
// for the launch by chooseDriverOffer, in the same order:
//
//  1. the job's own agents (where its executors are reserved), when they
//     have room for the driver;
//  2. else an agent that is already active (it holds running work or
//     reservations of anyone), the roomiest;
//  3. else the roomiest agent of all (an idle one).
//
// A driver on an idle agent keeps it active, billed and never powered off
// for the job's whole run; one that takes room on an agent of another
// job's plan in flight makes that job's reservation fail (409). So the
// framework does not take the first roomy offer it holds: when the overlay
// kept the room on the job's own agents, the launch waits (at most
// FrameworkConfig.RoomWait) for the fresh offer that follows the
// reservation there; when it kept it on another active agent it waits as
// long for that agent's offer (the driver launched just before may have
// used the offer held there; what it left is offered again at the next
// allocation). Only then does it go elsewhere: an active agent with room to
// spare, then any agent with room to spare, then the roomiest.

// RoomKind is the kind of agent the overlay kept a queued driver's room
// on.
type RoomKind int

const (
	// RoomNone: no agent had room.
	RoomNone RoomKind = iota
	// RoomOnPlan: one of the job's own agents.
	RoomOnPlan
	// RoomActive: another agent that holds running work or reservations.
	RoomActive
	// RoomIdle: an idle agent (no active one had room).
	RoomIdle
)

func (k RoomKind) String() string {
	switch k {
	case RoomOnPlan:
		return "plan"
	case RoomActive:
		return "active"
	case RoomIdle:
		return "idle"
	}
	return "none"
}

// roomAgent is an agent as the overlay sees it when it keeps a queued
// driver's room.
type roomAgent struct {
	FreeCPUs, FreeMemMB float64
	// Active: it holds running work or reservations (agentActive).
	Active bool
}

func (a roomAgent) fits(cpus, mem float64) bool {
	return a.FreeCPUs+1e-9 >= cpus && a.FreeMemMB+1e-9 >= mem
}

// driverRoomAgent decides where the overlay keeps the room of a driver
// needing cpus and mem: the first of plan (agent positions, in the plan's
// order) with room; else the active agent with the most free cpus; else the
// agent with the most free cpus (the lowest position at equal cpus). It
// returns the position and its kind; -1 and RoomNone when no agent has
// room. agent(i) gives agent i of n.
func driverRoomAgent(plan []int, n int, agent func(i int) roomAgent, cpus, mem float64) (int, RoomKind) {
	for _, i := range plan {
		if agent(i).fits(cpus, mem) {
			return i, RoomOnPlan
		}
	}
	best, bestActive := -1, false
	var bestCPUs float64
	for i := range n {
		a := agent(i)
		if !a.fits(cpus, mem) {
			continue
		}
		if best < 0 || a.Active && !bestActive || a.Active == bestActive && a.FreeCPUs > bestCPUs {
			best, bestActive, bestCPUs = i, a.Active, a.FreeCPUs
		}
	}
	switch {
	case best < 0:
		return -1, RoomNone
	case bestActive:
		return best, RoomActive
	}
	return best, RoomIdle
}

// agentActive reports whether an agent, as the overlay shows it, holds
// running work or reservations: anything reserved or in use (free below
// total), a reservation or driver of sparkpack's, or a queued driver's
// room. Power management never turns such an agent off; an idle one it
// may.
func agentActive(a *Agent) bool {
	return a.FreeCPUs+1e-9 < a.CPUs || a.FreeMemMB+1e-9 < a.MemMB || len(a.Reservations) > 0 || len(a.Drivers) > 0
}

// AgentRoom is an agent as the cluster's overlay shows it to the
// framework (Framework.SetAgentRooms).
type AgentRoom struct {
	// Known: GET_AGENTS lists the agent.
	Known bool
	// Active: it holds running work or reservations (agentActive).
	Active bool
	// FreeCPUs and FreeMemMB are what is left once every plan in flight
	// and every queued driver's room is counted.
	FreeCPUs, FreeMemMB float64
}

// offerSpot is a held offer as chooseDriverOffer sees it for one launch.
type offerSpot struct {
	ID          string // the tie-break: the lowest id at equal room
	CPUs, MemMB float64
	// Fresh: received after the last reservation started on its agent
	// (an older one is about to be rescinded and is never used).
	Fresh bool
	// OnRoom: on the agent the overlay kept the driver's room on.
	OnRoom bool
	// Active: its agent holds running work or reservations (the job's own
	// agents do: they hold its reservations).
	Active bool
	// Spare: the overlay has room for the driver on its agent beyond
	// what it keeps for plans in flight and other queued drivers. An
	// offer without it may hold room another job counts on (its
	// reservation would then be refused, 409).
	Spare bool
}

// driverWant is what chooseDriverOffer needs of a launch.
type driverWant struct {
	CPUs, MemMB float64
	// Room: the kind of agent the overlay kept the room on.
	Room RoomKind
	// Wait: the launch has not waited RoomWait yet for an offer there.
	Wait bool
}

// chooseDriverOffer decides which held offer a driver goes to: the
// roomiest fresh offer with room on the agent its room was kept on; else,
// while waiting for a room kept on the job's own agents or on another
// active agent (want.Wait), none: the offer that follows the reservation
// there, or the launch that used the offer held there, will have the room,
// and the snapshot the scheduler plans on counts it there (a driver taking
// room elsewhere may take what a plan decided meanwhile counts on: 409).
// Then the roomiest fresh offer with room on an active agent with room to
// spare; else on any agent with room to spare; else the roomiest fresh
// offer with room (the overlay may be behind Mesos). A fresh offer on the
// room's agent without the room ends the wait (the agent was offered
// again: the room is not there). -1: none now.
func chooseDriverOffer(want driverWant, offers []offerSpot) int {
	best := func(ok func(o offerSpot) bool) int {
		b := -1
		for i, o := range offers {
			if ok(o) && spotFits(want, o) && (b < 0 || roomierSpot(o, offers[b])) {
				b = i
			}
		}
		return b
	}
	if b := best(func(o offerSpot) bool { return o.OnRoom }); b >= 0 {
		return b
	}
	waiting := want.Wait
	for _, o := range offers {
		if o.OnRoom && o.Fresh {
			waiting = false // the agent was offered again, without the room
		}
	}
	if waiting && (want.Room == RoomOnPlan || want.Room == RoomActive) {
		return -1
	}
	if b := best(func(o offerSpot) bool { return o.Active && o.Spare }); b >= 0 {
		return b
	}
	if b := best(func(o offerSpot) bool { return o.Spare }); b >= 0 {
		return b
	}
	return best(func(offerSpot) bool { return true })
}

// spotFits: the offer is fresh and has the driver's cpus and mem.
func spotFits(want driverWant, o offerSpot) bool {
	return o.Fresh && covers(o.CPUs, want.CPUs) && covers(o.MemMB, want.MemMB)
}

// driverCandidates narrows the held offers (spot(k) is offer k as one
// launch sees it) to those chooseDriverOffer can choose for want: extra
// (pickLocked gives every offer on the room's agent, which also decide
// whether the launch still waits, and on the job's own agents, active for
// this launch only), and the roomiest that fits of each class of the
// others: any, with room to spare, active with room to spare. order is
// every offer by roomierSpot (cpus, mem and id do not depend on the
// launch), active those of agents active whoever launches, in the same
// order: the first that fits in a class is its roomiest, so a launch
// usually looks at a few offers. chooseDriverOffer on the candidates gives
// the offer it gives on all: each of its choices is the roomiest fitting
// offer of a class, or one on the room's agent. Building every launch's
// spots over all the offers cost seconds per pick after a REVIVE brought
// an offer of each of 30,000 agents (BenchmarkDriverLaunchDecision30000).
// The candidates are in increasing order.
func driverCandidates(want driverWant, order, active, extra []int, spot func(k int) offerSpot) []int {
	out := slices.Clone(extra)
	first := func(in []int, ok func(o offerSpot) bool) {
		for _, k := range in {
			if o := spot(k); spotFits(want, o) && ok(o) {
				out = append(out, k)
				return
			}
		}
	}
	first(order, func(offerSpot) bool { return true })
	first(order, func(o offerSpot) bool { return o.Spare })
	first(active, func(o offerSpot) bool { return o.Active && o.Spare })
	slices.Sort(out)
	return slices.Compact(out)
}

// roomierSpot orders offers by cpus, then mem, then id (deterministic:
// the offers are held in a map).
func roomierSpot(a, b offerSpot) bool {
	if a.CPUs != b.CPUs {
		return a.CPUs > b.CPUs
	}
	if a.MemMB != b.MemMB {
		return a.MemMB > b.MemMB
	}
	return a.ID < b.ID
}
