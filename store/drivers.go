package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// PutDriver records a job's driver task (one row per job, replaced by a
// later launch or a newer status; its attempt, the launch number, only
// grows, so that every launch has its own task id): a record of an older
// attempt than the stored one (a late status of a replaced task) changes
// nothing. The launch's Ran, RunningAt and LaunchedAt are kept with the
// launch (driver_launches, migrations 0020 and 0021): Ran is only ever set,
// and the first RunningAt and LaunchedAt stay (a reconciliation re-sends
// TASK_RUNNING, or answers TASK_STAGING; a record without one does not
// clear it). A leader-only write (fenced).
func (s *Store) PutDriver(ctx context.Context, d scheduler.DriverRecord) error {
	now := s.timestamp()
	runningAt, launchedAt := nullTimeOf(d.RunningAt), nullTimeOf(d.LaunchedAt)
	// One statement: the latest launch in drivers, and this launch (of
	// whatever age: a late status of an older one still names its agent)
	// in driver_launches (migration 0016).
	err := s.exec(ctx, `WITH latest AS (
			INSERT INTO drivers (job_id, attempt, task_id, agent_id, state, message, ended, lost_launches, started, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
			ON CONFLICT (job_id) DO UPDATE SET attempt = EXCLUDED.attempt, task_id = EXCLUDED.task_id, agent_id = EXCLUDED.agent_id,
				state = EXCLUDED.state, message = EXCLUDED.message, ended = EXCLUDED.ended, lost_launches = EXCLUDED.lost_launches,
				started = EXCLUDED.started, updated_at = EXCLUDED.updated_at
			WHERE drivers.attempt <= EXCLUDED.attempt
			RETURNING 1)
		INSERT INTO driver_launches (job_id, attempt, task_id, agent_id, ended, ran, running_at, launched_at) VALUES ($1, $2, $3, $4, $7, $11, $12, $13)
		ON CONFLICT (job_id, attempt) DO UPDATE SET
			agent_id = CASE WHEN EXCLUDED.agent_id <> '' THEN EXCLUDED.agent_id ELSE driver_launches.agent_id END,
			ended = driver_launches.ended OR EXCLUDED.ended,
			ran = driver_launches.ran OR EXCLUDED.ran,
			running_at = COALESCE(driver_launches.running_at, EXCLUDED.running_at),
			launched_at = COALESCE(driver_launches.launched_at, EXCLUDED.launched_at)`,
		d.JobID, d.Attempt, d.TaskID, d.AgentID, d.State, d.Message, d.Ended, d.LostLaunches, d.Started, now, d.Ran, runningAt, launchedAt)
	if err != nil {
		return fmt.Errorf("record driver of job %s: %w", d.JobID, err)
	}
	return nil
}

// Driver returns a job's driver record (its launch's Ran, RunningAt and
// LaunchedAt from driver_launches), or scheduler.ErrNotFound when no
// driver was ever launched for it.
func (s *Store) Driver(ctx context.Context, jobID string) (scheduler.DriverRecord, error) {
	var d scheduler.DriverRecord
	var runningAt, launchedAt sql.NullTime
	var ran sql.NullBool
	err := s.db.QueryRowContext(ctx, `SELECT d.job_id, d.attempt, d.task_id, d.agent_id, d.state, d.message, d.ended, d.lost_launches, d.started,
			d.updated_at, l.ran, l.running_at, l.launched_at
		FROM drivers d LEFT JOIN driver_launches l ON l.job_id = d.job_id AND l.attempt = d.attempt
		WHERE d.job_id = $1`, jobID).
		Scan(&d.JobID, &d.Attempt, &d.TaskID, &d.AgentID, &d.State, &d.Message, &d.Ended, &d.LostLaunches, &d.Started, &d.UpdatedAt,
			&ran, &runningAt, &launchedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("driver of job %s: %w", jobID, scheduler.ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("read driver of job %s: %w", jobID, err)
	}
	d.UpdatedAt = d.UpdatedAt.UTC()
	d.Ran = ran.Bool
	d.RunningAt, d.LaunchedAt = timeOfNull(runningAt), timeOfNull(launchedAt)
	return d, nil
}

// DriverLaunch returns launch attempt of a job's driver (its task, the
// agent that ran it, whether it ended or proved it ran, when it was first
// seen running, when it was sent), or scheduler.ErrNotFound when the job
// had no such launch.
func (s *Store) DriverLaunch(ctx context.Context, jobID string, attempt int) (scheduler.DriverRecord, error) {
	d := scheduler.DriverRecord{JobID: jobID, Attempt: attempt}
	var runningAt, launchedAt sql.NullTime
	err := s.db.QueryRowContext(ctx, `SELECT task_id, agent_id, ended, ran, running_at, launched_at FROM driver_launches WHERE job_id = $1 AND attempt = $2`,
		jobID, attempt).Scan(&d.TaskID, &d.AgentID, &d.Ended, &d.Ran, &runningAt, &launchedAt)
	d.RunningAt, d.LaunchedAt = timeOfNull(runningAt), timeOfNull(launchedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, fmt.Errorf("driver launch %d of job %s: %w", attempt, jobID, scheduler.ErrNotFound)
	}
	if err != nil {
		return d, fmt.Errorf("read driver launch %d of job %s: %w", attempt, jobID, err)
	}
	return d, nil
}

// nullTimeOf is t for a nullable column: NULL when zero.
func nullTimeOf(t time.Time) sql.NullTime {
	if t.IsZero() {
		return sql.NullTime{}
	}
	return sql.NullTime{Time: t.UTC(), Valid: true}
}

// timeOfNull is a nullable column's time in UTC (zero for NULL).
func timeOfNull(t sql.NullTime) time.Time {
	if !t.Valid {
		return time.Time{}
	}
	return t.Time.UTC()
}

// CountFailedRun records that the application run of driver task taskID
// failed and returns how many failed runs the job has had. It is
// idempotent per task: counting the run of the task counted last again
// (the adapter restarted between counting and reporting) changes nothing,
// so a job with retries R runs at most R+1 times. A leader-only write
// (fenced).
func (s *Store) CountFailedRun(ctx context.Context, jobID, taskID string) (int, error) {
	if taskID == "" {
		return 0, fmt.Errorf("count a failed run of job %s: no driver task", jobID)
	}
	var n int
	const q = `UPDATE jobs SET
			failed_runs = CASE WHEN failed_run_task = $2 THEN failed_runs ELSE failed_runs + 1 END,
			failed_run_task = $2
		WHERE id = $1 RETURNING failed_runs`
	var err error
	if s.fence == 0 {
		err = s.db.QueryRowContext(ctx, q, jobID, taskID).Scan(&n)
	} else {
		err = s.inTx(ctx, func(tx *sql.Tx) error { return tx.QueryRowContext(ctx, q, jobID, taskID).Scan(&n) })
	}
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("count a failed run of job %s: %w", jobID, scheduler.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("count a failed run of job %s: %w", jobID, err)
	}
	return n, nil
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

// RequestPreemption implements scheduler.PreemptionStore: it marks job id,
// which holds resources, for eviction with the reason and appends an
// event, in one (fenced) transaction. A job that waits or has ended gives
// scheduler.ErrStale; asking twice records it once.
func (s *Store) RequestPreemption(ctx context.Context, id, reason string) (scheduler.Job, error) {
	if reason == "" {
		return scheduler.Job{}, fmt.Errorf("request preemption of job %s: no reason", id)
	}
	var out scheduler.Job
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := lockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		out = j
		if j.State.Waiting() || j.State.Terminal() {
			return fmt.Errorf("preempt job %s: it is %s, holding nothing: %w", id, j.State, scheduler.ErrStale)
		}
		if j.PreemptRequested != "" {
			return nil
		}
		now := s.timestamp()
		j.PreemptRequested = reason
		if err := updateJob(ctx, tx, j, now); err != nil {
			return err
		}
		st := j.State
		if err := appendEvent(ctx, tx, id, now, &st, st, "preemption requested: "+reason); err != nil {
			return err
		}
		out = j
		return nil
	})
	return out, err
}
