package simulate

import (
	"context"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/warmpool"
)

// The warm pool in the simulator (`simulate --warm-pool`, issue 31): a
// forecast fitted online from the arrivals replayed so far (package
// forecast) and the sizing rule of package warmpool decide, every
// WarmPoolEvery of virtual time and at every event, which idle agents
// power management keeps on past their idle timeout (its wanted
// callback) and which agents that are off it powers on ahead of the
// forecast demand. Boot time and the bill are modelled as without it.

// WarmPoolEvery is the interval between the warm pool's decisions (the
// lead of the power-on-ahead window).
const WarmPoolEvery = 15 * time.Second

// warmPoolMinJobs: the online forecast starts after this many arrivals
// (forecast's default is 5; tuned on hour 0, seeds 1-3: the first jobs of
// a window otherwise meet a cold cluster).
const warmPoolMinJobs = 2

type simWarmPool struct {
	c        *Cluster
	pm       *power.Manager
	boot     time.Duration
	missCost float64
	minWarm  float64
	history  []forecast.Job
	keep     map[string]bool
	next     time.Time // the next decision
	// pending: submitted, not started, not done (by job id), with the
	// cpus and memory they ask for; running: expected ends.
	pending map[string][2]float64
	running map[string]warmpool.Running
	// hist: a job's entry in history (its slack is corrected by its
	// measured run time when it finishes); started: when a running job
	// started; delays: the last queueDelaySample waits beyond a boot.
	hist    map[string]int
	startAt map[string]time.Time
	delays  []float64
	// LastPlan is the last decision (for tests).
	LastPlan warmpool.Plan
}

func newSimWarmPool(c *Cluster, pm *power.Manager, boot time.Duration, missCost, minWarm float64, start time.Time) *simWarmPool {
	if boot <= 0 {
		boot = 60 * time.Second // as the simulated cluster's default
	}
	return &simWarmPool{c: c, pm: pm, boot: boot, missCost: missCost, minWarm: minWarm, keep: map[string]bool{},
		next: start, pending: map[string][2]float64{}, running: map[string]warmpool.Running{},
		hist: map[string]int{}, startAt: map[string]time.Time{}}
}

func jobSize(j *scheduler.Job) (cpus, mem float64) {
	d := scheduler.DemandOf(j)
	return float64(d.Executors) * d.CPUs, float64(d.Executors) * d.MemMB
}

// remember adds a job to the forecast's history (its run time the
// estimate until it finishes).
func (w *simWarmPool) remember(j scheduler.Job) {
	cpus, mem := jobSize(&j)
	d := scheduler.DemandOf(&j)
	fj := forecast.Job{SubmittedAt: j.SubmittedAt, CPUs: cpus, MemMB: mem, ExecutorCPUs: d.CPUs, ExecutorMemMB: d.MemMB,
		RunSeconds: j.EstimatedDurationSeconds, SlackSeconds: -1}
	if j.DeadlineAt != nil {
		fj.Deadline = true
		fj.SlackSeconds = j.DeadlineAt.Sub(j.SubmittedAt).Seconds() - j.EstimatedDurationSeconds
	}
	w.history = append(w.history, fj)
}

// submitted records an arrival: the forecast's history and the queue.
func (w *simWarmPool) submitted(j scheduler.Job) {
	w.hist[j.ID] = len(w.history)
	w.remember(j)
	cpus, mem := jobSize(&j)
	w.pending[j.ID] = [2]float64{cpus, mem}
}

// queueDelaySample: the queue delay is the mean over this many of the
// last jobs started.
const queueDelaySample = 10

// started: a job runs from now for its estimate. Its wait beyond a boot
// is a sample of the queue delay.
func (w *simWarmPool) started(j scheduler.Job, now time.Time) {
	cpus, mem := jobSize(&j)
	delete(w.pending, j.ID)
	w.running[j.ID] = warmpool.Running{CPUs: cpus, MemMB: mem, EndsAt: now.Add(time.Duration(j.EstimatedDurationSeconds * float64(time.Second)))}
	w.startAt[j.ID] = now
	w.delays = append(w.delays, max(0, (now.Sub(j.SubmittedAt)-w.boot).Seconds()))
	if len(w.delays) > queueDelaySample {
		w.delays = w.delays[1:]
	}
}

// queueDelay is the mean wait beyond a boot of the last jobs started.
func (w *simWarmPool) queueDelay() time.Duration {
	if len(w.delays) == 0 {
		return 0
	}
	s := 0.0
	for _, d := range w.delays {
		s += d
	}
	return time.Duration(s / float64(len(w.delays)) * float64(time.Second))
}

// ended: finished at now (requeued nil: its measured run time replaces
// the estimate in the history, as the live warm pool's history has it)
// or evicted (back in the queue).
func (w *simWarmPool) ended(id string, requeued *scheduler.Job, now time.Time) {
	delete(w.running, id)
	if at, ok := w.startAt[id]; ok && requeued == nil {
		if k, ok := w.hist[id]; ok {
			h := &w.history[k]
			run := now.Sub(at).Seconds()
			if h.Deadline {
				h.SlackSeconds += h.RunSeconds - run
			}
			h.RunSeconds = run
		}
	}
	delete(w.startAt, id)
	if requeued != nil {
		cpus, mem := jobSize(requeued)
		w.pending[id] = [2]float64{cpus, mem}
	}
}

// dropRejected forgets the waiting jobs the core turned away.
func (w *simWarmPool) dropRejected(store *MemStore) {
	for id := range w.pending {
		if j, err := store.Get(id); err == nil && j.State == scheduler.Rejected {
			delete(w.pending, id)
		}
	}
}

// wanted is power management's callback: keep what the last plan keeps.
func (w *simWarmPool) wanted(a power.Agent) bool { return w.keep[a.ID] }

// due reports whether a decision is due by now.
func (w *simWarmPool) due(now time.Time) bool { return !now.Before(w.next) }

// decide runs the sizing rule at now and applies it: the keep set for
// the next ticks, and PowerOn for the agents to power on ahead.
func (w *simWarmPool) decide(ctx context.Context, now time.Time) error {
	for !w.next.After(now) {
		w.next = w.next.Add(WarmPoolEvery)
	}
	m := forecast.Fit(w.history, now, forecast.Options{MinJobs: warmPoolMinJobs})
	in := warmpool.Input{Now: now, Agents: w.agents(), Forecast: m.Expect(now, now.Add(w.boot)),
		Ahead: m.Expect(now.Add(w.boot), now.Add(w.boot+WarmPoolEvery)), Lead: WarmPoolEvery,
		QueueDelay: w.queueDelay(), BootTime: w.boot, MissCostUSD: w.missCost, MinWarmCPUs: w.minWarm}
	// The queue's waiting demand: jobs placed on agents that boot hold
	// their room there (those agents count as busy) and wait no more.
	w.c.mu.Lock()
	for id, p := range w.pending {
		if w.c.allocs[id] == nil {
			in.WaitingCPUs += p[0]
			in.WaitingMemMB += p[1]
		}
	}
	w.c.mu.Unlock()
	for _, r := range w.running {
		in.Running = append(in.Running, r)
	}
	plan := warmpool.Decide(in)
	w.LastPlan = plan
	clear(w.keep)
	for _, d := range plan.KeepOn {
		w.keep[d.AgentID] = true
	}
	for _, d := range plan.PowerOnNow {
		w.keep[d.AgentID] = true
		if err := w.pm.PowerOn(ctx, d.AgentID); err != nil {
			return err
		}
	}
	return nil
}

// agents is what the sizing rule sees of the simulated agents.
func (w *simWarmPool) agents() []warmpool.Agent {
	c := w.c
	c.mu.Lock()
	busy := map[int]bool{}
	for _, al := range c.allocs {
		for _, i := range al.agentIndex {
			busy[i] = true
		}
	}
	type row struct {
		a      warmpool.Agent
		bootAt time.Time
	}
	rows := make([]row, len(c.agents))
	for i, a := range c.agents {
		rows[i] = row{warmpool.Agent{ID: a.ID, CPUs: a.CPUs, MemMB: a.MemMB, PricePerHour: float64(a.PriceMicroUSDPerHour) / 1e6,
			Busy: busy[i], FreeCPUs: a.FreeCPUs, FreeMemMB: a.FreeMemMB}, c.power[i].bootAt}
	}
	c.mu.Unlock()
	out := make([]warmpool.Agent, 0, len(rows))
	for _, r := range rows {
		switch w.pm.StateOf(r.a.ID) {
		case power.StateOn:
			r.a.State = warmpool.On
		case power.StateOff:
			r.a.State = warmpool.Off
		case power.StateBooting:
			r.a.State, r.a.ReadyAt = warmpool.Booting, r.bootAt
		default:
			continue // draining or powering off: on its way out this instant
		}
		out = append(out, r.a)
	}
	return out
}

// Boots counts the agents' power-ons.
func (c *Cluster) Boots() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, p := range c.power {
		n += p.boots
	}
	return n
}

// MeanOnCPUs is the time-weighted mean of the cpus powered on (billed)
// over [start, end).
func (c *Cluster) MeanOnCPUs(start, end time.Time) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !end.After(start) {
		return 0
	}
	var s float64
	for i, a := range c.agents {
		p := c.power[i]
		on := p.onTotal
		if !p.onSince.IsZero() && end.After(p.onSince) {
			on += end.Sub(p.onSince)
		}
		s += a.CPUs * on.Seconds()
	}
	return s / end.Sub(start).Seconds()
}
