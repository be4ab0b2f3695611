package placement

// FitIndex answers "could this job fit the snapshot now?" for many jobs in
// a row without running a policy for each: every policy places a job
// exactly when the sum over agents of the executors that fit reaches E
// (see prepare), and that sum depends only on the executor's size, so it
// is computed once per distinct executor size and remembered. The
// scheduling loop uses it to skip, in O(1), the thousands of waiting jobs
// that cannot fit, and to give each one the same NoFit reason a policy
// would.
//
// A FitIndex belongs to one snapshot: build a new one when the snapshot
// changes. It is not safe for concurrent use.
type FitIndex struct {
	s      Snapshot
	shapes map[[2]float64]shapeFit
	// nofits remembers Check's answer by (cpus, MiB, executors): a pass
	// over 100,000 waiting jobs of a few sizes otherwise built a NoFit per
	// job, garbage the collector then had to chase through a large heap.
	nofits map[[3]float64]*NoFit
	// The last shape and answer looked up: waiting jobs come in runs of
	// one size, and hashing float keys cost more than the rest of a check.
	lastShapeKey [2]float64
	lastShape    shapeFit
	lastShapeOK  bool
	lastNoFitKey [3]float64
	lastNoFit    *NoFit
	freeC        float64 // summed free cpus (negative free counts as 0)
	freeM        float64
}

type shapeFit struct {
	placeable   int  // executors of this size the whole cluster holds now
	maxPerAgent int  // the most any single agent holds
	never       bool // no agent could hold one even when empty
	// emptyPlaceable is how many the cluster would hold with every agent free.
	emptyPlaceable int
}

// NewFitIndex indexes a snapshot. It keeps s (not a copy): the caller must
// not change it while the index is in use.
func NewFitIndex(s Snapshot) *FitIndex {
	ix := &FitIndex{s: s, shapes: map[[2]float64]shapeFit{}, nofits: map[[3]float64]*NoFit{}}
	for _, a := range s.Agents {
		ix.freeC += max(a.FreeCPUs, 0)
		ix.freeM += max(a.FreeMemMB, 0)
	}
	return ix
}

// Snapshot is the snapshot the index was built on.
func (ix *FitIndex) Snapshot() Snapshot { return ix.s }

// Free is the summed free cpus and memory (MiB) of the snapshot's agents.
func (ix *FitIndex) Free() (cpus, memMB float64) { return ix.freeC, ix.freeM }

// Shapes is how many distinct executor sizes were looked at so far.
func (ix *FitIndex) Shapes() int { return len(ix.shapes) }

func (ix *FitIndex) shape(c, m float64) shapeFit {
	key := [2]float64{c, m}
	if ix.lastShapeOK && key == ix.lastShapeKey {
		return ix.lastShape
	}
	if f, ok := ix.shapes[key]; ok {
		ix.lastShapeKey, ix.lastShape, ix.lastShapeOK = key, f, true
		return f
	}
	const unbounded = 1 << 30
	f := shapeFit{never: len(ix.s.Agents) > 0}
	for _, a := range ix.s.Agents {
		k := fitCount(a.FreeCPUs, a.FreeMemMB, c, m, unbounded)
		f.placeable = min(f.placeable+k, unbounded)
		f.maxPerAgent = max(f.maxPerAgent, k)
		e := fitCount(a.CPUs, a.MemMB, c, m, unbounded)
		if e >= 1 {
			f.never = false
		}
		f.emptyPlaceable = min(f.emptyPlaceable+e, unbounded)
	}
	ix.shapes[key] = f
	ix.lastShapeKey, ix.lastShape, ix.lastShapeOK = key, f, true
	return f
}

// Placeable is how many executors of cpus and memMB the snapshot's agents
// hold now, all together (each agent's whole executors).
func (ix *FitIndex) Placeable(cpus, memMB float64) int { return ix.shape(cpus, memMB).placeable }

// FitCount is how many executors of cpus and memMB fit in freeCPUs and
// freeMemMB (as FitIndex and the policies count them).
func FitCount(freeCPUs, freeMemMB, cpus, memMB float64) int {
	return fitCount(freeCPUs, freeMemMB, cpus, memMB, 1<<30)
}

// Check returns nil when d could be placed on the snapshot by any policy
// (the cluster holds d.Executors executors of its size), and otherwise the
// *NoFit that a policy's Place would return for it. Demands of the same
// size get the same *NoFit: callers must not change it. An invalid demand is
// reported as fitting, so that the policy rejects it with its own error.
func (ix *FitIndex) Check(d Demand) *NoFit {
	if validate(d) != nil {
		return nil
	}
	f := ix.shape(d.CPUs, d.MemMB)
	if f.placeable >= d.Executors {
		return nil
	}
	key := [3]float64{d.CPUs, d.MemMB, float64(d.Executors)}
	if ix.lastNoFit != nil && key == ix.lastNoFitKey {
		return ix.lastNoFit
	}
	if nf, ok := ix.nofits[key]; ok {
		ix.lastNoFitKey, ix.lastNoFit = key, nf
		return nf
	}
	// The same reason as prep.noFit: when the job does not fit, no agent
	// holds E executors, so the per-agent counts capped at E are the
	// uncapped ones.
	p := &prep{s: ix.s, d: d}
	nf := p.noFitFrom(f.placeable, f.maxPerAgent, f.never, ix.freeC, ix.freeM)
	ix.nofits[key] = nf
	ix.lastNoFitKey, ix.lastNoFit = key, nf
	return nf
}

// FitsEmpty reports whether d would fit if every agent of the snapshot
// were entirely free (false means the job can never run on this cluster).
func (ix *FitIndex) FitsEmpty(d Demand) bool {
	if validate(d) != nil {
		return false
	}
	return ix.shape(d.CPUs, d.MemMB).emptyPlaceable >= d.Executors
}
