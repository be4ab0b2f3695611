package main

import (
	"context"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// costSaveEvery is how often the leader saves the cost meter's total.
const costSaveEvery = 10 * time.Second

// costCheckEvery is how often the leader looks whether a save is due
// (costSaveDue): at once after an agent went idle, else every
// costSaveEvery.
const costCheckEvery = time.Second

// costResumeEvery is how often, until the meter has resumed, it looks
// whether the core has had its first look at the cluster: the figures
// are not shown before (they would be lower than the last ones shown).
const costResumeEvery = 250 * time.Millisecond

// costBase is the cost meter's total as the database had it when this
// leadership began, plus the estimated cost of the time no meter ran (from
// the stored checkpoint to this term's first look: scheduler.EstimateGap):
// the scheduler core meters only its own term, and the meter shown
// (/api/v1/cost, sparkpack_cluster_cost_usd) is base plus that, so it does
// not start again from $0, nor go back, at a restart or failover.
type costBase struct {
	mu      sync.Mutex
	usd     float64
	loaded  bool
	savedAt time.Time // the stored checkpoint
	// resumed: the gap was added (or there was none); only then are the
	// figures shown and saved.
	resumed bool
	// gapWriter is the ledger writer the gap's entries are saved under (one
	// per term, so that a save sent again counts once).
	gapWriter string
	// lastSave and idleSaved: when the term last saved, and the meter's
	// IdleChanges then (costSaveDue).
	lastSave  time.Time
	idleSaved uint64
}

// costSaveDue decides whether the leader saves the meter now: every
// costSaveEvery, and at the next check (costCheckEvery) after an agent
// went idle. An agent still active at a crash is counted again by the next
// leader (scheduler.EstimateGap) from the last save; one that went idle
// is not, so its last active seconds are saved without waiting.
func costSaveDue(now, lastSave time.Time, idleNow, idleSaved uint64) bool {
	return idleNow != idleSaved || !now.Before(lastSave.Add(costSaveEvery))
}

func (b *costBase) get() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usd
}

// ready is the base once the meter has resumed (ok false before).
func (b *costBase) ready() (float64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usd, b.resumed
}

// errCostResuming answers /api/v1/cost (503, retry) until the meter has
// resumed from its stored total.
type errCostResuming struct{}

func (errCostResuming) Error() string {
	return "the cost meter is resuming from its saved total (it waits for the Mesos master to list the agents; if this lasts, check the master and --mesos-master)"
}
func (errCostResuming) Unwrap() error { return api.ErrNoScheduler }

// keepCostMeter loads the saved total (trying again until the database
// answers), adds the gap once the core has looked at the cluster, then
// saves base + the core's total when costSaveDue says so and once more
// when ctx ends. A save never lowers the stored total.
func (l *live) keepCostMeter(ctx context.Context, st *store.Store, log logrus.FieldLogger) {
	t := time.NewTicker(costResumeEvery)
	defer t.Stop()
	fast := true
	step := func(ctx context.Context, force bool) {
		l.costBase.mu.Lock()
		loaded, resumed := l.costBase.loaded, l.costBase.resumed
		l.costBase.mu.Unlock()
		if !loaded {
			usd, at, err := st.CostSaved(ctx)
			if err != nil {
				if ctx.Err() == nil { // a term that ends at once is no failure to report
					log.WithError(err).Warn("reading the saved cost meter failed; the meter is not shown until it can be read (check the database)")
				}
				return
			}
			l.costBase.mu.Lock()
			l.costBase.usd, l.costBase.savedAt, l.costBase.loaded = usd, at, true
			if l.costBase.gapWriter == "" {
				l.costBase.gapWriter = uuid.NewString()
			}
			l.costBase.mu.Unlock()
			return // resumed at the next step (costResumeEvery)
		}
		if !resumed && !l.resumeCost(ctx, st, log) {
			return
		}
		idle := l.core.CostMeter().IdleChanges()
		l.costBase.mu.Lock()
		due := force || costSaveDue(time.Now(), l.costBase.lastSave, idle, l.costBase.idleSaved)
		l.costBase.mu.Unlock()
		if !due {
			return
		}
		// The total and what the meter attributed to jobs and idle, saved
		// together (store.SaveCost): the ledger adds up to the total.
		at, total, entries := l.core.CostCheckpoint()
		if err := st.SaveCost(ctx, l.core.CostMeter().Writer(), l.costBase.get()+total, entries); err != nil {
			if ctx.Err() == nil {
				log.WithError(err).Warn("saving the cost meter failed; will try again")
			}
			return
		}
		l.costBase.mu.Lock()
		l.costBase.lastSave, l.costBase.idleSaved = time.Now(), idle
		l.costBase.mu.Unlock()
		l.core.CostMeter().ForgetBefore(at)
	}
	step(ctx, false)
	for {
		select {
		case <-ctx.Done():
			// The last figure of this term (a deposed leader's save is
			// fenced off; a lower total never overwrites a higher one).
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			step(sctx, true)
			cancel()
			return
		case <-t.C:
			if fast {
				l.costBase.mu.Lock()
				resumed := l.costBase.resumed
				l.costBase.mu.Unlock()
				if !resumed {
					step(ctx, false)
					continue
				}
				fast = false
				t.Reset(costCheckEvery)
			}
			step(ctx, false)
		}
	}
}

// resumeCost adds the cost of the time no meter ran, once the core has
// had its first look at the cluster: decided by scheduler.EstimateGap from
// the stored checkpoint, the agents active at that look and their stored
// power records, then saved (total and ledger, under the term's gap
// writer) before it is shown. It reports whether the meter has resumed.
func (l *live) resumeCost(ctx context.Context, st *store.Store, log logrus.FieldLogger) bool {
	first, ok := l.core.CostMeter().FirstLook()
	if !ok {
		return false
	}
	l.costBase.mu.Lock()
	base, savedAt, writer := l.costBase.usd, l.costBase.savedAt, l.costBase.gapWriter
	l.costBase.mu.Unlock()
	var est scheduler.GapEstimate
	if len(first) > 0 && !savedAt.IsZero() {
		records, err := st.PowerRecords(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.WithError(err).Warn("reading the agents' power records for the cost of the time no meter ran failed; will try again (check the database)")
			}
			return false
		}
		byID := map[string]scheduler.GapPower{}
		for _, r := range records {
			byID[r.AgentID] = scheduler.GapPower{State: string(r.State), Since: r.Since}
		}
		for i := range first {
			first[i].Power = byID[first[i].ID]
		}
		est = scheduler.EstimateGap(scheduler.GapInput{SavedAt: savedAt, Agents: first})
	}
	if est.USD > 0 {
		if err := st.SaveCost(ctx, writer, base+est.USD, est.Entries); err != nil {
			if ctx.Err() == nil {
				log.WithError(err).Warn("saving the cost of the time no meter ran failed; will try again (the meter is not shown meanwhile)")
			}
			return false
		}
		from, to := est.Agents[0].From, est.Agents[0].To
		for _, a := range est.Agents {
			from, to = minTime(from, a.From), maxTime(to, a.To)
		}
		f := logrus.Fields{"gap_usd": est.USD, "gap_from": from, "gap_to": to, "gap_agents": len(est.Agents), "saved_usd": base}
		if est.Capped {
			log.WithFields(f).Warnf("the cost meter was not running for over %s; counted the agents that hold our reservations for %s only (an estimate: check the provider's bill for that time)", scheduler.MaxCostGap, scheduler.MaxCostGap)
		} else {
			log.WithFields(f).Info("the cost meter counted the time no meter ran (an estimate: the agents holding our reservations or drivers, from the last save to this start)")
		}
	}
	l.costBase.mu.Lock()
	l.costBase.usd += est.USD
	l.costBase.resumed = true
	l.costBase.mu.Unlock()
	return true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
