package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	neturl "net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lib/pq"
	"github.com/sirupsen/logrus"
)

// Store is the PostgreSQL-backed state of sparkpack. It is safe for
// concurrent use.
type Store struct {
	db *sql.DB
	// lease is a small pool of its own for the leadership lease
	// (leader.go): a renewal never waits behind the main pool's
	// connections when they are all busy (a database stall queues every
	// request), so a live leader renews as soon as the database answers.
	lease *sql.DB
	log   logrus.FieldLogger
	now   func() time.Time

	// group commit of submissions (create.go), shared by fenced views
	committers int
	gc         *groupCommit
	// fence, when not zero, is the leadership token the leader-only
	// writes of this view check (leader.go).
	fence int64
}

// groupCommit is the state of the submission committers.
type groupCommit struct {
	mu      sync.Mutex
	pending []*createReq
	closed  bool
	kick    chan struct{}
	stop    chan struct{}
	wg      sync.WaitGroup
	// the prepared inserts of a batch, announcing and quiet (create.go)
	stmtMu sync.Mutex
	stmt   [2]*sql.Stmt
	// direct, when set, says when group commits need not announce
	direct atomic.Pointer[func() bool]
}

// Option configures a Store.
type Option func(*Store)

// WithLogger sets the logger (default: logrus' standard logger).
func WithLogger(l logrus.FieldLogger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock used for timestamps (default: time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// Open connects to the database at url, checks it answers and applies
// pending migrations.
func Open(ctx context.Context, url string, opts ...Option) (*Store, error) {
	db, err := sql.Open("postgres", withSessionDefaults(url))
	if err != nil {
		return nil, fmt.Errorf("open database: %w (check --database-url)", err)
	}
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(10)
	db.SetConnMaxIdleTime(5 * time.Minute)
	lease, err := sql.Open("postgres", withSessionDefaults(url))
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w (check --database-url)", err)
	}
	lease.SetMaxOpenConns(2)
	lease.SetMaxIdleConns(2)
	s := &Store{db: db, lease: lease, log: logrus.StandardLogger(), now: time.Now, committers: DefaultCommitters, gc: &groupCommit{}}
	for _, o := range opts {
		o(s)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		lease.Close()
		return nil, fmt.Errorf("connect to database: %w (is PostgreSQL running and --database-url right?)", err)
	}
	if _, err := s.Migrate(ctx); err != nil {
		db.Close()
		lease.Close()
		return nil, err
	}
	if s.committers > 0 {
		s.startCommitters()
	}
	return s, nil
}

// IdleTxTimeout is the idle_in_transaction_session_timeout of sparkpack's
// sessions: PostgreSQL ends a session that sits inside a transaction
// doing nothing this long. sparkpack's transactions issue their statements
// back to back, so only a stalled process (stopped, or cut off from the
// database) is ever ended this way, which releases its locks: a stalled
// leader's fenced transaction (leader.go) cannot hold the leadership lease
// for longer than this. It is shorter than the default leadership lease
// (leader.DefaultTTL, 4 s), so that a leader stopped in the middle of a
// transaction is replaced as soon as its lease runs out, not when its
// lock goes.
const IdleTxTimeout = 3 * time.Second

// withSessionDefaults adds IdleTxTimeout to the connection settings,
// unless they set it already (a URL or a key=value string).
func withSessionDefaults(dsn string) string {
	const key = "idle_in_transaction_session_timeout"
	if strings.Contains(dsn, key) {
		return dsn
	}
	ms := strconv.FormatInt(IdleTxTimeout.Milliseconds(), 10)
	if u, err := neturl.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set(key, ms)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " " + key + "=" + ms
}

// Close stops the committers (submissions still pending fail) and closes
// the connection pool.
func (s *Store) Close() error {
	s.gc.mu.Lock()
	already := s.gc.closed
	s.gc.closed = true
	pending := s.gc.pending
	s.gc.pending = nil
	s.gc.mu.Unlock()
	if !already && s.gc.stop != nil {
		close(s.gc.stop)
		s.gc.wg.Wait()
	}
	for _, r := range pending {
		r.done <- createResult{job: r.j, err: fmt.Errorf("create job %s: %w", r.j.ID, errClosed)}
	}
	s.gc.stmtMu.Lock()
	for i, st := range s.gc.stmt {
		if st != nil {
			st.Close()
			s.gc.stmt[i] = nil
		}
	}
	s.gc.stmtMu.Unlock()
	if s.lease != nil {
		s.lease.Close()
	}
	return s.db.Close()
}

// DB exposes the pool for tests and tools.
func (s *Store) DB() *sql.DB { return s.db }

// Ready reports whether the database answers and the schema is current.
func (s *Store) Ready(ctx context.Context) error {
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		return err
	}
	if want := LatestVersion(); v < want {
		return fmt.Errorf("database schema is at version %d, this binary needs %d (restart to migrate)", v, want)
	}
	return nil
}

// timestamp returns the store clock's now, rounded to PostgreSQL's microseconds.
func (s *Store) timestamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// inTx runs f in a transaction, committing when it returns nil.
func (s *Store) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if err := s.fenceTx(ctx, tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// IsUnavailable reports whether err means the database cannot be reached
// (connection refused or lost, server shutting down) rather than a problem
// with the request: callers answer 503 and the client may retry.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return true
	}
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code.Class() {
		case "08", "57", "53": // connection exception, operator intervention, insufficient resources
			return true
		}
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	// lib/pq reports a dropped connection as a plain error in some paths.
	msg := err.Error()
	for _, s := range []string{"connection refused", "connection reset", "broken pipe", "EOF", "bad connection", "the database system is"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}
