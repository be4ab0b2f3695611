package scheduler

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// JobBuffer is the intake of thesis Algorithm 3: jobs announced by the
// outside (the API, a restart) wait here until the loop moves them into the
// DeadlineQueue or the JobQueue. It is safe for concurrent use; the queues
// are not (the Core guards them).
type JobBuffer struct {
	mu   sync.Mutex
	jobs []Job
}

// Push appends a job.
func (b *JobBuffer) Push(j Job) {
	b.mu.Lock()
	b.jobs = append(b.jobs, j)
	b.mu.Unlock()
}

// Drain removes and returns every buffered job in arrival order.
func (b *JobBuffer) Drain() []Job {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.jobs
	b.jobs = nil
	return out
}

// Len is the number of buffered jobs.
func (b *JobBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.jobs)
}

// Remove drops the buffered job with this id; it reports whether it was there.
func (b *JobBuffer) Remove(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i := range b.jobs {
		if b.jobs[i].ID == id {
			b.jobs = slices.Delete(b.jobs, i, i+1)
			return true
		}
	}
	return false
}

// Entry is a waiting job with the bookkeeping the queues and the loop need.
type Entry struct {
	Job Job
	// Demand is what the job asks of the placement engine.
	Demand placement.Demand
	// RD is the job's resource demand (JobQueue key), recomputed when the
	// cluster's totals change.
	RD float64
	// EnqueuedAt is when the job entered a queue (this attempt).
	EnqueuedAt time.Time
	// SkippedSince is when a regular job was first skipped because it did
	// not fit or deadline jobs came first; zero while it was never skipped.
	SkippedSince time.Time
	// Promoted is set when a regular job waited too long and was moved to
	// the deadline queue (anti-starvation); PromotedAt is its EDF key there.
	Promoted   bool
	PromotedAt time.Time
	// noFitEpoch is the cluster's free-resource epoch at the last NoFit;
	// the job is not retried until resources were freed since.
	noFitEpoch uint64
	noFitValid bool
}

// edfKey is the time the deadline queue orders by: the deadline, or the
// promotion time of a promoted regular job.
func (e *Entry) edfKey() time.Time {
	if e.Job.DeadlineAt != nil {
		return *e.Job.DeadlineAt
	}
	return e.PromotedAt
}

// DemandOf turns a job into the placement engine's demand: E executors of
// ExecutorCores cpus and executor memory plus Spark's overhead each.
func DemandOf(j *Job) placement.Demand {
	d := placement.Demand{
		JobID:             j.ID,
		Executors:         j.Executors,
		CPUs:              float64(j.ExecutorCores),
		MemMB:             float64(j.ExecutorTotalMemMB()),
		EstimatedDuration: j.EstimatedDuration(),
		App:               AppType(j),
	}
	if j.DeadlineAt != nil {
		d.Deadline = *j.DeadlineAt
	}
	return d
}

// DeadlineQueue holds deadline jobs (and promoted regular jobs) in EDF
// order: earliest deadline first, ties by submission time, then job id.
type DeadlineQueue struct{ entries []*Entry }

func edfLess(a, b *Entry) int {
	if c := a.edfKey().Compare(b.edfKey()); c != 0 {
		return c
	}
	if c := a.Job.SubmittedAt.Compare(b.Job.SubmittedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Job.ID, b.Job.ID)
}

// Push inserts e in EDF order.
func (q *DeadlineQueue) Push(e *Entry) {
	i, _ := slices.BinarySearchFunc(q.entries, e, edfLess)
	q.entries = slices.Insert(q.entries, i, e)
}

// Entries returns the queue in order (the slice is the queue's own; do not modify).
func (q *DeadlineQueue) Entries() []*Entry { return q.entries }

// Len is the number of waiting jobs.
func (q *DeadlineQueue) Len() int { return len(q.entries) }

// Remove drops the job with this id and returns its entry, or nil.
func (q *DeadlineQueue) Remove(id string) *Entry { return removeID(&q.entries, id) }

// JobQueue holds regular jobs by descending resource demand RD = E *
// (alpha*c/CPU_total + beta*m/MEM_total); ties by submission time, then id.
// With FIFO set it keeps submission order instead (the FIFO baselines).
type JobQueue struct {
	entries []*Entry
	FIFO    bool
}

func (q *JobQueue) less(a, b *Entry) int {
	if !q.FIFO {
		switch {
		case a.RD > b.RD:
			return -1
		case a.RD < b.RD:
			return 1
		}
	}
	if c := a.Job.SubmittedAt.Compare(b.Job.SubmittedAt); c != 0 {
		return c
	}
	return strings.Compare(a.Job.ID, b.Job.ID)
}

// Push inserts e in order.
func (q *JobQueue) Push(e *Entry) {
	i, _ := slices.BinarySearchFunc(q.entries, e, q.less)
	q.entries = slices.Insert(q.entries, i, e)
}

// Entries returns the queue in order (the slice is the queue's own; do not modify).
func (q *JobQueue) Entries() []*Entry { return q.entries }

// Len is the number of waiting jobs.
func (q *JobQueue) Len() int { return len(q.entries) }

// Remove drops the job with this id and returns its entry, or nil.
func (q *JobQueue) Remove(id string) *Entry { return removeID(&q.entries, id) }

// Resort recomputes every RD for new cluster totals and restores the order.
func (q *JobQueue) Resort(totalCPUs, totalMemMB, alpha, beta float64) {
	for _, e := range q.entries {
		e.RD = placement.ResourceDemand(e.Demand, totalCPUs, totalMemMB, alpha, beta)
	}
	slices.SortStableFunc(q.entries, q.less)
}

func removeID(s *[]*Entry, id string) *Entry {
	for i, e := range *s {
		if e.Job.ID == id {
			*s = slices.Delete(*s, i, i+1)
			return e
		}
	}
	return nil
}
