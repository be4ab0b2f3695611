package simulate

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// What the scheduler is told of a job's run time (--estimates). The
// simulated truth (workload.Model.Duration of the actual placement) never
// depends on it.
const (
	// EstimatesOracle: the profiled run time itself (the default; the
	// behaviour before issue 27).
	EstimatesOracle = "oracle"
	// EstimatesUser: the user's estimate, the profiled run time times
	// exp(N(0, EstimateError)), drawn with the seed (the same for every
	// policy).
	EstimatesUser = "user"
	// EstimatesLearned: the user's estimate corrected online by package
	// perfmodel from the runs of this simulation that have finished: by
	// the history of the signature's estimates against what its runs
	// took, and, once the signature's (or its application type's) model
	// has LearnWarmup runs, blended with the model's prediction on the
	// plans the signature usually gets (perfmodel.Book.UsualPlacement).
	EstimatesLearned = "learned"
)

// App type modes of --app-type.
const (
	AppTypeKnown  = "known"
	AppTypeHidden = "hidden"
)

// LearnWarmup is how many finished runs a model needs before a learned
// estimate uses its prediction.
const LearnWarmup = 5

// learnMAPEAfter: ModelMAPEPct counts a signature's runs once it has this
// many before them.
const learnMAPEAfter = 10

// estimator tells the scheduler the run times of --estimates and learns,
// in learned mode, from the runs that finish.
type estimator struct {
	mode   string
	auto   *autoSizer // --executors auto; nil for the users' counts
	book   *perfmodel.Book
	corr   *perfmodel.Estimates
	jobs   map[string]*estJob
	count  map[string]int // finished runs per signature
	learnt uint64         // runs learned from (traitsModel's version)
	// decides: in learned mode the core's model answers run times
	// (--learned-decisions model): jobs carry their users' estimates, the
	// model corrects them (predict). Otherwise the estimate told at
	// submission is the learned one (learned).
	decides bool
	cache   predCache // predict's answers for the current learnt
	// told estimates' absolute relative errors against the profiled run time
	errSum float64
	errN   int
	// the model's errors on runs of signatures with learnMAPEAfter runs
	apeSum float64
	apeN   int
}

type estJob struct {
	sig, app  string
	size      float64 // GB x iterations
	executors int
	user, ref float64 // the user's estimate and the profiled run time (s)
	pl        perfmodel.Placement
}

// hiddenClass is an opaque main class per kind (or type): placement cannot
// infer the application type from it, but it is still one signature.
func hiddenClass(kind string) string {
	h := fnv.New32a()
	h.Write([]byte(kind))
	return fmt.Sprintf("com.example.jobs.Job%08x", h.Sum32())
}

// newEstimator rewrites jobs as the modes say: each mix kind gets its own
// application resource (its signature), hidden application types opaque
// main classes and names, user and learned estimates the user's estimate.
// Oracle with known types and no mix leaves jobs unchanged.
func newEstimator(jobs []scheduler.Job, profiles map[string]workload.Profile, m workload.Model, mode string, sigma float64, hide bool, seed uint64) (*estimator, error) {
	switch mode {
	case "", EstimatesOracle, EstimatesUser, EstimatesLearned:
	default:
		return nil, fmt.Errorf("estimates %q: want oracle, user or learned", mode)
	}
	if math.IsNaN(sigma) || sigma < 0 || sigma > 5 {
		return nil, fmt.Errorf("estimate error %v not in [0, 5]", sigma)
	}
	e := &estimator{mode: mode, jobs: map[string]*estJob{}, count: map[string]int{}}
	if mode == EstimatesLearned {
		e.book, e.corr = perfmodel.NewBook(), perfmodel.NewEstimates()
	}
	rng := rand.New(rand.NewPCG(seed, 0xe57e))
	for i := range jobs {
		j := &jobs[i]
		p := profiles[j.ID]
		kind := p.Kind
		if kind != "" {
			j.App.AppResource = "local:///opt/spark/jobs/" + kind + ".jar"
		} else {
			kind = string(p.App)
		}
		if hide {
			j.App.MainClass = hiddenClass(kind)
			j.Name = "job-" + j.ID
		}
		ref := m.Reference(p).Seconds()
		ej := &estJob{sig: j.App.AppResource + " " + j.App.MainClass, app: scheduler.AppType(j), ref: ref, user: ref,
			size: float64(p.InputBytes) / 1e9 * float64(max(1, p.Iterations)), executors: max(1, p.Executors)}
		if mode == EstimatesUser || mode == EstimatesLearned {
			ej.user = ref * math.Exp(sigma*rng.NormFloat64())
			j.EstimatedDurationSeconds = ej.user
		}
		if gb := float64(p.InputBytes) / 1e9; mode == EstimatesLearned && gb > 0 && gb <= scheduler.MaxInputSizeGB {
			// The size hints a user sends (docs/learning.md): the core's
			// key for the model (scheduler.RunKeyOf) then has the size the
			// estimator learns with.
			j.InputSizeGB = gb
			if p.Iterations > 1 && p.Iterations <= scheduler.MaxIterations {
				j.Iterations = p.Iterations
			}
		}
		e.jobs[j.ID] = ej
		j.Fingerprint = j.Spec.Fingerprint()
	}
	return e, nil
}

// submit sets the estimate the scheduler is told at j's submission.
func (e *estimator) submit(j *scheduler.Job) {
	e.rightSize(j)
	ej := e.jobs[j.ID]
	if ej == nil {
		return
	}
	told := j.EstimatedDurationSeconds
	if e.mode == EstimatesLearned && ej.size > 0 && ej.user > 0 {
		if e.decides {
			// As live, the job keeps its user's estimate and the core asks
			// the model; what it expects before a plan (p50 on the usual
			// plans) is the learned estimate the figures measure.
			if p, ok := e.predict(scheduler.RunKeyOf(j), max(1, j.Executors), perfmodel.Placement{}); ok && p.P50 > 0 {
				told = p.P50
			}
		} else {
			j.EstimatedDurationSeconds = e.learned(ej)
			j.Fingerprint = j.Spec.Fingerprint()
			told = j.EstimatedDurationSeconds
		}
	}
	if ej.ref > 0 {
		e.errSum += math.Abs(told-ej.ref) / ej.ref
		e.errN++
	}
}

func (e *estimator) learned(ej *estJob) float64 {
	c, err := e.corr.Correct(ej.sig, ej.user)
	if err != nil {
		return ej.user
	}
	// The model is asked on the plans the signature's jobs usually get:
	// what the scheduler does with an estimate (is the job still feasible
	// started now) needs the run time it will have, and on one uncontended
	// agent the model would extrapolate (in busy hours no run had such a
	// plan; it was biased low by the placement prior it assumed).
	pl := e.book.UsualPlacement(ej.sig, ej.app)
	p, err := e.book.Predict(ej.sig, ej.app, perfmodel.Query{Executors: ej.executors, Size: ej.size, Placement: pl, EstimateSeconds: c.Seconds})
	if err != nil || p.Level == perfmodel.LevelPrior || p.Runs < LearnWarmup {
		return c.Seconds
	}
	est, _ := perfmodel.Blend(c.Seconds, c.Sigma, p.P50, p.Sigma)
	return est
}

// start records the shape of the run's placement.
func (e *estimator) start(id string, shares []workload.AgentShare) {
	ej := e.jobs[id]
	if ej == nil || e.book == nil {
		return
	}
	counts := make([]int, 0, len(shares))
	load := 0.0
	for _, s := range shares {
		counts = append(counts, s.Executors)
		if s.Executors > 0 && s.CPUs > 0 {
			load = max(load, s.UsedCPUs/s.CPUs)
		}
	}
	ej.pl = perfmodel.Placement{CrossShare: perfmodel.CrossShareOf(counts), BusiestLoad: min(1, max(0, load))}
}

// finish learns from a run that took seconds.
func (e *estimator) finish(id string, seconds float64) {
	ej := e.jobs[id]
	if ej == nil || e.book == nil || !(seconds > 0) || !(ej.size > 0) {
		return
	}
	run := perfmodel.Run{Executors: ej.executors, Size: ej.size, Placement: ej.pl, Seconds: seconds}
	if e.count[ej.sig] >= learnMAPEAfter {
		if p, err := e.book.Predict(ej.sig, ej.app, perfmodel.Query{Executors: ej.executors, Size: ej.size, Placement: ej.pl}); err == nil && p.Level == perfmodel.LevelSignature {
			e.apeSum += math.Abs(p.P50-seconds) / seconds
			e.apeN++
		}
	}
	if err := e.book.Observe(ej.sig, ej.app, run); err != nil {
		return // a run the model cannot take (e.g. out of its limits) teaches nothing
	}
	e.count[ej.sig]++
	e.learnt++
	// The user's estimate is corrected on the same terms: by what the runs
	// took on the plans they got (not by the model's placement-free
	// reference, an extrapolation).
	if ej.user > 0 {
		_ = e.corr.Observe(ej.sig, ej.user, seconds)
	}
}

// inherit starts e's learning from what past learned (its model, its
// estimate corrections and its runs per signature), as a live scheduler's
// starts from its stored history; the figures e reports stay its own.
func (e *estimator) inherit(past *estimator) {
	if past == nil || past.book == nil || e.book == nil {
		return
	}
	e.book, e.corr = past.book, past.corr
	for sig, n := range past.count {
		e.count[sig] += n
	}
	// A new version: nothing asked before may be answered from a cache.
	e.learnt += past.learnt
	e.cache = predCache{}
}

// report fills the result's estimate and model figures.
func (e *estimator) report(r *Result) {
	if e.errN > 0 && e.mode != "" && e.mode != EstimatesOracle {
		r.EstimateErrorPct = 100 * e.errSum / float64(e.errN)
	}
	if e.auto != nil {
		r.AutoSizedJobs, r.AutoChangedJobs = e.auto.sized, e.auto.changed
	}
	if e.apeN > 0 {
		r.ModelMAPEPct = 100 * e.apeSum / float64(e.apeN)
		r.ModelMAPERuns = e.apeN
	}
}
