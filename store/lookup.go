package store

import (
	"context"
	"fmt"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/scheduler"
)

// JobsByID reads several jobs at once (those that exist), in no
// particular order.
func (s *Store) JobsByID(ctx context.Context, ids []string) ([]scheduler.Job, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ANY($1::uuid[])`, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("read %d jobs: %w", len(ids), err)
	}
	defer rows.Close()
	var out []scheduler.Job
	for rows.Next() {
		j, _, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("read %d jobs: %w", len(ids), err)
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// WaitingAfter returns the ids of the SUBMITTED and QUEUED jobs whose seq
// (their order of insertion) is above after, and the largest seq among
// them (after when there are none). It reads two columns through the
// (state, seq) index: cheap enough to run often over the jobs stored
// lately, to catch any whose announcement was lost.
func (s *Store) WaitingAfter(ctx context.Context, after int64) (ids []string, maxSeq int64, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, id FROM jobs
		WHERE state IN ('SUBMITTED','QUEUED') AND seq > $1`, after)
	if err != nil {
		return nil, after, fmt.Errorf("read waiting jobs stored after seq %d: %w", after, err)
	}
	defer rows.Close()
	maxSeq = after
	for rows.Next() {
		var seq int64
		var id string
		if err := rows.Scan(&seq, &id); err != nil {
			return nil, after, fmt.Errorf("read waiting jobs stored after seq %d: %w", after, err)
		}
		ids = append(ids, id)
		maxSeq = max(maxSeq, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("read waiting jobs stored after seq %d: %w", after, err)
	}
	return ids, maxSeq, nil
}
