package sparkrest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// Store is what the protocol needs of the job store (package store
// implements it; so does anything satisfying api.JobStore).
type Store interface {
	GetJob(ctx context.Context, id string) (scheduler.Job, error)
}

// CancelFunc stops a job exactly like the native API's DELETE does; it is
// api.Server.Cancel: the store cancels the job or marks it kill-requested,
// and the scheduler core and the dashboard are told.
type CancelFunc func(ctx context.Context, id, reason string) (scheduler.Job, store.CancelOutcome, error)

// SubmitFunc stores a spec as a job exactly like the native API does; it
// is api.Server.Submit: on failure it has written a native error
// ({"error", "field"} with a status) to w and returns ok=false.
type SubmitFunc func(w http.ResponseWriter, r *http.Request, spec scheduler.Spec) (job scheduler.Job, created, ok bool)

// Config configures the handler.
type Config struct {
	// Store reads and cancels jobs (required).
	Store Store
	// Submit creates jobs (required): pass (*api.Server).Submit so that
	// both front ends share validation, admission, idempotency and
	// notifications.
	Submit SubmitFunc
	// Cancel kills jobs (required): pass (*api.Server).Cancel so that a
	// kill through this protocol takes the native DELETE's path (the
	// scheduler core hears of it and the cluster kills the driver).
	Cancel CancelFunc
	// SparkVersion is reported as serverSparkVersion (default DefaultSparkVersion).
	SparkVersion string
	// DefaultExecutors is the executor count of a request that sets
	// neither spark.executor.instances nor spark.cores.max (default 1).
	DefaultExecutors int
	// DBTimeout bounds the database work of a status or kill (default 10 s).
	DBTimeout time.Duration
	Log       logrus.FieldLogger
	// Guard, if set, is the access policy ((*api.Server).Guard(), with
	// the allowlist): create needs the submit scope, kill cancel, status
	// read (under --protect-reads). Nil admits everything.
	Guard *api.Guard
	// Containment is the operator's policy on launch settings
	// (scheduler.Containment; serve passes the REST API's). The
	// environment variables it refuses are dropped from a create, with a
	// note in the answer: Spark's client forwards its own SPARK_* and
	// MESOS_* environment whether or not the user chose it. Spark
	// properties it refuses are refused (400) by Submit.
	Containment scheduler.Containment
}

// DefaultSparkVersion is the Spark release the deployment ships (docker/.env).
const DefaultSparkVersion = "3.5.8"

type handler struct{ cfg Config }

// New returns the HTTP handler of the protocol. It panics when cfg.Store,
// cfg.Submit or cfg.Cancel is nil.
func New(cfg Config) http.Handler {
	if cfg.Store == nil || cfg.Submit == nil || cfg.Cancel == nil {
		panic("sparkrest.New: Config.Store, Config.Submit and Config.Cancel are required")
	}
	if cfg.SparkVersion == "" {
		cfg.SparkVersion = DefaultSparkVersion
	}
	if cfg.DefaultExecutors < 1 {
		cfg.DefaultExecutors = 1
	}
	if cfg.DBTimeout <= 0 {
		cfg.DBTimeout = 10 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = logrus.StandardLogger()
	}
	return &handler{cfg: cfg}
}

// statusWriter remembers the status, for the access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// ServeHTTP gives every request an id (the client's X-Request-Id when it is
// sane, else a new one) and a logger carrying it, which the native API's
// Submit and Cancel log through too, and writes one access log line.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	id := r.Header.Get("X-Request-Id")
	if !requestIDRE.MatchString(id) {
		id = newRequestID()
	}
	w.Header().Set("X-Request-Id", id)
	log := h.cfg.Log.WithFields(logrus.Fields{"request_id": id, "front_end": "spark-rest"})
	r = r.WithContext(api.WithLogger(r.Context(), log))
	sw := &statusWriter{ResponseWriter: w}
	r, note := api.WithAuthNote(r)
	h.route(sw, r)
	if sw.status == 0 {
		sw.status = http.StatusOK
	}
	entry := log.WithFields(logrus.Fields{
		"method": r.Method, "path": r.URL.Path, "status": sw.status,
		"duration": time.Since(start).Round(time.Microsecond).String(), "remote": r.RemoteAddr,
	})
	if note.Principal != "" {
		entry = entry.WithField("principal", note.Principal)
	}
	if note.Refused != "" {
		entry = entry.WithField("refused", note.Refused)
	}
	if sw.status >= 500 {
		entry.Warn("request")
	} else {
		entry.Info("request")
	}
}

func (h *handler) route(w http.ResponseWriter, r *http.Request) {
	// Spark's client sends no query string; like every route of the REST
	// API, the protocol's routes refuse parameters they do not take.
	if _, err := api.CheckQuery(r.URL.RawQuery, nil); err != nil {
		h.error(w, http.StatusBadRequest, "Invalid request: "+err.Error())
		return
	}
	var parts []string
	for _, p := range strings.Split(r.URL.Path, "/") {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) >= 3 && parts[0] == ProtocolVersion && parts[1] == "submissions" {
		id := ""
		if len(parts) >= 4 {
			id = parts[3]
		}
		switch parts[2] {
		case "create":
			if h.method(w, r, http.MethodPost) {
				if r, ok := h.admit(w, r, api.ScopeSubmit); ok {
					h.create(w, r)
				}
			}
			return
		case "status":
			if h.method(w, r, http.MethodGet) {
				r, ok := h.admit(w, r, api.ScopeRead)
				if !ok {
					return
				}
				if id == "" {
					h.error(w, http.StatusBadRequest, "Submission ID is missing in status request.")
					return
				}
				h.status(w, r, id)
			}
			return
		case "kill":
			if h.method(w, r, http.MethodPost) {
				r, ok := h.admit(w, r, api.ScopeCancel)
				if !ok {
					return
				}
				if id == "" {
					h.error(w, http.StatusBadRequest, "Submission ID is missing in kill request.")
					return
				}
				h.kill(w, r, id)
			}
			return
		}
	}
	// Anything else, as Spark's default servlet answers it.
	hint := fmt.Sprintf(" Please submit requests through http://[host]:[port]/%s/submissions/...", ProtocolVersion)
	switch {
	case len(parts) == 0:
		h.error(w, http.StatusBadRequest, "Missing protocol version."+hint)
	case parts[0] != ProtocolVersion:
		h.write(w, StatusUnknownProtocolVersion, ErrorResponse{Action: ActionErrorResponse,
			Message:                fmt.Sprintf("Unknown protocol version '%s'.", truncate(parts[0], 64)) + hint,
			HighestProtocolVersion: ProtocolVersion, ServerSparkVersion: h.cfg.SparkVersion})
	case len(parts) == 1 || parts[1] != "submissions":
		h.error(w, http.StatusBadRequest, "Missing the /submissions prefix."+hint)
	default:
		h.error(w, http.StatusBadRequest, "Missing an action: please specify one of /create, /kill, or /status."+hint)
	}
}

// admit applies the guard; on refusal it answers an ErrorResponse with the
// refusal's status (401, 403 or 429: Spark's client prints the message).
func (h *handler) admit(w http.ResponseWriter, r *http.Request, need api.Scope) (*http.Request, bool) {
	if h.cfg.Guard == nil {
		return r, true
	}
	r, rf := h.cfg.Guard.Check(r, api.ListenerSparkREST, need)
	if rf != nil {
		rf.SetHeaders(w.Header())
		h.error(w, rf.Status, "Refused by sparkpack: "+rf.Message)
		return r, false
	}
	return r, true
}

func (h *handler) method(w http.ResponseWriter, r *http.Request, want string) bool {
	if r.Method == want {
		return true
	}
	w.Header().Set("Allow", want)
	h.error(w, http.StatusMethodNotAllowed, fmt.Sprintf("HTTP method %s is not supported by %s; use %s", r.Method, r.URL.Path, want))
	return false
}

func (h *handler) write(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (h *handler) error(w http.ResponseWriter, status int, msg string) {
	h.write(w, status, ErrorResponse{Action: ActionErrorResponse, Message: msg, ServerSparkVersion: h.cfg.SparkVersion})
}

func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, MaxBodyBytes)
	req, err := DecodeCreateRequest(body)
	if err != nil {
		h.error(w, http.StatusBadRequest, err.Error())
		return
	}
	spec, notes, err := ToSpec(req, h.cfg.DefaultExecutors)
	if err != nil {
		h.error(w, http.StatusBadRequest, "Invalid request: "+err.Error())
		return
	}
	if dropped := dropRefusedEnv(&spec, h.cfg.Containment); len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("environment variables %s not passed to the driver: they choose how it is launched (the operator can allow them: serve --allow-env)", strings.Join(dropped, ", ")))
	}
	if err := spec.Validate(); err != nil {
		h.error(w, http.StatusBadRequest, "Invalid request: "+describeFieldError(err))
		return
	}
	rec := &recorder{header: http.Header{}}
	job, created, ok := h.cfg.Submit(rec, r, spec)
	if !ok {
		h.submitFailed(w, rec)
		return
	}
	msg := fmt.Sprintf("Driver successfully submitted as %s (sparkpack job, state %s)", job.ID, job.State)
	if !created {
		msg = fmt.Sprintf("Driver %s was already submitted with this request (sparkpack job, state %s)", job.ID, job.State)
	}
	// A job that can never run (its deadline has passed, ...) is stored as
	// REJECTED; Spark's client reports "success": false as a failed
	// submission, which is what the user should see.
	success := job.State != scheduler.Rejected
	if !success {
		msg = fmt.Sprintf("Driver %s was rejected: %s", job.ID, job.WaitingReason)
	}
	if len(notes) > 0 {
		msg += "; " + strings.Join(notes, "; ")
	}
	h.write(w, http.StatusOK, CreateSubmissionResponse{
		Action: ActionCreateResponse, Message: msg, ServerSparkVersion: h.cfg.SparkVersion,
		SubmissionID: job.ID, Success: success, UnknownFields: req.UnknownFields,
	})
}

// describeFieldError words a validation error with the Spark property that
// caused it where there is one.
func describeFieldError(err error) string {
	var fe *scheduler.FieldError
	if !errors.As(err, &fe) {
		return err.Error()
	}
	prop := map[string]string{
		"id":                       PropID,
		"name":                     PropAppName,
		"executors":                PropExecutorInstances + " / " + PropCoresMax,
		"executorCores":            PropExecutorCores,
		"executorMemoryMB":         PropExecutorMemory,
		"memoryOverheadMB":         PropMesosExecutorMemOverhead,
		"driver.cores":             PropDriverCores,
		"driver.memoryMB":          PropDriverMemory,
		"deadline":                 PropDeadline,
		"estimatedDurationSeconds": PropEstimatedDuration,
		"notBefore":                PropNotBefore,
		"retries":                  PropRetries,
		"app.appResource":          "appResource",
		"app.mainClass":            "mainClass",
		"app.args":                 "appArgs",
		"app.sparkConf":            "sparkProperties",
		"app.environment":          "environmentVariables",
	}[fe.Field]
	switch {
	case prop != "":
		return prop + ": " + fe.Msg
	case strings.HasPrefix(fe.Field, "app.args["):
		return "appArgs" + strings.TrimPrefix(fe.Field, "app.args") + ": " + fe.Msg
	case strings.HasPrefix(fe.Field, "app.sparkConf."):
		return strings.TrimPrefix(fe.Field, "app.sparkConf.") + ": " + fe.Msg
	case strings.HasPrefix(fe.Field, "app.environment."):
		return "environmentVariables." + strings.TrimPrefix(fe.Field, "app.environment.") + ": " + fe.Msg
	case strings.HasPrefix(fe.Field, "labels"):
		return PropLabelPrefix + "KEY (" + fe.Field + "): " + fe.Msg
	}
	return fe.Error()
}

// recorder captures what api.Server.Submit writes when it fails.
type recorder struct {
	header http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header { return r.header }
func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
}
func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if len(r.body) < 64<<10 {
		r.body = append(r.body, b...)
	}
	return len(b), nil
}

// submitFailed turns the native API's error into Spark's ErrorResponse:
// 400 for the client's mistakes (e.g. spark.sparkpack.id reused with
// another request), 500 for sparkpack's own failures.
func (h *handler) submitFailed(w http.ResponseWriter, rec *recorder) {
	var eb api.ErrorBody
	msg := strings.TrimSpace(string(rec.body))
	if json.Unmarshal(rec.body, &eb) == nil && eb.Error != "" {
		msg = eb.Error
		if eb.Field != "" {
			msg = describeFieldError(&scheduler.FieldError{Field: eb.Field, Msg: eb.Error})
		}
	}
	if msg == "" {
		msg = "the submission failed"
	}
	status := http.StatusInternalServerError
	if rec.status >= 400 && rec.status < 500 {
		status = http.StatusBadRequest
	}
	if rec.status == http.StatusTooManyRequests {
		// --max-waiting-per-token: keep the status so that the client
		// sees it is a limit, not a bad request.
		if ra := rec.header.Get("Retry-After"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		h.error(w, http.StatusTooManyRequests, "Refused by sparkpack: "+msg)
		return
	}
	if status == http.StatusBadRequest {
		h.error(w, status, "Invalid request: "+msg)
		return
	}
	if rec.status == http.StatusServiceUnavailable {
		// The database is down (nothing was stored, or the answer was
		// lost): a retry is safe with spark.sparkpack.id.
		h.unavailable(w, rec.header.Get("Retry-After"), "Service unavailable: "+msg+
			"; submit again in a few seconds (with spark.sparkpack.id set, a retry never creates the job twice)")
		return
	}
	h.error(w, status, "Internal server error: "+msg)
}

// unavailable answers 503 with Retry-After (seconds; api.RetryAfterDatabase
// when retryAfter is empty). Spark 3.5's RestSubmissionClient treats every
// status but 200 alike (it prints the message; it never retries a create,
// SPARK-6443), so the status is for other clients, proxies and operators.
func (h *handler) unavailable(w http.ResponseWriter, retryAfter, msg string) {
	if retryAfter == "" {
		retryAfter = strconv.Itoa(api.RetryAfterDatabase)
	}
	w.Header().Set("Retry-After", retryAfter)
	h.error(w, http.StatusServiceUnavailable, msg)
}

func (h *handler) dbContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), h.cfg.DBTimeout)
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (h *handler) internal(w http.ResponseWriter, r *http.Request, what string, err error) {
	api.LoggerFrom(r.Context(), h.cfg.Log).WithError(err).Warn(what)
	if store.IsUnavailable(err) || errors.Is(err, context.DeadlineExceeded) {
		h.unavailable(w, "", "Service unavailable: the database is unavailable; retry in a few seconds")
		return
	}
	h.error(w, http.StatusInternalServerError, "Internal server error: "+what+" failed; see the sparkpack log")
}

func (h *handler) status(w http.ResponseWriter, r *http.Request, id string) {
	resp := SubmissionStatusResponse{Action: ActionStatusResponse, ServerSparkVersion: h.cfg.SparkVersion, SubmissionID: id}
	if !scheduler.IsUUID(id) {
		resp.DriverState = DriverNotFound
		h.write(w, http.StatusOK, resp)
		return
	}
	ctx, cancel := h.dbContext(r)
	defer cancel()
	job, err := h.cfg.Store.GetJob(ctx, strings.ToLower(id))
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		resp.DriverState = DriverNotFound
		h.write(w, http.StatusOK, resp)
		return
	case err != nil:
		h.internal(w, r, "reading the submission", err)
		return
	}
	resp.SubmissionID = job.ID
	resp.Success = true
	resp.DriverState = DriverState(job.State)
	resp.Message = "sparkpack state " + string(job.State)
	if job.WaitingReason != "" {
		resp.Message += ": " + job.WaitingReason
	}
	if job.KillRequested && !job.State.Terminal() {
		resp.Message += " (kill requested)"
	}
	h.write(w, http.StatusOK, resp)
}

func (h *handler) kill(w http.ResponseWriter, r *http.Request, id string) {
	resp := KillSubmissionResponse{Action: ActionKillResponse, ServerSparkVersion: h.cfg.SparkVersion, SubmissionID: id}
	if !scheduler.IsUUID(id) {
		resp.Message = "Cannot find driver " + truncate(id, 80)
		h.write(w, http.StatusOK, resp)
		return
	}
	ctx, cancel := h.dbContext(r)
	defer cancel()
	job, outcome, err := h.cfg.Cancel(ctx, strings.ToLower(id), "killed through the Spark REST submission protocol")
	switch {
	case errors.Is(err, scheduler.ErrNotFound):
		resp.Message = "Cannot find driver " + id
		h.write(w, http.StatusOK, resp)
		return
	case errors.Is(err, store.ErrNotOwner):
		if h.cfg.Guard != nil {
			h.cfg.Guard.Count(r, api.ListenerSparkREST, api.RefusedNotOwner)
		}
		h.error(w, http.StatusForbidden, fmt.Sprintf("Refused by sparkpack: driver %s was submitted by another token; only that token or one with the admin scope may kill it", id))
		return
	case errors.Is(err, store.ErrTerminal):
		resp.SubmissionID = job.ID
		resp.Message = fmt.Sprintf("Driver already terminated (sparkpack state %s)", job.State)
		h.write(w, http.StatusOK, resp)
		return
	case err != nil:
		h.internal(w, r, "killing the submission", err)
		return
	}
	resp.SubmissionID = job.ID
	resp.Success = true
	if outcome == store.KillRequested {
		resp.Message = fmt.Sprintf("Killing running driver (sparkpack state %s; the framework stops it and releases its reservations)", job.State)
	} else {
		resp.Message = "Removed driver while it was still pending (sparkpack state CANCELLED)"
	}
	h.write(w, http.StatusOK, resp)
}

// dropRefusedEnv removes from the spec's environment the variables the
// policy refuses, and returns their names, sorted.
func dropRefusedEnv(spec *scheduler.Spec, c scheduler.Containment) []string {
	var dropped []string
	for k := range spec.App.Environment {
		if c.EnvRefused(k) != "" {
			dropped = append(dropped, k)
			delete(spec.App.Environment, k)
		}
	}
	sort.Strings(dropped)
	return dropped
}
