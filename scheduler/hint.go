package scheduler

import (
	"github.com/sparkpack/sparkpack/placement"
)

// The waiting reason a job is stored with at submission. A job the core
// queues at submission (Decide) would otherwise be stored with the reason
// "queued", and the first pass would write its real coarse reason (e.g.
// "does not fit now: short of cpus") a moment later: a second write of
// every submitted job, which at thousands of submissions a second cost
// PostgreSQL a third of what storing the jobs did. Decide predicts that
// first coarse reason from what the last pass left (the free cpus and
// memory, whether deadline jobs wait); when the pass agrees nothing more is
// written, and when it does not, it writes its own as before. The
// prediction is only made where it is cheap and safe: the summed free
// room cannot hold the job (so no placement could), or a regular job
// waits behind deadline jobs.

// submitHint is what the last pass left for Decide's prediction.
type submitHint struct {
	freeCPUs, freeMemMB float64
	deadlineWaiting     bool
}

// leaveHint records, at the end of a pass, what Decide predicts from. ix
// is the pass's fit index (nil when it is stale after a start: no hint).
func (c *Core) leaveHint(ix *placement.FitIndex) {
	if ix == nil {
		c.hint.Store(nil)
		return
	}
	h := &submitHint{deadlineWaiting: c.dq.Len() > 0}
	h.freeCPUs, h.freeMemMB = ix.Free()
	c.hint.Store(h)
}

// predictReason is the coarse waiting reason the next pass would most
// likely give j (a job just admitted, not at risk), or "" when it cannot
// say.
func (c *Core) predictReason(j *Job) string {
	h := c.hint.Load()
	if h == nil {
		return ""
	}
	if j.DeadlineAt == nil && h.deadlineWaiting && c.cfg.Ordering != OrderFIFO {
		return waitState{kind: waitDeadlineFirst}.coarse(false, c.cfg.PromoteAfter)
	}
	if j.DeadlineAt != nil && c.cfg.Preemption != PreemptNone {
		return "" // the reason carries what preemption does: the pass decides
	}
	r := placement.ShortOf(DemandOf(j), h.freeCPUs, h.freeMemMB)
	if r == "" {
		return ""
	}
	return waitState{kind: waitNoFit, nf: placement.NoFit{Resource: r}}.coarse(false, c.cfg.PromoteAfter)
}
