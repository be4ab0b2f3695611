package scheduler

import "time"

// Observer hears what the core does, for metrics, logs and the event
// stream. Its methods are called from the goroutine that did it (a pass,
// a Report): they must be quick and must not call the Core. Embed
// NopObserver to hear only some of it.
type Observer interface {
	// JobChanged: a job state change the core made, with the job as stored.
	JobChanged(j Job)
	// Placed: one run of the placement policy.
	Placed(s PlacementStat)
	// PassDone: one scheduling pass.
	PassDone(s PassStat)
	// Evicting: the core decided to evict a running job for a deadline job.
	Evicting(s PreemptStat)
	// Evicted: an evicted job is back in its queue; lost is the run time
	// it lost.
	Evicted(j Job, lost time.Duration)
}

// NopObserver hears nothing.
type NopObserver struct{}

func (NopObserver) JobChanged(Job)             {}
func (NopObserver) Placed(PlacementStat)       {}
func (NopObserver) PassDone(PassStat)          {}
func (NopObserver) Evicting(PreemptStat)       {}
func (NopObserver) Evicted(Job, time.Duration) {}
