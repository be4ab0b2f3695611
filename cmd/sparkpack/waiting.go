package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/sparkrest"
)

// Answering while serve waits for PostgreSQL (--database-wait). serve
// opens its listeners first (a busy port fails at once, not after the
// wait) and serves them from the start: until the store is open, every
// request gets an immediate answer from waitingAnswer instead of hanging
// in the listen queue. GET /healthz (liveness) says alive: the process is
// doing what it should, and a supervisor must not kill it (the image's
// HEALTHCHECK probes /healthz); GET /readyz (readiness) and every other
// request get 503 with Retry-After and a JSON body saying what serve
// waits for, since when, and what to check. Once the store is open the
// real handlers take over (swapHandler).

// dbProgress is what serve's start knows about its wait for PostgreSQL:
// openStoreWaiting writes it, the waiting handlers read it. A nil
// *dbProgress records nothing.
type dbProgress struct {
	mu sync.Mutex
	s  dbWaitState
}

// dbWaitState is a snapshot of dbProgress.
type dbWaitState struct {
	// Since is when the first attempt began.
	Since time.Time
	// GivesUpAt is when serve gives up (--database-wait); zero: at the
	// first failure.
	GivesUpAt time.Time
	// Attempts counts the failed attempts so far.
	Attempts int
	// Check says what to check, from the last failed attempt.
	Check string
	// NextTry is when the next attempt begins (zero before the first
	// failure).
	NextTry time.Time
}

func (p *dbProgress) begin(since time.Time, bound time.Duration) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s = dbWaitState{Since: since}
	if bound > 0 {
		p.s.GivesUpAt = since.Add(bound)
	}
}

func (p *dbProgress) failed(attempt int, check string, next time.Time) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.s.Attempts, p.s.Check, p.s.NextTry = attempt, check, next
}

func (p *dbProgress) get() dbWaitState {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.s
}

// waitingBody is the JSON of a waiting answer. Error is api.ErrorBody's
// field, so that clients of the API read it as they read any error. It
// holds no part of --database-url nor the driver's error (they may name
// internal hosts; the log has them).
type waitingBody struct {
	Error        string `json:"error,omitempty"`
	Status       string `json:"status"`
	Ready        bool   `json:"ready"`
	WaitingFor   string `json:"waiting_for"`
	Attempts     int    `json:"attempts"`
	WaitingSince string `json:"waiting_since,omitempty"`
	GivesUpAt    string `json:"gives_up_at,omitempty"`
	Check        string `json:"check"`
}

// waitingReply is waitingAnswer's decision.
type waitingReply struct {
	Status int
	// RetryAfter is the Retry-After header in seconds (0: none).
	RetryAfter int
	Body       waitingBody
}

// waitingStatus is the status field of a waiting answer.
const waitingStatus = "waiting_for_database"

// waitingAnswer decides the answer to a request for path with method
// while serve waits for PostgreSQL in state s, at now.
func waitingAnswer(method, path string, s dbWaitState, now time.Time) waitingReply {
	b := waitingBody{Status: waitingStatus, WaitingFor: "postgresql", Attempts: s.Attempts, Check: s.Check}
	if !s.Since.IsZero() {
		b.WaitingSince = s.Since.UTC().Format(time.RFC3339)
	}
	if !s.GivesUpAt.IsZero() {
		b.GivesUpAt = s.GivesUpAt.UTC().Format(time.RFC3339)
	}
	if b.Check == "" {
		b.Check = "the first attempt to reach PostgreSQL is under way; if it lasts, check that PostgreSQL runs and that --database-url names it"
	}
	if path == "/healthz" && (method == http.MethodGet || method == http.MethodHead) {
		// Liveness: alive, and saying that it is not ready yet.
		b.Status = "ok"
		return waitingReply{Status: http.StatusOK, Body: b}
	}
	what := "sparkpack is starting: waiting for PostgreSQL"
	if path == "/readyz" {
		what = "not ready: waiting for PostgreSQL"
	}
	switch {
	case s.Attempts == 0:
		b.Error = what + " (first attempt under way)"
	default:
		b.Error = fmt.Sprintf("%s (%d attempts failed since %s)", what, s.Attempts, b.WaitingSince)
	}
	b.Error += "; retry in a few seconds. To check: " + b.Check
	// Retry when the next attempt may have succeeded: its start (at least
	// 1 s away), at most api.RetryAfterDatabase.
	retry := 1
	if d := s.NextTry.Sub(now); d > 0 {
		retry = int((d + time.Second - 1) / time.Second)
	}
	retry = min(max(retry, 1), api.RetryAfterDatabase)
	return waitingReply{Status: http.StatusServiceUnavailable, RetryAfter: retry, Body: b}
}

// waitingAPI answers the API's listener (REST API, dashboard, /metrics,
// /healthz, /readyz) while serve waits for PostgreSQL.
func waitingAPI(p *dbProgress) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := waitingAnswer(r.Method, r.URL.Path, p.get(), time.Now())
		writeWaiting(w, a.Status, a.RetryAfter, a.Body)
	})
}

// waitingSparkREST answers the Spark REST listener while serve waits for
// PostgreSQL: 503 with Retry-After and an ErrorResponse, as that listener
// answers when the database is down (Spark's client parses only its own
// classes, so the state is in the message).
func waitingSparkREST(p *dbProgress) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := waitingAnswer(r.Method, r.URL.Path, p.get(), time.Now())
		if a.Status == http.StatusOK { // /healthz is not Spark's
			a = waitingAnswer(r.Method, "", p.get(), time.Now())
		}
		writeWaiting(w, a.Status, a.RetryAfter, sparkrest.ErrorResponse{Action: sparkrest.ActionErrorResponse,
			Message: "Service unavailable: " + a.Body.Error, ServerSparkVersion: sparkrest.DefaultSparkVersion})
	})
}

func writeWaiting(w http.ResponseWriter, status, retryAfter int, body any) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(retryAfter))
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// swapHandler serves the handler last set: the waiting one, then the
// real one once the store is open.
type swapHandler struct{ h atomic.Pointer[http.Handler] }

func newSwapHandler(h http.Handler) *swapHandler {
	s := &swapHandler{}
	s.set(h)
	return s
}

func (s *swapHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *swapHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}
