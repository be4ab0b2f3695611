package scheduler

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// Preemption (issue 16, after Natjam): a waiting deadline job that would
// miss its deadline waiting, because the cluster is not expected to free
// enough room for it before its latest start time (deadline minus its
// estimated duration, by the running jobs' own estimates), may evict
// running jobs. Victims are chosen by a policy, regular jobs before
// deadline jobs, just enough of them for the deadline job to fit. An
// evicted job goes back to its queue (by its original submission) and runs
// again from scratch later: Spark cannot checkpoint a running application.
//
// The rules that keep eviction from doing more harm than good:
//   - only RUNNING jobs are evicted, never one expected to end within the
//     protection window, never one evicted MaxPreemptions times already;
//   - a deadline job is evicted only when it is expected to miss its
//     deadline anyway (by its estimate), or for a job with an earlier
//     deadline when it can still meet its own if it runs again once the
//     job it makes room for is expected to end;
//   - the deadline job must be able to make its deadline if started now;
//   - at most a share of the running work (cpus) is evicted per minute
//     (one job at least, whatever its size).

// PreemptionPolicy names how victims are chosen.
type PreemptionPolicy string

const (
	// PreemptNone: no eviction (the default).
	PreemptNone PreemptionPolicy = "none"
	// PreemptMDF: maximum deadline first: the running job with the
	// furthest deadline is evicted first, regular jobs counting as
	// infinitely far.
	PreemptMDF PreemptionPolicy = "mdf"
	// PreemptMLF: maximum laxity first: laxity is deadline - now -
	// remaining time (infinite for regular jobs).
	PreemptMLF PreemptionPolicy = "mlf"
	// PreemptSRT: shortest remaining time last: the job with the longest
	// remaining time is evicted first.
	PreemptSRT PreemptionPolicy = "srt"
)

// PreemptionPolicies lists the policies, none first.
var PreemptionPolicies = []PreemptionPolicy{PreemptNone, PreemptMDF, PreemptMLF, PreemptSRT}

// ParsePreemption resolves a policy name ("" is none).
func ParsePreemption(s string) (PreemptionPolicy, error) {
	if s == "" {
		return PreemptNone, nil
	}
	for _, p := range PreemptionPolicies {
		if string(p) == s {
			return p, nil
		}
	}
	return "", fmt.Errorf("unknown preemption policy %q (none, mdf, mlf or srt)", s)
}

// Defaults of the preemption settings of Config.
const (
	DefaultPreemptProtect  = 60 * time.Second
	DefaultPreemptMaxShare = 0.5
	DefaultMaxPreemptions  = 3
	// preemptWindow is the period PreemptMaxShare counts over.
	preemptWindow = time.Minute
	// startAllowance is how long starting a job takes live (its
	// reservations made and its driver launched, after a victim's driver
	// is killed and its reservations given back): a deadline job's latest
	// start (PreemptionView.LatestStart) is this much before the moment it
	// would have to be running by its estimate.
	startAllowance = 10 * time.Second
)

// Victim is a running job as victim selection sees it.
type Victim struct {
	ID string
	// Deadline is nil for a regular job.
	Deadline *time.Time
	// RunningSince is when its current run started.
	RunningSince time.Time
	// Estimate is its estimated run time (wall time); zero when unknown.
	Estimate    time.Duration
	Preemptions int
	// Plan is where its executors are; Demand their size.
	Plan   placement.Plan
	Demand placement.Demand
}

// Remaining is the victim's estimated remaining run time at now; ok is
// false when it has no estimate. An overrun job has zero remaining.
func (v *Victim) Remaining(now time.Time) (time.Duration, bool) {
	if v.Estimate <= 0 {
		return 0, false
	}
	return max(v.RunningSince.Add(v.Estimate).Sub(now), 0), true
}

// CPUs is the cpus its executors hold.
func (v *Victim) CPUs() float64 { return float64(v.Plan.Executors()) * v.Demand.CPUs }

// PreemptRules bound who may be evicted.
type PreemptRules struct {
	Protect        time.Duration
	MaxPreemptions int
}

// Eligible reports whether v may be evicted for a deadline job with the
// given deadline and estimated run time, and why not.
func (r PreemptRules) Eligible(v *Victim, forDeadline time.Time, forEstimate time.Duration, now time.Time) (bool, string) {
	if r.MaxPreemptions > 0 && v.Preemptions >= r.MaxPreemptions {
		return false, fmt.Sprintf("evicted %d times already", v.Preemptions)
	}
	rem, known := v.Remaining(now)
	if known && rem < r.Protect {
		return false, "about to finish"
	}
	if v.Deadline == nil {
		return true, ""
	}
	if !known {
		return false, "deadline job without an estimate"
	}
	if v.RunningSince.Add(v.Estimate).After(*v.Deadline) {
		return true, "" // it misses its deadline anyway
	}
	if !v.Deadline.After(forDeadline) {
		return false, "its deadline is not later"
	}
	if now.Add(forEstimate).Add(v.Estimate).After(*v.Deadline) {
		return false, "it would miss its own deadline"
	}
	return true, ""
}

// OrderVictims sorts candidates in the order policy p evicts them: regular
// jobs before deadline jobs, then by the policy's key; ties go to the job
// that has run the shortest (the least work lost), then by id.
func OrderVictims(p PreemptionPolicy, vs []Victim, now time.Time) {
	key := func(v *Victim) float64 { // larger is evicted first
		rem, known := v.Remaining(now)
		switch p {
		case PreemptSRT:
			if !known {
				return math.Inf(1)
			}
			return rem.Seconds()
		case PreemptMLF:
			if v.Deadline == nil {
				return math.Inf(1)
			}
			return v.Deadline.Sub(now).Seconds() - rem.Seconds()
		default: // MDF
			if v.Deadline == nil {
				return math.Inf(1)
			}
			return v.Deadline.Sub(now).Seconds()
		}
	}
	slices.SortStableFunc(vs, func(a, b Victim) int {
		if (a.Deadline == nil) != (b.Deadline == nil) {
			if a.Deadline == nil {
				return -1
			}
			return 1
		}
		ka, kb := key(&a), key(&b)
		if ka != kb {
			return cmp.Compare(kb, ka)
		}
		if c := b.RunningSince.Compare(a.RunningSince); c != 0 {
			return c // started later: less lost
		}
		return strings.Compare(a.ID, b.ID)
	})
}

// Free returns s with the executors of the victims' plans given back (a
// copy; s is not changed).
func Free(s placement.Snapshot, vs ...Victim) placement.Snapshot {
	out := placement.Snapshot{Agents: slices.Clone(s.Agents)}
	at := make(map[string]int, len(out.Agents))
	for i, a := range out.Agents {
		at[a.ID] = i
	}
	for _, v := range vs {
		for _, as := range v.Plan.Assignments {
			i, ok := at[as.AgentID]
			if !ok {
				continue
			}
			a := &out.Agents[i]
			a.FreeCPUs = min(a.FreeCPUs+float64(as.Executors)*v.Demand.CPUs, a.CPUs)
			a.FreeMemMB = min(a.FreeMemMB+float64(as.Executors)*v.Demand.MemMB, a.MemMB)
		}
	}
	return out
}

// ChooseVictims returns the fewest victims, taken in the order given (see
// OrderVictims), whose eviction lets d fit on s; nil when evicting all of
// them would not. Victims are added in order until d fits, then any whose
// eviction turns out not to be needed is dropped, the last-ordered first.
func ChooseVictims(s placement.Snapshot, d placement.Demand, ordered []Victim) []Victim {
	fits := func(vs []Victim) bool { return placement.NewFitIndex(Free(s, vs...)).Check(d) == nil }
	var chosen []Victim
	found := false
	for _, v := range ordered {
		if len(v.Plan.Assignments) == 0 {
			continue
		}
		chosen = append(chosen, v)
		if fits(chosen) {
			found = true
			break
		}
	}
	if !found {
		return nil
	}
	for i := len(chosen) - 1; i >= 0 && len(chosen) > 1; i-- {
		without := slices.Delete(slices.Clone(chosen), i, i+1)
		if fits(without) {
			chosen = without
		}
	}
	return chosen
}

// release is a running job's expected end, for roomAt.
type release struct {
	at time.Time
	v  Victim
}

// roomProfile answers "when is the cluster expected to hold this job",
// from one snapshot and the running jobs' estimated ends; built once per
// snapshot, its step indexes made when first needed.
type roomProfile struct {
	base placement.Snapshot
	rel  []release // by end time
	ix   map[int]*placement.FitIndex
}

// roomAt is the first expected end after which d fits; ok is false when d
// does not fit even once every job with an estimate has ended.
func (p *roomProfile) roomAt(d placement.Demand) (time.Time, bool) {
	n := len(p.rel)
	if n == 0 {
		return time.Time{}, false
	}
	// Fit is monotone in what is released: binary search over the ends.
	k := sort.Search(n, func(k int) bool { return p.index(k).Check(d) == nil })
	if k == n {
		return time.Time{}, false
	}
	return p.rel[k].at, true
}

// index is the FitIndex of the snapshot once rel[0..k] have ended.
func (p *roomProfile) index(k int) *placement.FitIndex {
	if ix := p.ix[k]; ix != nil {
		return ix
	}
	vs := make([]Victim, 0, k+1)
	for _, r := range p.rel[:k+1] {
		vs = append(vs, r.v)
	}
	ix := placement.NewFitIndex(Free(p.base, vs...))
	p.ix[k] = ix
	return ix
}

// PreemptionView tells why a waiting deadline job is at risk and what
// preemption does about it (the queue views show it).
type PreemptionView struct {
	// LatestStart is the last moment the job can be started and still
	// meet its deadline: the deadline less its estimate, less the time a
	// start takes (startAllowance).
	LatestStart time.Time `json:"latestStart"`
	// RoomExpectedAt is when the running jobs' estimates say the cluster
	// will hold it; nil when not even once they have all ended.
	RoomExpectedAt *time.Time `json:"roomExpectedAt,omitempty"`
	// WillMiss is true when that is after its latest start.
	WillMiss bool `json:"willMiss"`
	// Policy is the preemption policy in force.
	Policy PreemptionPolicy `json:"policy"`
	// Evicting are the jobs being evicted for it now; WouldEvict those the
	// policy would evict if it were allowed (Blocked says why not).
	Evicting   []string `json:"evicting,omitempty"`
	WouldEvict []string `json:"wouldEvict,omitempty"`
	Blocked    string   `json:"blocked,omitempty"`
}

func (v *PreemptionView) equal(o *PreemptionView) bool {
	if v == nil || o == nil {
		return v == o
	}
	return v.LatestStart.Equal(o.LatestStart) && v.WillMiss == o.WillMiss && v.Policy == o.Policy &&
		v.Blocked == o.Blocked && slices.Equal(v.Evicting, o.Evicting) && slices.Equal(v.WouldEvict, o.WouldEvict) &&
		((v.RoomExpectedAt == nil) == (o.RoomExpectedAt == nil)) &&
		(v.RoomExpectedAt == nil || v.RoomExpectedAt.Equal(*o.RoomExpectedAt))
}

// note is the view as a waiting reason's tail, and its coarse form.
func (v *PreemptionView) note() (detail, coarse string) {
	if v == nil || !v.WillMiss {
		return "", ""
	}
	when := "the running jobs' estimates never free enough room"
	if v.RoomExpectedAt != nil {
		when = "room expected at " + v.RoomExpectedAt.UTC().Format(time.RFC3339) + ", after its latest start " + v.LatestStart.UTC().Format(time.RFC3339)
	}
	switch {
	case len(v.Evicting) > 0:
		return fmt.Sprintf("will miss its deadline waiting (%s): evicting %s (%s)", when, strings.Join(v.Evicting, ", "), v.Policy),
			"will miss its deadline waiting: evicting running jobs (" + string(v.Policy) + ")"
	case v.Policy == PreemptNone || v.Policy == "":
		return "will miss its deadline waiting (" + when + "); preemption is off", "will miss its deadline waiting; preemption is off"
	case len(v.WouldEvict) > 0:
		return fmt.Sprintf("will miss its deadline waiting (%s): would evict %s (%s) but %s", when, strings.Join(v.WouldEvict, ", "), v.Policy, v.Blocked),
			"will miss its deadline waiting: eviction " + v.Blocked
	default:
		return fmt.Sprintf("will miss its deadline waiting (%s): %s", when, v.Blocked), "will miss its deadline waiting: " + v.Blocked
	}
}

// preemptScanLimit bounds how many waiting deadline jobs a pass looks at
// for preemption (the earliest deadlines first): with a long queue the
// jobs far behind cannot use the room anyway.
const preemptScanLimit = 256

type evictRecord struct {
	at   time.Time
	cpus float64
}

// PreemptStat describes one eviction decision (Observer.Evicting).
type PreemptStat struct {
	Victim, For string
	Policy      PreemptionPolicy
}
