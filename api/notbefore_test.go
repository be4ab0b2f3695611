package api

import (
	"bytes"
	"context"
	"database/sql"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

func discard() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// TestNotBefore: a job's earliest start time is taken as an RFC 3339
// time, kept (in the job and the jobs table's not_before column) and
// shown; a bad time, or one not before the deadline (absolute or counted
// from submission), is a 400 naming the field, and nothing is stored.
func TestNotBefore(t *testing.T) {
	url := pgtest.URL(t)
	st, err := store.Open(context.Background(), url, store.WithLogger(discard()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewServer(New(Config{Store: st, Log: discard()}).Handler())
	t.Cleanup(srv.Close)
	e := &testEnv{srv: srv, store: st, logs: &bytes.Buffer{}}
	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	bad := []struct {
		name string
		body string
	}{
		{"not a time", withField(goodJob, "notBefore", "tomorrow at noon")},
		{"a number", withField(goodJob, "notBefore", 3600)},
		{"an object", withField(goodJob, "notBefore", map[string]any{})},
		{"year out of range", withField(goodJob, "notBefore", "1970-01-01T00:00:00Z")},
		{"after the deadline", withField(withField(goodJob, "deadline", at.Add(-time.Hour).Format(time.RFC3339)), "notBefore", at.Format(time.RFC3339))},
		{"at the deadline", withField(withField(goodJob, "deadline", at.Format(time.RFC3339)), "notBefore", at.Format(time.RFC3339))},
		{"after a deadline counted from submission", withField(withField(goodJob, "deadline", 600), "notBefore", at.Format(time.RFC3339))},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			resp, m := e.post(t, tc.body)
			if resp.StatusCode != 400 || m["field"] != "notBefore" {
				t.Fatalf("status %d, body %v; want 400 naming notBefore", resp.StatusCode, m)
			}
			if msg, _ := m["error"].(string); msg == "" {
				t.Fatalf("no error message: %v", m)
			}
		})
	}
	resp, m := e.post(t, withField(withField(goodJob, "deadline", at.Add(time.Hour).Format(time.RFC3339)), "notBefore", at.Format(time.RFC3339)))
	if resp.StatusCode != 201 || m["notBefore"] != at.Format(time.RFC3339) {
		t.Fatalf("good notBefore: %d %v", resp.StatusCode, m)
	}
	id := m["id"].(string)
	_, got := e.do(t, "GET", "/api/v1/jobs/"+id, "", "", strings.NewReader(""))
	if got["notBefore"] != at.Format(time.RFC3339) {
		t.Fatalf("GET shows notBefore %v, want %s", got["notBefore"], at.Format(time.RFC3339))
	}
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var col time.Time
	if err := db.QueryRowContext(context.Background(), `SELECT not_before FROM jobs WHERE id = $1`, id).Scan(&col); err != nil || !col.Equal(at) {
		t.Fatalf("not_before column %v (%v), want %s", col, err, at)
	}
}

// TestPlanChecksNotBefore: POST /api/v1/plan refuses a notBefore that is
// not before the deadline exactly as a submission does (400 naming the
// field, and nothing previewed), and previews a good one.
func TestPlanChecksNotBefore(t *testing.T) {
	previewed := 0
	s := New(Config{Log: discard(), Preview: func(context.Context, scheduler.Job, time.Time) (scheduler.Preview, error) {
		previewed++
		return scheduler.Preview{}, nil
	}})
	at := time.Now().Add(2 * time.Hour).UTC().Truncate(time.Second)
	for _, tc := range []struct {
		name     string
		deadline any
		want     int
	}{
		{"after the deadline", at.Add(-time.Hour).Format(time.RFC3339), 400},
		{"at the deadline", at.Format(time.RFC3339), 400},
		{"after a deadline counted from now", 600, 400},
		{"before the deadline", at.Add(time.Hour).Format(time.RFC3339), 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := previewed
			body := withField(withField(goodJob, "deadline", tc.deadline), "notBefore", at.Format(time.RFC3339))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("POST", "/api/v1/plan", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			s.planJob(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tc.want)
			}
			if tc.want == 400 && (!strings.Contains(rec.Body.String(), `"field":"notBefore"`) || previewed != before) {
				t.Fatalf("refusal %s (previewed %d times), want one naming notBefore and no preview", rec.Body, previewed-before)
			}
			if tc.want == 200 && previewed != before+1 {
				t.Fatalf("previewed %d times, want once", previewed-before)
			}
		})
	}
}
