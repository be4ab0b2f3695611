package main

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestWaitingAnswer: while serve waits for PostgreSQL, /healthz says
// alive (a supervisor must not kill a process that waits as it should),
// /readyz and every other request 503 with Retry-After until the next
// attempt (1-5 s) and a body saying what it waits for, since when, until
// when, and what to check.
func TestWaitingAnswer(t *testing.T) {
	since := time.Date(2026, 11, 27, 13, 0, 0, 0, time.UTC)
	now := since.Add(7 * time.Second)
	check := "nothing accepts connections at the host and port of --database-url yet: check that PostgreSQL is started"
	failed := dbWaitState{Since: since, GivesUpAt: since.Add(2 * time.Minute), Attempts: 3, Check: check, NextTry: now.Add(2500 * time.Millisecond)}
	first := dbWaitState{Since: since, GivesUpAt: since.Add(2 * time.Minute)}
	for _, c := range []struct {
		name         string
		method, path string
		s            dbWaitState
		now          time.Time
		status       int
		retryAfter   int
		errHas       string
		checkHas     string
	}{
		{"liveness", http.MethodGet, "/healthz", failed, now, http.StatusOK, 0, "", "check that PostgreSQL is started"},
		{"liveness HEAD", http.MethodHead, "/healthz", failed, now, http.StatusOK, 0, "", "check that PostgreSQL is started"},
		{"readiness", http.MethodGet, "/readyz", failed, now, 503, 3, "not ready: waiting for PostgreSQL (3 attempts failed since 2026-11-27T13:00:00Z)", "check that PostgreSQL is started"},
		{"API", http.MethodGet, "/api/v1/jobs", failed, now, 503, 3, "sparkpack is starting: waiting for PostgreSQL (3 attempts failed", "check that PostgreSQL is started"},
		{"submit", http.MethodPost, "/api/v1/jobs", failed, now, 503, 3, "retry in a few seconds. To check: nothing accepts", "check that PostgreSQL is started"},
		{"dashboard", http.MethodGet, "/", failed, now, 503, 3, "waiting for PostgreSQL", ""},
		{"POST /healthz", http.MethodPost, "/healthz", failed, now, 503, 3, "waiting for PostgreSQL", ""},
		{"first attempt under way", http.MethodGet, "/readyz", first, since.Add(time.Second), 503, 1, "(first attempt under way)", "the first attempt to reach PostgreSQL is under way"},
		{"an attempt under way (next try past)", http.MethodGet, "/api/v1/jobs", failed, now.Add(20 * time.Second), 503, 1, "waiting for PostgreSQL", ""},
		{"next try far (capped)", http.MethodGet, "/api/v1/jobs", dbWaitState{Since: since, Attempts: 1, Check: check, NextTry: now.Add(time.Minute)}, now, 503, 5, "", ""},
		{"next try in 100 ms", http.MethodGet, "/api/v1/jobs", dbWaitState{Since: since, Attempts: 1, Check: check, NextTry: now.Add(100 * time.Millisecond)}, now, 503, 1, "", ""},
	} {
		a := waitingAnswer(c.method, c.path, c.s, c.now)
		b := a.Body
		if a.Status != c.status || a.RetryAfter != c.retryAfter {
			t.Errorf("%s: %d Retry-After %d, want %d Retry-After %d", c.name, a.Status, a.RetryAfter, c.status, c.retryAfter)
		}
		if b.Ready || b.WaitingFor != "postgresql" || b.WaitingSince != "2026-11-27T13:00:00Z" || b.Attempts != c.s.Attempts {
			t.Errorf("%s: body %+v: want not ready, waiting for postgresql since 13:00:00Z after %d attempts", c.name, b, c.s.Attempts)
		}
		if (c.status == http.StatusOK) != (b.Error == "") || !strings.Contains(b.Error, c.errHas) || !strings.Contains(b.Check, c.checkHas) {
			t.Errorf("%s: error %q check %q, want %q and %q", c.name, b.Error, b.Check, c.errHas, c.checkHas)
		}
		if want := map[int]string{200: "ok", 503: waitingStatus}[c.status]; b.Status != want {
			t.Errorf("%s: status %q, want %q", c.name, b.Status, want)
		}
		if c.s.GivesUpAt.IsZero() != (b.GivesUpAt == "") {
			t.Errorf("%s: gives_up_at %q for %v", c.name, b.GivesUpAt, c.s.GivesUpAt)
		}
	}
}
