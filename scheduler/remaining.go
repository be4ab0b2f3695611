package scheduler

import (
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// annotateRemaining fills in placement.Agent.RemainingActive where the
// cluster left it at zero: how long the core's own jobs keep an active
// agent active, the latest (start + estimated duration) - now over the jobs
// with executors there (a job not running yet counts from now). Agents
// whose jobs have outrun their estimates, or carry none, stay at zero
// ("unknown"). The same code runs live and in the simulator, so policies
// that use it (dap, gio) see the same information in both. The snapshot is
// the caller's own copy (Cluster.Snapshot returns a fresh one).
func annotateRemaining(snap *placement.Snapshot, running []runningJob, now time.Time) {
	if len(snap.Agents) == 0 {
		return
	}
	until := make(map[string]time.Duration)
	for i := range running {
		a := &running[i]
		if a.plan == nil || a.estimate <= 0 {
			continue
		}
		start := now
		if a.startedAt != nil && a.startedAt.Before(now) {
			start = *a.startedAt
		}
		left := start.Add(a.estimate).Sub(now)
		if left <= 0 {
			continue
		}
		for _, as := range a.plan.Assignments {
			if left > until[as.AgentID] {
				until[as.AgentID] = left
			}
		}
	}
	if len(until) == 0 {
		return
	}
	for i := range snap.Agents {
		ag := &snap.Agents[i]
		if ag.Active && ag.RemainingActive == 0 {
			ag.RemainingActive = until[ag.ID]
		}
	}
}
