package warmlive

import (
	"sort"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/warmpool"
)

// Jobs turns the stored submissions into the forecast's history. A job's
// size is its executors and its driver; its executor shape is one
// executor. Its run time is the measured one for a finished job, else
// the submitter's estimate times durationScale (estimates are in
// simulated seconds in the demo; <= 0 is 1). Its slack is the deadline
// minus the submission minus the run time (-1, unknown, without a run
// time: forecast takes it as tight). Sizes that are not numbers stay NaN
// for forecast.Fit to drop (and count as corrupt). A rejected job (it can
// never run: too big, its deadline past) never asked the cluster for room
// and is left out.
func Jobs(rows []store.Submission, durationScale float64) []forecast.Job {
	if !(durationScale > 0) {
		durationScale = 1
	}
	out := make([]forecast.Job, 0, len(rows))
	for i := range rows {
		h := &rows[i]
		if h.Rejected() {
			continue
		}
		j := forecast.Job{
			SubmittedAt:   h.SubmittedAt,
			CPUs:          h.Executors*h.ExecutorCores + h.DriverCores,
			MemMB:         h.Executors*h.ExecutorMemMB + h.DriverMemMB,
			ExecutorCPUs:  h.ExecutorCores,
			ExecutorMemMB: h.ExecutorMemMB,
			RunSeconds:    h.EstimatedSeconds * durationScale,
			SlackSeconds:  -1,
		}
		if h.Finished() && h.StartedAt != nil && h.FinishedAt != nil && h.FinishedAt.After(*h.StartedAt) {
			j.RunSeconds = h.FinishedAt.Sub(*h.StartedAt).Seconds()
		}
		if h.DeadlineAt != nil {
			j.Deadline = true
			if j.RunSeconds > 0 {
				j.SlackSeconds = h.DeadlineAt.Sub(h.SubmittedAt).Seconds() - j.RunSeconds
			}
		}
		out = append(out, j)
	}
	return out
}

// Inputs is what Decide sees at now: the forecast of the next boot time
// (an agent powered off now cannot be back sooner) and of the lead after
// it (the decision interval: an agent not powered on now is powered on a
// lead later at the earliest; both carry the deadline jobs' slacks), the
// queue's waiting demand and the running jobs.
func Inputs(m *forecast.Model, now time.Time, cfg Config, agents []warmpool.Agent, waitCPUs, waitMemMB float64, running []warmpool.Running, rows []store.Submission) warmpool.Input {
	cfg = cfg.withDefaults()
	boot, lead := cfg.BootTime, cfg.Every
	in := warmpool.Input{Now: now, Agents: agents, Forecast: m.Expect(now, now.Add(boot)),
		Ahead: m.Expect(now.Add(boot), now.Add(boot+lead)), Lead: lead,
		WaitingCPUs: waitCPUs, WaitingMemMB: waitMemMB, Running: running,
		QueueDelay: QueueDelay(rows, boot), BootTime: boot, MissCostUSD: cfg.MissCostUSD, MinWarmCPUs: cfg.MinWarmCPUs}
	return in
}

// QueueDelaySample: the queue delay is measured on this many of the jobs
// started last.
const QueueDelaySample = 10

// QueueDelay is the mean wait beyond a boot (start minus submission minus
// boot, at least 0) of the QueueDelaySample jobs started last: how long a
// job that finds no warm room waits in the queue besides its boot
// (warmpool.Input.QueueDelay). 0 without any started job.
func QueueDelay(rows []store.Submission, boot time.Duration) time.Duration {
	var started []store.Submission
	for _, h := range rows {
		if h.StartedAt != nil && !h.StartedAt.Before(h.SubmittedAt) {
			started = append(started, h)
		}
	}
	if len(started) == 0 {
		return 0
	}
	sort.SliceStable(started, func(i, j int) bool { return started[i].StartedAt.After(*started[j].StartedAt) })
	started = started[:min(len(started), QueueDelaySample)]
	var sum time.Duration
	for _, h := range started {
		sum += max(0, h.StartedAt.Sub(h.SubmittedAt)-boot)
	}
	return sum / time.Duration(len(started))
}

// Actions is what applying a Plan does: the agents power management must
// keep on past their idle timeout (Wanted), and those to power on now.
type Actions struct {
	Keep    map[string]bool
	PowerOn []string
}

// ActionsOf turns a plan into actions: every agent the plan keeps on or
// powers on is kept; the agents to power on are those of PowerOnNow that
// are off (sorted). An agent the plan lets power off is not kept (power
// management powers it off after its idle timeout, as without a warm
// pool).
func ActionsOf(p warmpool.Plan, agents []warmpool.Agent) Actions {
	a := Actions{Keep: map[string]bool{}}
	state := map[string]warmpool.State{}
	for _, ag := range agents {
		state[ag.ID] = ag.State
	}
	for _, d := range p.KeepOn {
		a.Keep[d.AgentID] = true
	}
	for _, d := range p.PowerOnNow {
		a.Keep[d.AgentID] = true
		if state[d.AgentID] == warmpool.Off {
			a.PowerOn = append(a.PowerOn, d.AgentID)
		}
	}
	sort.Strings(a.PowerOn)
	return a
}
