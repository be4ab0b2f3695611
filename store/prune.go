package store

import (
	"context"
	"fmt"
	"time"

	"github.com/lib/pq"
)

// PruneEnded deletes, oldest first, at most limit jobs that ended (FINISHED,
// FAILED, KILLED, REJECTED or CANCELLED) before the given time, with their
// events, placements, driver records and released reservations, in one
// transaction. A job that still has a reservation that is not released
// (a leak the sweep has yet to give back) is kept, so that nothing the
// cluster holds loses its record. It returns how many jobs it deleted; call
// it again until it returns fewer than limit.
//
// Pruning is an operator's choice of retention (sparkpack prune): usage,
// cost per job and the deadline counters only cover the jobs kept.
func (s *Store) PruneEnded(ctx context.Context, before time.Time, limit int) (int, error) {
	if limit < 1 {
		return 0, fmt.Errorf("prune: limit %d: want at least 1", limit)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("prune: begin: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL sparkpack.prune = 'on'`); err != nil {
		return 0, fmt.Errorf("prune: %w", err)
	}
	var ids []string
	err = tx.QueryRowContext(ctx, `
		SELECT coalesce(array_agg(id::text), '{}') FROM (
			SELECT id FROM jobs
			WHERE state IN ('FINISHED','FAILED','KILLED','REJECTED','CANCELLED')
			  AND finished_at < $1
			  AND NOT EXISTS (SELECT 1 FROM reservations r
			                  WHERE r.job_id = jobs.id AND r.state NOT IN ('released','failed'))
			ORDER BY finished_at
			LIMIT $2
			FOR UPDATE SKIP LOCKED) v`, before, limit).Scan(pq.Array(&ids))
	if err != nil {
		return 0, fmt.Errorf("prune: choose the jobs: %w", err)
	}
	// The run history ages on its own clock: the runs of the jobs that go,
	// and a batch of the other runs that ended before the cut.
	if _, err := pruneRuns(ctx, tx, before, limit, ids); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, tx.Commit()
	}
	// Children first: the foreign keys point at jobs.
	for _, table := range []string{"job_events", "placements", "reservations", "drivers", "driver_launches", "jobs"} {
		col := "job_id"
		if table == "jobs" {
			col = "id"
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE `+col+` = ANY($1::uuid[])`, pq.Array(ids)); err != nil {
			return 0, fmt.Errorf("prune: delete from %s: %w", table, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("prune: commit: %w", err)
	}
	return len(ids), nil
}

// Prunable counts the jobs PruneEnded would delete for this cut.
func (s *Store) Prunable(ctx context.Context, before time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, `
		SELECT count(*) FROM jobs
		WHERE state IN ('FINISHED','FAILED','KILLED','REJECTED','CANCELLED')
		  AND finished_at < $1
		  AND NOT EXISTS (SELECT 1 FROM reservations r
		                  WHERE r.job_id = jobs.id AND r.state NOT IN ('released','failed'))`, before).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count the jobs to prune: %w", err)
	}
	return n, nil
}
