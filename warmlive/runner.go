package warmlive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/forecast"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/warmpool"
)

// Defaults of Config.
const (
	DefaultEvery    = time.Minute
	DefaultWindow   = 5 * 7 * 24 * time.Hour
	DefaultBootTime = 60 * time.Second
)

// Config configures a Runner; the zero value takes every default.
type Config struct {
	// Every is the interval between decisions (and the lead of the
	// power-on-ahead window); default DefaultEvery.
	Every time.Duration
	// Window is how far back the history is read (default DefaultWindow);
	// Limit bounds its rows (default store.MaxSubmissionHistory).
	Window time.Duration
	Limit  int
	// BootTime is how long an agent takes from power-on to registering
	// with Mesos (default DefaultBootTime).
	BootTime time.Duration
	// MissCostUSD is the price of a missed deadline (<= 0:
	// warmpool.DefaultMissCostUSD); MinWarmCPUs the floor.
	MissCostUSD, MinWarmCPUs float64
	// DurationScale turns estimates into wall time (Jobs).
	DurationScale float64
	Forecast      forecast.Options
	Log           logrus.FieldLogger
	Now           func() time.Time
}

func (c Config) withDefaults() Config {
	if c.Every <= 0 {
		c.Every = DefaultEvery
	}
	if c.Window <= 0 {
		c.Window = DefaultWindow
	}
	if c.Limit <= 0 || c.Limit > store.MaxSubmissionHistory {
		c.Limit = store.MaxSubmissionHistory
	}
	if c.BootTime <= 0 {
		c.BootTime = DefaultBootTime
	}
	if !(c.MissCostUSD > 0) || math.IsInf(c.MissCostUSD, 0) {
		c.MissCostUSD = warmpool.DefaultMissCostUSD
	}
	if c.Forecast.MaxAge <= 0 {
		c.Forecast.MaxAge = c.Window
	}
	if c.Log == nil {
		c.Log = logrus.StandardLogger()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Sources are what the live product hands the Runner.
type Sources struct {
	// History reads the submissions since a time (store.SubmissionHistory).
	History func(ctx context.Context, since time.Time, limit int) ([]store.Submission, error)
	// Agents are the agents power management may keep on, power on or
	// off, with their power state (nil: power management is off; the
	// Runner then only forecasts).
	Agents func(ctx context.Context) ([]warmpool.Agent, error)
	// Waiting is the queue's waiting demand; Running the running jobs'
	// sizes and expected ends (either may be nil).
	Waiting func() (cpus, memMB float64)
	Running func(ctx context.Context) ([]warmpool.Running, error)
	// PowerOn powers an agent that is off on (power.Manager.PowerOn);
	// reason is the plan's, for power management's log line.
	PowerOn func(ctx context.Context, agentID, reason string) error
	// Applied, if set, is told about every decision (for the metrics).
	Applied func(Status)
}

// Status is the last decision, for the dashboard and the metrics.
type Status struct {
	At time.Time `json:"at"`
	// Fallback, when set, says why there is no forecast-driven warm pool
	// (the plan keeps nothing beyond the floor: today's behaviour).
	Fallback string `json:"fallback,omitempty"`
	// Error is the last failure to read what a decision needs.
	Error string `json:"error,omitempty"`
	// Plan is nil when power management is off.
	Plan *warmpool.Plan `json:"-"`
	// PoweredOnAhead counts the agents powered on ahead of the forecast
	// since this term started.
	PoweredOnAhead int `json:"poweredOnAhead"`

	model   forecast.Model
	history []forecast.Job
}

// Runner runs the warm pool. Wanted and Status are safe for concurrent
// use with Run.
type Runner struct {
	cfg Config
	src Sources
	log logrus.FieldLogger

	mu      sync.Mutex
	keep    map[string]bool
	keptAt  time.Time // when keep was decided from a forecast
	status  Status
	lastLog string
}

// New checks the sources and builds a Runner.
func New(cfg Config, src Sources) (*Runner, error) {
	if src.History == nil {
		return nil, errors.New("warmlive: no history source")
	}
	if src.Agents != nil && src.PowerOn == nil {
		return nil, errors.New("warmlive: agents without a way to power them on")
	}
	cfg = cfg.withDefaults()
	return &Runner{cfg: cfg, src: src, log: cfg.Log.WithField("component", "warm-pool"), keep: map[string]bool{}}, nil
}

// Wanted reports whether the last plan keeps the agent warm (power
// management's wanted callback, with the queue's).
func (r *Runner) Wanted(agentID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.keep[agentID]
}

// Status is the last decision.
func (r *Runner) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Config is the Runner's configuration with the defaults filled in.
func (r *Runner) Config() Config { return r.cfg }

// Run decides at once and then every Every until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Every)
	defer t.Stop()
	for {
		if err := r.Step(ctx); err != nil && ctx.Err() == nil {
			r.log.WithError(err).Warn("warm pool: no decision this time")
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Step makes one decision and applies it. A failure to read the history
// or the agents keeps the last decision for up to three intervals, then
// drops it (today's behaviour); it is returned.
func (r *Runner) Step(ctx context.Context) error {
	now := r.cfg.Now()
	rows, err := r.src.History(ctx, now.Add(-r.cfg.Window), r.cfg.Limit)
	if err != nil {
		return r.failed(now, fmt.Errorf("read the submission history: %w", err))
	}
	hist := Jobs(rows, r.cfg.DurationScale)
	m := forecast.Fit(hist, now, r.cfg.Forecast)
	st := Status{At: now, model: m, history: hist}
	if !m.OK {
		st.Fallback = "no forecast: " + m.Reason
	}
	if r.src.Agents == nil {
		r.publish(st, Actions{Keep: map[string]bool{}}, true)
		if r.src.Applied != nil {
			r.src.Applied(r.Status())
		}
		return nil
	}
	agents, err := r.src.Agents(ctx)
	if err != nil {
		return r.failed(now, fmt.Errorf("read the agents: %w", err))
	}
	var waitC, waitM float64
	if r.src.Waiting != nil {
		waitC, waitM = r.src.Waiting()
	}
	var running []warmpool.Running
	if r.src.Running != nil {
		if running, err = r.src.Running(ctx); err != nil {
			return r.failed(now, fmt.Errorf("read the running jobs: %w", err))
		}
	}
	plan := warmpool.Decide(Inputs(&m, now, r.cfg, agents, waitC, waitM, running, rows))
	st.Plan = &plan
	act := ActionsOf(plan, agents)
	r.publish(st, act, m.OK)
	var errs []error
	for _, id := range act.PowerOn {
		var reason string
		for _, d := range plan.PowerOnNow {
			if d.AgentID == id {
				reason = d.Reason
			}
		}
		if err := r.src.PowerOn(ctx, id, "warm pool: "+reason); err != nil {
			errs = append(errs, fmt.Errorf("power on agent %s ahead of the forecast: %w", id, err))
			continue
		}
		r.mu.Lock()
		r.status.PoweredOnAhead++
		r.mu.Unlock()
		r.log.WithFields(logrus.Fields{"agent": id, "reason": reason}).Info("warm pool: powering an agent on ahead of the forecast demand")
	}
	if r.src.Applied != nil {
		r.src.Applied(r.Status())
	}
	return errors.Join(errs...)
}

// publish installs a decision; the summary is logged when it changes.
func (r *Runner) publish(st Status, act Actions, fromForecast bool) {
	r.mu.Lock()
	st.PoweredOnAhead = r.status.PoweredOnAhead
	r.status = st
	r.keep = act.Keep
	if fromForecast {
		r.keptAt = st.At
	}
	var kept []string
	if st.Plan != nil {
		for _, d := range st.Plan.KeepOn {
			kept = append(kept, d.AgentID)
		}
	}
	summary := st.Fallback + "|" + strings.Join(kept, ",") + "|" + strings.Join(act.PowerOn, ",")
	changed := summary != r.lastLog
	r.lastLog = summary
	r.mu.Unlock()
	if !changed {
		return
	}
	// "forecast_level", not "level": logrus's own key, which it would
	// move to "fields.level" in every line.
	f := logrus.Fields{"kept_warm": kept, "power_on": act.PowerOn, "forecast_jobs": st.model.Jobs, "forecast_level": st.model.Level}
	if st.Plan != nil {
		f["warm_cpus"], f["expected_misses"] = st.Plan.WarmCPUs, st.Plan.ExpectedMisses
	}
	if st.Fallback != "" {
		r.log.WithFields(f).Info("warm pool: " + st.Fallback + "; idle agents power off after their idle timeout as without a warm pool")
		return
	}
	if st.Plan != nil {
		// the reason as a field: one message to search for, whatever
		// the figures
		f["reason"] = st.Plan.Reason
	}
	r.log.WithFields(f).Info("warm pool: new decision")
}

// failed records a failed decision; the last one stands for up to three
// intervals.
func (r *Runner) failed(now time.Time, err error) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Error = err.Error()
	if len(r.keep) > 0 && now.Sub(r.keptAt) > 3*r.cfg.Every {
		r.keep = map[string]bool{}
		r.status.Fallback = "no recent decision: " + err.Error()
		r.log.WithError(err).Warn("warm pool: no decision for three intervals; idle agents power off after their idle timeout as without a warm pool")
	}
	return err
}

// Expect is the decision's forecast of the jobs arriving in [from, to)
// (not OK without a forecast).
func (s Status) Expect(from, to time.Time) forecast.Demand { return s.model.Expect(from, to) }
