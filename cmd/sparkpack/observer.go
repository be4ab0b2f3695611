package main

import (
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/metrics"
	"github.com/sparkpack/sparkpack/scheduler"
)

// coreObserver is what serve does with what the scheduler core reports:
// metrics, the dashboard's event stream, the placement statistics, a
// warning for a slow pass.
type coreObserver struct {
	l      *live
	m      *metrics.Metrics
	broker *api.Broker
	log    logrus.FieldLogger
}

var _ scheduler.Observer = coreObserver{}

func (o coreObserver) JobChanged(j scheduler.Job) {
	if j.State == scheduler.Reserving && j.StartedAt == nil && j.Attempt <= 1 {
		// Its first start: how long it waited since it was submitted.
		o.m.ObserveWait(time.Since(j.SubmittedAt))
	}
	o.broker.Publish("job", j)
}

func (o coreObserver) Placed(p scheduler.PlacementStat) {
	o.l.stats.add(p)
	o.m.ObservePlacement(p.Elapsed)
	o.broker.Publish("placement", p)
}

func (o coreObserver) PassDone(p scheduler.PassStat) {
	o.m.ObservePass(p.Full, p.Elapsed)
	if p.Elapsed > time.Second {
		o.log.WithFields(logrus.Fields{"component": "scheduler", "full": p.Full, "elapsed": p.Elapsed.String(),
			"admitted": p.Admitted, "started": p.Started, "waiting": p.Waiting}).Warn("slow scheduling pass")
	}
}

func (o coreObserver) Evicting(p scheduler.PreemptStat) { o.m.Preempted(string(p.Policy)) }

func (o coreObserver) Evicted(_ scheduler.Job, lost time.Duration) { o.m.LostWork(lost) }
