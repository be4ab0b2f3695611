package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/scheduler"
)

// FrameworkID returns the stored Mesos framework id, "" when none was stored.
func (s *Store) FrameworkID(ctx context.Context) (string, error) {
	var id string
	err := s.db.QueryRowContext(ctx, `SELECT framework_id FROM framework WHERE id = 1`).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read framework id: %w", err)
	}
	return id, nil
}

// SetFrameworkID stores the Mesos framework id ("" forgets it, after the
// master has torn the framework down). A leader-only write (fenced).
func (s *Store) SetFrameworkID(ctx context.Context, id string) error {
	var err error
	if id == "" {
		err = s.exec(ctx, `DELETE FROM framework WHERE id = 1`)
	} else {
		err = s.exec(ctx, `INSERT INTO framework (id, framework_id, updated_at) VALUES (1, $1, $2)
			ON CONFLICT (id) DO UPDATE SET framework_id = EXCLUDED.framework_id, updated_at = EXCLUDED.updated_at`, id, s.timestamp())
	}
	if err != nil {
		return fmt.Errorf("store framework id: %w", err)
	}
	return nil
}

// PutReservation records a reservation, or updates its amounts and state.
// A leader-only write (fenced).
func (s *Store) PutReservation(ctx context.Context, r scheduler.Reservation) error {
	now := s.timestamp()
	err := s.exec(ctx, `INSERT INTO reservations (job_id, agent_id, role, cpus, mem_mb, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
		ON CONFLICT (job_id, agent_id) DO UPDATE SET role = EXCLUDED.role, cpus = EXCLUDED.cpus, mem_mb = EXCLUDED.mem_mb,
			state = EXCLUDED.state, updated_at = EXCLUDED.updated_at`,
		r.JobID, r.AgentID, r.Role, r.CPUs, r.MemMB, string(r.State), now)
	if err != nil {
		return fmt.Errorf("record reservation of job %s on agent %s: %w", r.JobID, r.AgentID, err)
	}
	return nil
}

// Reservations lists reservations, of one job when jobID is not empty,
// else of every job, in any of the given states (all when none given).
func (s *Store) Reservations(ctx context.Context, jobID string, states ...scheduler.ReservationState) ([]scheduler.Reservation, error) {
	q := `SELECT job_id, agent_id, role, cpus, mem_mb, state, updated_at FROM reservations WHERE ($1 = '' OR job_id::text = $1)`
	args := []any{jobID}
	if len(states) > 0 {
		ss := make([]string, len(states))
		for i, st := range states {
			ss[i] = string(st)
		}
		q += ` AND state = ANY($2)`
		args = append(args, pq.Array(ss))
	}
	q += ` ORDER BY job_id, agent_id`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list reservations: %w", err)
	}
	defer rows.Close()
	var out []scheduler.Reservation
	for rows.Next() {
		var r scheduler.Reservation
		var st string
		if err := rows.Scan(&r.JobID, &r.AgentID, &r.Role, &r.CPUs, &r.MemMB, &st, &r.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list reservations: %w", err)
		}
		r.State = scheduler.ReservationState(st)
		r.UpdatedAt = r.UpdatedAt.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}
