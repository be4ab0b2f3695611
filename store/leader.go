package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/leader"
)

// The leadership lease (package leader) and the fencing of leader-only
// writes. All times are the database's.

// leaseDB is the lease's own pool (the main one in a Store built without Open).
func (s *Store) leaseDB() *sql.DB {
	if s.lease != nil {
		return s.lease
	}
	return s.db
}

func interval(d time.Duration) string { return fmt.Sprintf("%d microseconds", d.Microseconds()) }

// TryAcquire implements leader.Store.
func (s *Store) TryAcquire(ctx context.Context, instance, url string, ttl time.Duration) (leader.Lease, bool, error) {
	var l leader.Lease
	err := s.leaseDB().QueryRowContext(ctx, `INSERT INTO leader_lease (id, instance, url, token, since, expires_at)
			VALUES (1, $1, $2, 1, now(), now() + $3::interval)
		ON CONFLICT (id) DO UPDATE SET instance = $1, url = $2, token = leader_lease.token + 1, since = now(),
			expires_at = now() + $3::interval
			WHERE leader_lease.expires_at < now() OR leader_lease.instance = $1
		RETURNING instance, url, token, since, expires_at`, instance, url, interval(ttl)).
		Scan(&l.Instance, &l.URL, &l.Token, &l.Since, &l.Expires)
	if errors.Is(err, sql.ErrNoRows) {
		cur, err := s.Current(ctx)
		return cur, false, err
	}
	if err != nil {
		return l, false, fmt.Errorf("take the leadership lease: %w", err)
	}
	l.Live = true
	return l, true, nil
}

// Renew implements leader.Store.
func (s *Store) Renew(ctx context.Context, instance string, token int64, ttl time.Duration) (leader.Lease, error) {
	var l leader.Lease
	err := s.leaseDB().QueryRowContext(ctx, `UPDATE leader_lease SET expires_at = now() + $3::interval
		WHERE id = 1 AND instance = $1 AND token = $2 AND expires_at >= now()
		RETURNING instance, url, token, since, expires_at`, instance, token, interval(ttl)).
		Scan(&l.Instance, &l.URL, &l.Token, &l.Since, &l.Expires)
	if errors.Is(err, sql.ErrNoRows) {
		return l, leader.ErrLost
	}
	if err != nil {
		return l, fmt.Errorf("renew the leadership lease: %w", err)
	}
	l.Live = true
	return l, nil
}

// Release implements leader.Store.
func (s *Store) Release(ctx context.Context, instance string, token int64) error {
	_, err := s.leaseDB().ExecContext(ctx, `UPDATE leader_lease SET expires_at = now() - interval '1 microsecond'
		WHERE id = 1 AND instance = $1 AND token = $2`, instance, token)
	if err != nil {
		return fmt.Errorf("release the leadership lease: %w", err)
	}
	return nil
}

// Current implements leader.Store.
func (s *Store) Current(ctx context.Context) (leader.Lease, error) {
	var l leader.Lease
	err := s.db.QueryRowContext(ctx, `SELECT instance, url, token, since, expires_at, expires_at >= now() FROM leader_lease WHERE id = 1`).
		Scan(&l.Instance, &l.URL, &l.Token, &l.Since, &l.Expires, &l.Live)
	if errors.Is(err, sql.ErrNoRows) {
		return leader.Lease{}, nil
	}
	if err != nil {
		return l, fmt.Errorf("read the leadership lease: %w", err)
	}
	return l, nil
}

var _ leader.Store = (*Store)(nil)

// ErrFenced is returned by the writes of a fenced store (Fenced) once
// another instance has taken the leadership.
var ErrFenced = errors.New("another sparkpack instance is the leader now; this one must not write")

// Fenced returns a view of the store whose writes check, in their own
// transaction, that the leadership lease still carries token: the writes
// of a leader that was deposed while paused fail with ErrFenced. Reads are
// not fenced. The view shares the connection pool and committers.
func (s *Store) Fenced(token int64) *Store {
	f := *s
	f.fence = token
	return &f
}

// exec runs one write statement; in a fenced view, in a transaction that
// checks the fence first.
func (s *Store) exec(ctx context.Context, query string, args ...any) error {
	if s.fence == 0 {
		_, err := s.db.ExecContext(ctx, query, args...)
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, query, args...)
		return err
	})
}

// fenceTx checks the fence inside tx: the row lock keeps a new leader from
// taking the lease until tx ends.
func (s *Store) fenceTx(ctx context.Context, tx *sql.Tx) error {
	if s.fence == 0 {
		return nil
	}
	var token int64
	err := tx.QueryRowContext(ctx, `SELECT token FROM leader_lease WHERE id = 1 FOR SHARE`).Scan(&token)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && token != s.fence) {
		return ErrFenced
	}
	if err != nil {
		return fmt.Errorf("check the leadership lease: %w", err)
	}
	return nil
}
