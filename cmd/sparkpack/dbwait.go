package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/lib/pq"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/store"
)

// Waiting for PostgreSQL at start (--database-wait): under docker-compose
// or systemd the database often comes up after sparkpack. An error that
// says the database is not there yet (connection refused, a name that does
// not resolve yet, a Unix socket not made yet, no answer, "the database
// system is starting up") is
// tried again until --database-wait has passed; one that waiting cannot
// mend (a malformed URL, refused credentials, a missing database, a failed
// migration) ends serve at once, as before. decideDBWait decides, from the
// error alone; openStoreWaiting does what it says.

// DefaultDatabaseWait is --database-wait's default: long enough for a
// PostgreSQL container to initialise its data directory and start.
const DefaultDatabaseWait = 2 * time.Minute

// dbAttemptTimeout bounds one attempt (connect, ping, migrate): what
// serve's start allowed before --database-wait existed. Under
// --database-wait an attempt also ends with the bound (dbAttemptLimit).
const dbAttemptTimeout = 30 * time.Second

// dbAttemptMin is the least time an attempt is given: no attempt starts
// with less of the bound left (decideDBWait gives up instead), so that
// the last one can still connect and migrate.
const dbAttemptMin = time.Second

// dbRetryFirst and dbRetryMax bound the pause between two attempts: 1 s
// after the first failure, doubling, at most 5 s.
const (
	dbRetryFirst = time.Second
	dbRetryMax   = 5 * time.Second
)

// dbVerdictKind is what serve does after a failed attempt.
type dbVerdictKind int

const (
	// dbFail: waiting cannot help (bad URL, credentials, no such
	// database, ...): fail now with the error.
	dbFail dbVerdictKind = iota
	// dbRetry: the database is not there yet: try again after Wait.
	dbRetry
	// dbGiveUp: it is not there yet, but --database-wait has passed.
	dbGiveUp
)

// dbVerdict is decideDBWait's answer.
type dbVerdict struct {
	Kind dbVerdictKind
	// Wait is the pause before the next attempt (dbRetry).
	Wait time.Duration
	// Check says what the operator should look at (transient errors).
	Check string
}

// dbTransient reports whether err says the database is not reachable yet
// (retrying may help) and, if so, what to check. It decides from the
// error's class alone: PostgreSQL's SQLSTATE, or the network error under
// the driver's.
func dbTransient(err error) (bool, string) {
	if err == nil {
		return false, ""
	}
	if pe := pq.As(err); pe != nil {
		switch {
		case pe.Code == "57P03": // cannot_connect_now
			return true, "PostgreSQL is starting up or recovering; it accepts connections once it is done"
		case pe.Code == "57P01" || pe.Code == "57P02": // admin_shutdown, crash_shutdown
			return true, "PostgreSQL is shutting down or restarting"
		case pe.Code == "53300": // too_many_connections
			return true, "PostgreSQL has no connection slot free: check max_connections and who holds them"
		case pe.Code.Class() == "08": // connection exception
			return true, "PostgreSQL dropped the connection while it was being made: check that it runs"
		}
		// Credentials (28...), a missing database (3D000) and every other
		// answer of a running server: waiting does not change them.
		return false, ""
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		// A compose service's name resolves only once its container
		// exists; a typo never does (the bound ends the wait).
		return true, "the host name of --database-url does not resolve (yet): check that the database's host or container is up and that the name is right"
	}
	switch {
	case missingSocket(err):
		// A PostgreSQL on this machine reached through its Unix socket
		// (host=/var/run/postgresql) makes the socket file as it starts.
		return true, "the Unix socket of --database-url does not exist yet: check that PostgreSQL is started on this machine and that the host directory (unix_socket_directories) and port are right"
	case errors.Is(err, syscall.ECONNREFUSED):
		return true, "nothing accepts connections at the host and port of --database-url yet: check that PostgreSQL is started and listens there (listen_addresses, port)"
	case errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH):
		return true, "the host of --database-url is not reachable (yet): check the network between sparkpack and the database"
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return true, "PostgreSQL closed the connection while it was being made (starting or restarting?): check that it runs"
	case errors.Is(err, context.DeadlineExceeded) || isNetTimeout(err):
		return true, "PostgreSQL does not answer at the host and port of --database-url: check that it runs and that no firewall drops sparkpack's connections"
	}
	return false, ""
}

// missingSocket reports whether err is a dial of a Unix socket whose file
// does not exist (ENOENT): no PostgreSQL has made it yet.
func missingSocket(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial" && oe.Net == "unix" && errors.Is(oe.Err, syscall.ENOENT)
}

func isNetTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// decideDBWait decides what follows attempt number attempt (from 1) to
// open the store, which failed with err, elapsed after the first began,
// with --database-wait bound (0: never wait).
func decideDBWait(err error, attempt int, elapsed, bound time.Duration) dbVerdict {
	transient, check := dbTransient(err)
	switch {
	case !transient:
		return dbVerdict{Kind: dbFail}
	case bound <= 0:
		return dbVerdict{Kind: dbFail, Check: check}
	case bound-elapsed < dbAttemptMin:
		// Too little left for another attempt (dbAttemptLimit).
		return dbVerdict{Kind: dbGiveUp, Check: check}
	}
	wait := dbRetryFirst
	for i := 1; i < attempt && wait < dbRetryMax; i++ {
		wait *= 2
	}
	// The last attempt starts with dbAttemptMin of the bound left.
	wait = min(wait, dbRetryMax, bound-elapsed-dbAttemptMin)
	return dbVerdict{Kind: dbRetry, Wait: wait, Check: check}
}

// dbAttemptLimit is how long an attempt that starts elapsed after the
// first began may take, under --database-wait bound: dbAttemptTimeout,
// but no longer than what is left of the bound, so that serve gives up
// by the bound rather than up to dbAttemptTimeout after it. It is never
// under dbAttemptMin (decideDBWait starts no attempt with less left;
// only a bound under dbAttemptMin is exceeded, by the first attempt).
// Without a bound (0: fail at the first error) it is dbAttemptTimeout.
func dbAttemptLimit(elapsed, bound time.Duration) time.Duration {
	if bound <= 0 {
		return dbAttemptTimeout
	}
	return min(dbAttemptTimeout, max(bound-elapsed, dbAttemptMin))
}

// openStoreWaiting opens the store with open, trying again as
// decideDBWait says; it logs each failed attempt it retries with what it
// waits for, and fails naming what to do when the bound has passed.
// progress, if not nil, is kept up to date for the waiting answers
// (waitingAnswer).
func openStoreWaiting(ctx context.Context, url string, bound time.Duration, log logrus.FieldLogger, progress *dbProgress, open func(context.Context) (*store.Store, error)) (*store.Store, error) {
	started := time.Now()
	progress.begin(started, bound)
	db := redactURL(url)
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, dbAttemptLimit(time.Since(started), bound))
		st, err := open(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				log.WithFields(logrus.Fields{"database": db, "attempts": attempt, "waited": time.Since(started).Round(time.Millisecond).String()}).
					Info("PostgreSQL answers; starting")
			}
			return st, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("stopped while waiting for PostgreSQL at %s: %w", db, ctx.Err())
		}
		elapsed := time.Since(started)
		v := decideDBWait(err, attempt, elapsed, bound)
		switch v.Kind {
		case dbFail:
			return nil, err
		case dbGiveUp:
			return nil, fmt.Errorf("PostgreSQL at %s is still not reachable after --database-wait %s (%d attempts): %w. To check: %s; then start sparkpack again, or raise --database-wait (env SPARKPACK_DATABASE_WAIT) if the database needs longer to start",
				db, bound, attempt, err, v.Check)
		}
		progress.failed(attempt, v.Check, time.Now().Add(v.Wait))
		log.WithError(err).WithFields(logrus.Fields{"database": db, "attempt": attempt, "next_try_in": v.Wait.Round(time.Millisecond).String(),
			"waited": elapsed.Round(time.Millisecond).String(), "gives_up_in": (bound - elapsed).Round(time.Second).String()}).
			Warn("waiting for PostgreSQL: " + v.Check + " (--database-wait bounds the wait)")
		t := time.NewTimer(v.Wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("stopped while waiting for PostgreSQL at %s: %w", db, ctx.Err())
		case <-t.C:
		}
	}
}
