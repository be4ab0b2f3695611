package power

import (
	"context"
	"sort"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
)

// Power decisions on a stale view of the agents.
//
// During a Mesos master outage GET_AGENTS fails and the view of the agents
// is what the last answer showed. An agent idle then may have work now
// (another framework's, or an operator's); a power-off decided on that view
// could take it down. So while the view is stale a Tick takes no power-off
// decision at all, and the clocks of power management (an agent's idle time,
// a drain's and a boot's timeouts) do not run: when a current view comes
// back they go on from where they were, and an agent is powered off only
// once current views have shown it idle for --power-off-after. Power-ons
// (a plan needs an agent; the provider does not need Mesos) still proceed.
// The operator is told once (then once a period) that power decisions are
// paused, why, and what to check (docs/power.md).

// View is what Tick is told of the Mesos agents, and how current it is.
type View struct {
	Agents []Agent
	// ReadAt is when the GET_AGENTS call the agents come from was sent;
	// zero: none has answered yet (Agents is then empty, not "no agents").
	ReadAt time.Time
	// Err is the last GET_AGENTS call's error: it failed, and Agents are
	// still those read at ReadAt.
	Err error
	// Every is how long the reader waits between two reads when nothing
	// hurries it (offers.Cluster.ReadEvery: --agents-refresh, or longer
	// where one read costs more; 0: unknown). A view is not stale for
	// being older than the bound while it is less than two such spacings
	// old: on a large cluster whose GET_AGENTS takes 2 s the reads are
	// 16 s apart, and every view became stale before the next one.
	Every time.Duration
	// Recovered: the ids GET_AGENTS lists in recovered_agents. A master
	// that failed over lists the agents of its registry there, not in
	// agents, until they re-register (up to agent_reregister_timeout, 10
	// minutes by default). Such an agent has not left Mesos, and what it
	// runs is not known: its record is held as on a stale view
	// (recoveredStep).
	Recovered []string
}

// DefaultStaleAfter is how old a view may be before it counts as stale
// even though no read failed (a GET_AGENTS that hangs on a master that
// does not answer): Config.StaleAfter's default.
const DefaultStaleAfter = 15 * time.Second

// staleness decides whether a Tick may decide on v at now: not when the
// last read failed, when no read has answered yet, or when the view is
// older than maxAge and than two of the reader's spacings (v.Every). why
// says which, for the operator.
func staleness(v View, now time.Time, maxAge time.Duration) (stale bool, why string) {
	maxAge = max(maxAge, 2*v.Every)
	switch {
	case v.Err != nil:
		return true, "reading the agents from the Mesos master (GET_AGENTS) fails: " + v.Err.Error()
	case v.ReadAt.IsZero():
		return true, "the Mesos master has not listed the agents yet (no GET_AGENTS has answered since sparkpack started)"
	case now.Sub(v.ReadAt) > maxAge:
		return true, "the last list of the agents (GET_AGENTS) is " + now.Sub(v.ReadAt).Round(time.Second).String() + " old: the Mesos master does not answer"
	}
	return false, ""
}

// span is a time during which power management had no current view of
// the agents (from the read of the last current view to the read of the
// next one): its clocks do not run then.
type span struct{ from, to time.Time }

// seenFor is how much of [since, now] was seen on current views: the time
// elapsed minus the blind spans in it. A span with a zero end is still
// open (blind up to now).
func seenFor(since, now time.Time, blind []span) time.Duration {
	d := now.Sub(since)
	for _, b := range blind {
		to := b.to
		if to.IsZero() || to.After(now) {
			to = now
		}
		from := b.from
		if from.Before(since) {
			from = since
		}
		if to.After(from) {
			d -= to.Sub(from)
		}
	}
	return max(d, 0)
}

// blindAction is what a Tick on a stale view does with one agent.
type blindAction int

const (
	// blindHold: nothing. No step is decided on what the agents showed
	// before: no drain, no power-off, no timeout; its clocks stand still.
	blindHold blindAction = iota
	// blindPowerOn: ask the provider to power the agent on (a plan needs
	// it; the provider does not need the Mesos master).
	blindPowerOn
)

// blindStep decides what a Tick on a stale view does with an agent in
// record r: only a power-on not yet asked for goes ahead. An agent on
// is not drained (it may have work the view cannot show); a draining one
// is not deactivated nor taken back (Mesos does not answer), nor powered
// off on a deactivation seen before; one powering off is not powered off
// (the last check that it is idle needs a current view); one off stays
// off; a booting one that was asked for waits (it cannot be seen
// registering, and its timeout does not run).
func blindStep(r Record) blindAction {
	if r.State == StateBooting && !r.Requested {
		return blindPowerOn
	}
	return blindHold
}

// recoveredStep is what a Tick on a current view does with an agent the
// view lists only in recovered_agents (a master that failed over, the
// agent not re-registered yet): what a stale view's Tick does (blindStep).
// It is not idle (its idle timer starts again once it is listed), a
// draining one has not "left Mesos" and is not powered off, one powering
// off is not powered off, and no timeout is taken on it; only a power-on
// not yet asked for goes ahead.
func recoveredStep(r Record) blindAction { return blindStep(r) }

// noteHeld logs, once per hold, that agent r is held because the master
// lists it only as recovered (tickMu held).
func (m *Manager) noteHeld(r *Record) {
	if m.held[r.AgentID] {
		return
	}
	if m.held == nil {
		m.held = map[string]bool{}
	}
	m.held[r.AgentID] = true
	m.log.WithFields(logrus.Fields{"agent": r.AgentID, "hostname": r.Hostname, "state": r.State}).
		Info("agent power: held: the Mesos master failed over and lists the agent as recovered, not re-registered yet; no drain, power-off or timeout until it re-registers (or the master drops it after agent_reregister_timeout, 10m by default)")
}

// blindSpans is the blind spans after a Tick at now on a view that is
// stale or not (read at readAt): a stale view opens a span from the read
// of the last current one (or now, before any), a current one closes the
// open span at its read. Spans that end before keepFrom (no clock counts
// from before it any more) are dropped.
func blindSpans(blind []span, stale bool, readAt, now, keepFrom time.Time) []span {
	open := len(blind) > 0 && blind[len(blind)-1].to.IsZero()
	switch {
	case stale && !open:
		from := readAt
		if from.IsZero() || from.After(now) {
			from = now
		}
		blind = append(blind, span{from: from})
	case !stale && open:
		to := readAt
		if to.Before(blind[len(blind)-1].from) {
			to = blind[len(blind)-1].from
		}
		blind[len(blind)-1].to = to
	}
	out := blind[:0]
	for _, b := range blind {
		if b.to.IsZero() || !b.to.Before(keepFrom) {
			out = append(out, b)
		}
	}
	return out
}

// ---- applying them (Manager; tickMu held) ----

// tickBlind is a Tick on a stale view: blindStep for every agent.
func (m *Manager) tickBlind(ctx context.Context) error {
	m.mu.Lock()
	ids := make([]string, 0, len(m.recs))
	for id := range m.recs {
		ids = append(ids, id)
	}
	m.mu.Unlock()
	sort.Strings(ids)
	var firstErr error
	for _, id := range ids {
		err := m.stepOne(id, func(r *Record) error {
			if blindStep(*r) == blindPowerOn {
				return m.powerOn(ctx, r)
			}
			return nil
		})
		if err != nil {
			m.warnStep(err, id)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	return firstErr
}

// clocksFrom is the earliest start of a clock a decision may still read
// (an idle timer, a drain's or a boot's start): blind spans that ended
// before it count for none.
func (m *Manager) clocksFrom(now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	from := now
	for _, t := range m.idle {
		if t.Before(from) {
			from = t
		}
	}
	for _, r := range m.recs {
		if (r.State == StateDraining || r.State == StateBooting || r.State == StatePoweringOff) && r.Since.Before(from) {
			from = r.Since
		}
	}
	return from
}

// notePause tells the operator that power decisions are paused (the
// first stale Tick, then once a period while it lasts: failurelog) and
// when they resume.
func (m *Manager) notePause(now time.Time, stale bool, why string, v View) {
	var verdict failurelog.Verdict
	m.paused, verdict = m.paused.Step(now, stale)
	staleSince := "never read"
	if !v.ReadAt.IsZero() {
		staleSince = v.ReadAt.UTC().Format(time.RFC3339)
	}
	const check = "check that the Mesos master is up and reachable from sparkpack (--mesos-master; the GET_AGENTS warnings say why it fails)"
	switch verdict.Kind {
	case failurelog.First:
		m.log.WithFields(logrus.Fields{"reason": why, "view_read_at": staleSince}).
			Warn("power management paused: the view of the agents is stale, so no agent is drained or powered off and idle time is not counted until it is current again (power-ons for plans go ahead): " + check)
	case failurelog.Still:
		m.log.WithFields(logrus.Fields{"reason": why, "view_read_at": staleSince, "paused_for": now.Sub(verdict.Since).Round(time.Second).String()}).
			Warn("power management still paused: the view of the agents is stale (no agent is drained or powered off, idle time is not counted): " + check)
	case failurelog.Recovered:
		m.log.WithField("paused_for", now.Sub(verdict.Since).Round(time.Second).String()).
			Info("power management resumed: the view of the agents is current again; idle time counts again from here (the pause is not counted)")
	}
}
