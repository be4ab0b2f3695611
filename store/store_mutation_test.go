package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// Tests written for the mutants of store.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md). Expected values are
// worked out by hand from the functions' contracts.

// TestWithSessionDefaults: IdleTxTimeout (3 s = 3000 ms) is added as a
// query parameter to a postgres:// or postgresql:// URL, appended as
// key=value to a key=value string, and left alone when the settings name
// it already.
func TestWithSessionDefaults(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?idle_in_transaction_session_timeout=3000&sslmode=disable"},
		{"postgresql://u@h/db", "postgresql://u@h/db?idle_in_transaction_session_timeout=3000"},
		{"host=h dbname=db sslmode=disable", "host=h dbname=db sslmode=disable idle_in_transaction_session_timeout=3000"},
		// Another scheme is not a PostgreSQL URL: appended as key=value.
		{"mysql://h/db", "mysql://h/db idle_in_transaction_session_timeout=3000"},
		// Not a URL at all (url.Parse fails on the control character).
		{"host=h\x7f", "host=h\x7f idle_in_transaction_session_timeout=3000"},
		{"postgres://h/db?idle_in_transaction_session_timeout=500", "postgres://h/db?idle_in_transaction_session_timeout=500"},
		{"host=h idle_in_transaction_session_timeout=0", "host=h idle_in_transaction_session_timeout=0"},
	} {
		if got := withSessionDefaults(c.in); got != c.want {
			t.Errorf("withSessionDefaults(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

// TestIsUnavailableKinds: the errors that mean the database cannot be
// reached, and some that do not.
func TestIsUnavailableKinds(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"net.OpError", fmt.Errorf("query: %w", &net.OpError{Op: "dial", Err: errors.New("boom")}), true},
		{"bad conn", fmt.Errorf("x: %w", driver.ErrBadConn), true},
		{"conn done", sql.ErrConnDone, true},
		{"connection exception", &pq.Error{Code: "08006"}, true},
		{"admin shutdown", &pq.Error{Code: "57P01"}, true},
		{"too many connections", &pq.Error{Code: "53300"}, true},
		{"unique violation", &pq.Error{Code: "23505", Message: "connection refused"}, false},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), true},
		{"plain EOF text", errors.New("read: unexpected EOF"), true},
		{"io.EOF", io.EOF, true},
		{"starting up", errors.New("pq: the database system is starting up"), true},
		{"no rows", sql.ErrNoRows, false},
		{"canceled", context.Canceled, false},
	} {
		if got := IsUnavailable(c.err); got != c.want {
			t.Errorf("IsUnavailable(%s: %v) = %v; want %v", c.name, c.err, got, c.want)
		}
	}
}

// TestReadyNeedsTheLatestSchema: a database one migration behind the
// binary is not ready; at the latest version it is.
func TestReadyNeedsTheLatestSchema(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if err := s.Ready(ctx); err != nil {
		t.Fatalf("Ready at the latest schema: %v", err)
	}
	want := LatestVersion()
	if _, err := s.db.ExecContext(ctx, `DELETE FROM schema_migrations WHERE version = $1`, want); err != nil {
		t.Fatal(err)
	}
	err := s.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("needs %d", want)) {
		t.Fatalf("Ready one migration behind: %v; want an error naming version %d", err, want)
	}
}

// TestCloseStopsEverything: Close stops the committers, closes both pools
// and may be called again; a store without committers closes too.
func TestCloseStopsEverything(t *testing.T) {
	ctx := context.Background()
	url := pgtest.URL(t)
	s, err := Open(ctx, url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateJob(ctx, newJob(t, nil), ""); err != nil {
		t.Fatal(err)
	}
	stop, lease := s.gc.stop, s.lease
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-stop:
	default:
		t.Fatal("the committers' stop channel is open after Close")
	}
	if err := lease.PingContext(ctx); err == nil {
		t.Fatal("the lease pool answers after Close")
	}
	if err := s.DB().PingContext(ctx); err == nil {
		t.Fatal("the main pool answers after Close")
	}
	_ = s.Close() // a second Close must not panic (closing stop twice)
	if _, _, err := s.CreateJob(ctx, newJob(t, nil), ""); !errors.Is(err, errClosed) {
		t.Fatalf("CreateJob after Close: %v; want errClosed", err)
	}

	s0, err := Open(ctx, url, WithLogger(quietLog()), WithCommitters(0))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s0.CreateJob(ctx, newJob(t, nil), ""); err != nil {
		t.Fatal(err)
	}
	if err := s0.Close(); err != nil { // no committers: no stop channel to close
		t.Fatalf("Close without committers: %v", err)
	}
}
