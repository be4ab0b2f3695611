package scheduler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/sparkpack/sparkpack/internal/plural"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// JobSubmitted hands a new job to the core (the api.Notifier hook): one
// stored SUBMITTED, which the loop admits and queues, or one stored QUEUED
// after Decide, which it queues. It does not block.
func (c *Core) JobSubmitted(j Job) {
	if j.State != Submitted && j.State != Queued && j.State != "" {
		return
	}
	c.buffer.Push(j)
	c.wake()
}

// JobCancelled tells the core that the store cancelled j (it was waiting),
// or that a kill was requested for it (it holds resources) (api.Notifier).
func (c *Core) JobCancelled(j Job, killRequested bool) {
	c.inboxMu.Lock()
	c.cancels = append(c.cancels, cancelNote{job: j, kill: killRequested})
	c.inboxMu.Unlock()
	c.wake()
}

// ClusterChanged tells the core that the cluster changed without its doing
// (resources freed, agents added or lost): waiting jobs are tried again.
// It never blocks, so it may be called while holding locks that the
// Cluster's own methods take.
func (c *Core) ClusterChanged() {
	c.freeEpoch.Add(1)
	c.wake()
}

// enqueue puts an entry into its queue (owned by the pass).
func (c *Core) enqueue(e *Entry, now time.Time) *Entry {
	if old := c.byID[e.ID]; old != nil {
		c.dequeueEntry(old)
	}
	if e.EnqueuedAt.IsZero() {
		e.EnqueuedAt = now
	}
	e.RD = placement.ResourceDemand(e.Demand, c.totalCPU, c.totalMem, c.alpha, c.beta)
	e.view = nil
	e.queued, e.fresh = true, true
	if (e.IsDeadlineJob() || e.Promoted) && c.cfg.Ordering != OrderFIFO {
		e.inDQ = true
		c.dq.Push(e)
		c.byChoiceDQ += b2i(e.wait.byChoice)
	} else {
		e.inDQ = false
		c.jq.Push(e)
	}
	c.byID[e.ID] = e
	c.fresh = append(c.fresh, e)
	c.viewDirty = true
	return e
}

// dequeueEntry takes an entry out of its queue.
func (c *Core) dequeueEntry(e *Entry) {
	if !e.queued {
		return
	}
	if e.inDQ {
		c.dq.RemoveEntry(e)
		c.byChoiceDQ -= b2i(e.wait.byChoice)
	} else {
		c.jq.RemoveEntry(e)
	}
	e.queued = false
	delete(c.byID, e.ID)
	c.waiting.drop(e.ID)
	c.viewDirty = true
}

// admission decides about a new job: reject reason ("" to accept) and, in
// accept-and-flag mode, the at-risk reason.
func (c *Core) admission(j *Job, now time.Time) (reject, risk string) {
	fits := c.executorFitsSomewhere(j)
	if fits {
		if r := c.neverFits(j); r != "" {
			return r, ""
		}
	}
	scaled := *j
	scaled.EstimatedDurationSeconds *= c.cfg.DurationScale
	p50 := c.learnedAdmission(&scaled)
	r := Admit(&scaled, now, fits)
	if r == "" || !fits {
		return r, ""
	}
	if c.cfg.Admission == AdmitFlag {
		return "", r
	}
	// A rejection is final: the model's p90 is its spread, not a verdict.
	// A job whose median run time still makes its deadline is accepted and
	// flagged at risk (as waiting jobs are: docs/learning.md); the median
	// is the one to reject on.
	if p50 > 0 {
		med := scaled
		med.EstimatedDurationSeconds = min(p50, perfmodel.MaxSeconds)
		if rm := Admit(&med, now, fits); rm != "" {
			return rm, ""
		}
		return "", r
	}
	return r, ""
}

// Decision is the core's decision about a new job at submission.
type Decision struct {
	// Reject, when not empty, is why the job can never run (or, in
	// AdmitReject mode, cannot make its deadline): store it REJECTED.
	Reject string
	// Queue: store the job QUEUED at once; the core takes it into its
	// queue when told (JobSubmitted).
	Queue bool
	// AtRisk, with Queue, is why it risks its deadline (AdmitFlag mode, or
	// AdmitReject with a model whose median still makes it).
	AtRisk string
	// Reason, with Queue, is the waiting reason the core expects to give
	// the job at its first pass ("" when it cannot say): stored with the
	// job, it spares that pass a write.
	Reason string
}

// Apply sets the state, waiting reason and at-risk flag of a job the core
// queues at submission.
func (d Decision) Apply(j *Job) {
	if !d.Queue {
		return
	}
	j.State, j.WaitingReason, j.AtRisk = Queued, ReasonQueued, false
	if d.Reason != "" {
		j.WaitingReason = d.Reason
	}
	if d.AtRisk != "" {
		j.AtRisk, j.WaitingReason = true, "at risk: "+d.AtRisk
	}
}

// Decide is the admission of a submission, made by the API before the job
// is stored (its Config.Decide): rejected, or queued at once. A job the
// core queues this way costs one database write; the core's own intake
// (of SUBMITTED jobs) remains for jobs stored without a decision.
func (c *Core) Decide(j *Job, now time.Time) Decision {
	reject, risk := c.admission(j, now)
	if reject != "" {
		return Decision{Reject: reject}
	}
	d := Decision{Queue: true, AtRisk: risk}
	if risk == "" {
		d.Reason = c.predictReason(j)
	}
	return d
}

// Admit is the submission-time admission check for the API (its Config.
// Admit): the reason to reject the job, or "". It rejects a job whose
// executor is larger than every agent, and, in AdmitReject mode, a deadline
// job that cannot finish by its deadline even if started now.
func (c *Core) Admit(j *Job, now time.Time) string {
	r, _ := c.admission(j, now)
	return r
}

func (c *Core) executorFitsSomewhere(j *Job) bool {
	c.capMu.RLock()
	defer c.capMu.RUnlock()
	if len(c.capacity) == 0 {
		return true // no snapshot seen yet: let placement decide
	}
	d := DemandOf(j)
	for _, a := range c.capacity {
		if a[0] >= d.CPUs-1e-9 && a[1] >= d.MemMB-1e-9 {
			return true
		}
	}
	return false
}

// neverFits is why the whole cluster, powered-off agents included, could
// never hold j even empty ("" when it could, or when no agent is known
// yet): such a job is rejected when it arrives, whatever else waits (a
// pass only finds out when it tries the job, and it does not try regular
// jobs while deadline jobs wait). The pass gives the same reason.
func (c *Core) neverFits(j *Job) string {
	c.capMu.RLock()
	defer c.capMu.RUnlock()
	if len(c.capCounts) == 0 {
		return ""
	}
	d := DemandOf(j)
	if d.Executors <= 0 || d.CPUs <= 0 || d.MemMB <= 0 {
		return "" // the placement policy rejects an invalid demand with its own reason
	}
	n := 0
	for _, s := range c.capCounts {
		k := int(min(math.Floor(s.cpus/d.CPUs+1e-9), math.Floor(s.memMB/d.MemMB+1e-9)))
		if n += k * s.agents; n >= d.Executors {
			return ""
		}
	}
	return emptyClusterReason(d)
}

// emptyClusterReason is the rejection of a demand that no empty cluster
// holds, its counts in the right number ("500 executors of 1 cpu", not
// "of 1 cpus").
func emptyClusterReason(d placement.Demand) string {
	return fmt.Sprintf("does not fit even on the empty cluster: it needs %s of %s and %g MiB",
		plural.N(d.Executors, "executor"), plural.G(d.CPUs, "cpu"), d.MemMB)
}

// sizeCount is how many agents have one size.
type sizeCount struct {
	cpus, memMB float64
	agents      int
}

// countSizes groups agent sizes (agentSizes) by size.
func countSizes(sizes [][2]float64) []sizeCount {
	at := map[[2]float64]int{}
	var out []sizeCount
	for _, s := range sizes {
		i, ok := at[s]
		if !ok {
			i = len(out)
			at[s] = i
			out = append(out, sizeCount{cpus: s[0], memMB: s[1]})
		}
		out[i].agents++
	}
	return out
}

// sizeFrontier is the agent sizes (cpus, MiB) that no other agent beats on
// both: an executor fits some agent exactly when it fits one of them. A
// cluster has a handful of such sizes however many agents it has, so
// admission checks a few sizes instead of every agent.
func sizeFrontier(agents ...[]placement.Agent) [][2]float64 {
	seen := map[[2]float64]bool{}
	var sizes [][2]float64
	for _, as := range agents {
		for i := range as {
			k := [2]float64{as[i].CPUs, as[i].MemMB}
			if !seen[k] {
				seen[k] = true
				sizes = append(sizes, k)
			}
		}
	}
	// Largest cpus first (then memory): a size is on the frontier when it
	// has more memory than every size with more cpus.
	slices.SortFunc(sizes, func(a, b [2]float64) int {
		if c := cmp.Compare(b[0], a[0]); c != 0 {
			return c
		}
		return cmp.Compare(b[1], a[1])
	})
	var front [][2]float64
	for _, a := range sizes {
		if len(front) == 0 || a[1] > front[len(front)-1][1] {
			front = append(front, a)
		}
	}
	return front
}

// agentSizes appends the agents' sizes (cpus, MiB), in order, to dst: what
// the frontier was computed from. Comparing it exactly (sameSizes), not a
// summary such as sums, is what tells when the frontier must be computed
// again: cpus moved between two agents of equal memory keep every sum.
func agentSizes(dst [][2]float64, agents ...[]placement.Agent) [][2]float64 {
	dst = dst[:0]
	for _, as := range agents {
		for i := range as {
			dst = append(dst, [2]float64{as[i].CPUs, as[i].MemMB})
		}
	}
	return dst
}

// sameSizes reports whether the agents have exactly the sizes in prev, in
// order.
func sameSizes(prev [][2]float64, agents ...[]placement.Agent) bool {
	k := 0
	for _, as := range agents {
		for i := range as {
			if k >= len(prev) || prev[k] != [2]float64{as[i].CPUs, as[i].MemMB} {
				return false
			}
			k++
		}
	}
	return k == len(prev)
}

// Submit admits a job that is stored in state SUBMITTED and queues it (or
// rejects it), synchronously; it returns the job as stored. Live, the API
// uses JobSubmitted instead; the simulator calls Submit.
func (c *Core) Submit(ctx context.Context, j Job) (Job, error) {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	if j.State == "" {
		j.State = Submitted
	}
	if j.State != Submitted {
		return j, fmt.Errorf("scheduler: submit job %s: state is %s, want %s", j.ID, j.State, Submitted)
	}
	now := c.clock.Now()
	out, err := c.intake(ctx, []Job{j}, now)
	c.publish(now)
	if err != nil {
		return j, err
	}
	if len(out) == 0 {
		return j, fmt.Errorf("scheduler: submit job %s: %w", j.ID, ErrStale)
	}
	return out[0], nil
}

// intake admits buffered jobs: each is queued or rejected, all in one
// store batch. It returns the jobs as stored; a job whose write failed for
// a reason that may pass is put back into the buffer.
func (c *Core) intake(ctx context.Context, jobs []Job, now time.Time) ([]Job, error) {
	if len(jobs) == 0 {
		return nil, nil
	}
	// Jobs queued at submission (Decide) need no store write.
	var out []Job
	seen := map[string]bool{}
	var entries []*Entry
	submitted := jobs[:0:0]
	for i := range jobs {
		j := &jobs[i]
		if j.State != Queued {
			submitted = append(submitted, *j)
			continue
		}
		_, gone := c.cancelled[j.ID]
		if _, left := c.placed[j.ID]; left {
			gone = true
		}
		if gone || c.byID[j.ID] != nil || seen[j.ID] {
			continue
		}
		seen[j.ID] = true
		out = append(out, *j)
		entries = append(entries, c.newEntry(j))
	}
	c.enqueueMany(entries, now)
	if len(submitted) == 0 {
		return out, nil
	}
	jobs = submitted
	entries = nil
	changes := make([]Change, len(jobs))
	queue := make([]bool, len(jobs))
	for i := range jobs {
		j := &jobs[i]
		reject, risk := c.admission(j, now)
		if reject != "" {
			changes[i] = Change{ID: j.ID, From: Submitted, To: Rejected, Reason: reject, Mutate: func(x *Job) {
				x.WaitingReason = reject
				t := now
				x.FinishedAt = &t
			}}
			continue
		}
		queue[i] = true
		changes[i] = Change{ID: j.ID, From: Submitted, To: Queued, Reason: "queued", Mutate: func(x *Job) {
			x.WaitingReason = ReasonQueued
			if risk != "" {
				x.AtRisk = true
				x.WaitingReason = "at risk: " + risk
			}
		}}
	}
	res, err := c.transitionMany(ctx, changes)
	if err != nil {
		for _, j := range jobs {
			c.buffer.Push(j)
		}
		return out, fmt.Errorf("scheduler: admit %d jobs: %w", len(jobs), err)
	}
	var firstErr error
	for i, r := range res {
		switch {
		case r.Err == nil:
			out = append(out, r.Job)
			if queue[i] {
				e := c.newEntry(&r.Job)
				entries = append(entries, e)
			}
		case errors.Is(r.Err, ErrStale) || errors.Is(r.Err, ErrNotFound):
			// Cancelled (or gone) before it was admitted.
		default:
			c.log.WithError(r.Err).WithField("job", jobs[i].ID).Warn("admission failed; will retry")
			c.buffer.Push(jobs[i])
			if firstErr == nil {
				firstErr = r.Err
			}
		}
	}
	c.enqueueMany(entries, now)
	return out, firstErr
}

// enqueueMany queues new entries, merging them into the queues at once.
func (c *Core) enqueueMany(es []*Entry, now time.Time) {
	if len(es) < 8 {
		for _, e := range es {
			c.enqueue(e, now)
		}
		return
	}
	// The same job twice in one batch (announced by the API and by the
	// database's notification): the last one counts.
	last := make(map[string]int, len(es))
	for i, e := range es {
		last[e.ID] = i
	}
	var d, r []*Entry
	for i, e := range es {
		if last[e.ID] != i {
			continue
		}
		if old := c.byID[e.ID]; old != nil {
			c.dequeueEntry(old)
		}
		if e.EnqueuedAt.IsZero() {
			e.EnqueuedAt = now
		}
		e.RD = placement.ResourceDemand(e.Demand, c.totalCPU, c.totalMem, c.alpha, c.beta)
		e.queued, e.fresh, e.view = true, true, nil
		e.inDQ = (e.IsDeadlineJob() || e.Promoted) && c.cfg.Ordering != OrderFIFO
		if e.inDQ {
			d = append(d, e)
			c.byChoiceDQ += b2i(e.wait.byChoice)
		} else {
			r = append(r, e)
		}
		c.byID[e.ID] = e
		c.fresh = append(c.fresh, e)
	}
	c.dq.PushMany(d)
	c.jq.PushMany(r)
	c.viewDirty = true
}
