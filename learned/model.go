package learned

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// LevelEstimate is the level of a prediction that is only the user's
// estimate corrected by the signature's history (no model of the job
// yet): a point, p50 = p90, as the scheduler used estimates before.
const LevelEstimate perfmodel.Level = "estimate"

// DefaultLoad is how many of the latest runs Reload reads.
const DefaultLoad = 50_000

// History is where the runs come from (store.Store).
type History interface {
	RunHistory(ctx context.Context, limit int) ([]scheduler.RunRecord, error)
}

// Model is the live model. The zero value is not usable; use New. All
// methods are safe for concurrent use; none blocks on I/O but Reload's
// read.
type Model struct {
	mu   sync.Mutex
	book *perfmodel.Book
	est  *perfmodel.Estimates // per signature
	// teams are the estimates per team (RunRecord.EstimateKey): the prior
	// a signature's correction is shrunk towards.
	teams *perfmodel.Estimates
	runs  int // finished runs learned from
	// corr caches each signature and team's estimate correction (for an
	// estimate of 1 s: Seconds is the ratio); dropped when the model
	// learns.
	corr map[corrKey]perfmodel.Corrected
	// version counts what was learned (scheduler.RunModel.Version).
	version atomic.Uint64
	// fol is where Catchup reads the history from (follow.go).
	fol follow
	// loads are the reloads under way: each keeps the runs Observe
	// learned meanwhile, to add those its read missed (load.go).
	loads []*pending
}

// New is an empty model: every prediction is the prior's (ok=false).
func New() *Model {
	return &Model{book: perfmodel.NewBook(), est: perfmodel.NewEstimates(), teams: perfmodel.NewEstimates(), corr: map[corrKey]perfmodel.Corrected{}}
}

// corrKey keys the cached corrections: a signature and a team.
type corrKey struct{ sig, team string }

// learnable reports whether a run teaches the model a completion time:
// only runs that finished (a failed, killed, retried or evicted run did
// not complete its work) and whose run time is known (a driver never seen
// running has none: docs/learning.md, "Runs never seen running").
func learnable(r scheduler.RunRecord) bool {
	return r.Outcome == scheduler.RunFinished && !r.RunTimeUnknown && r.Seconds > 0 && r.Executors >= 1 && r.Signature != ""
}

// observe learns r under m.mu (b, e and t: the book, the signatures' and
// the teams' estimates to learn into). It returns false for a run the
// model cannot take.
func observe(b *perfmodel.Book, e, t *perfmodel.Estimates, r scheduler.RunRecord) bool {
	if !learnable(r) {
		return false
	}
	run := r.Run()
	if err := b.Observe(r.Signature, r.AppType, run); err != nil {
		return false // out of the model's limits: teaches nothing
	}
	if r.EstimateSeconds > 0 {
		if ref := b.Reference(r.Signature, r.AppType, run); ref > 0 {
			_ = e.Observe(r.Signature, r.EstimateSeconds, ref)
			// Rows written before teams were learned hold the signature.
			if r.EstimateKey != "" && r.EstimateKey != r.Signature {
				_ = t.Observe(r.EstimateKey, r.EstimateSeconds, ref)
			}
		}
	}
	return true
}

// Observe learns from a finished attempt (scheduler.RunModel); attempts
// that did not finish are ignored.
func (m *Model) Observe(r scheduler.RunRecord) {
	m.mu.Lock()
	ok := observe(m.book, m.est, m.teams, r)
	if ok {
		m.runs++
		clear(m.corr)
		for _, p := range m.loads {
			p.runs = append(p.runs, r)
		}
	}
	m.mu.Unlock()
	if ok {
		m.version.Add(1)
	}
}

// Runs is how many finished runs the model learned from.
func (m *Model) Runs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.runs
}

// Version implements scheduler.RunModel.
func (m *Model) Version() uint64 { return m.version.Load() }

// Predict implements scheduler.RunModel: the job's run time on a plan
// shaped like pl (the zero placement, no plan yet: on the plans the
// signature usually gets, perfmodel.Book.UsualPlacement). From the
// signature's (or application type's) model when it has one, the user's
// estimate corrected by the signature's history shrunk towards its team's
// (and put on pl's terms by the model's placement slowdown) blended into
// its p50; else, when the signature's or the team's estimates have a
// history, the corrected estimate (LevelEstimate); else ok=false.
func (m *Model) Predict(k scheduler.RunKey, executors int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.predict(k, executors, pl)
}

func (m *Model) predict(k scheduler.RunKey, executors int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	var c perfmodel.Corrected
	if k.EstimateSeconds > 0 {
		c = m.correct(k, k.EstimateSeconds)
	}
	if pl == (perfmodel.Placement{}) {
		// No plan yet (the pass's estimate before placement, admission):
		// the plans this signature usually gets. On one uncontended agent
		// the model would extrapolate where no run of a busy cluster was,
		// as low as the placement prior its fit kept allows
		// (docs/simulation.md, "Target (ii), fixed").
		pl = m.book.UsualPlacement(k.Signature, k.App)
	}
	p, err := m.book.Predict(k.Signature, k.App, perfmodel.Query{Executors: executors, Size: k.Size, Placement: pl, EstimateSeconds: c.Seconds})
	if err != nil {
		return perfmodel.Prediction{}, false
	}
	if p.Level != perfmodel.LevelPrior {
		// The corrected estimate is on one uncontended agent's terms
		// (Book.Reference, the zero placement).
		q := perfmodel.Query{Executors: executors, Size: k.Size, Placement: pl}
		p = m.book.BlendEstimate(k.Signature, k.App, q, p, c.Seconds, c.Sigma, perfmodel.Placement{})
		// A noisy fit's curve can dip below zero: that is no run time.
		return p, p.P50 > 0 && p.P90 > 0
	}
	if c.Samples > 0 && c.Seconds > 0 {
		return perfmodel.Prediction{P50: c.Seconds, P90: c.Seconds, Sigma: c.Sigma, Level: LevelEstimate, Runs: c.Samples}, true
	}
	return perfmodel.Prediction{}, false
}

// correct is estimate corrected by the history of k's signature, shrunk
// towards its team's (perfmodel.Estimates.CorrectFrom: a signature with
// little history is corrected as its team's other jobs were), under m.mu,
// from the cached ratio; zero when the estimate is out of bounds.
func (m *Model) correct(k scheduler.RunKey, estimate float64) perfmodel.Corrected {
	ck := corrKey{k.Signature, k.EstimateKey}
	r, ok := m.corr[ck]
	if !ok {
		prior := perfmodel.NoCorrection
		if k.EstimateKey != "" && k.EstimateKey != k.Signature {
			if t, err := m.teams.Correct(k.EstimateKey, 1); err == nil {
				prior = t
			}
		}
		var err error
		if r, err = m.est.CorrectFrom(k.Signature, 1, prior); err != nil {
			return perfmodel.Corrected{}
		}
		m.corr[ck] = r
	}
	if !(estimate > 0) || estimate > perfmodel.MaxSeconds {
		return perfmodel.Corrected{}
	}
	r.Seconds = estimate * r.Ratio
	return r
}

// CorrectEstimate is the user's estimate of a job corrected by its
// signature's history shrunk towards its team's (ratio 1 without any).
func (m *Model) CorrectEstimate(k scheduler.RunKey) (perfmodel.Corrected, error) {
	if !(k.EstimateSeconds > 0) || k.EstimateSeconds > perfmodel.MaxSeconds {
		return perfmodel.Corrected{}, &perfmodel.InputError{Field: "estimateSeconds", Msg: "not a run time in seconds"}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.correct(k, k.EstimateSeconds), nil
}

// Traits implements scheduler.RunModel: the signature's fitted traits
// when its runs told them apart.
func (m *Model) Traits(k scheduler.RunKey) (perfmodel.Traits, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, lv := m.book.Traits(k.Signature, k.App)
	return t, lv == perfmodel.LevelSignature
}

// Predictor implements scheduler.RunModel: p50/p90 by executor count on
// plans shaped like pl (the zero placement, no plan yet: on the plans the
// signature usually gets, as Predict), for right-sizing. The user's
// estimate is left out (it was for a count the job did not name); without
// a model of the job the prior's curve answers.
func (m *Model) Predictor(k scheduler.RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	return func(e int) (perfmodel.Prediction, error) {
		m.mu.Lock()
		defer m.mu.Unlock()
		q := perfmodel.Query{Executors: e, Size: k.Size, Placement: pl}
		if pl == (perfmodel.Placement{}) {
			q.Placement = m.book.UsualPlacement(k.Signature, k.App)
		}
		return m.book.Predict(k.Signature, k.App, q)
	}
}

// RightSize chooses the executors of a job submitted with "executors":
// "auto" (scheduler.RightSize with this model); other jobs are left alone.
// Once the job's signature has a model of its own, the count stays among
// the counts its runs had (perfmodel.Book.ExecutorRange, within the
// user's min/max): outside, the curve extrapolates, and when the runs'
// counts followed their sizes it cannot tell the count's effect from the
// size's (as the simulator's --executors auto). When the user's bounds
// and that range do not meet, the user's bounds alone decide.
func (m *Model) RightSize(j *scheduler.Job, now time.Time) error {
	if !j.AutoExecutors() {
		return nil
	}
	m.mu.Lock()
	lo, hi, ok := m.book.ExecutorRange(scheduler.RunKeyOf(j).Signature)
	m.mu.Unlock()
	if !ok {
		return scheduler.RightSize(m, j, now)
	}
	umin, umax := max(1, j.MinExecutors), j.MaxExecutors
	if umax == 0 {
		umax = max(umin, scheduler.DefaultAutoMaxExecutors)
	}
	bmin, bmax := max(umin, lo), min(umax, hi)
	if bmin > bmax {
		return scheduler.RightSize(m, j, now)
	}
	c := *j
	c.MinExecutors, c.MaxExecutors = bmin, bmax
	if err := scheduler.RightSize(m, &c, now); err != nil {
		return err
	}
	c.Sizing.Reason += fmt.Sprintf(" (among the %d-%d executors its runs had)", lo, hi)
	j.Executors, j.Sizing = c.Executors, c.Sizing
	return nil
}

// Summaries is what the model knows of each signature, sorted by name
// (for GET /api/v1/models and the dashboard).
func (m *Model) Summaries() []perfmodel.Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.book.Signatures()
}

var _ scheduler.RunModel = (*Model)(nil)

// PredictQuery answers q for signature sig (application type app, "" when
// unknown) from the book alone, as perfmodel.Book.Predict does: what the
// models view shows, without a user's estimate to correct.
func (m *Model) PredictQuery(sig, app string, q perfmodel.Query) (perfmodel.Prediction, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.book.Predict(sig, app, q)
}
