package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// PutDriver records a job's driver task (one row per job, replaced by a
// later attempt or a newer status).
func (s *Store) PutDriver(ctx context.Context, d scheduler.DriverRecord) error {
	now := s.timestamp()
	_, err := s.db.ExecContext(ctx, `INSERT INTO drivers (job_id, attempt, task_id, agent_id, state, message, ended, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
		ON CONFLICT (job_id) DO UPDATE SET attempt = EXCLUDED.attempt, task_id = EXCLUDED.task_id, agent_id = EXCLUDED.agent_id,
			state = EXCLUDED.state, message = EXCLUDED.message, ended = EXCLUDED.ended, updated_at = EXCLUDED.updated_at`,
		d.JobID, d.Attempt, d.TaskID, d.AgentID, d.State, d.Message, d.Ended, now)
	if err != nil {
		return fmt.Errorf("record driver of job %s: %w", d.JobID, err)
	}
	return nil
}

// Driver returns a job's driver record, or scheduler.ErrNotFound when no
// driver was ever launched for it.
func (s *Store) Driver(ctx context.Context, jobID string) (scheduler.DriverRecord, error) {
	var d scheduler.DriverRecord
	err := s.db.QueryRowContext(ctx, `SELECT job_id, attempt, task_id, agent_id, state, message, ended, updated_at
		FROM drivers WHERE job_id = $1`, jobID).
		Scan(&d.JobID, &d.Attempt, &d.TaskID, &d.AgentID, &d.State, &d.Message, &d.Ended, &d.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("driver of job %s: %w", jobID, scheduler.ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("read driver of job %s: %w", jobID, err)
	}
	d.UpdatedAt = d.UpdatedAt.UTC()
	return d, nil
}

// Note appends an event to a job's timeline without changing its state
// (a step of the framework: reserved, driver launched, released...).
func (s *Store) Note(ctx context.Context, id, reason string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := lockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		st := j.State
		return appendEvent(ctx, tx, id, s.timestamp(), &st, st, reason)
	})
}

// Plan returns the stored placement of a job as a plan (assignments only).
func (s *Store) Plan(ctx context.Context, id string) (placement.Plan, error) {
	rows, err := s.Placement(ctx, id)
	if err != nil {
		return placement.Plan{}, err
	}
	if len(rows) == 0 {
		return placement.Plan{}, fmt.Errorf("placement of job %s: %w", id, scheduler.ErrNotFound)
	}
	p := placement.Plan{Policy: rows[0].Policy, Outcome: rows[0].Outcome}
	for _, r := range rows {
		p.Assignments = append(p.Assignments, placement.Assignment{AgentID: r.AgentID, Hostname: r.Hostname, Executors: r.Executors})
	}
	return p, nil
}
