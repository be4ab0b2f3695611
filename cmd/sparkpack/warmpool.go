package main

import (
	"context"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/warmlive"
	"github.com/sparkpack/sparkpack/warmpool"
)

// The live warm pool (package warmlive): serve's leader runs it for its
// term; power management keeps the agents it wants on, and it powers
// agents on ahead of the forecast demand.

// startWarmPool builds the leader's warm pool: with power management it
// decides and applies, without it (or with --power-warm-pool=false) only
// forecasts (GET /api/v1/forecast).
func startWarmPool(mc mesosConfig, st *store.Store, core *scheduler.Core, cluster *offers.Cluster, pm *power.Manager, log *logrus.Logger, applied func(warmlive.Status)) (*warmlive.Runner, error) {
	pc := mc.power
	cfg := warmlive.Config{Every: pc.forecastEvery, BootTime: pc.bootTime, MissCostUSD: pc.missCostUSD, MinWarmCPUs: pc.minWarmCPUs,
		DurationScale: mc.durationScale, Log: log}
	src := warmlive.Sources{History: st.SubmissionHistory, Applied: applied}
	if pm != nil && !pc.noWarmPool {
		sel, _ := power.ParseSelector(pc.selector)
		boot := cfg.BootTime
		if boot <= 0 {
			boot = warmlive.DefaultBootTime
		}
		src.Agents = func(context.Context) ([]warmpool.Agent, error) {
			return warmAgents(pm.Records(), cluster.AgentStatuses(), cluster.Agents(), sel, boot, time.Now()), nil
		}
		src.Waiting = func() (float64, float64) { return waitingDemand(core) }
		src.Running = func(ctx context.Context) ([]warmpool.Running, error) {
			return runningJobs(ctx, st, cluster.Agents(), mc.durationScale, time.Now())
		}
		src.PowerOn = warmPowerOn(pm)
	}
	return warmlive.New(cfg, src)
}

// warmPowerOn is the warm pool's power-on: power management's, with the
// warm pool's reason ("warm pool: forecast ...") as the cause, so that the
// "agent power: booting" line says why the agent was powered on.
func warmPowerOn(pm *power.Manager) func(ctx context.Context, id, why string) error {
	return func(ctx context.Context, id, why string) error {
		return pm.PowerOn(scheduler.WithPowerOnCause(ctx, scheduler.PowerOnCause{Reason: why}), id)
	}
}

// warmAgents is what the sizing rule sees of the agents: power
// management's state (an agent it never stepped is on), Mesos' busy flag
// and the free room the core sees. Agents on their way off (draining,
// powering off), gone without a power record, or off and avoided after a
// failed power-on are left out; a booting agent is ready one boot time
// after its power-on; an agent outside --power-selector is never powered
// off and counts as busy (its room is warm whatever the plan says).
func warmAgents(recs []power.Record, statuses []offers.AgentStatus, states []offers.AgentState, sel power.Selector, boot time.Duration, now time.Time) []warmpool.Agent {
	free := map[string]offers.AgentState{}
	for _, a := range states {
		free[a.ID] = a
	}
	rec := map[string]power.Record{}
	for _, r := range recs {
		rec[r.AgentID] = r
	}
	var out []warmpool.Agent
	seen := map[string]bool{}
	for _, s := range statuses {
		seen[s.ID] = true
		r, known := rec[s.ID]
		if known && r.State != power.StateOn {
			continue // its power state is below
		}
		if !s.Active {
			continue // deactivated by someone else, or gone
		}
		a := warmpool.Agent{ID: s.ID, CPUs: s.CPUs, MemMB: s.MemMB, PricePerHour: s.PricePerHour, State: warmpool.On,
			Busy: s.Busy || !sel.Match(s.Hostname, s.Attributes), FreeCPUs: s.CPUs, FreeMemMB: s.MemMB}
		if f, ok := free[s.ID]; ok {
			a.FreeCPUs, a.FreeMemMB = f.FreeCPUs, f.FreeMemMB
		}
		out = append(out, a)
	}
	for _, r := range recs {
		if r.CPUs <= 0 || !sel.Match(r.Hostname, r.Attributes) {
			continue
		}
		a := warmpool.Agent{ID: r.AgentID, CPUs: r.CPUs, MemMB: r.MemMB, PricePerHour: r.PricePerHour}
		switch r.State {
		case power.StateOff:
			if now.Before(r.AvoidUntil) {
				continue
			}
			a.State = warmpool.Off
		case power.StateBooting:
			a.State, a.ReadyAt = warmpool.Booting, r.Since.Add(boot)
		default:
			continue // on (above) or on its way off
		}
		out = append(out, a)
	}
	return out
}

// waitingDemand is the cpus and memory the waiting jobs ask for (the
// first page of the queues: at most scheduler.MaxQueuePageLimit jobs).
func waitingDemand(core *scheduler.Core) (cpus, memMB float64) {
	p, err := core.QueuePage(scheduler.MaxQueuePageLimit, "")
	if err != nil {
		return 0, 0
	}
	for _, q := range append(p.Deadline, p.Regular...) {
		cpus += float64(q.Executors * q.ExecutorCores)
		memMB += float64(q.Executors * q.ExecutorMemoryMB)
	}
	return cpus, memMB
}

// runningJobs are the jobs holding resources on the agents, with their
// expected end: start plus estimate (scaled to wall time); a job without
// an estimate or start ends after the boot time (it frees nothing within).
func runningJobs(ctx context.Context, st *store.Store, agents []offers.AgentState, durationScale float64, now time.Time) ([]warmpool.Running, error) {
	held := map[string]*warmpool.Running{}
	var ids []string
	for _, a := range agents {
		for _, h := range a.Holdings {
			r := held[h.JobID]
			if r == nil {
				r = &warmpool.Running{}
				held[h.JobID] = r
				ids = append(ids, h.JobID)
			}
			r.CPUs += h.CPUs
			r.MemMB += h.MemMB
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	jobs, err := st.JobsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	return expectedEnds(held, jobs, durationScale, now), nil
}

// expectedEnds gives each held job its expected end.
func expectedEnds(held map[string]*warmpool.Running, jobs []scheduler.Job, durationScale float64, now time.Time) []warmpool.Running {
	if !(durationScale > 0) {
		durationScale = 1
	}
	far := now.Add(365 * 24 * time.Hour)
	out := make([]warmpool.Running, 0, len(held))
	for _, j := range jobs {
		r := held[j.ID]
		if r == nil {
			continue
		}
		r.EndsAt = far
		if j.StartedAt != nil && j.EstimatedDurationSeconds > 0 {
			r.EndsAt = j.StartedAt.Add(time.Duration(j.EstimatedDurationSeconds * durationScale * float64(time.Second)))
		}
		out = append(out, *r)
	}
	return out
}

// warmApplied counts a warm pool decision in the metrics (called by the
// Runner's goroutine only).
func (l *live) warmApplied(st warmlive.Status) {
	if l.metrics == nil {
		return
	}
	warm := 0.0
	if st.Plan != nil {
		warm = st.Plan.WarmCPUs
	}
	d := st.Expect(st.At, st.At.Add(time.Hour))
	l.metrics.SetWarmPool(warm, st.PoweredOnAhead-l.warmAhead, d.JobsP50)
	l.warmAhead = st.PoweredOnAhead
}

// Forecast is GET /api/v1/forecast on the leader.
func (l *live) Forecast(ctx context.Context, horizon, step time.Duration) (any, error) {
	v := l.warm.View(horizon, step)
	if v.WarmPool != nil {
		v.WarmPool.Names(l.cluster.AgentName)
	}
	return v, nil
}

// Forecast is GET /api/v1/forecast (followers forward it to the leader).
func (h *leadership) Forecast(ctx context.Context, horizon, step time.Duration) (any, error) {
	if lv := h.cur.Load(); lv != nil {
		return lv.Forecast(ctx, horizon, step)
	}
	return nil, h.notLeading()
}
