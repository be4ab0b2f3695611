package mesossim

import "time"

// The active bill: what the agents would cost if each were billed only
// while it holds a dynamic reservation or runs a task of any framework
// (sparkpack's cost meter counts the same for its own work). It is the
// emulator's independent measure to check a framework's meter and its
// attribution against (Bill.ActiveUSD), in simulated time like the bill.

type activeEntry struct {
	price  float64       // $/h
	since  time.Time     // wall; zero while not busy
	before time.Duration // busy time of finished intervals
}

// busyLocked: the agent holds a dynamic reservation or used resources.
func busyLocked(a *agent) bool {
	if !a.used.isEmpty() {
		return true
	}
	for _, e := range a.total {
		if e.k.reserved() && a.base.find(e.k) < 0 && ((!e.ranges && e.v > 0) || (e.ranges && len(e.rng) > 0)) {
			return true
		}
	}
	return false
}

// activeCheckLocked opens or closes the agent's busy interval after its
// reservations or tasks changed.
func (m *Master) activeCheckLocked(a *agent) {
	if m.active == nil {
		m.active = map[string]*activeEntry{}
	}
	e := m.active[a.id]
	if e == nil {
		e = &activeEntry{price: a.spec.PricePerHour}
		m.active[a.id] = e
	}
	now := time.Now()
	switch busy := busyLocked(a); {
	case busy && e.since.IsZero():
		e.since = now
	case !busy && !e.since.IsZero():
		e.before += now.Sub(e.since)
		e.since = time.Time{}
	}
}

// activeEndLocked closes the busy interval of agent id at now: the agent
// is gone, and its reservations with it (removed, lost, or back under a
// new agent id without its work dir), so nothing keeps it busy any more.
func (m *Master) activeEndLocked(id string, now time.Time) {
	if e := m.active[id]; e != nil && !e.since.IsZero() {
		e.before += now.Sub(e.since)
		e.since = time.Time{}
	}
}

// activeUSDLocked is the active bill so far (sim converts wall time).
func (m *Master) activeUSDLocked(now time.Time, sim func(time.Duration) float64) float64 {
	usd := 0.0
	for _, e := range m.active {
		d := e.before
		if !e.since.IsZero() {
			d += now.Sub(e.since)
		}
		usd += e.price * sim(d) / 3600
	}
	return usd
}
