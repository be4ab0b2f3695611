package scheduler

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// CostPoint is one point of the cumulative cost series: the cluster's cost
// from the meter's start up to T. Between two points the cost grows
// linearly (the set of active agents only changes at points).
type CostPoint struct {
	T        time.Time `json:"t"`
	TotalUSD float64   `json:"totalUSD"`
}

// AgentCost is one agent's share of the bill.
type AgentCost struct {
	AgentID         string  `json:"agentId"`
	PriceUSDPerHour float64 `json:"priceUSDPerHour"`
	Active          bool    `json:"active"`
	ActiveSeconds   float64 `json:"activeSeconds"`
	CostUSD         float64 `json:"costUSD"`
}

// CostReport is the cost of the cluster so far (GET /api/v1/cost).
type CostReport struct {
	At                 time.Time   `json:"at"`
	TotalUSD           float64     `json:"totalUSD"`
	BurnRateUSDPerHour float64     `json:"burnRateUSDPerHour"`
	ActiveAgents       int         `json:"activeAgents"`
	AgentActiveSeconds float64     `json:"agentActiveSeconds"`
	Series             []CostPoint `json:"series"`
	Agents             []AgentCost `json:"agents"`
}

// DefaultCostSeriesPoints bounds the cost series kept in memory; when it is
// exceeded every other point is dropped (the first and last always stay).
const DefaultCostSeriesPoints = 4096

type agentMeter struct {
	price  int64 // micro-USD per hour
	active bool
	since  time.Time     // start of the current active interval
	closed time.Duration // active time of finished intervals
	// Attribution (attribution.go): the jobs the cost is split among, and
	// how far the agent's time was attributed.
	shares []jobShare
	mark   time.Time
	// What shares were computed from.
	holds               []placement.Holding
	sizeCPUs, sizeMemMB float64
}

// CostMeter implements thesis eq. 4.11: the cost of a run is, per agent,
// its active time times its price, summed over agents. An agent is active
// while it holds any reservation or task of ours; idle agents cost nothing.
// Time is prorated to the nanosecond (no billing-hour rounding). It is safe
// for concurrent use; times passed to it must not go backwards.
type CostMeter struct {
	mu        sync.Mutex
	start     time.Time
	last      time.Time
	agents    map[string]*agentMeter
	order     []string
	unsorted  bool // order has new agents at its end (see sortedLocked)
	series    []CostPoint
	MaxPoints int // 0 means DefaultCostSeriesPoints
	at        *attribution
	// looked: the first Observe happened; first holds the agents active
	// then (FirstLook).
	looked bool
	first  []GapAgent
	// wentIdle counts the agents that went idle (IdleChanges).
	wentIdle uint64
}

// NewCostMeter starts metering at start with every agent idle.
func NewCostMeter(start time.Time) *CostMeter {
	m := &CostMeter{start: start, last: start, agents: map[string]*agentMeter{}}
	m.series = []CostPoint{{T: start, TotalUSD: 0}}
	return m
}

func microUSDHoursToUSD(priceMicroPerHour int64, d time.Duration) float64 {
	return float64(priceMicroPerHour) * d.Hours() / 1e6
}

func (m *CostMeter) activeTime(a *agentMeter, t time.Time) time.Duration {
	d := a.closed
	if a.active && t.After(a.since) {
		d += t.Sub(a.since)
	}
	return d
}

// sortedLocked returns the agent ids in order. New agents are appended and
// sorted once here: sorting at every insertion cost seconds when a cluster
// of 30,000 agents was first seen.
func (m *CostMeter) sortedLocked() []string {
	if m.unsorted {
		slices.Sort(m.order)
		m.unsorted = false
	}
	return m.order
}

func (m *CostMeter) totalLocked(t time.Time) float64 {
	var usd float64
	for _, id := range m.sortedLocked() {
		a := m.agents[id]
		usd += microUSDHoursToUSD(a.price, m.activeTime(a, t))
	}
	return usd
}

// SetActive records that agentID (price in micro-USD per hour) became
// active or idle at t. It reports whether the state changed. The price of
// an agent is taken when it becomes active.
func (m *CostMeter) SetActive(t time.Time, agentID string, priceMicroUSDPerHour int64, active bool) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.setLocked(t, agentID, priceMicroUSDPerHour, active)
}

func (m *CostMeter) setLocked(t time.Time, id string, price int64, active bool) bool {
	if t.Before(m.last) {
		t = m.last
	}
	m.last = t
	a := m.agents[id]
	if a == nil {
		a = &agentMeter{}
		m.agents[id] = a
		m.order = append(m.order, id)
		m.unsorted = true
	}
	if a.active == active {
		return false
	}
	if active {
		a.price = price
		a.since = t
		a.mark = t
	} else {
		m.accrueLocked(a, t)
		a.closed += t.Sub(a.since)
		m.wentIdle++
	}
	a.active = active
	m.appendPoint(CostPoint{T: t, TotalUSD: m.totalLocked(t)})
	return true
}

func (m *CostMeter) appendPoint(p CostPoint) {
	if n := len(m.series); n > 0 && m.series[n-1].T.Equal(p.T) {
		m.series[n-1] = p
		return
	}
	m.series = append(m.series, p)
	limit := m.MaxPoints
	if limit <= 0 {
		limit = DefaultCostSeriesPoints
	}
	if len(m.series) > limit && limit >= 3 {
		kept := m.series[:1]
		for i := 1; i < len(m.series)-1; i++ {
			if i%2 == 0 {
				kept = append(kept, m.series[i])
			}
		}
		kept = append(kept, m.series[len(m.series)-1])
		m.series = kept
	}
}

// Observe makes the meter's active set equal to the snapshot's: every
// agent with Active set is active from t, every other agent idle. It
// returns the agents that went idle and those that became active.
func (m *CostMeter) Observe(t time.Time, s placement.Snapshot) (wentIdle, wentActive []string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := make(map[string]bool, len(s.Agents))
	if !m.looked {
		m.looked = true
		first := t
		if first.Before(m.last) {
			first = m.last
		}
		for _, a := range s.Agents {
			if a.Active {
				m.first = append(m.first, GapAgent{Agent: a, Holdings: slices.Clone(s.Holdings[a.ID]), FirstActive: first})
			}
		}
	}
	for _, a := range s.Agents {
		seen[a.ID] = true
		changed := m.setLocked(t, a.ID, a.PriceMicroUSDPerHour, a.Active)
		m.observeHoldingsLocked(t, m.agents[a.ID], a, s.Holdings[a.ID])
		if changed {
			if a.Active {
				wentActive = append(wentActive, a.ID)
			} else {
				wentIdle = append(wentIdle, a.ID)
			}
		}
	}
	// Agents gone from the cluster stop costing.
	for _, id := range slices.Clone(m.sortedLocked()) {
		if !seen[id] && m.agents[id].active {
			m.setLocked(t, id, 0, false)
			m.agents[id].shares, m.agents[id].holds = nil, nil
			wentIdle = append(wentIdle, id)
		}
	}
	return wentIdle, wentActive
}

// FirstLook is the agents active at the meter's first look at the
// cluster (its first Observe: a snapshot the cluster answered), with when
// it began counting them, for EstimateGap; ok is false until that look.
func (m *CostMeter) FirstLook() (agents []GapAgent, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.first), m.looked
}

// IdleChanges counts the times an agent went idle: the saver saves soon
// after it moves, since the time such an agent was active before would
// not be counted again after a crash (EstimateGap counts only the agents
// still active).
func (m *CostMeter) IdleChanges() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.wentIdle
}

// TotalUSD is the cost from the start up to t.
func (m *CostMeter) TotalUSD(t time.Time) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.totalLocked(t)
}

// BurnRateUSDPerHour is the summed hourly price of the active agents now.
func (m *CostMeter) BurnRateUSDPerHour() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var p int64
	for _, a := range m.agents {
		if a.active {
			p += a.price
		}
	}
	return float64(p) / 1e6
}

// Report is the cost at t: total, burn rate, the series (ending with a
// point at t) and per-agent figures.
func (m *CostMeter) Report(t time.Time) CostReport {
	return m.report(t, true)
}

// Totals is Report without the per-agent costs and the series: what a
// gauge or a sample reads, without a list of every agent (30,000 entries
// on a large cluster) built each time.
func (m *CostMeter) Totals(t time.Time) CostReport {
	return m.report(t, false)
}

func (m *CostMeter) report(t time.Time, full bool) CostReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.Before(m.last) {
		t = m.last
	}
	r := CostReport{At: t, TotalUSD: m.totalLocked(t)}
	if full {
		r.Agents = make([]AgentCost, 0, len(m.agents))
	}
	var burn int64
	for _, id := range m.sortedLocked() {
		a := m.agents[id]
		at := m.activeTime(a, t)
		if a.active {
			burn += a.price
			r.ActiveAgents++
		}
		r.AgentActiveSeconds += at.Seconds()
		if full {
			r.Agents = append(r.Agents, AgentCost{
				AgentID: id, PriceUSDPerHour: float64(a.price) / 1e6, Active: a.active,
				ActiveSeconds: at.Seconds(), CostUSD: microUSDHoursToUSD(a.price, at),
			})
		}
	}
	r.BurnRateUSDPerHour = float64(burn) / 1e6
	if !full {
		return r
	}
	r.Series = slices.Clone(m.series)
	if n := len(r.Series); n == 0 || r.Series[n-1].T.Before(t) {
		r.Series = append(r.Series, CostPoint{T: t, TotalUSD: r.TotalUSD})
	}
	return r
}

// Provisioner powers agents that are off on again (for example by
// starting cloud VMs). The Core calls PowerOn for the agents a plan
// activates before applying it (it must return quickly: the plan waits
// for the agent, not the core). Powering idle agents off is not the
// core's call: package power does it on its own idle timer, from what
// Mesos shows (an agent idle for the core may hold another framework's
// work).
type Provisioner interface {
	PowerOn(ctx context.Context, agentID string) error
}

// Standby gives the agents that are powered off and may be powered on for
// a plan (with their whole capacity free), and those being powered on
// (with nothing free yet: they count only when deciding whether a job
// could ever run here). Package power implements it.
type Standby interface {
	StandbyAgents() []placement.Agent
}

// NopProvisioner leaves agents as they are (the default): idle agents are
// simply not counted as cost.
type NopProvisioner struct{}

func (NopProvisioner) PowerOn(context.Context, string) error { return nil }
