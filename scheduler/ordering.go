package scheduler

import (
	"cmp"
	"slices"
	"time"
)

// deadlineOrder is the order in which one pass tries the deadline queue's
// entries (all of them, or those new since the last pass, in EDF order).
// Algorithm 3 (and FIFO, whose deadline queue is empty) take it as it is:
// earliest deadline first. OrderFeasibleEDF and OrderFeasibleLPT move the
// jobs that can no longer meet their deadline even if started now
// (hopeless: now + median estimate > deadline, or the deadline passed; a
// job only at risk on its p90 keeps its place) behind those that
// still can, which keep EDF order. Under overload this stops hopeless jobs
// from taking the resources that jobs which can still make it need (EDF's
// domino effect); the hopeless jobs still run, as soon as no feasible job
// can use the resources. Promoted regular jobs (no deadline) count as
// feasible. Among the hopeless jobs OrderFeasibleEDF keeps EDF order,
// OrderFeasibleLPT takes the longest first (hopelessOrder). It returns a
// new slice.
func (d *decider) deadlineOrder(entries []*Entry, now time.Time) []*Entry {
	if d.cfg.Ordering != OrderFeasibleEDF && d.cfg.Ordering != OrderFeasibleLPT {
		return entries
	}
	out := make([]*Entry, 0, len(entries))
	var late []*Entry
	for _, e := range entries {
		if d.hopeless(e, now) {
			late = append(late, e)
		} else {
			out = append(out, e)
		}
	}
	if d.cfg.Ordering == OrderFeasibleLPT {
		d.hopelessOrder(late)
	}
	return append(out, late...)
}

// hopelessOrder sorts the jobs that can no longer meet their deadline
// longest estimated run first (Graham's LPT rule), ties in EDF order (the
// order they come in). EDF's reason to run the earliest deadline first is
// to meet deadlines, and these are lost: what is left to decide about them
// is the bill. They all have to run; started shortest first (which EDF
// does for jobs submitted together, the deadline being the submission
// plus a multiple of the run time), the longest of them start last and
// end the busy period alone, their agents paid for the cpus they leave
// idle. Longest first, the last to start are the short ones, and the
// busy period ends sooner with fuller agents. Feasible jobs still come
// first, so no feasible job loses room to a hopeless one in a pass.
func (d *decider) hopelessOrder(late []*Entry) {
	if len(late) < 2 {
		return
	}
	type timed struct {
		e   *Entry
		est time.Duration
	}
	ts := make([]timed, len(late))
	for i, e := range late {
		ts[i] = timed{e, d.medianEstimate(e)}
	}
	slices.SortStableFunc(ts, func(a, b timed) int { return cmp.Compare(b.est, a.est) })
	for i := range ts {
		late[i] = ts[i].e
	}
}
