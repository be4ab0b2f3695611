package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Submission is one past submission as the forecast of arrivals reads it
// (package warmlive turns it into a forecast.Job). Sizes are read from
// the stored spec as text and parsed here: a value that does not parse is
// NaN, for the forecast to drop (a corrupt row never fails the query).
type Submission struct {
	SubmittedAt time.Time
	// DeadlineAt is nil for a job without a deadline.
	DeadlineAt *time.Time
	// StartedAt and FinishedAt of the last run, if any.
	StartedAt, FinishedAt *time.Time
	State                 string
	Executors             float64
	ExecutorCores         float64
	// ExecutorMemMB is the executor memory with its overhead (as placed).
	ExecutorMemMB float64
	DriverCores   float64
	DriverMemMB   float64
	// EstimatedSeconds is the submitter's estimate (0: none).
	EstimatedSeconds float64
}

// Rejected reports whether the job was rejected (scheduler.Rejected: it
// can never run), and Finished whether it ended successfully
// (scheduler.Finished): for the packages that read the history and must
// not import the scheduler (warmlive).
func (h *Submission) Rejected() bool { return h.State == string(scheduler.Rejected) }

// Finished: see Rejected.
func (h *Submission) Finished() bool { return h.State == string(scheduler.Finished) }

// MaxSubmissionHistory bounds SubmissionHistory's answer.
const MaxSubmissionHistory = 200000

// SubmissionHistory returns the jobs submitted at or after since, oldest
// first: at most limit of them (the newest; MaxSubmissionHistory when
// limit <= 0 or larger). It walks the jobs' seq index from the newest, so
// its work is bounded by limit whatever the table holds.
func (s *Store) SubmissionHistory(ctx context.Context, since time.Time, limit int) ([]Submission, error) {
	if limit <= 0 || limit > MaxSubmissionHistory {
		limit = MaxSubmissionHistory
	}
	rows, err := s.db.QueryContext(ctx, `
		SELECT submitted_at, deadline_at, started_at, finished_at, state,
		       spec->>'executors', spec->>'executorCores', spec->>'executorMemoryMB', spec->>'memoryOverheadMB',
		       spec->'driver'->>'cores', spec->'driver'->>'memoryMB', spec->>'estimatedDurationSeconds'
		FROM (SELECT * FROM jobs ORDER BY seq DESC LIMIT $2) newest
		WHERE submitted_at >= $1
		ORDER BY submitted_at, seq`, since, limit)
	if err != nil {
		return nil, fmt.Errorf("read the submission history: %w", err)
	}
	defer rows.Close()
	var out []Submission
	for rows.Next() {
		var (
			h                                   Submission
			deadline, started, finished         sql.NullTime
			execs, cores, mem, overhead, dc, dm sql.NullString
			est                                 sql.NullString
		)
		if err := rows.Scan(&h.SubmittedAt, &deadline, &started, &finished, &h.State,
			&execs, &cores, &mem, &overhead, &dc, &dm, &est); err != nil {
			return nil, fmt.Errorf("read the submission history: %w", err)
		}
		h.DeadlineAt, h.StartedAt, h.FinishedAt = nullTime(deadline), nullTime(started), nullTime(finished)
		h.Executors, h.ExecutorCores = num(execs, math.NaN()), num(cores, math.NaN())
		h.ExecutorMemMB = num(mem, math.NaN())
		if ov := num(overhead, 0); ov > 0 {
			h.ExecutorMemMB += ov
		} else if h.ExecutorMemMB >= 0 && h.ExecutorMemMB < math.MaxInt32 {
			h.ExecutorMemMB += float64(scheduler.SparkMemoryOverheadMB(int(h.ExecutorMemMB)))
		}
		h.DriverCores = num(dc, scheduler.DefaultDriverCores)
		if h.DriverCores == 0 {
			h.DriverCores = scheduler.DefaultDriverCores
		}
		h.DriverMemMB = num(dm, scheduler.DefaultDriverMemoryMB)
		if h.DriverMemMB == 0 {
			h.DriverMemMB = scheduler.DefaultDriverMemoryMB
		}
		h.EstimatedSeconds = num(est, 0)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the submission history: %w", err)
	}
	return out, nil
}

// num parses a spec field: def when absent (or null), NaN when it is not
// a number.
func num(s sql.NullString, def float64) float64 {
	if !s.Valid || s.String == "" {
		return def
	}
	f, err := strconv.ParseFloat(s.String, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}
