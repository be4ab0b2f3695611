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
