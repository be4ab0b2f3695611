package scheduler

import (
	"math"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// MaxCostGap bounds the time EstimateGap counts: a gap longer than this
// (sparkpack down for over a day, a database restored from an old backup,
// a clock jumped forward) is counted as this long, not guessed at.
const MaxCostGap = 24 * time.Hour

// GapPower is an agent's stored power state as the gap estimate reads it
// (power.State's names; "" when power management keeps no record, as
// without --power-off-after: the agent was on).
type GapPower struct {
	State string
	Since time.Time
}

// GapAgent is an agent the new meter found active at its first look after
// a restart or failover: it held a reservation or a driver of ours, which
// only a running sparkpack makes, so it held it before the gap too.
type GapAgent struct {
	placement.Agent
	Holdings []placement.Holding
	// FirstActive is when the new meter first counted it (the gap ends
	// there: from then on the meter counts it itself).
	FirstActive time.Time
	Power       GapPower
}

// GapInput is what the gap is estimated from: when the meter was last
// saved (the stored checkpoint), the agents active at the new meter's
// first look, and the bound (MaxCostGap when zero).
type GapInput struct {
	SavedAt time.Time
	Agents  []GapAgent
	Max     time.Duration
}

// GapAgentCost is one agent's part of the gap.
type GapAgentCost struct {
	AgentID  string
	From, To time.Time
	USD      float64
}

// GapEstimate is the cost of the time no meter ran, with the ledger
// entries that attribute it (to the jobs the agents held, the rest idle),
// and why it is what it is.
type GapEstimate struct {
	USD     float64
	Agents  []GapAgentCost
	Entries []LedgerEntry
	// Capped: some agent's gap was longer than the bound and was counted
	// as the bound.
	Capped bool
	// Skipped names the agents not counted and why (clock went backwards,
	// powered off).
	Skipped map[string]string
}

// EstimateGap decides what the time between the stored checkpoint and the
// new meter's first look cost. The meter counts an agent while it holds a
// reservation or driver of ours: one that does so at the first look held
// it through the gap (nobody else makes them, and they outlive a crash of
// sparkpack), unless its power record says it was off. So each such agent
// is counted from the checkpoint (or from when its record says it went on
// booting, if later) to when the new meter first counted it (or to when
// its record says it went off, if earlier), at most Max. It is an
// estimate: an agent whose job ended during the gap is not counted (it is
// idle at the first look), and one whose job started in the last seconds
// before the crash is counted from the checkpoint. A gap that ends before
// it starts (the clock went backwards, or another leader saved after the
// first look) counts nothing.
func EstimateGap(in GapInput) GapEstimate {
	limit := in.Max
	if limit <= 0 {
		limit = MaxCostGap
	}
	est := GapEstimate{Skipped: map[string]string{}}
	at := &attribution{ledger: map[ledgerKey]*Usage{}, jobs: map[string]*Usage{}}
	if in.SavedAt.IsZero() {
		return est // never saved: the meter starts from $0, nothing was missed
	}
	agents := slices.Clone(in.Agents)
	slices.SortFunc(agents, func(a, b GapAgent) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	for _, a := range agents {
		from, to := in.SavedAt, a.FirstActive
		switch a.Power.State {
		case "off":
			if !a.Power.Since.After(from) {
				est.Skipped[a.ID] = "powered off through the gap"
				continue
			}
			if a.Power.Since.Before(to) {
				to = a.Power.Since
			}
		case "booting":
			if a.Power.Since.After(from) {
				from = a.Power.Since
			}
		}
		if !to.After(from) {
			est.Skipped[a.ID] = "the gap ends before it starts (clock went backwards, or the meter was saved after the first look)"
			continue
		}
		if to.Sub(from) > limit {
			from = to.Add(-limit)
			est.Capped = true
		}
		if a.PriceMicroUSDPerHour <= 0 {
			continue
		}
		am := &agentMeter{price: a.PriceMicroUSDPerHour, active: true, since: from, mark: from, shares: sharesOf(a.Agent, a.Holdings)}
		m := &CostMeter{at: at}
		m.accrueLocked(am, to)
		usd := microUSDHoursToUSD(a.PriceMicroUSDPerHour, to.Sub(from))
		est.USD += usd
		est.Agents = append(est.Agents, GapAgentCost{AgentID: a.ID, From: from, To: to, USD: usd})
	}
	for k, u := range at.ledger {
		if u.CostUSD == 0 && u.CPUSeconds == 0 && u.MemMBSeconds == 0 {
			continue
		}
		est.Entries = append(est.Entries, LedgerEntry{Bucket: time.Unix(k.bucket, 0).UTC(), JobID: k.job, Usage: *u})
	}
	sortLedger(est.Entries)
	if math.IsNaN(est.USD) || est.USD < 0 {
		est.USD = 0
	}
	return est
}
