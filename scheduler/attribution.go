package scheduler

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sparkpack/sparkpack/placement"
)

// Cost attribution: the meter splits every active agent-second among the
// jobs that hold something on the agent, each job by its dominant share
// of the agent (the larger of its reserved cpus / the agent's cpus and its
// reserved memory / the agent's memory: Dominant Resource Fairness' share),
// and keeps what no job holds as the idle remainder. When the shares of
// an agent's jobs add up to more than 1 (one job takes most cpus, another
// most memory) they are scaled down to add up to 1 and nothing of that
// agent is idle. So per-job costs + idle = the meter, at every instant,
// within float rounding.

// LedgerBucket is the width of the time buckets attributed cost is kept
// in (the ledger's rows, and so the finest step of GET /api/v1/usage).
const LedgerBucket = time.Minute

// Usage is what was attributed to one job (or to idle) over some time.
type Usage struct {
	CostUSD float64 `json:"costUSD"`
	// CPUSeconds and MemMBSeconds are the cpus and MiB held times the
	// seconds they were held (zero for idle).
	CPUSeconds   float64 `json:"cpuSeconds"`
	MemMBSeconds float64 `json:"memMBSeconds"`
}

func (u *Usage) add(o Usage) {
	u.CostUSD += o.CostUSD
	u.CPUSeconds += o.CPUSeconds
	u.MemMBSeconds += o.MemMBSeconds
}

// LedgerEntry is what this meter attributed to one job (JobID "" for the
// idle remainder) within one bucket [Bucket, Bucket+LedgerBucket), since
// the meter started: entries only grow, so saving one again is idempotent.
type LedgerEntry struct {
	Bucket time.Time
	JobID  string
	Usage
}

type ledgerKey struct {
	bucket int64 // unix seconds of the bucket's start
	job    string
}

// jobShare is one job's part of one agent.
type jobShare struct {
	job   string
	share float64 // of the agent's cost, after scaling (sum over jobs <= 1)
	cpus  float64
	mem   float64
}

// Shares is the attribution rule: each job's part of an agent of cpus x
// memMB from what it holds (dominant share, capped at 1, scaled down when
// the parts add up to more than 1). Pure, for the meter and its tests.
func Shares(cpus, memMB float64, holds []placement.Holding) []float64 {
	out := make([]float64, len(holds))
	sum := 0.0
	for i, h := range holds {
		s := 0.0
		if cpus > 0 {
			s = math.Max(s, h.CPUs/cpus)
		}
		if memMB > 0 {
			s = math.Max(s, h.MemMB/memMB)
		}
		if math.IsNaN(s) || s < 0 {
			s = 0
		}
		out[i] = math.Min(s, 1)
		sum += out[i]
	}
	if sum > 1 {
		for i := range out {
			out[i] /= sum
		}
	}
	return out
}

// attribution is the meter's per-job part (guarded by CostMeter.mu).
type attribution struct {
	ledger map[ledgerKey]*Usage
	// jobs is what each job was attributed since the meter started.
	jobs map[string]*Usage
	idle float64
	// writer names this meter in the ledger (a uuid).
	writer string
}

func (m *CostMeter) attr() *attribution {
	if m.at == nil {
		m.at = &attribution{ledger: map[ledgerKey]*Usage{}, jobs: map[string]*Usage{}, writer: uuid.NewString()}
	}
	return m.at
}

// Writer is this meter's name in the stored ledger (store.SaveCost): one
// meter per leadership term, whose entries only grow.
func (m *CostMeter) Writer() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.attr().writer
}

// sharesOf turns an agent's holdings into the meter's shares.
func sharesOf(a placement.Agent, holds []placement.Holding) []jobShare {
	if len(holds) == 0 {
		return nil
	}
	f := Shares(a.CPUs, a.MemMB, holds)
	out := make([]jobShare, 0, len(holds))
	for i, h := range holds {
		out = append(out, jobShare{job: h.JobID, share: f[i], cpus: h.CPUs, mem: h.MemMB})
	}
	return out
}

// accrueLocked attributes agent a's active time from a.mark to t.
func (m *CostMeter) accrueLocked(a *agentMeter, t time.Time) {
	if !a.active || !t.After(a.mark) {
		if t.After(a.mark) {
			a.mark = t
		}
		return
	}
	at := m.attr()
	from := a.mark
	for from.Before(t) {
		b := from.Truncate(LedgerBucket)
		to := b.Add(LedgerBucket)
		if to.After(t) {
			to = t
		}
		d := to.Sub(from)
		cost := microUSDHoursToUSD(a.price, d)
		given := 0.0
		for _, s := range a.shares {
			u := Usage{CostUSD: cost * s.share, CPUSeconds: s.cpus * d.Seconds(), MemMBSeconds: s.mem * d.Seconds()}
			given += u.CostUSD
			at.entry(b, s.job).add(u)
			j := at.jobs[s.job]
			if j == nil {
				j = &Usage{}
				at.jobs[s.job] = j
			}
			j.add(u)
		}
		idle := math.Max(cost-given, 0)
		at.entry(b, "").add(Usage{CostUSD: idle})
		at.idle += idle
		from = to
	}
	a.mark = t
}

func (at *attribution) entry(bucket time.Time, job string) *Usage {
	k := ledgerKey{bucket: bucket.Unix(), job: job}
	u := at.ledger[k]
	if u == nil {
		u = &Usage{}
		at.ledger[k] = u
	}
	return u
}

// observeHoldingsLocked changes what agent am's cost is split by, from t,
// when its jobs' holdings (or its size) changed. Unchanged, the common
// case at every pass, it allocates nothing.
func (m *CostMeter) observeHoldingsLocked(t time.Time, am *agentMeter, a placement.Agent, holds []placement.Holding) {
	if am.sizeCPUs == a.CPUs && am.sizeMemMB == a.MemMB && slices.Equal(am.holds, holds) {
		return
	}
	if t.Before(m.last) {
		t = m.last
	}
	m.accrueLocked(am, t)
	am.holds, am.sizeCPUs, am.sizeMemMB = holds, a.CPUs, a.MemMB
	am.shares = sharesOf(a, holds)
}

// Checkpoint attributes every active agent's time up to t and returns the
// ledger entries (cumulative since the meter started) with the meter's
// total at t: saved together, per-job costs + idle = the total.
func (m *CostMeter) Checkpoint(t time.Time) (float64, []LedgerEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.Before(m.last) {
		t = m.last
	}
	for _, id := range m.sortedLocked() {
		m.accrueLocked(m.agents[id], t)
	}
	at := m.attr()
	out := make([]LedgerEntry, 0, len(at.ledger))
	for k, u := range at.ledger {
		out = append(out, LedgerEntry{Bucket: time.Unix(k.bucket, 0).UTC(), JobID: k.job, Usage: *u})
	}
	sortLedger(out)
	return m.totalLocked(t), out
}

// ForgetBefore drops the ledger entries of buckets that ended at or before
// t (saved, and never to change again), and what it keeps of jobs that
// hold nothing any more. Call it after saving a Checkpoint taken at t or
// later.
func (m *CostMeter) ForgetBefore(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := m.attr()
	for k := range at.ledger {
		if !time.Unix(k.bucket, 0).Add(LedgerBucket).After(t) {
			delete(at.ledger, k)
		}
	}
	holding := map[string]bool{}
	for _, a := range m.agents {
		for _, s := range a.shares {
			holding[s.job] = true
		}
	}
	for id := range at.jobs {
		if !holding[id] {
			delete(at.jobs, id)
		}
	}
}

// Attributed is what the meter attributed to each job since it started
// (up to t, open intervals included) and the idle remainder. A job that
// ended and was forgotten (ForgetBefore) is absent. With ids, only those
// jobs are returned, as of the meter's last look at their agents (a
// change of what they hold, or a Checkpoint: the API's job views must not
// cost a walk over every agent).
func (m *CostMeter) Attributed(t time.Time, ids ...string) (map[string]Usage, float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.Before(m.last) {
		t = m.last
	}
	if len(ids) == 0 {
		for _, id := range m.sortedLocked() {
			m.accrueLocked(m.agents[id], t)
		}
	}
	at := m.attr()
	if len(ids) > 0 {
		out := make(map[string]Usage, len(ids))
		for _, id := range ids {
			if u := at.jobs[id]; u != nil {
				out[id] = *u
			}
		}
		return out, at.idle
	}
	out := make(map[string]Usage, len(at.jobs))
	for id, u := range at.jobs {
		out[id] = *u
	}
	return out, at.idle
}

// IdleUSD is the idle remainder since the meter started, up to t.
func (m *CostMeter) IdleUSD(t time.Time) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.Before(m.last) {
		t = m.last
	}
	for _, id := range m.sortedLocked() {
		m.accrueLocked(m.agents[id], t)
	}
	return m.attr().idle
}

// sortLedger orders ledger entries by bucket, then job id (the order the
// store writes and the tests read them in).
func sortLedger(es []LedgerEntry) {
	slices.SortFunc(es, func(a, b LedgerEntry) int {
		if c := a.Bucket.Compare(b.Bucket); c != 0 {
			return c
		}
		return strings.Compare(a.JobID, b.JobID)
	})
}
