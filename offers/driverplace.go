package offers

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
// reservation there.

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
// returns the position and whether it is one of plan's; -1 when no agent
// has room. agent(i) gives agent i of n.
func driverRoomAgent(plan []int, n int, agent func(i int) roomAgent, cpus, mem float64) (int, bool) {
	for _, i := range plan {
		if agent(i).fits(cpus, mem) {
			return i, true
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
	return best, false
}

// agentActive reports whether an agent, as the overlay shows it, holds
// running work or reservations: anything reserved or in use (free below
// total), a reservation or driver of sparkpack's, or a queued driver's
// room. Power management never turns such an agent off; an idle one it
// may.
func agentActive(a *Agent) bool {
	return a.FreeCPUs+1e-9 < a.CPUs || a.FreeMemMB+1e-9 < a.MemMB || len(a.Reservations) > 0 || len(a.Drivers) > 0
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
}

// driverWant is what chooseDriverOffer needs of a launch.
type driverWant struct {
	CPUs, MemMB float64
	// Wait: the overlay kept the room on the job's own agents and the
	// launch has not waited RoomWait yet for a fresh offer there.
	Wait bool
}

// chooseDriverOffer decides which held offer a driver goes to: the
// roomiest fresh offer with room on the agent its room was kept on; else,
// while want.Wait, none (the offer that follows the reservation there will
// have the room), unless a fresh offer there came without the room (then
// the room is not there and waiting is no use); else the roomiest fresh
// offer with room on an active agent; else the roomiest fresh offer with
// room. -1: none now.
func chooseDriverOffer(want driverWant, offers []offerSpot) int {
	fits := func(o offerSpot) bool {
		return o.Fresh && covers(o.CPUs, want.CPUs) && covers(o.MemMB, want.MemMB)
	}
	best := func(ok func(o offerSpot) bool) int {
		b := -1
		for i, o := range offers {
			if ok(o) && fits(o) && (b < 0 || roomierSpot(o, offers[b])) {
				b = i
			}
		}
		return b
	}
	if b := best(func(o offerSpot) bool { return o.OnRoom }); b >= 0 {
		return b
	}
	if want.Wait {
		denied := false
		for _, o := range offers {
			if o.OnRoom && o.Fresh {
				denied = true // the agent was offered again, without the room
			}
		}
		if !denied {
			return -1
		}
	}
	if b := best(func(o offerSpot) bool { return o.Active }); b >= 0 {
		return b
	}
	return best(func(offerSpot) bool { return true })
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
