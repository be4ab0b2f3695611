package api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/mux"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/chargeback"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/teams"
)

// JobStore is what the API needs of the store (package store implements it).
type JobStore interface {
	CreateJob(ctx context.Context, j scheduler.Job, rejectReason string) (scheduler.Job, bool, error)
	GetJob(ctx context.Context, id string) (scheduler.Job, error)
	ListJobs(ctx context.Context, o store.ListOptions) ([]scheduler.Job, string, error)
	Events(ctx context.Context, id string) ([]store.Event, error)
	Placement(ctx context.Context, id string) ([]store.PlacementRow, error)
	Placements(ctx context.Context, ids []string) (map[string][]store.PlacementRow, error)
	JobRuns(ctx context.Context, id string) ([]scheduler.RunRecord, error)
	RunTimesUnknown(ctx context.Context, ids []string) (map[string]bool, error)
	EndReasons(ctx context.Context, ids []string) (map[string]string, error)
	QueueWaits(ctx context.Context, ids []string) (map[string]store.QueueWait, error)
	Cancel(ctx context.Context, id, reason string) (scheduler.Job, store.CancelOutcome, error)
	Ready(ctx context.Context) error
}

// Notifier hears about jobs the API changed, after they are committed.
type Notifier interface {
	JobSubmitted(j scheduler.Job)
	JobCancelled(j scheduler.Job, killRequested bool)
}

// Config configures a Server.
type Config struct {
	Store JobStore
	// Notifier, if set, is told about new and cancelled jobs (the scheduler core).
	Notifier Notifier
	// Admit decides at submission whether a job can ever run; it returns
	// the reason to reject it, or "". Nil uses scheduler.Admit assuming
	// every executor fits some agent.
	Admit func(j *scheduler.Job, now time.Time) string
	// Decide, if set, replaces Admit: the scheduler core decides at
	// submission, and a job it accepts is stored QUEUED at once (one
	// write instead of two; the core then only puts it in its queue).
	Decide func(j *scheduler.Job, now time.Time) scheduler.Decision
	// RightSize chooses the executors of a job submitted with
	// "executors": "auto" (learned.Model.RightSize); nil right-sizes by
	// the prior alone (scheduler.RightSize without a model).
	RightSize func(j *scheduler.Job, now time.Time) error
	// Tokens, when not empty, are required on every mutating request (and
	// on reads too when ProtectReads is set). Ignored when Guard is set.
	Tokens       *Tokens
	ProtectReads bool
	// Guard, if set, is the access policy (shared with the Spark REST
	// listener); nil builds one from Tokens and ProtectReads.
	Guard *Guard
	// Containment is the operator's policy on the launch settings a job
	// may choose (serve --allow-spark-conf, --allow-env); the zero value
	// refuses them all. Submit applies it, for every front end.
	Containment scheduler.Containment
	// MaxWaitingPerToken, when positive, caps the jobs one token may have
	// waiting (SUBMITTED or QUEUED): more are refused with 429.
	MaxWaitingPerToken int
	Log                logrus.FieldLogger
	Now                func() time.Time
	// DBTimeout bounds each request's database work (default 10 s).
	DBTimeout time.Duration
	// DriverCommand, if set, gives a job's spark-submit argument vector
	// for GET /api/v1/jobs/{id}.
	DriverCommand func(scheduler.Job) []string
	// JobCosts, if set, gives the jobs' attributed costs (the cost meter's
	// ledger: their share of the agents they held while they held them),
	// shown as costUSD; a job absent from the answer shows none.
	JobCosts func(ctx context.Context, ids []string) map[string]float64
	// Broker, if set, streams live updates at /api/v1/events; the API
	// publishes a "job" event for every job it creates or cancels.
	Broker *Broker
	// Usage, if set, serves GET /api/v1/usage (usage.go) from stored facts.
	Usage UsageSource
	// BudgetRefusal, if set, says whether a new job of a team is refused
	// because the team spent its budget (budget-action reject), and why:
	// the submission is answered 403 naming the budget, field "team".
	BudgetRefusal func(team string) (string, bool)
	// Budgets, if set, gives every budgeted team's spend against its
	// budget, shown with GET /api/v1/usage?by=team.
	Budgets func() []chargeback.Verdict
	// Views, if set, serves /api/v1/cluster, /api/v1/queues and /api/v1/cost.
	Views Views
	// Preview, if set, serves POST /api/v1/plan (with the views: a
	// follower forwards it to the leader).
	Preview func(ctx context.Context, j scheduler.Job, now time.Time) (scheduler.Preview, error)
	// Logs, if set, serves /api/v1/jobs/{id}/logs (with the views: a
	// follower forwards it to the leader).
	Logs LogReader
	// Forecast, if set, serves GET /api/v1/forecast (forecast.go; with
	// the views: a follower forwards it to the leader).
	Forecast func(ctx context.Context, horizon, step time.Duration) (any, error)
	// Forward, if set, names the instance to forward the views and the
	// event stream to (the leader, when this instance follows); nil
	// serves them here.
	Forward func() *url.URL
	// ForwardTransport is the transport Forward uses (TLS to the leader);
	// nil is http.DefaultTransport.
	ForwardTransport http.RoundTripper
	// Leader, if set, answers GET /api/v1/leader.
	Leader func(ctx context.Context) (any, error)
	// Models, if set, serves GET /api/v1/models and /api/v1/models/{id}
	// (models.go); JobPrediction, if set, gives a job's predicted run time
	// for its view (nil when none); DurationScale converts wall seconds
	// into the estimates' units for a job's actualSeconds (0 means 1).
	Models        Models
	JobPrediction func(scheduler.Job) *JobPrediction
	// RunPrediction, if set, is the prediction the scheduler made at the
	// start of the current run of job id, which holds resources (nil when
	// it made none or the job is not running here: on a follower); an
	// ended job's comes from its run history. The job view prefers them
	// to JobPrediction (JobView.PredictedAt).
	RunPrediction func(id string) *JobPrediction
	DurationScale float64
	// EstimateScale, if set and not 1, turns a job's estimate into wall
	// time for its view's estimatedWallSeconds (1/--sim-speed in the demo).
	EstimateScale float64
	// Dashboard serves the web dashboard at /.
	Dashboard bool
	// Mount, if set, adds more routes (dashboard, cluster views) to the router.
	Mount func(r *mux.Router, s *Server)
	// Teams, if set, holds the teams configuration in force: submissions
	// past a team's max-waiting or max-deadline are refused (429), and
	// GET /api/v1/teams shows it.
	Teams *teams.Holder
	// SaveTeams, if set, serves PUT /api/v1/teams: it checks a new teams
	// file (a *teams.RefusedError when bad), writes and puts it in force
	// (teams.Watcher.Save).
	SaveTeams func(text []byte) (*teams.Config, error)
	// TeamUsage, if set, gives what each team's running jobs hold (the
	// scheduler's; nil where this instance does not schedule).
	TeamUsage func() map[string]teams.Usage
}

// Server serves the REST API.
type Server struct {
	cfg    Config
	guard  *Guard
	router *mux.Router
	// submitLocks serialise, per token, the count of its waiting jobs and
	// the creation of a new one, so that the cap holds under concurrency.
	submitLocks keyedMutex
	// tickets let the dashboard's EventSource in (see tickets.go).
	tickets tickets
}

// MaxBodyBytes is the largest request body accepted (1 MiB).
const MaxBodyBytes = 1 << 20

// New builds the API server.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DBTimeout <= 0 {
		cfg.DBTimeout = 10 * time.Second
	}
	if cfg.Admit == nil {
		cfg.Admit = func(j *scheduler.Job, now time.Time) string { return scheduler.Admit(j, now, true) }
	}
	if cfg.Guard == nil {
		cfg.Guard = &Guard{Tokens: cfg.Tokens, ProtectReads: cfg.ProtectReads}
	}
	s := &Server{cfg: cfg, guard: cfg.Guard, router: mux.NewRouter(), tickets: tickets{now: cfg.Now}}
	r := s.router
	r.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "", "no such endpoint: "+r.URL.Path)
	})
	r.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowed := s.allowedMethods(r)
		w.Header().Set("Allow", strings.Join(allowed, ", "))
		writeError(w, http.StatusMethodNotAllowed, "", fmt.Sprintf("%s is not allowed on %s; use %s", r.Method, r.URL.Path, strings.Join(allowed, " or ")))
	})
	// Every route names its query parameters (query.go).
	r.HandleFunc("/healthz", withQuery(noParams, s.healthz)).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/readyz", withQuery(noParams, s.readyz)).Methods(http.MethodGet, http.MethodHead)
	r.HandleFunc("/api/v1/jobs", s.require(ScopeSubmit, withQuery(noParams, s.createJob))).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/jobs", s.reading(withQuery(listJobParams, s.listJobs))).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/jobs/{id}", s.reading(withQuery(noParams, s.getJob))).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/jobs/{id}", s.require(ScopeCancel, withQuery(noParams, s.deleteJob))).Methods(http.MethodDelete)
	if cfg.Usage != nil {
		r.HandleFunc("/api/v1/usage", s.reading(withQuery(usageParams, s.usage))).Methods(http.MethodGet)
	}
	if cfg.Views != nil || cfg.Broker != nil || cfg.Leader != nil || cfg.Logs != nil || cfg.Preview != nil {
		s.MountViews(r, cfg.Views, cfg.Broker)
	}
	if cfg.Models != nil {
		s.mountModels(r, cfg.Models)
	}
	if cfg.Dashboard {
		s.MountDashboard(r)
	}
	r.HandleFunc("/api/v1/teams", s.require(ScopeAdmin, withQuery(noParams, s.getTeams))).Methods(http.MethodGet)
	r.HandleFunc("/api/v1/teams", s.require(ScopeAdmin, withQuery(noParams, s.putTeams))).Methods(http.MethodPut)
	if cfg.Mount != nil {
		cfg.Mount(r, s)
	}
	return s
}

// Handler returns the HTTP handler with request ids and access logging.
func (s *Server) Handler() http.Handler { return s.withRequestLog(s.router) }

// publish sends a live update when a broker is configured.
func (s *Server) publish(name string, data any) {
	if s.cfg.Broker != nil {
		s.cfg.Broker.Publish(name, data)
	}
}

// Guard returns the access policy, to share with the Spark REST listener.
func (s *Server) Guard() *Guard { return s.guard }

// Authorize exposes the token check to routes mounted from other packages:
// mutating needs the submit scope, reads the read scope (under
// ProtectReads). On refusal it has answered. Prefer Require, which also
// passes the principal on to the handler.
func (s *Server) Authorize(w http.ResponseWriter, r *http.Request, mutating bool) bool {
	need := ScopeRead
	if mutating {
		need = ScopeSubmit
	}
	_, rf := s.guard.Check(r, ListenerAPI, need)
	if rf != nil {
		writeRefusal(w, rf)
		return false
	}
	return true
}

// Require wraps h so that it runs only for requests the guard admits for need.
func (s *Server) Require(need Scope, h http.Handler) http.Handler {
	return s.require(need, h.ServeHTTP)
}

func (s *Server) require(need Scope, h http.HandlerFunc) http.HandlerFunc {
	return s.guarded(need, false, h)
}

func (s *Server) reading(h http.HandlerFunc) http.HandlerFunc { return s.require(ScopeRead, h) }

// previewing admits a preview (POST /api/v1/plan) as a read that knows
// the token it was sent with, even where reads are open: the previewed
// job's team is the token's, as a submission's is (Guard.CheckIdentified).
func (s *Server) previewing(h http.HandlerFunc) http.HandlerFunc {
	return s.guarded(ScopeRead, true, h)
}

// guarded runs h for the requests the guard admits for need (identify:
// see Guard.CheckIdentified) and answers the others' refusal.
func (s *Server) guarded(need Scope, identify bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		r, rf := s.guard.check(r, ListenerAPI, need, identify)
		if rf != nil {
			writeRefusal(w, rf)
			return
		}
		h(w, r)
	}
}

// writeRefusal answers a refused request: its status, headers and
// {"error", "field"}.
func writeRefusal(w http.ResponseWriter, rf *Refusal) {
	rf.SetHeaders(w.Header())
	writeError(w, rf.Status, rf.Field, rf.Message)
}

type loggerKey struct{}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// statusRecorder remembers the status written, for the access log. It
// passes Flush through so that streaming responses keep working.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
	// errMsg and errField are the error a refusal answered (writeError),
	// for the access log: a 4xx line says why, not only that.
	errMsg, errField string
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	// A 503 without Retry-After (one a leader answered through a
	// follower's forwarding, say, from an older version) gets one: every
	// 503 says when to come back.
	if code == http.StatusServiceUnavailable && r.Header().Get("Retry-After") == "" {
		r.Header().Set("Retry-After", strconv.Itoa(RetryAfterElection))
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// withRequestLog gives every request an id (the client's X-Request-Id when
// it is sane, else a new one), a logger carrying it, and one access log
// line: at info level for changes and refusals, at debug level for reads
// that succeeded. Headers and bodies are never logged: they may hold tokens.
func (s *Server) withRequestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !requestIDRE.MatchString(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		log := s.cfg.Log.WithField("request_id", id)
		rec := &statusRecorder{ResponseWriter: w}
		r, note := WithAuthNote(r)
		next.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), loggerKey{}, log)))
		if rec.status == 0 {
			rec.status = http.StatusOK
		}
		// Reads that succeed (the dashboard polls, Prometheus scrapes)
		// are logged at debug level; changes and refusals at info, and
		// so is a 503: "not now, retry" (a standby, the cost meter
		// resuming, the database away), whose cause the answering code
		// logs once itself, so that a dashboard polling through it does
		// not write a warning every few seconds.
		level := logrus.InfoLevel
		switch {
		case rec.status >= 500 && rec.status != http.StatusServiceUnavailable:
			level = logrus.WarnLevel
		case rec.status >= 400:
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			level = logrus.DebugLevel
		}
		if !levelEnabled(s.cfg.Log, level) {
			return // spare building the entry (thousands of submissions a second)
		}
		entry := log.WithFields(logrus.Fields{
			"method":   r.Method,
			"path":     r.URL.Path,
			"status":   rec.status,
			"bytes":    rec.bytes,
			"duration": time.Since(start).Round(time.Microsecond).String(),
			"remote":   r.RemoteAddr,
		})
		if note.Principal != "" {
			entry = entry.WithField("principal", note.Principal)
		}
		if note.Refused != "" {
			entry = entry.WithField("refused", note.Refused)
		}
		if rec.status >= 400 && rec.errMsg != "" {
			entry = entry.WithField("error", rec.errMsg)
			if rec.errField != "" {
				entry = entry.WithField("field", rec.errField)
			}
		}
		entry.Log(level, "request")
	})
}

// levelEnabled reports whether l logs at level (true when it cannot tell).
func levelEnabled(l logrus.FieldLogger, level logrus.Level) bool {
	switch x := l.(type) {
	case *logrus.Logger:
		return x.IsLevelEnabled(level)
	case *logrus.Entry:
		return x.Logger.IsLevelEnabled(level)
	}
	return true
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.cfg.Store.Ready(ctx); err != nil {
		loggerFrom(r.Context()).WithError(err).Warn("not ready: PostgreSQL does not answer; check the database and --database-url (jobs are refused with 503 until it does)")
		writeUnavailable(w, RetryAfterDatabase, "not ready: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// allowedMethods lists the methods some route of r's path takes (for the
// Allow header of a 405, which HTTP requires, and its message).
func (s *Server) allowedMethods(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := *r
		probe.Method = m
		var match mux.RouteMatch
		if s.router.Match(&probe, &match) && match.MatchErr == nil {
			out = append(out, m)
		}
	}
	return out
}
