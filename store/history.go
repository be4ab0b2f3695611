package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Run history (migration 0013, docs/learning.md): one row per finished
// attempt of a job, written in the transaction that records the attempt's
// end (Transition, when the core set Job.EndedRun). Append-only; PruneEnded
// deletes the runs that ended before its cut.

// insertRun appends r to the run history inside tx.
func insertRun(ctx context.Context, tx *sql.Tx, r *scheduler.RunRecord) error {
	types := r.InstanceTypes
	if types == nil {
		types = []string{}
	}
	perAgent := make([]int64, len(r.PerAgent))
	for i, n := range r.PerAgent {
		perAgent[i] = int64(n)
	}
	seconds := sql.NullFloat64{Float64: max(0, r.Seconds), Valid: !r.RunTimeUnknown} // NULL: not known (0019)
	_, err := tx.ExecContext(ctx, `INSERT INTO run_history (job_id, attempt, signature, app_type, estimate_key,
			input_size_gb, iterations, executors, executor_cores, executor_memory_mb,
			agents, max_per_agent, cross_share, busiest_load, instance_types,
			started_at, ended_at, seconds, outcome, estimate_seconds, predicted_p50, predicted_p90, prediction_level, per_agent)
		VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$18,$19,$20,$21,$22,$23,$24)`,
		r.JobID, r.Attempt, r.Signature, r.AppType, r.EstimateKey,
		r.InputSizeGB, r.Iterations, r.Executors, r.ExecutorCores, r.ExecutorMemoryMB,
		r.Agents, r.MaxPerAgent, clamp01(r.CrossShare), clamp01(r.BusiestLoad), pq.Array(types),
		r.StartedAt, r.EndedAt, seconds, r.Outcome, max(0, r.EstimateSeconds), r.PredictedP50, r.PredictedP90, r.PredictionLevel, pq.Array(perAgent))
	if err != nil {
		return fmt.Errorf("record run of job %s: %w", r.JobID, err)
	}
	return nil
}

func clamp01(x float64) float64 {
	if !(x > 0) {
		return 0
	}
	return min(1, x)
}

// RecordRun appends one run to the history in its own transaction (for
// runs whose end is not a Transition, and for tests).
func (s *Store) RecordRun(ctx context.Context, r scheduler.RunRecord) error {
	return s.inTx(ctx, func(tx *sql.Tx) error { return insertRun(ctx, tx, &r) })
}

// runColumns are the run history's columns RunHistory and RunsAfter read
// (scanRuns).
const runColumns = `id, job_id, attempt, signature, app_type, estimate_key, input_size_gb, iterations, executors,
			executor_cores, executor_memory_mb, agents, max_per_agent, cross_share, busiest_load, instance_types,
			started_at, ended_at, seconds, outcome, estimate_seconds, predicted_p50, predicted_p90, prediction_level, per_agent`

// RunHistory returns the latest limit runs of the history (all when
// limit <= 0), oldest first: what the learned model loads at start.
func (s *Store) RunHistory(ctx context.Context, limit int) ([]scheduler.RunRecord, error) {
	q := `SELECT ` + runColumns + ` FROM (SELECT * FROM run_history ORDER BY id DESC`
	var args []any
	if limit > 0 {
		q += ` LIMIT $1`
		args = append(args, limit)
	}
	q += `) r ORDER BY id`
	return s.scanRuns(ctx, q, args...)
}

// RunsAfter returns at most limit runs (all when limit <= 0) whose ID is
// above after, in ID order: what a follower's model has not seen yet
// (learned.Model.Catchup).
func (s *Store) RunsAfter(ctx context.Context, after int64, limit int) ([]scheduler.RunRecord, error) {
	q := `SELECT ` + runColumns + ` FROM run_history WHERE id > $1 ORDER BY id`
	args := []any{after}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	return s.scanRuns(ctx, q, args...)
}

func (s *Store) scanRuns(ctx context.Context, q string, args ...any) ([]scheduler.RunRecord, error) {
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read the run history: %w", err)
	}
	defer rows.Close()
	var out []scheduler.RunRecord
	for rows.Next() {
		var r scheduler.RunRecord
		var types []string
		var perAgent []int64
		var seconds sql.NullFloat64
		if err := rows.Scan(&r.ID, &r.JobID, &r.Attempt, &r.Signature, &r.AppType, &r.EstimateKey, &r.InputSizeGB, &r.Iterations,
			&r.Executors, &r.ExecutorCores, &r.ExecutorMemoryMB, &r.Agents, &r.MaxPerAgent, &r.CrossShare, &r.BusiestLoad,
			pq.Array(&types), &r.StartedAt, &r.EndedAt, &seconds, &r.Outcome, &r.EstimateSeconds,
			&r.PredictedP50, &r.PredictedP90, &r.PredictionLevel, pq.Array(&perAgent)); err != nil {
			return nil, fmt.Errorf("read the run history: %w", err)
		}
		r.Seconds, r.RunTimeUnknown = seconds.Float64, !seconds.Valid
		if len(types) > 0 {
			r.InstanceTypes = types
		}
		for _, n := range perAgent {
			r.PerAgent = append(r.PerAgent, int(n))
		}
		r.StartedAt, r.EndedAt = r.StartedAt.UTC(), r.EndedAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the run history: %w", err)
	}
	return out, nil
}

// JobRuns returns the runs of one job, oldest first (for the job view).
func (s *Store) JobRuns(ctx context.Context, id string) ([]scheduler.RunRecord, error) {
	all, err := s.runsWhere(ctx, `job_id = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("read the runs of job %s: %w", id, err)
	}
	return all, nil
}

// RunTimesUnknown reports, of the given jobs, those whose last run's time
// is not known (NULL seconds: its driver was never seen running), for the
// job list, which shows how long each job ran.
func (s *Store) RunTimesUnknown(ctx context.Context, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	ids = uuidsOnly(ids)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT job_id FROM (SELECT DISTINCT ON (job_id) job_id, seconds FROM run_history
		WHERE job_id = ANY($1::uuid[]) ORDER BY job_id, id DESC) last WHERE seconds IS NULL`, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("read whose run times are unknown: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("read whose run times are unknown: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

func (s *Store) runsWhere(ctx context.Context, cond string, args ...any) ([]scheduler.RunRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, attempt, signature, app_type, seconds, outcome, started_at, ended_at,
			executors, predicted_p50, predicted_p90, prediction_level FROM run_history WHERE `+cond+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scheduler.RunRecord
	for rows.Next() {
		var r scheduler.RunRecord
		var seconds sql.NullFloat64
		if err := rows.Scan(&r.JobID, &r.Attempt, &r.Signature, &r.AppType, &seconds, &r.Outcome, &r.StartedAt, &r.EndedAt,
			&r.Executors, &r.PredictedP50, &r.PredictedP90, &r.PredictionLevel); err != nil {
			return nil, err
		}
		r.Seconds, r.RunTimeUnknown = seconds.Float64, !seconds.Valid
		r.StartedAt, r.EndedAt = r.StartedAt.UTC(), r.EndedAt.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// pruneRuns deletes inside tx (which set sparkpack.prune) the runs that
// ended before the cut of the jobs ids (being pruned), and at most limit
// others that ended before it, oldest first (runs outlive their jobs'
// rows until their own cut).
func pruneRuns(ctx context.Context, tx *sql.Tx, before time.Time, limit int, ids []string) (int, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM run_history WHERE ended_at < $1 AND (job_id = ANY($3::uuid[]) OR id IN (
			SELECT id FROM run_history WHERE ended_at < $1 ORDER BY id LIMIT $2))`, before, limit, pq.Array(ids))
	if err != nil {
		return 0, fmt.Errorf("prune the run history: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// MarkRunningAtRisk implements scheduler.AtRiskMarker: job id, RUNNING,
// is flagged at risk with an event (RUNNING -> RUNNING, the reason).
func (s *Store) MarkRunningAtRisk(ctx context.Context, id, reason string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := lockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		if j.State != scheduler.Running {
			return fmt.Errorf("job %s is %s: %w", id, j.State, scheduler.ErrStale)
		}
		now := s.timestamp()
		j.AtRisk = true
		if err := updateJob(ctx, tx, j, now); err != nil {
			return err
		}
		st := scheduler.Running
		return appendEvent(ctx, tx, id, now, &st, scheduler.Running, reason)
	})
}

// EndReasons is, for each of the jobs ids that ended FAILED, the reason
// of the event that made it FAILED (its latest), for the job list's note
// (the whole timeline is the job view's). Jobs without one are absent.
func (s *Store) EndReasons(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	ids = uuidsOnly(ids)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT DISTINCT ON (job_id) job_id, reason FROM job_events
		WHERE job_id = ANY($1::uuid[]) AND to_state = $2 ORDER BY job_id, id DESC`, pq.Array(ids), string(scheduler.Failed))
	if err != nil {
		return nil, fmt.Errorf("read why the jobs failed: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, reason string
		if err := rows.Scan(&id, &reason); err != nil {
			return nil, fmt.Errorf("read why the jobs failed: %w", err)
		}
		if reason != "" {
			out[id] = reason
		}
	}
	return out, rows.Err()
}

// QueueWait is how long a job waited in the queue (SUBMITTED or QUEUED):
// Seconds over its past waits, and Since when it waits now (nil when it
// does not), to add the time since.
type QueueWait struct {
	Seconds float64
	Since   *time.Time
}

// QueueWaits is, for each of the jobs ids, the time it spent waiting in
// the queue, summed over its waits (a run that failed or was lost and a
// job sent back to the queue wait again; the time placing, reserving,
// launching and running is not waiting): the jobs list's and the job
// view's "waited". A job rejected at submission never waited (absent).
func (s *Store) QueueWaits(ctx context.Context, ids []string) (map[string]QueueWait, error) {
	out := map[string]QueueWait{}
	ids = uuidsOnly(ids)
	if len(ids) == 0 {
		return out, nil
	}
	// The submission's events are the row's (submit_state, submitted_at)
	// unless stored as rows (jobs stored before that, submit_state '').
	rows, err := s.db.QueryContext(ctx, `WITH ev AS (
			SELECT id AS job_id, 0::bigint AS seq, submitted_at AS at, submit_state AS to_state FROM jobs
				WHERE id = ANY($1::uuid[]) AND submit_state IN ('SUBMITTED', 'QUEUED')
			UNION ALL
			SELECT job_id, id, at, to_state FROM job_events WHERE job_id = ANY($1::uuid[])
		), iv AS (
			SELECT job_id, to_state, at, lead(at) OVER (PARTITION BY job_id ORDER BY seq) AS next_at FROM ev
		)
		SELECT job_id::text, coalesce(sum(extract(epoch FROM next_at - at)) FILTER (WHERE next_at IS NOT NULL), 0)::float8,
			max(at) FILTER (WHERE next_at IS NULL)
		FROM iv WHERE to_state IN ('SUBMITTED', 'QUEUED') GROUP BY job_id`, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("read how long the jobs waited: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var w QueueWait
		var since sql.NullTime
		if err := rows.Scan(&id, &w.Seconds, &since); err != nil {
			return nil, fmt.Errorf("read how long the jobs waited: %w", err)
		}
		if since.Valid {
			t := since.Time.UTC()
			w.Since = &t
		}
		out[id] = w
	}
	return out, rows.Err()
}
