package main

import (
	"context"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/store"
)

// costSaveEvery is how often the leader saves the cost meter's total.
const costSaveEvery = 10 * time.Second

// costBase is the cost meter's total as the database had it when this
// leadership began: the scheduler core meters only its own term, and the
// meter shown (/api/v1/cost, sparkpack_cluster_cost_usd) is base plus that,
// so it does not start again from $0 at every restart or failover.
type costBase struct {
	mu     sync.Mutex
	usd    float64
	loaded bool
}

func (b *costBase) get() float64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.usd
}

// keepCostMeter loads the saved total (trying again until the database
// answers), then saves base + the core's total every costSaveEvery and
// once more when ctx ends. A save never lowers the stored total.
func (l *live) keepCostMeter(ctx context.Context, st *store.Store, log logrus.FieldLogger) {
	t := time.NewTicker(costSaveEvery)
	defer t.Stop()
	step := func(ctx context.Context) {
		l.costBase.mu.Lock()
		loaded := l.costBase.loaded
		l.costBase.mu.Unlock()
		if !loaded {
			usd, err := st.CostTotal(ctx)
			if err != nil {
				if ctx.Err() == nil { // a term that ends at once is no failure to report
					log.WithError(err).Warn("reading the saved cost meter failed; the meter counts from this start until it can be read")
				}
				return
			}
			l.costBase.mu.Lock()
			l.costBase.usd, l.costBase.loaded = usd, true
			l.costBase.mu.Unlock()
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
		l.core.CostMeter().ForgetBefore(at)
	}
	step(ctx)
	for {
		select {
		case <-ctx.Done():
			// The last figure of this term (a deposed leader's save is
			// fenced off; a lower total never overwrites a higher one).
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			step(sctx)
			cancel()
			return
		case <-t.C:
			step(ctx)
		}
	}
}
