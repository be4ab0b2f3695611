package scheduler

import "time"

// deadlineOrder is the order in which one pass tries the deadline queue's
// entries (all of them, or those new since the last pass, in EDF order).
// Algorithm 3 (and FIFO, whose deadline queue is empty) take it as it is:
// earliest deadline first. OrderFeasibleEDF moves the jobs that can no
// longer meet their deadline even if started now (atRisk: now + estimate >
// deadline, or the deadline passed) behind those that still can, keeping
// EDF order within both groups. Under overload this stops hopeless jobs
// from taking the resources that jobs which can still make it need (EDF's
// domino effect); the hopeless jobs still run, as soon as no feasible job
// can use the resources. Promoted regular jobs (no deadline) count as
// feasible. It returns a new slice.
func (d *decider) deadlineOrder(entries []*Entry, now time.Time) []*Entry {
	if d.cfg.Ordering != OrderFeasibleEDF {
		return entries
	}
	out := make([]*Entry, 0, len(entries))
	var late []*Entry
	for _, e := range entries {
		if d.atRisk(e, now) {
			late = append(late, e)
		} else {
			out = append(out, e)
		}
	}
	return append(out, late...)
}
