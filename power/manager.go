package power

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/failurelog"
)

// Config configures a Manager.
type Config struct {
	// OffAfter: an agent idle this long is powered off (required, > 0).
	OffAfter time.Duration
	// MinWarmCPUs: never power off an agent if the cpus of the agents left
	// on would drop below this.
	MinWarmCPUs float64
	// BootTime is how long an agent takes to register once powered on (as
	// measured on this cluster); with it the scheduler's placement is
	// boot-aware (scheduler.BootInfo, docs/power.md). Zero: unknown.
	BootTime time.Duration
	// PowerOnTimeout bounds the wait for a powered-on agent to register
	// (default 5 minutes); it is then treated as off and avoided.
	PowerOnTimeout time.Duration
	// DrainTimeout: an agent that Mesos does not show deactivated this
	// long after DEACTIVATE_AGENT is reactivated and left on (default 2
	// minutes).
	DrainTimeout time.Duration
	// AvoidFor is how long plans avoid an agent that did not come back
	// (default 30 minutes).
	AvoidFor time.Duration
	// MaxFailures: after this many failed provider calls in a row the
	// step is given up (a power-off: the agent is reactivated and counts
	// as on; a power-on: it counts as off and is avoided). Default 5.
	MaxFailures int
	Selector    Selector
	Provider    Provider
	Log         logrus.FieldLogger
	Now         func() time.Time
	// OnChange, if set, is called after every state change (for metrics
	// and the dashboard); it must be quick.
	OnChange func(Record)
	// Guard, if set, is asked right before every provider call: an
	// instance that is no longer sure it leads powers nothing off or on.
	Guard func() error
	// StaleAfter: a view of the agents older than this is stale even if
	// no read failed (default DefaultStaleAfter); no power-off is decided
	// on a stale view (stale.go).
	StaleAfter time.Duration
	// PauseNoticeEvery: while power decisions are paused (a stale view),
	// the warning is repeated this often (default failurelog's 30 s).
	PauseNoticeEvery time.Duration
}

// Manager is power management's state machine. Its methods are safe for
// concurrent use; Tick calls are serialised.
type Manager struct {
	cfg   Config
	store Store
	mesos Mesos
	log   logrus.FieldLogger

	tickMu sync.Mutex // one Tick at a time (it calls the provider)
	mu     sync.Mutex
	recs   map[string]*Record
	idle   map[string]time.Time // agent -> idle since (in memory: a restart starts the timer again)
	kick   chan struct{}
	// stepping is the agent a Tick is stepping (on its own copy of the
	// record), marking those PowerOn is marking booting; cond (on mu)
	// tells when either ends. PowerOn waits for a step of its own agent
	// only, not for the whole Tick and its provider calls on others.
	stepping string
	marking  map[string]bool
	cond     *sync.Cond
	// replaced maps the id of an agent that came back under a new agent
	// id (its work dir did not survive the power cycle) to the new id; a
	// plan that waits for the old id is told it will not come (Failed).
	// The store keeps it too (Load reads it back); an entry is dropped
	// once nothing can refer to its old id (forgettable).
	replaced map[string]replacement
	// ambiguous: hostnames already warned about (several agents could be
	// the machine that came back), so the warning is not repeated.
	ambiguous map[string]bool
	// listed is what Mesos listed at the running Tick (tickMu held): a
	// power-off checks that no other agent on its machine is in use.
	listed map[string]Agent
	// unreactivated: per agent, the give-ups whose reactivation failed
	// (Mesos down), retried at every tick and warned about the first time
	// and then once a period (failures.go).
	unreactivated map[string]failurelog.State
	// blind: the spans without a current view of the agents (the last
	// one open while the view is stale); the clocks of the decisions do
	// not run in them (stale.go). paused: the notice that decisions are
	// paused. Both tickMu's.
	blind  []span
	paused failurelog.State
	// held: the agents held because the master lists them only as
	// recovered, whose hold was logged (once per hold). tickMu's.
	held map[string]bool
}

// NewManager checks the configuration and builds a manager; Load must
// follow.
func NewManager(cfg Config, store Store, mesos Mesos) (*Manager, error) {
	if cfg.OffAfter <= 0 {
		return nil, errors.New("power: the idle time before power-off must be positive (--power-off-after)")
	}
	if cfg.Provider == nil {
		return nil, errors.New("power: no provider (--power-provider exec, webhook or emulator)")
	}
	if store == nil || mesos == nil {
		return nil, errors.New("power: NewManager needs a store and a Mesos client")
	}
	if cfg.MinWarmCPUs < 0 || math.IsNaN(cfg.MinWarmCPUs) {
		return nil, fmt.Errorf("power: --power-min-warm-cpus must be >= 0, got %v", cfg.MinWarmCPUs)
	}
	if cfg.PowerOnTimeout <= 0 {
		cfg.PowerOnTimeout = 5 * time.Minute
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = 2 * time.Minute
	}
	if cfg.AvoidFor <= 0 {
		cfg.AvoidFor = 30 * time.Minute
	}
	if cfg.MaxFailures <= 0 {
		cfg.MaxFailures = 5
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	m := &Manager{cfg: cfg, store: store, mesos: mesos, log: cfg.Log.WithField("component", "power"),
		recs: map[string]*Record{}, idle: map[string]time.Time{}, kick: make(chan struct{}, 1), marking: map[string]bool{},
		replaced: map[string]replacement{}, ambiguous: map[string]bool{}, unreactivated: map[string]failurelog.State{},
		paused: failurelog.State{Every: cfg.PauseNoticeEvery}}
	m.cond = sync.NewCond(&m.mu)
	return m, nil
}

// Load reads the persisted records: a restart resumes every agent at its
// step, and knows again which agent ids were replaced by new ones.
func (m *Manager) Load(ctx context.Context) error {
	rs, err := m.store.PowerRecords(ctx)
	if err != nil {
		return fmt.Errorf("power: read agent power states: %w", err)
	}
	now := m.cfg.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range rs {
		r := rs[i]
		if r.ReplacedBy != "" {
			m.replaced[r.AgentID] = replacement{by: r.ReplacedBy, at: r.RegisteredAt, known: now}
			continue
		}
		m.recs[r.AgentID] = &r
	}
	return nil
}

// Kicked is signalled when a power-on was requested (Run's loop ticks at once).
func (m *Manager) Kicked() <-chan struct{} { return m.kick }

func (m *Manager) record(a Agent) *Record {
	r := m.recs[a.ID]
	if r == nil {
		r = &Record{AgentID: a.ID, State: StateOn}
		m.recs[a.ID] = r
	}
	if a.Hostname != "" {
		r.Hostname, r.Attributes = a.Hostname, a.Attributes
	}
	if a.CPUs > 0 || a.MemMB > 0 {
		r.CPUs, r.MemMB, r.PricePerHour = a.CPUs, a.MemMB, a.PricePerHour
	}
	return r
}

// put persists r's new state and then publishes it to the readers; on
// failure the old record is restored and the error returned (the step is
// tried again at the next Tick).
//
// A step works on its own copy of an agent's record (taken under m.mu,
// with tickMu held so no other step changes it, and PowerOn waiting for a
// step of its agent, see stepping): the records in m.recs
// are only written under m.mu, here, so the pass may read them while a
// Tick runs, and it sees a state only once the store has it.
func (m *Manager) put(ctx context.Context, r *Record, old Record) error {
	if err := m.store.PutPowerRecord(ctx, *r); err != nil {
		err = fmt.Errorf("power: record agent %s as %s: %w", r.AgentID, r.State, err)
		*r = old
		return err
	}
	published := *r
	m.mu.Lock()
	m.recs[r.AgentID] = &published
	m.mu.Unlock()
	if m.cfg.OnChange != nil && old.State != r.State {
		m.cfg.OnChange(*r)
	}
	return nil
}

// toFor moves r to state s (persisted first) for why, asked by job if
// not "" (logged as the field job).
func (m *Manager) toFor(ctx context.Context, r *Record, s State, why, job string) error {
	old := *r
	r.State, r.Since, r.Failures = s, m.cfg.Now(), 0
	if s != StateBooting {
		r.Requested = false
	}
	if why != "" {
		r.LastError = why
	}
	if err := m.put(ctx, r, old); err != nil {
		return err
	}
	m.stepUnreactivated(r.AgentID, false) // any move ends a give-up's failed reactivations: a later one warns anew
	// One message per state (what a log search looks for); the reason,
	// which varies ("idle for 10m0s"), is a field.
	f := logrus.Fields{"agent": r.AgentID, "hostname": r.Hostname, "from": old.State, "to": s}
	if why != "" {
		f["reason"] = why
	}
	if job != "" {
		f["job"] = job
	}
	m.log.WithFields(f).Info("agent power: " + string(s))
	return nil
}

// Tick moves every agent one step, given what Mesos shows now (a view
// read at this moment). wanted reports whether a waiting job could use an
// agent (it is then kept on). Errors of single agents are logged and
// retried at the next Tick; the returned error is the first of them.
func (m *Manager) Tick(ctx context.Context, agents []Agent, wanted func(Agent) bool) error {
	return m.TickView(ctx, View{Agents: agents, ReadAt: m.cfg.Now()}, wanted)
}

// TickView is Tick on a view that may be stale: then no power-off is
// decided and the decisions' clocks stand still, while power-ons proceed
// (stale.go); the operator is told (notePause).
func (m *Manager) TickView(ctx context.Context, v View, wanted func(Agent) bool) error {
	m.tickMu.Lock()
	defer m.tickMu.Unlock()
	now := m.cfg.Now()
	stale, why := staleness(v, now, m.cfg.StaleAfter)
	m.blind = blindSpans(m.blind, stale, v.ReadAt, now, m.clocksFrom(now))
	m.notePause(now, stale, why, v)
	if stale {
		return m.tickBlind(ctx)
	}
	agents := v.Agents
	m.mu.Lock()
	seen := make(map[string]Agent, len(agents))
	warm := 0.0
	var revived []Record
	firstSeen := map[string]bool{}
	for _, a := range agents {
		a.RegisteredAt = storedTime(a.RegisteredAt)
		skip, back := m.skipReplacedLocked(a)
		if skip {
			continue // an old id of a machine that came back under a new one (still listed a while)
		}
		seen[a.ID] = a
		if m.recs[a.ID] == nil {
			firstSeen[a.ID] = true
		}
		r := m.record(a)
		if back {
			revived = append(revived, *r)
		}
		if a.Active && r.State == StateOn {
			warm += a.CPUs
		}
	}
	ids := make([]string, 0, len(m.recs))
	for id := range m.recs {
		ids = append(ids, id)
	}
	m.listed = seen
	repl, ambiguous := replacements(m.recs, seen)
	for id, n := range repl {
		// A draining or powering-off agent's machine is live: an agent
		// already known beside it is another agent on the machine (a
		// master that failed over lists them again as they register, with
		// new registration times), not the machine back under a new id.
		if st := m.recs[id].State; (st == StateDraining || st == StatePoweringOff) && !firstSeen[n.ID] {
			delete(repl, id)
		}
	}
	forget := forgettable(m.replaced, agents, now, m.cfg.PowerOnTimeout)
	m.mu.Unlock()
	m.warnAmbiguous(ambiguous)
	sort.Strings(ids)
	var firstErr error
	note := func(err error, id string) {
		if err != nil {
			m.warnStep(err, id)
			if firstErr == nil {
				firstErr = err
			}
		}
	}
	for _, r := range revived {
		note(m.revive(ctx, r), r.AgentID)
	}
	for _, id := range forget {
		note(m.forget(ctx, id), id)
	}
	recovered := make(map[string]bool, len(v.Recovered))
	for _, id := range v.Recovered {
		recovered[id] = true
	}
	for id := range m.held {
		if _, back := seen[id]; back || !recovered[id] {
			delete(m.held, id) // re-registered, or gone: a later hold is logged anew
		}
	}
	for _, id := range ids {
		note(m.stepOne(id, func(r *Record) error {
			a, present := seen[id]
			if !present && recovered[id] {
				// Listed only as recovered by a master that failed over:
				// held as on a stale view (recoveredStep).
				m.clearIdle(id)
				m.noteHeld(r)
				if recoveredStep(*r) == blindPowerOn {
					return m.powerOn(ctx, r)
				}
				return nil
			}
			if n, ok := repl[id]; ok && r.State != StateOn {
				return m.adopt(ctx, now, r, n, a, present)
			}
			return m.step(ctx, now, r, a, present, &warm, wanted)
		}), id)
	}
	return firstErr
}

// stepOne runs a step of agent id's record on its own copy (see put),
// once no PowerOn is marking it; PowerOn waits meanwhile.
func (m *Manager) stepOne(id string, step func(r *Record) error) error {
	m.mu.Lock()
	for m.marking[id] {
		m.cond.Wait()
	}
	cur := m.recs[id]
	if cur == nil {
		m.mu.Unlock()
		return nil
	}
	r := *cur // the step's own copy (see put)
	m.stepping = id
	m.mu.Unlock()
	err := step(&r)
	m.mu.Lock()
	m.stepping = ""
	m.cond.Broadcast()
	m.mu.Unlock()
	return err
}

// storedTime is t as the store keeps it: PostgreSQL's timestamptz holds
// microseconds (rounding the rest), Mesos gives registration times to the
// nanosecond. Tick compares registrations at the store's precision, so a
// record read back by the next leader (up to a microsecond before the
// master's time) does not take the agent for one that registered again.
func storedTime(t time.Time) time.Time { return t.Truncate(time.Microsecond) }

func (m *Manager) step(ctx context.Context, now time.Time, r *Record, a Agent, present bool, warm *float64, wanted func(Agent) bool) error {
	listed := present && a.Listed
	// back: the agent registered again after power management let it go.
	back := listed && a.RegisteredAt.After(r.RegisteredAt)
	switch r.State {
	case StateOn:
		if !listed || !a.Active || a.Busy {
			// Gone, deactivated (by an operator: not ours to touch) or at
			// work: not idle.
			m.clearIdle(r.AgentID)
			return nil
		}
		since := m.idleSince(r.AgentID, now)
		idleFor := seenFor(since, now, m.blind) // not the time without a current view (stale.go)
		switch {
		case idleFor < m.cfg.OffAfter:
			return nil
		case !m.cfg.Selector.Match(r.Hostname, r.Attributes):
			return nil
		case wanted != nil && wanted(a):
			return nil
		case *warm-a.CPUs < m.cfg.MinWarmCPUs-1e-9:
			return nil
		}
		// The registration it leaves with: what tells a new agent on its
		// machine (a crash while draining) from an older one.
		r.RegisteredAt = a.RegisteredAt
		if err := m.to(ctx, r, StateDraining, fmt.Sprintf("idle for %s", idleFor.Round(time.Second))); err != nil {
			return err
		}
		*warm -= a.CPUs
		m.clearIdle(r.AgentID)
		return m.drain(ctx, now, r, a, listed)
	case StateDraining:
		return m.drain(ctx, now, r, a, listed)
	case StatePoweringOff:
		return m.powerOff(ctx, r, a, listed)
	case StateOff:
		if back {
			// It came back without us (someone powered it on): use it.
			return m.backOn(ctx, r, a, "registered again while off")
		}
		return nil
	case StateBooting:
		if back {
			m.idleSince(r.AgentID, now) // a fresh idle timer from now
			return m.backOn(ctx, r, a, "registered again")
		}
		if seenFor(r.Since, now, m.blind) > m.cfg.PowerOnTimeout {
			old := *r
			r.State, r.Since, r.Requested, r.Failures = StateOff, now, false, 0
			r.LastError = fmt.Sprintf("did not register within %s of the power-on; avoided until %s", m.cfg.PowerOnTimeout, now.Add(m.cfg.AvoidFor).Format(time.RFC3339))
			r.AvoidUntil = now.Add(m.cfg.AvoidFor)
			if err := m.put(ctx, r, old); err != nil {
				return err
			}
			m.log.WithFields(logrus.Fields{"agent": r.AgentID, "hostname": r.Hostname, "reason": r.LastError, "avoid_until": r.AvoidUntil.Format(time.RFC3339)}).
				Warn("agent power: it did not register after its power-on; back to off, avoided by plans until avoid_until: check the machine and its Mesos agent")
			return nil
		}
		if !r.Requested {
			return m.powerOn(ctx, r)
		}
		return nil
	}
	return fmt.Errorf("power: agent %s has unknown state %q", r.AgentID, r.State)
}

func (m *Manager) idleSince(id string, now time.Time) time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.idle[id]
	if !ok {
		m.idle[id] = now
		return now
	}
	return t
}

func (m *Manager) clearIdle(id string) {
	m.mu.Lock()
	delete(m.idle, id)
	m.mu.Unlock()
}

// backOn reactivates an agent that power management had drained and marks
// it on.
func (m *Manager) backOn(ctx context.Context, r *Record, a Agent, why string) error {
	if a.Deactivated {
		if err := m.mesos.ReactivateAgent(ctx, r.AgentID); err != nil {
			return err // it names the call and the agent (Mesos)
		}
	}
	r.AvoidUntil = time.Time{}
	return m.to(ctx, r, StateOn, why)
}

// drain keeps an agent in StateDraining moving: DEACTIVATE_AGENT until
// Mesos shows it deactivated, then (still idle) on to the power-off; back
// on when work came.
func (m *Manager) drain(ctx context.Context, now time.Time, r *Record, a Agent, listed bool) error {
	switch {
	case listed && a.Busy:
		return m.backOn(ctx, r, a, "work arrived while draining")
	case !listed:
		// Gone from Mesos while draining (its agent process stopped):
		// nothing can run there; power the machine off.
		if err := m.to(ctx, r, StatePoweringOff, "left Mesos while draining"); err != nil {
			return err
		}
		return m.powerOff(ctx, r, a, listed)
	case !a.Deactivated:
		if seenFor(r.Since, now, m.blind) > m.cfg.DrainTimeout {
			return m.backOn(ctx, r, a, fmt.Sprintf("not deactivated within %s", m.cfg.DrainTimeout))
		}
		if err := m.mesos.DeactivateAgent(ctx, r.AgentID); err != nil {
			return m.fail(ctx, r, err) // it names the call and the agent (Mesos): "deactivate agent X: deactivate agent X: ..." was one too many
		}
		return nil
	}
	old := *r
	r.RegisteredAt = a.RegisteredAt
	if err := m.put(ctx, r, old); err != nil {
		return err
	}
	if err := m.to(ctx, r, StatePoweringOff, "deactivated and idle"); err != nil {
		return err
	}
	return m.powerOff(ctx, r, a, listed)
}

// powerOff asks the provider to power a drained, idle agent off. An agent
// that shows any work is reactivated instead: power management never
// powers off an agent that holds work.
func (m *Manager) powerOff(ctx context.Context, r *Record, a Agent, listed bool) error {
	if listed && a.Busy {
		return m.backOn(ctx, r, a, "work arrived before the power-off")
	}
	// The provider powers the machine (by its hostname), not the agent:
	// another agent listed on it that is at work (the machine came back
	// from a crash under a new id that could not be matched, or it runs
	// several agents) would go down with it: the power-off is given up.
	// One that is on and idle may still get work: the power-off waits for
	// it to drain in turn (its own idle timer; it then powers the machine
	// off, this agent's record being past on), for at most OffAfter +
	// DrainTimeout, then is given up. Giving up at once made two idle
	// agents on a machine take turns draining and coming back on, and the
	// machine was never powered off.
	// An agent no longer listed waits too, whatever the other one does: it
	// is deactivated (by us), and when it registers again (a slow restart,
	// a master failover) only this state brings it back on, reactivated;
	// a record put on meanwhile left it deactivated for good. If it never
	// comes back, the machine goes off with the other agent's power-off.
	if busy, on := m.inUseOn(r); busy != "" || on != "" {
		why := "agent " + busy + " on its machine is in use"
		if busy == "" {
			if m.cfg.Now().Sub(r.Since) <= m.cfg.OffAfter+m.cfg.DrainTimeout {
				return nil // waiting for the other agent to drain
			}
			why = "agent " + on + " on its machine stayed on"
		}
		if !listed {
			return nil
		}
		return m.backOn(ctx, r, a, why)
	}
	if m.cfg.Guard != nil {
		if err := m.cfg.Guard(); err != nil {
			return fmt.Errorf("power off agent %s not attempted: %w", r.AgentID, err)
		}
	}
	if err := m.cfg.Provider.PowerOff(ctx, targetOf(r)); err != nil {
		return m.fail(ctx, r, fmt.Errorf("power off agent %s with %s: %w", r.AgentID, m.cfg.Provider.Name(), err))
	}
	return m.to(ctx, r, StateOff, "powered off by "+m.cfg.Provider.Name())
}

func (m *Manager) powerOn(ctx context.Context, r *Record) error {
	if m.cfg.Guard != nil {
		if err := m.cfg.Guard(); err != nil {
			return fmt.Errorf("power on agent %s not attempted: %w", r.AgentID, err)
		}
	}
	if err := m.cfg.Provider.PowerOn(ctx, targetOf(r)); err != nil {
		old := *r
		r.Failures++
		r.LastError = fmt.Sprintf("power on with %s: %v", m.cfg.Provider.Name(), err)
		gaveUp := r.Failures >= m.cfg.MaxFailures
		failures := r.Failures
		if gaveUp {
			now := m.cfg.Now()
			r.State, r.Since, r.Failures, r.AvoidUntil = StateOff, now, 0, now.Add(m.cfg.AvoidFor)
		}
		if perr := m.put(ctx, r, old); perr != nil {
			return errors.Join(err, perr)
		}
		err = fmt.Errorf("power on agent %s: %w", r.AgentID, err)
		if gaveUp {
			m.log.WithError(err).WithFields(failFields(err, logrus.Fields{"agent": r.AgentID, "hostname": r.Hostname, "failures": failures,
				"avoid_until": r.AvoidUntil.Format(time.RFC3339), "step": "power_on"})).
				Warn("agent power: giving up powering it on; it stays off, avoided by plans until avoid_until: fix the power provider (the error says why)")
			return warnedError{err}
		}
		return err
	}
	old := *r
	r.Requested = true
	return m.put(ctx, r, old)
}

// PowerOn is the scheduler core's Provisioner call for an agent a plan
// activates: an agent that is off is marked booting (persisted) and the
// provider is called by the next Tick (Kicked is signalled); any other
// agent is left as it is. It does not wait for the agent.
func (m *Manager) PowerOn(ctx context.Context, agentID string) error {
	m.mu.Lock()
	for m.stepping == agentID || m.marking[agentID] {
		m.cond.Wait()
	}
	cur := m.recs[agentID]
	var r Record
	if cur != nil {
		r = *cur // this call's own copy (see put)
	}
	if cur == nil || r.State != StateOff {
		m.mu.Unlock()
		return nil
	}
	m.marking[agentID] = true
	m.mu.Unlock()
	why, job := causeOf(ctx)
	err := m.toFor(ctx, &r, StateBooting, why, job)
	m.mu.Lock()
	delete(m.marking, agentID)
	m.cond.Broadcast()
	m.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case m.kick <- struct{}{}:
	default:
	}
	return nil
}

// Run ticks every interval (and at once after a power-on request) until
// ctx ends; observe gives the view of the agents (stale or not) and wanted
// is as for Tick.
func (m *Manager) Run(ctx context.Context, every time.Duration, observe func(ctx context.Context) View, wanted func(Agent) bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-m.kick:
		}
		v := observe(ctx)
		if ctx.Err() != nil {
			return
		}
		_ = m.TickView(ctx, v, wanted)
	}
}
