package scheduler

import (
	"slices"
	"sync"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// JobBuffer is the intake of thesis Algorithm 3: jobs announced by the
// outside (the API, a restart) wait here until the loop moves them into the
// DeadlineQueue or the JobQueue. It is safe for concurrent use; the queues
// are not (the pass that owns them guards them).
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

// IDs returns the ids of the buffered jobs.
func (b *JobBuffer) IDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	ids := make([]string, len(b.jobs))
	for i := range b.jobs {
		ids[i] = b.jobs[i].ID
	}
	return ids
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

// Entry is a waiting job as the queues keep it: only what ordering,
// placement and the views need, not the job's whole spec (a queued job
// costs a few hundred bytes; the spec is read back from the store when the
// job starts).
type Entry struct {
	ID          string
	Name        string
	Team        string
	SubmittedAt time.Time
	DeadlineAt  *time.Time
	// NotBefore is the job's earliest start time; nil when it has none.
	NotBefore *time.Time
	// EstimatedDurationSeconds is the job's estimate as submitted (zero
	// when unknown); the core scales it with Config.DurationScale.
	EstimatedDurationSeconds float64
	// ExecutorMemoryMB is the executor memory without overhead (for views;
	// Demand.MemMB includes the overhead).
	ExecutorMemoryMB int
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
	// Preemptions counts the job's evictions so far.
	Preemptions int

	evicting []string // jobs being evicted for it
	// The driver's size, for the room a start keeps for it (Config.DriverRoom);
	// float32 keeps an entry within its allocation size class.
	driverCPUs, driverMemMB float32

	wait   waitState  // why it waits now (in memory, detailed)
	stored storedWait // what the store holds (coarse; written on change)
	view   *QueuedJob // published view; nil when out of date
	queued bool       // in a queue now
	inDQ   bool       // in the deadline queue (else the job queue)
	fresh  bool       // entered a queue since the last pass
	// learn is what the run-time model knows the job by and the pass's
	// cached prediction (predict.go); nil without a model.
	learn *entryLearn
}

// NewEntry builds the queue entry of a job.
func NewEntry(j *Job) *Entry {
	drv := j.DriverOrDefault()
	return &Entry{
		driverCPUs: float32(drv.Cores), driverMemMB: float32(drv.MemoryMB),
		ID: j.ID, Name: j.Name, Team: j.Team, SubmittedAt: j.SubmittedAt, DeadlineAt: j.DeadlineAt, NotBefore: j.NotBeforeAt(),
		EstimatedDurationSeconds: j.EstimatedDurationSeconds, ExecutorMemoryMB: j.ExecutorMemoryMB,
		Demand: DemandOf(j), Preemptions: j.Preemptions,
		stored: storedWait{reason: j.WaitingReason, atRisk: j.AtRisk},
		wait:   waitState{text: j.WaitingReason, atRisk: j.AtRisk},
	}
}

// IsDeadlineJob reports whether the entry's job carries a deadline.
func (e *Entry) IsDeadlineJob() bool { return e.DeadlineAt != nil }

// edfKey is the time the deadline queue orders by: the deadline, or the
// promotion time of a promoted regular job.
func (e *Entry) edfKey() time.Time {
	if e.DeadlineAt != nil {
		return *e.DeadlineAt
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

// sortedEntries is a slice of entries kept in the order of cmp, with
// O(log n) lookup of an entry's position and O(n + k log k) insertion of
// k entries at once.
type sortedEntries struct {
	entries []*Entry
}

func (s *sortedEntries) push(e *Entry, cmp func(a, b *Entry) int) {
	i, _ := slices.BinarySearchFunc(s.entries, e, cmp)
	s.entries = slices.Insert(s.entries, i, e)
}

// pushMany merges new entries into the sorted slice, in place and from
// the back: each new entry's place is found by binary search in what is
// left of the old entries, which move in blocks, so the cost is O(k log n)
// comparisons and one pass of copying, however large the queue.
func (s *sortedEntries) pushMany(es []*Entry, cmp func(a, b *Entry) int) {
	if len(es) == 0 {
		return
	}
	if len(es) == 1 {
		s.push(es[0], cmp)
		return
	}
	slices.SortStableFunc(es, cmp)
	n := len(s.entries)
	s.entries = slices.Grow(s.entries, len(es))[:n+len(es)]
	all := s.entries
	end := n // old entries still to place are all[:end]
	for k := len(es) - 1; k >= 0; k-- {
		e := es[k]
		// First old entry that goes after e (ties: e after equal old ones).
		i, _ := slices.BinarySearchFunc(all[:end], e, func(x, t *Entry) int {
			if cmp(x, t) <= 0 {
				return -1
			}
			return 1
		})
		dst := i + k + 1 // where all[i:end] goes
		copy(all[dst:dst+end-i], all[i:end])
		all[i+k] = e
		end = i
	}
}

// index finds e (by identity) with a binary search on its key; -1 when absent.
func (s *sortedEntries) index(e *Entry, cmp func(a, b *Entry) int) int {
	i, _ := slices.BinarySearchFunc(s.entries, e, cmp)
	for k := i; k < len(s.entries) && cmp(s.entries[k], e) == 0; k++ {
		if s.entries[k] == e {
			return k
		}
	}
	// Keys compare equal only for the same job (ties end at the id), so
	// this is reached only when e is absent or its key changed in place.
	for k, x := range s.entries {
		if x == e {
			return k
		}
	}
	return -1
}

func (s *sortedEntries) remove(e *Entry, cmp func(a, b *Entry) int) bool {
	i := s.index(e, cmp)
	if i < 0 {
		return false
	}
	s.entries = slices.Delete(s.entries, i, i+1)
	return true
}

func (s *sortedEntries) removeID(id string) *Entry {
	for i, e := range s.entries {
		if e.ID == id {
			s.entries = slices.Delete(s.entries, i, i+1)
			return e
		}
	}
	return nil
}

// DeadlineQueue holds deadline jobs (and promoted regular jobs) in EDF
// order: earliest deadline first, ties by submission time, then job id.
type DeadlineQueue struct{ s sortedEntries }

func edfLess(a, b *Entry) int {
	return cmpEDF(a.edfKey(), a.SubmittedAt, a.ID, b.edfKey(), b.SubmittedAt, b.ID)
}

// Push inserts e in EDF order.
func (q *DeadlineQueue) Push(e *Entry) { q.s.push(e, edfLess) }

// PushMany inserts several entries at once.
func (q *DeadlineQueue) PushMany(es []*Entry) { q.s.pushMany(es, edfLess) }

// Entries returns the queue in order (the slice is the queue's own; do not modify).
func (q *DeadlineQueue) Entries() []*Entry { return q.s.entries }

// Len is the number of waiting jobs.
func (q *DeadlineQueue) Len() int { return len(q.s.entries) }

// Remove drops the job with this id and returns its entry, or nil (O(n)).
func (q *DeadlineQueue) Remove(id string) *Entry { return q.s.removeID(id) }

// RemoveEntry drops e, found by binary search; it reports whether it was there.
func (q *DeadlineQueue) RemoveEntry(e *Entry) bool { return q.s.remove(e, edfLess) }

// JobQueue holds regular jobs by descending resource demand RD = E *
// (alpha*c/CPU_total + beta*m/MEM_total); ties by submission time, then id.
// With FIFO set it keeps submission order instead (the FIFO baselines).
type JobQueue struct {
	s    sortedEntries
	FIFO bool
}

func (q *JobQueue) less(a, b *Entry) int {
	return cmpRegular(q.FIFO, a.RD, a.SubmittedAt, a.ID, b.RD, b.SubmittedAt, b.ID)
}

// Push inserts e in order.
func (q *JobQueue) Push(e *Entry) { q.s.push(e, q.less) }

// PushMany inserts several entries at once.
func (q *JobQueue) PushMany(es []*Entry) { q.s.pushMany(es, q.less) }

// Entries returns the queue in order (the slice is the queue's own; do not modify).
func (q *JobQueue) Entries() []*Entry { return q.s.entries }

// Len is the number of waiting jobs.
func (q *JobQueue) Len() int { return len(q.s.entries) }

// Remove drops the job with this id and returns its entry, or nil (O(n)).
func (q *JobQueue) Remove(id string) *Entry { return q.s.removeID(id) }

// RemoveEntry drops e, found by binary search; it reports whether it was there.
func (q *JobQueue) RemoveEntry(e *Entry) bool { return q.s.remove(e, q.less) }

// Resort recomputes every RD for new cluster totals and restores the order.
func (q *JobQueue) Resort(totalCPUs, totalMemMB, alpha, beta float64) {
	for _, e := range q.s.entries {
		e.RD = placement.ResourceDemand(e.Demand, totalCPUs, totalMemMB, alpha, beta)
	}
	slices.SortStableFunc(q.s.entries, q.less)
}
