package api

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/mux"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Models is what GET /api/v1/models needs of the learned performance
// models (the scheduler's live book; BookModels over a perfmodel.Book).
// Both methods must be safe for concurrent use and cheap (no I/O).
type Models interface {
	// Summaries is what is known of every signature, sorted by name.
	Summaries() []perfmodel.Summary
	// Predict is a run time of signature sig (application type app, ""
	// when unknown) as q asks, as perfmodel.Book.Predict answers.
	Predict(sig, app string, q perfmodel.Query) (perfmodel.Prediction, error)
}

// BookModels serves a perfmodel.Book as Models, serialising the calls (a
// Book is not safe for concurrent use). Observe feeds it.
type BookModels struct {
	mu   sync.Mutex
	book *perfmodel.Book
}

// NewBookModels wraps b (a new book when nil).
func NewBookModels(b *perfmodel.Book) *BookModels {
	if b == nil {
		b = perfmodel.NewBook()
	}
	return &BookModels{book: b}
}

// Observe records a finished run (perfmodel.Book.Observe).
func (m *BookModels) Observe(sig, app string, r perfmodel.Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.book.Observe(sig, app, r)
}

// Summaries implements Models.
func (m *BookModels) Summaries() []perfmodel.Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.book.Signatures()
}

// Predict implements Models.
func (m *BookModels) Predict(sig, app string, q perfmodel.Query) (perfmodel.Prediction, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.book.Predict(sig, app, q)
}

// ModelView is one signature in GET /api/v1/models.
type ModelView struct {
	// ID is a short, URL-safe name of the signature for
	// GET /api/v1/models/{id} (signatures hold slashes).
	ID        string `json:"id"`
	Signature string `json:"signature"`
	// Runs is how many finished runs the signature's model keeps.
	Runs int `json:"runs"`
	// Level is where its predictions come from: signature (its own
	// model), app-type or prior (too few runs of its own yet).
	Level perfmodel.Level `json:"level"`
	// Form and Params are the fitted dSpark model T(E, I) = alpha(I) x
	// E^beta(I) + gamma(I) with its placement sensitivities (absent
	// before a fit).
	Form   perfmodel.Form    `json:"form,omitempty"`
	Params *perfmodel.Params `json:"params,omitempty"`
	// Sizes is how many distinct job sizes the fit saw.
	Sizes int `json:"sizes,omitempty"`
	// FitMAPEPercent is the fit's error on the runs it was fitted to;
	// MAPEPercent the honest one: each run predicted before it was seen,
	// over MAPERuns runs (0 runs: not measured yet).
	FitMAPEPercent *float64 `json:"fitMapePercent,omitempty"`
	MAPEPercent    *float64 `json:"mapePercent,omitempty"`
	MAPERuns       int      `json:"mapeRuns"`
	// P50Factor and P90Factor are the residual quantiles (actual /
	// predicted) the predictions apply.
	P50Factor *float64 `json:"p50Factor,omitempty"`
	P90Factor *float64 `json:"p90Factor,omitempty"`
	// Curve is the predicted run time for a few executor counts, at size
	// Size, on one uncontended agent.
	Size  float64      `json:"size"`
	Curve []CurvePoint `json:"curve"`
}

// CurvePoint is a predicted run time at an executor count.
type CurvePoint struct {
	Executors  int             `json:"executors"`
	P50Seconds float64         `json:"p50Seconds"`
	P90Seconds float64         `json:"p90Seconds"`
	Level      perfmodel.Level `json:"level"`
}

// ModelsView is GET /api/v1/models.
type ModelsView struct {
	Models []ModelView `json:"models"`
}

// DefaultCurveExecutors are the executor counts of a curve unless the
// query names others.
var DefaultCurveExecutors = []int{1, 2, 4, 8, 16, 32}

// MaxCurvePoints bounds the executor counts a query may ask for.
const MaxCurvePoints = 64

var modelsParams = []QueryParam{{Name: "executors"}, {Name: "size"}, {Name: "signature"}}

// ModelID is the id of a signature in the models view.
func ModelID(sig string) string {
	h := sha256.Sum256([]byte(sig))
	return hex.EncodeToString(h[:8])
}

// modelsQuery is a parsed models query.
type modelsQuery struct {
	executors []int
	size      float64
	signature string
}

func parseModelsQuery(q url.Values) (modelsQuery, string, error) {
	out := modelsQuery{executors: DefaultCurveExecutors, size: 1, signature: q.Get("signature")}
	if v := q.Get("executors"); v != "" {
		parts := strings.Split(v, ",")
		if len(parts) > MaxCurvePoints {
			return out, "executors", fmt.Errorf("at most %d executor counts", MaxCurvePoints)
		}
		out.executors = nil
		for _, p := range parts {
			n, err := strconv.Atoi(strings.TrimSpace(p))
			if err != nil || n < 1 || n > perfmodel.MaxExecutors {
				return out, "executors", fmt.Errorf("%q is not an executor count in [1, %d] (a comma-separated list, e.g. 1,2,4,8)", p, perfmodel.MaxExecutors)
			}
			out.executors = append(out.executors, n)
		}
	}
	if v := q.Get("size"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f <= 0 || f > perfmodel.MaxSize {
			return out, "size", fmt.Errorf("%q is not a job size in (0, %g] (input x iterations, in the history's unit)", v, perfmodel.MaxSize)
		}
		out.size = f
	}
	return out, "", nil
}

// modelView renders one summary with its curve.
func modelView(m Models, s perfmodel.Summary, q modelsQuery) ModelView {
	v := ModelView{ID: ModelID(s.Signature), Signature: s.Signature, Runs: s.Runs, Level: perfmodel.LevelPrior,
		Size: q.size, MAPERuns: s.OnlineRuns, Curve: []CurvePoint{}}
	if f := s.Fit; f != nil {
		p := f.Params
		mape, p50, p90 := f.MAPE, f.P50, f.P90
		v.Form, v.Params, v.Sizes, v.FitMAPEPercent, v.P50Factor, v.P90Factor = f.Form, &p, f.Sizes, &mape, &p50, &p90
	}
	if s.OnlineRuns > 0 {
		x := s.OnlineMAPE
		v.MAPEPercent = &x
	}
	for _, e := range q.executors {
		pr, err := m.Predict(s.Signature, "", perfmodel.Query{Executors: e, Size: q.size})
		if err != nil || !finiteAll(pr.P50, pr.P90) || !(pr.P50 > 0) || !(pr.P90 > 0) {
			continue // not a run time (a noisy fit's curve can dip below zero)
		}
		if len(v.Curve) == 0 {
			v.Level = pr.Level // the same at every point: it depends on the runs
		}
		v.Curve = append(v.Curve, CurvePoint{Executors: e, P50Seconds: pr.P50, P90Seconds: pr.P90, Level: pr.Level})
	}
	return v
}

func finiteAll(xs ...float64) bool {
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// ModelsPage is the models view of every signature (or of the one named).
func ModelsPage(m Models, q url.Values) (ModelsView, string, error) {
	mq, field, err := parseModelsQuery(q)
	if err != nil {
		return ModelsView{}, field, err
	}
	out := ModelsView{Models: []ModelView{}}
	for _, s := range m.Summaries() {
		if mq.signature != "" && s.Signature != mq.signature {
			continue
		}
		out.Models = append(out.Models, modelView(m, s, mq))
	}
	return out, "", nil
}

var errNoModel = errors.New("no model")

// ModelByID is the models view of the signature whose id (or, when it
// holds no slash, whose signature) is id.
func ModelByID(m Models, id string, q url.Values) (ModelView, string, error) {
	mq, field, err := parseModelsQuery(q)
	if err != nil {
		return ModelView{}, field, err
	}
	for _, s := range m.Summaries() {
		if ModelID(s.Signature) == id || s.Signature == id {
			return modelView(m, s, mq), "", nil
		}
	}
	return ModelView{}, "signature", errNoModel
}

// mountModels serves GET /api/v1/models and /api/v1/models/{id}; a
// follower forwards them to the leader, which has the models.
func (s *Server) mountModels(r *mux.Router, m Models) {
	forward := func(h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if s.cfg.Forward != nil {
				if target := s.cfg.Forward(); target != nil {
					s.proxy(target).ServeHTTP(w, r)
					return
				}
			}
			h(w, r)
		}
	}
	r.HandleFunc("/api/v1/models", s.reading(withQuery(modelsParams, forward(func(w http.ResponseWriter, r *http.Request) {
		out, field, err := ModelsPage(m, r.URL.Query())
		if err != nil {
			writeError(w, http.StatusBadRequest, field, err.Error())
			return
		}
		writeJSON(w, http.StatusOK, out)
	})))).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/models/{id}", s.reading(withQuery(modelsParams[:2], forward(func(w http.ResponseWriter, r *http.Request) {
		id := mux.Vars(r)["id"]
		out, field, err := ModelByID(m, id, r.URL.Query())
		switch {
		case errors.Is(err, errNoModel):
			writeError(w, http.StatusNotFound, field, "no model of signature "+strconv.Quote(id)+"; GET /api/v1/models lists them with their ids")
		case err != nil:
			writeError(w, http.StatusBadRequest, field, err.Error())
		default:
			writeJSON(w, http.StatusOK, out)
		}
	})))).Methods(http.MethodGet)
}

// JobPrediction is a job's predicted run time (Config.JobPrediction).
type JobPrediction struct {
	P50Seconds, P90Seconds float64
	Level                  perfmodel.Level
}

// Where a job view's prediction comes from (JobView.PredictedAt).
const (
	// PredictedAtStart: made when the job's last or current run started.
	PredictedAtStart = "start"
	// PredictedAtNow: what the model predicts now.
	PredictedAtNow = "now"
)

// startPrediction is the prediction the scheduler made at the start of
// v's last run (last, its run record, for an ended job) or of its
// current one (Config.RunPrediction, for a job holding resources); nil
// when none was made or it is not known here.
func (s *Server) startPrediction(v *JobView, last *scheduler.RunRecord) *JobPrediction {
	switch {
	case ranToAnEnd(v.State):
		if last != nil && last.PredictedP50 > 0 {
			return &JobPrediction{P50Seconds: last.PredictedP50, P90Seconds: last.PredictedP90, Level: perfmodel.Level(last.PredictionLevel)}
		}
	case v.State == scheduler.Launching || v.State == scheduler.Running:
		if s.cfg.RunPrediction != nil {
			return s.cfg.RunPrediction(v.ID)
		}
	}
	return nil
}

// predictionFields fills the job view's predicted and actual run times:
// the prediction made at the start of its run when there is one
// (startPrediction), else the model's now (docs/models.md, "The job
// view"). last is an ended job's last run record (nil otherwise).
func (s *Server) predictionFields(v *JobView, last *scheduler.RunRecord) {
	if sc := s.cfg.EstimateScale; sc > 0 && sc != 1 && v.EstimatedDurationSeconds > 0 {
		w := v.EstimatedDurationSeconds * sc
		v.EstimatedWallSeconds = &w
	}
	ok := func(p *JobPrediction) bool {
		return p != nil && p.P50Seconds > 0 && finiteAll(p.P50Seconds, p.P90Seconds)
	}
	p, at := s.startPrediction(v, last), PredictedAtStart
	if !ok(p) && s.cfg.JobPrediction != nil {
		p, at = s.cfg.JobPrediction(v.Job), PredictedAtNow
	}
	if ok(p) {
		p50, p90 := p.P50Seconds, max(p.P90Seconds, p.P50Seconds)
		v.PredictedSeconds, v.PredictedP90Seconds, v.PredictionLevel, v.PredictedAt = &p50, &p90, string(p.Level), at
	}
	if v.State == scheduler.Finished && v.FinishedAt != nil && !v.RunTimeUnknown {
		start := v.LastStartedAt
		if start == nil {
			start = v.StartedAt
		}
		if start != nil && !v.FinishedAt.Before(*start) {
			a := v.FinishedAt.Sub(*start).Seconds()
			if s.cfg.DurationScale > 0 {
				a /= s.cfg.DurationScale
			}
			v.ActualSeconds = &a
		}
	}
}
