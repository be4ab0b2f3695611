package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Batched writes: the scheduler core admits bursts of submissions and
// records the reasons of thousands of waiting jobs; doing that one job per
// round trip made a pass cost O(queue) database calls. These methods write
// a batch in one transaction with array parameters (unnest), so the cost
// is a few round trips whatever the batch size.

// tsText formats a time for a timestamptz[] parameter (NULL when nil).
func tsText(t *time.Time) sql.NullString {
	if t == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: t.UTC().Format(pgTime), Valid: true}
}

// TransitionMany implements scheduler.BatchStore: every change is checked
// and written like Transition, all in one transaction; a change that does
// not apply (stale state, unknown job, illegal move) is reported in its
// result and the others are written.
func (s *Store) TransitionMany(ctx context.Context, changes []scheduler.Change) ([]scheduler.ChangeResult, error) {
	res := make([]scheduler.ChangeResult, len(changes))
	if len(changes) == 0 {
		return res, nil
	}
	ids := make([]string, 0, len(changes))
	for i, ch := range changes {
		if err := scheduler.CheckTransition(ch.From, ch.To); err != nil {
			res[i].Err = fmt.Errorf("job %s: %w", ch.ID, err)
			continue
		}
		ids = append(ids, ch.ID)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`, pq.Array(ids))
		if err != nil {
			return fmt.Errorf("lock %d jobs: %w", len(ids), err)
		}
		current := make(map[string]scheduler.Job, len(ids))
		for rows.Next() {
			j, _, err := scanJob(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("lock %d jobs: %w", len(ids), err)
			}
			current[j.ID] = j
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		now := s.timestamp()
		var (
			uID, uState, uReason, evFrom, evTo, evReason, evID []string
			uStarted, uFinished                                []sql.NullString
			uRisk, uKill                                       []bool
			uAttempt, uPreemptions                             []int64
			uPreempt                                           []string
			uLastStarted                                       []sql.NullString
			uLost                                              []float64
		)
		written := make([]int, 0, len(changes))
		slot := make(map[string]int, len(changes))
		for i, ch := range changes {
			if res[i].Err != nil {
				continue
			}
			j, ok := current[ch.ID]
			if !ok {
				res[i].Err = fmt.Errorf("job %s: %w", ch.ID, scheduler.ErrNotFound)
				continue
			}
			j, _, err := scheduler.ApplyTransition(j, ch.From, ch.To, ch.Reason, now, ch.Mutate)
			if err != nil {
				res[i] = scheduler.ChangeResult{Job: j, Err: err}
				continue
			}
			current[ch.ID] = j // a second change of the same job in the batch sees this one
			if k, dup := slot[j.ID]; dup {
				// The same job twice: the row gets the last state, the
				// events both moves.
				uState[k], uStarted[k], uFinished[k] = string(j.State), tsText(j.StartedAt), tsText(j.FinishedAt)
				uReason[k], uRisk[k], uKill[k], uAttempt[k] = j.WaitingReason, j.AtRisk, j.KillRequested, int64(j.Attempt)
				uPreempt[k], uPreemptions[k], uLost[k], uLastStarted[k] = j.PreemptRequested, int64(j.Preemptions), j.LostWorkSeconds, tsText(j.LastStartedAt)
				evID = append(evID, j.ID)
				evFrom = append(evFrom, string(ch.From))
				evTo = append(evTo, string(ch.To))
				evReason = append(evReason, ch.Reason)
				res[i].Job = j
				written = append(written, i)
				continue
			}
			slot[j.ID] = len(uID)
			uID = append(uID, j.ID)
			uState = append(uState, string(j.State))
			uStarted = append(uStarted, tsText(j.StartedAt))
			uFinished = append(uFinished, tsText(j.FinishedAt))
			uReason = append(uReason, j.WaitingReason)
			uRisk = append(uRisk, j.AtRisk)
			uKill = append(uKill, j.KillRequested)
			uAttempt = append(uAttempt, int64(j.Attempt))
			uPreempt = append(uPreempt, j.PreemptRequested)
			uPreemptions = append(uPreemptions, int64(j.Preemptions))
			uLost = append(uLost, j.LostWorkSeconds)
			uLastStarted = append(uLastStarted, tsText(j.LastStartedAt))
			evID = append(evID, j.ID)
			evFrom = append(evFrom, string(ch.From))
			evTo = append(evTo, string(ch.To))
			evReason = append(evReason, ch.Reason)
			res[i].Job = j
			written = append(written, i)
		}
		if len(written) == 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `UPDATE jobs AS j SET state = u.state, started_at = u.started_at,
				finished_at = u.finished_at, waiting_reason = u.reason, at_risk = u.at_risk,
				kill_requested = u.kill, attempt = u.attempt, updated_at = $9,
				preempt_requested = u.preempt, preemptions = u.preemptions, lost_work_seconds = u.lost, last_started_at = u.last_started
			FROM unnest($1::uuid[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::bool[], $7::bool[], $8::int[],
					$10::text[], $11::int[], $12::float8[], $13::timestamptz[])
				AS u(id, state, started_at, finished_at, reason, at_risk, kill, attempt, preempt, preemptions, lost, last_started)
			WHERE j.id = u.id`,
			pq.Array(uID), pq.Array(uState), pq.Array(uStarted), pq.Array(uFinished), pq.Array(uReason),
			pq.Array(uRisk), pq.Array(uKill), pq.Array(uAttempt), now,
			pq.Array(uPreempt), pq.Array(uPreemptions), pq.Array(uLost), pq.Array(uLastStarted)); err != nil {
			return fmt.Errorf("update %d jobs: %w", len(uID), err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO job_events (job_id, at, from_state, to_state, reason)
			SELECT e.id, $2, e.from_state, e.to_state, e.reason
			FROM unnest($1::uuid[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY AS e(id, from_state, to_state, reason, n)
			ORDER BY e.n`,
			pq.Array(evID), now, pq.Array(evFrom), pq.Array(evTo), pq.Array(evReason)); err != nil {
			return fmt.Errorf("append %d events: %w", len(evID), err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// SetWaitingMany implements scheduler.BatchStore: one UPDATE for every
// note; jobs that no longer wait, or already hold the same reason, are
// left alone.
func (s *Store) SetWaitingMany(ctx context.Context, notes []scheduler.WaitingNote) error {
	if len(notes) == 0 {
		return nil
	}
	ids := make([]string, len(notes))
	reasons := make([]string, len(notes))
	risks := make([]bool, len(notes))
	for i, n := range notes {
		ids[i], reasons[i], risks[i] = n.ID, n.Reason, n.AtRisk
	}
	now := s.timestamp()
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The waiting rows, locked first and in id order (as
		// TransitionMany locks): the UPDATE below no longer takes them
		// in its own order, one way two batches deadlock.
		if _, err := tx.ExecContext(ctx, `SELECT 1 FROM jobs WHERE id = ANY($1::uuid[]) AND state IN ('SUBMITTED','QUEUED')
			ORDER BY id FOR UPDATE`, pq.Array(ids)); err != nil {
			return fmt.Errorf("lock %d waiting jobs: %w", len(ids), err)
		}
		if err := keepWaitingReasons(ctx, tx, ids, reasons, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE jobs AS j SET waiting_reason = u.reason, at_risk = u.at_risk, updated_at = $4
			FROM unnest($1::uuid[], $2::text[], $3::bool[]) AS u(id, reason, at_risk)
			WHERE j.id = u.id AND j.state IN ('SUBMITTED','QUEUED') AND (j.waiting_reason <> u.reason OR j.at_risk <> u.at_risk)`,
			pq.Array(ids), pq.Array(reasons), pq.Array(risks), now)
		return err
	})
	if err != nil {
		return fmt.Errorf("set waiting reasons of %d jobs: %w", len(notes), err)
	}
	return nil
}

// MinKeptWait is how long a waiting reason must have held to be kept in
// the job's timeline when it changes (a reason of one pass is noise).
const MinKeptWait = time.Second

// keepWaitingReasons appends to the timeline of each waiting job whose
// reason changes the reason it had and how long it held ("waited 2m19s:
// does not fit now: short of cpus"), so that why a job started late is
// still known after it started. The reason held since the job's last
// event (every change of reason is one) or its submission.
//
// The rows are locked (in id order, as TransitionMany locks them): a
// note's transaction that read them unlocked, while a start held the job
// (StartPlaced keeps its last reason too), kept the same reason a second
// time once the start committed; locked, it reads the job after the start
// and finds it no longer waiting.
func keepWaitingReasons(ctx context.Context, tx *sql.Tx, ids, reasons []string, now time.Time) error {
	rows, err := tx.QueryContext(ctx, `
		SELECT j.id, j.state, j.waiting_reason,
		       coalesce((SELECT max(e.at) FROM job_events e WHERE e.job_id = j.id), j.submitted_at)
		FROM jobs j JOIN unnest($1::uuid[], $2::text[]) AS u(id, reason) ON j.id = u.id
		WHERE j.state IN ('SUBMITTED','QUEUED') AND j.waiting_reason <> '' AND j.waiting_reason <> u.reason
		ORDER BY j.id
		FOR UPDATE OF j`,
		pq.Array(ids), pq.Array(reasons))
	if err != nil {
		return fmt.Errorf("read the reasons that change: %w", err)
	}
	var evIDs, evStates, evReasons []string
	for rows.Next() {
		var id, state, old string
		var since time.Time
		if err := rows.Scan(&id, &state, &old, &since); err != nil {
			rows.Close()
			return fmt.Errorf("read the reasons that change: %w", err)
		}
		if d := now.Sub(since); d >= MinKeptWait {
			evIDs, evStates, evReasons = append(evIDs, id), append(evStates, state), append(evReasons, scheduler.WaitedReason(d, old))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the reasons that change: %w", err)
	}
	if len(evIDs) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO job_events (job_id, at, from_state, to_state, reason)
		SELECT u.id, $4, u.state, u.state, u.reason FROM unnest($1::uuid[], $2::text[], $3::text[]) AS u(id, state, reason)`,
		pq.Array(evIDs), pq.Array(evStates), pq.Array(evReasons), now); err != nil {
		return fmt.Errorf("keep the reasons that held: %w", err)
	}
	return nil
}

var _ scheduler.BatchStore = (*Store)(nil)

// errClosed is returned by CreateJob after Close.
var errClosed = errors.New("store is closed")
