package scheduler

import (
	"context"
	"math"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// AtRiskMarker is implemented by stores that can flag a job that holds
// resources at risk (package store): the core flags a running job that
// ran past its p90 prediction. Stores without it (the simulator's) only
// see the flag in the core's views.
type AtRiskMarker interface {
	// MarkRunningAtRisk sets job id's at-risk flag with an event, if it
	// is RUNNING; it fails with ErrStale otherwise.
	MarkRunningAtRisk(ctx context.Context, id, reason string) error
}

// learnedRun records the plan's shape and the model's run time on it; a
// prediction (not the prior) replaces the user's estimate as the job's
// expected run time (p50: what its agents are expected to stay active
// for, what evicting it would cost).
func (a *activeJob) learnedRun(shape RunShape, pred perfmodel.Prediction) {
	a.shape, a.shapeKnown = shape, true
	a.pred = pred
	if pred.P50 > 0 && pred.Level != perfmodel.LevelPrior {
		a.estimate = secondsDuration(pred.P50)
	}
}

// learnRecovered predicts the run time of a job found holding resources
// at a restart, on its saved plan (its agents' loads are not known).
func (c *Core) learnRecovered(a *activeJob) {
	if c.cfg.Model == nil || a.plan == nil {
		return
	}
	shape := shapeOf(*a.plan, placement.Snapshot{}, 0)
	a.shape = shape
	if p, ok := c.cfg.Model.Predict(c.runKey(&a.job), max(1, a.plan.Executors()), shape.Placement()); ok {
		a.pred = p
		a.estimate = secondsDuration(p.P50)
	}
}

// overrunReason is the at-risk reason of a running job past its p90.
const overrunReason = "at risk: running past its p90 predicted run time"

// flagOverruns flags at risk every running job that has run longer than
// its p90 prediction (once), and returns when the next one would.
func (c *Core) flagOverruns(ctx context.Context, now time.Time) time.Time {
	if c.cfg.Model == nil {
		return time.Time{}
	}
	var due []*activeJob
	var next time.Time
	c.actMu.Lock()
	for _, a := range c.active {
		if a.overrun || a.state != Running || a.startedAt == nil || !(a.pred.P90 > 0) || a.pred.Level == perfmodel.LevelPrior {
			continue
		}
		// Flagged from its p90 on: the pass woken at the p90 flags it (one
		// that found it not yet past would ask to be woken at the same
		// instant again, for ever on a virtual clock).
		at := a.startedAt.Add(secondsDuration(a.pred.P90))
		if !now.Before(at) {
			a.overrun = true
			due = append(due, a)
		} else if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	c.actMu.Unlock()
	m, _ := c.store.(AtRiskMarker)
	for _, a := range due {
		f := logrus.Fields{"job": a.job.ID, "name": a.job.Name, "p90_seconds": math.Round(a.pred.P90*10) / 10,
			"ran_seconds": math.Round(now.Sub(*a.startedAt).Seconds()*10) / 10, "model_level": string(a.pred.Level)}
		if a.job.Team != "" {
			f["team"] = a.job.Team
		}
		if a.job.DeadlineAt != nil {
			f["deadline_at"] = a.job.DeadlineAt.UTC().Format(time.RFC3339)
		}
		c.log.WithFields(f).Info("running job past its p90 prediction: at risk")
		if m == nil {
			continue
		}
		if err := m.MarkRunningAtRisk(ctx, a.job.ID, overrunReason); err != nil {
			c.log.WithError(err).WithField("job", a.job.ID).Debug("flag overrun")
		}
	}
	return next
}

// RunPrediction is what the model predicted, at its start, for the
// current run of job id, which holds resources (the p90 its overrun
// check uses; at a restart, the prediction on its saved plan then):
// ok=false when the job holds nothing here or no prediction was made.
func (c *Core) RunPrediction(id string) (perfmodel.Prediction, bool) {
	c.actMu.Lock()
	defer c.actMu.Unlock()
	a := c.active[id]
	if a == nil || !(a.pred.P50 > 0) {
		return perfmodel.Prediction{}, false
	}
	return a.pred, true
}
