package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/store"
)

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(true)
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, status int, field, msg string) {
	noteError(w, field, msg)
	writeJSON(w, status, ErrorBody{Error: msg, Field: field})
}

// noteError tells the access log (statusRecorder, maybe under other
// wrappers) which error a request was answered, cut to 300 bytes.
func noteError(w http.ResponseWriter, field, msg string) {
	for w != nil {
		if rec, ok := w.(*statusRecorder); ok {
			if len(msg) > 300 {
				msg = strings.ToValidUTF8(msg[:300], "") + "..."
			}
			rec.errMsg, rec.errField = msg, field
			return
		}
		u, ok := w.(interface{ Unwrap() http.ResponseWriter })
		if !ok {
			return
		}
		w = u.Unwrap()
	}
}

// writeStoreError answers a store failure: 503 when the database cannot be
// reached (the client may retry), 500 for anything else, logged with the
// request's logger. Domain errors (not found, conflict) are handled by the
// callers before they get here.
func writeStoreError(w http.ResponseWriter, r *http.Request, what string, err error) {
	log := loggerFrom(r.Context())
	if r.Context().Err() != nil {
		// The client gave up (its timeout, a closed page) and the read
		// was cancelled with it: not a server fault, and nobody to answer.
		log.WithError(err).Info(what + ": the client went away")
		w.WriteHeader(statusClientClosed)
		return
	}
	if errors.Is(err, ErrNoScheduler) {
		log.WithError(err).Info(what + ": no scheduler to answer")
		writeUnavailable(w, RetryAfterElection, err.Error()+"; retry in a few seconds")
		return
	}
	if store.IsUnavailable(err) || errors.Is(err, errDBTimeout) {
		log.WithError(err).Warn(what + ": database unavailable")
		writeUnavailable(w, RetryAfterDatabase, "the database is unavailable; retry shortly (resending a job with the same id never creates it twice)")
		return
	}
	log.WithError(err).Error(what)
	writeError(w, http.StatusInternalServerError, "", "internal error; the request id in X-Request-Id identifies it in the server log")
}

// statusClientClosed is what the access log records for a request whose
// client went away before the answer (nginx's 499): the answer is never
// read, and it is not a server error.
const statusClientClosed = 499

// Every 503 carries Retry-After (seconds): how long a client should wait
// before it tries again.
const (
	// RetryAfterElection: no instance leads, or the leader does not
	// answer; a new leader is elected within --leader-lease + --leader-retry (4.25 s by default).
	RetryAfterElection = 2
	// RetryAfterDatabase: PostgreSQL does not answer (a restart or a
	// failover of the database takes seconds).
	RetryAfterDatabase = 5
)

// writeUnavailable answers 503 with Retry-After.
func writeUnavailable(w http.ResponseWriter, retryAfter int, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeError(w, http.StatusServiceUnavailable, "", msg)
}

var errDBTimeout = errors.New("database did not answer in time")

// ErrNoScheduler is wrapped by the views' errors when no scheduler can
// answer now (no instance leads yet, or the leader is starting): 503.
var ErrNoScheduler = errors.New("the scheduler is not available")

// WithLogger returns a context whose requests log through log (with its
// fields, such as a request id). Other front ends that call Submit or
// Cancel (package sparkrest) put their request's logger there, so that
// what the API logs for them goes through the configured logger too.
func WithLogger(ctx context.Context, log logrus.FieldLogger) context.Context {
	return context.WithValue(ctx, loggerKey{}, log)
}

// LoggerFrom is the logger WithLogger put in ctx, or def when there is none.
func LoggerFrom(ctx context.Context, def logrus.FieldLogger) logrus.FieldLogger {
	if l, ok := ctx.Value(loggerKey{}).(logrus.FieldLogger); ok {
		return l
	}
	return def
}

// logFor is the request's logger, or the server's when the request has none.
func (s *Server) logFor(ctx context.Context) logrus.FieldLogger { return LoggerFrom(ctx, s.cfg.Log) }

func loggerFrom(ctx interface{ Value(any) any }) logrus.FieldLogger {
	if l, ok := ctx.Value(loggerKey{}).(logrus.FieldLogger); ok {
		return l
	}
	return logrus.StandardLogger()
}
