package store

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Errors beyond those of scheduler.Store.
var (
	// ErrTerminal: the job has ended already; nothing can change it.
	ErrTerminal = errors.New("job has already ended")
	// ErrBadCursor: a list cursor that this store did not hand out.
	ErrBadCursor = errors.New("invalid cursor")
)

// Event is one entry of a job's append-only history.
type Event struct {
	ID     int64            `json:"id"`
	At     time.Time        `json:"at"`
	From   *scheduler.State `json:"from,omitempty"`
	To     scheduler.State  `json:"to"`
	Reason string           `json:"reason,omitempty"`
	// Actor is the name of the token whose request caused the event and
	// Client the address it came from (both empty for the scheduler's
	// own steps and when no tokens are configured, Actor only).
	Actor  string `json:"actor,omitempty"`
	Client string `json:"client,omitempty"`
}

const jobColumns = `id, spec, fingerprint, state, submitted_at, started_at, finished_at, deadline_at,
	waiting_reason, at_risk, kill_requested, attempt, failed_runs, seq,
	preempt_requested, preemptions, lost_work_seconds, last_started_at, team, submitted_by`

type rowScanner interface{ Scan(dest ...any) error }

func scanJob(r rowScanner) (scheduler.Job, int64, error) {
	var (
		j                           scheduler.Job
		spec                        []byte
		state                       string
		started, finished, deadline sql.NullTime
		lastStarted                 sql.NullTime
		seq                         int64
		id                          string
	)
	err := r.Scan(&id, &spec, &j.Fingerprint, &state, &j.SubmittedAt, &started, &finished, &deadline,
		&j.WaitingReason, &j.AtRisk, &j.KillRequested, &j.Attempt, &j.FailedRuns, &seq,
		&j.PreemptRequested, &j.Preemptions, &j.LostWorkSeconds, &lastStarted, &j.Team, &j.SubmittedBy)
	if err != nil {
		return j, 0, err
	}
	if err := json.Unmarshal(spec, &j.Spec); err != nil {
		return j, 0, fmt.Errorf("job %s: stored spec: %w", id, err)
	}
	j.ID = id
	j.State = scheduler.State(state)
	j.SubmittedAt = j.SubmittedAt.UTC()
	j.StartedAt = nullTime(started)
	j.FinishedAt = nullTime(finished)
	j.DeadlineAt = nullTime(deadline)
	j.LastStartedAt = nullTime(lastStarted)
	return j, seq, nil
}

func nullTime(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func appendEvent(ctx context.Context, tx *sql.Tx, id string, at time.Time, from *scheduler.State, to scheduler.State, reason string) error {
	var f any
	if from != nil {
		f = string(*from)
	}
	a := ActorFrom(ctx)
	_, err := tx.ExecContext(ctx, `INSERT INTO job_events (job_id, at, from_state, to_state, reason, actor, client) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, at, f, string(to), reason, a.Name, a.Client)
	if err != nil {
		return fmt.Errorf("append event for job %s: %w", id, err)
	}
	return nil
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// GetJob returns one job, or an error wrapping scheduler.ErrNotFound.
func (s *Store) GetJob(ctx context.Context, id string) (scheduler.Job, error) {
	j, _, err := scanJob(s.db.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("read job %s: %w", id, err)
	}
	return j, nil
}

// ListOptions filter and page a job listing.
type ListOptions struct {
	States []scheduler.State
	Labels map[string]string // all must match
	Limit  int               // 1..1000, default 100
	Cursor string            // from a previous page's next
	// Search, if set, keeps the jobs whose name contains it (any case),
	// whose id starts with it, or that have a label key=value equal to it.
	Search string
	// Team, when not nil, keeps the jobs of that team ("" the default team).
	Team *string
}

// ListJobs returns jobs newest first, and the cursor of the next page ("" at the end).
func (s *Store) ListJobs(ctx context.Context, o ListOptions) ([]scheduler.Job, string, error) {
	if o.Limit <= 0 {
		o.Limit = 100
	}
	if o.Limit > 1000 {
		o.Limit = 1000
	}
	var where []string
	var args []any
	if len(o.States) > 0 {
		states := make([]string, len(o.States))
		for i, st := range o.States {
			states[i] = string(st)
		}
		args = append(args, pq.Array(states))
		where = append(where, fmt.Sprintf("state = ANY($%d)", len(args)))
	}
	if len(o.Labels) > 0 {
		b, err := json.Marshal(o.Labels)
		if err != nil {
			return nil, "", err
		}
		args = append(args, b)
		// labels <> '{}' lets the partial index jobs_labels serve the filter.
		where = append(where, fmt.Sprintf("labels @> $%d::jsonb AND labels <> '{}'::jsonb", len(args)))
	}
	if o.Team != nil {
		args = append(args, *o.Team)
		where = append(where, fmt.Sprintf("team = $%d", len(args)))
	}
	if o.Search != "" {
		like := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(o.Search)
		args = append(args, "%"+like+"%", strings.ToLower(like)+"%")
		n := len(args)
		cond := fmt.Sprintf("(name ILIKE $%d OR id::text LIKE $%d", n-1, n)
		if k, v, ok := strings.Cut(o.Search, "="); ok && k != "" {
			b, err := json.Marshal(map[string]string{k: v})
			if err != nil {
				return nil, "", err
			}
			args = append(args, b)
			cond += fmt.Sprintf(" OR labels @> $%d::jsonb", len(args))
		}
		where = append(where, cond+")")
	}
	if o.Cursor != "" {
		seq, err := decodeCursor(o.Cursor)
		if err != nil {
			return nil, "", err
		}
		args = append(args, seq)
		where = append(where, fmt.Sprintf("seq < $%d", len(args)))
	}
	q := `SELECT ` + jobColumns + ` FROM jobs`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	args = append(args, o.Limit+1)
	q += fmt.Sprintf(" ORDER BY seq DESC LIMIT $%d", len(args))
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	defer rows.Close()
	var jobs []scheduler.Job
	var seqs []int64
	for rows.Next() {
		j, seq, err := scanJob(rows)
		if err != nil {
			return nil, "", fmt.Errorf("list jobs: %w", err)
		}
		jobs = append(jobs, j)
		seqs = append(seqs, seq)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("list jobs: %w", err)
	}
	next := ""
	if len(jobs) > o.Limit {
		jobs = jobs[:o.Limit]
		next = encodeCursor(seqs[o.Limit-1])
	}
	return jobs, next, nil
}

func encodeCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("seq:" + strconv.FormatInt(seq, 10)))
}

func decodeCursor(c string) (int64, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "seq:") {
		return 0, ErrBadCursor
	}
	seq, err := strconv.ParseInt(string(b[4:]), 10, 64)
	if err != nil || seq < 1 {
		return 0, ErrBadCursor
	}
	return seq, nil
}

// Events returns a job's history, oldest first. The events of its
// submission (stored as SUBMITTED, and at once QUEUED or REJECTED when the
// scheduler decided then) come from the job's row (migration 0009); they
// carry id 0 and the submission time (a rejection, the time it was
// stored, its finishedAt). Later events are job_events rows.
func (s *Store) Events(ctx context.Context, id string) ([]Event, error) {
	var state, actor, client, reason string
	var at time.Time
	var finished sql.NullTime
	var sizing sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT submit_state, submitted_at, finished_at, submitted_by, submitted_client, waiting_reason, spec->'sizing'->>'reason' FROM jobs WHERE id = $1`, id).
		Scan(&state, &at, &finished, &actor, &client, &reason, &sizing)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("read events of job %s: %w", id, err)
	}
	evs := submissionEvents(scheduler.State(state), at.UTC(), finished.Time.UTC(), actor, client, reason)
	if sizing.Valid && sizing.String != "" {
		// "executors": "auto": the count chosen at submission and why
		// (scheduler.RightSize), kept in the stored spec.
		evs = append(evs, Event{At: at.UTC(), To: scheduler.Submitted, Reason: "executors auto: " + sizing.String})
	}
	rows, err := s.db.QueryContext(ctx, `SELECT id, at, from_state, to_state, reason, actor, client FROM job_events WHERE job_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, fmt.Errorf("read events of job %s: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var e Event
		var from sql.NullString
		var to string
		if err := rows.Scan(&e.ID, &e.At, &from, &to, &e.Reason, &e.Actor, &e.Client); err != nil {
			return nil, fmt.Errorf("read events of job %s: %w", id, err)
		}
		e.At = e.At.UTC()
		e.To = scheduler.State(to)
		if from.Valid {
			f := scheduler.State(from.String)
			e.From = &f
		}
		evs = append(evs, e)
	}
	return evs, rows.Err()
}

// submissionEvents are the first events of a job stored in state (the
// row's submit_state; none when "", its events being rows). reason is the
// row's waiting_reason: for a job rejected at submission, why; rejectedAt
// its finished_at.
func submissionEvents(state scheduler.State, at, rejectedAt time.Time, actor, client, reason string) []Event {
	if state == "" {
		return nil
	}
	evs := []Event{{At: at, To: scheduler.Submitted, Reason: "submitted", Actor: actor, Client: client}}
	from := scheduler.Submitted
	switch state {
	case scheduler.Queued:
		evs = append(evs, Event{At: at, From: &from, To: scheduler.Queued, Reason: "queued", Actor: actor, Client: client})
	case scheduler.Rejected:
		evs = append(evs, Event{At: rejectedAt, From: &from, To: scheduler.Rejected, Reason: reason, Actor: actor, Client: client})
	}
	return evs
}

// lockJob reads a job for update inside tx.
func lockJob(ctx context.Context, tx *sql.Tx, id string) (scheduler.Job, error) {
	j, _, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = $1 FOR UPDATE`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return j, fmt.Errorf("job %s: %w", id, scheduler.ErrNotFound)
	}
	if err != nil {
		return j, fmt.Errorf("lock job %s: %w", id, err)
	}
	return j, nil
}

func updateJob(ctx context.Context, tx *sql.Tx, j scheduler.Job, now time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET state = $2, started_at = $3, finished_at = $4, waiting_reason = $5,
			at_risk = $6, kill_requested = $7, attempt = $8, updated_at = $9,
			preempt_requested = $10, preemptions = $11, lost_work_seconds = $12, last_started_at = $13 WHERE id = $1`,
		j.ID, string(j.State), j.StartedAt, j.FinishedAt, j.WaitingReason, j.AtRisk, j.KillRequested, j.Attempt, now,
		j.PreemptRequested, j.Preemptions, j.LostWorkSeconds, j.LastStartedAt)
	if err != nil {
		return fmt.Errorf("update job %s: %w", j.ID, err)
	}
	return nil
}

// Transition implements scheduler.Store: it moves a job from one state to
// another with an event, in one transaction, after checking the move is
// legal. Entering RUNNING sets startedAt and a terminal state sets
// finishedAt, unless mutate set them.
func (s *Store) Transition(ctx context.Context, id string, from, to scheduler.State, reason string, mutate func(*scheduler.Job)) (scheduler.Job, error) {
	if err := scheduler.CheckTransition(from, to); err != nil {
		return scheduler.Job{}, fmt.Errorf("job %s: %w", id, err)
	}
	var out scheduler.Job
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := lockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		now := s.timestamp()
		j, ev, err := scheduler.ApplyTransition(j, from, to, reason, now, mutate)
		if err != nil {
			return err
		}
		if err := updateJob(ctx, tx, j, now); err != nil {
			return err
		}
		if err := appendEvent(ctx, tx, id, ev.At, &ev.From, ev.To, ev.Reason); err != nil {
			return err
		}
		if j.EndedRun != nil {
			if err := insertRun(ctx, tx, j.EndedRun); err != nil {
				return err
			}
		}
		out = j
		return nil
	})
	return out, err
}

// CancelOutcome says what Cancel did.
type CancelOutcome int

const (
	// Cancelled: the job was waiting and is now CANCELLED.
	Cancelled CancelOutcome = iota + 1
	// KillRequested: the job holds resources; the framework will kill it.
	KillRequested
)

// Cancel stops a job on a user's request: a waiting job becomes CANCELLED
// at once; a job that already holds resources is marked kill-requested
// (the framework kills its driver, releases its reservations and moves it
// to KILLED). A job that has ended gives ErrTerminal. When ctx carries an
// Actor limited to its own jobs (OwnOnly), a job another token submitted
// gives ErrNotOwner and is not changed.
func (s *Store) Cancel(ctx context.Context, id, reason string) (scheduler.Job, CancelOutcome, error) {
	var out scheduler.Job
	var outcome CancelOutcome
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		j, err := lockJob(ctx, tx, id)
		if err != nil {
			return err
		}
		if a := ActorFrom(ctx); a.OwnOnly {
			var by string
			if err := tx.QueryRowContext(ctx, `SELECT submitted_by FROM jobs WHERE id = $1`, id).Scan(&by); err != nil {
				return fmt.Errorf("read submitter of job %s: %w", id, err)
			}
			if by != a.Name {
				out = j
				return fmt.Errorf("job %s: %w", id, ErrNotOwner)
			}
		}
		now := s.timestamp()
		from := j.State
		switch {
		case from.Terminal():
			out = j
			return fmt.Errorf("job %s is %s: %w", id, from, ErrTerminal)
		case from.Waiting():
			j.State, j.FinishedAt, j.WaitingReason = scheduler.Cancelled, &now, ""
			outcome = Cancelled
			if err := appendEvent(ctx, tx, id, now, &from, scheduler.Cancelled, reason); err != nil {
				return err
			}
		default:
			outcome = KillRequested
			if !j.KillRequested {
				j.KillRequested = true
				if err := appendEvent(ctx, tx, id, now, &from, from, "kill requested: "+reason); err != nil {
					return err
				}
			}
		}
		out = j
		if err := updateJob(ctx, tx, j, now); err != nil {
			return err
		}
		// The leader, wherever it runs, hears of it at commit (notify.go).
		kill := "0"
		if outcome == KillRequested {
			kill = "1"
		}
		_, err = tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, JobsChannel, "c:"+id+":"+kill)
		return err
	})
	return out, outcome, err
}

// Unfinished implements scheduler.Store.
func (s *Store) Unfinished(ctx context.Context) ([]scheduler.Job, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs
		WHERE state NOT IN ('FINISHED','FAILED','KILLED','REJECTED','CANCELLED') ORDER BY submitted_at, seq`)
	if err != nil {
		return nil, fmt.Errorf("read unfinished jobs: %w", err)
	}
	defer rows.Close()
	var jobs []scheduler.Job
	for rows.Next() {
		j, _, err := scanJob(rows)
		if err != nil {
			return nil, fmt.Errorf("read unfinished jobs: %w", err)
		}
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// SetWaiting implements scheduler.Store. It changes nothing for a job
// that is no longer waiting.
func (s *Store) SetWaiting(ctx context.Context, id, reason string, atRisk bool) error {
	if err := s.SetWaitingMany(ctx, []scheduler.WaitingNote{{ID: id, Reason: reason, AtRisk: atRisk}}); err != nil {
		return fmt.Errorf("set waiting reason of job %s: %w", id, err)
	}
	return nil
}

// PlacementRow is one agent of a job's placement.
type PlacementRow struct {
	AgentID   string `json:"agentId"`
	Hostname  string `json:"hostname"`
	Executors int    `json:"executors"`
	Policy    string `json:"policy,omitempty"`
	Outcome   string `json:"outcome,omitempty"`
}

// SavePlacement implements scheduler.Store: it replaces the job's placement.
func (s *Store) SavePlacement(ctx context.Context, id string, plan placement.Plan) error {
	now := s.timestamp()
	return s.inTx(ctx, func(tx *sql.Tx) error { return savePlacement(ctx, tx, id, plan, now) })
}

// savePlacement replaces the job's placement inside tx.
func savePlacement(ctx context.Context, tx *sql.Tx, id string, plan placement.Plan, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM placements WHERE job_id = $1`, id); err != nil {
		return fmt.Errorf("replace placement of job %s: %w", id, err)
	}
	for _, a := range plan.Assignments {
		if a.Executors <= 0 {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO placements (job_id, agent_id, hostname, executors, policy, outcome, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, id, a.AgentID, a.Hostname, a.Executors, plan.Policy, plan.Outcome, now); err != nil {
			return fmt.Errorf("save placement of job %s on agent %s: %w", id, a.AgentID, err)
		}
	}
	return nil
}

// Placement returns a job's placement, ordered by agent id.
func (s *Store) Placement(ctx context.Context, id string) ([]PlacementRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT agent_id, hostname, executors, policy, outcome FROM placements WHERE job_id = $1 ORDER BY agent_id`, id)
	if err != nil {
		return nil, fmt.Errorf("read placement of job %s: %w", id, err)
	}
	defer rows.Close()
	var out []PlacementRow
	for rows.Next() {
		var p PlacementRow
		if err := rows.Scan(&p.AgentID, &p.Hostname, &p.Executors, &p.Policy, &p.Outcome); err != nil {
			return nil, fmt.Errorf("read placement of job %s: %w", id, err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// Placements returns the placements of several jobs at once, by job id.
func (s *Store) Placements(ctx context.Context, ids []string) (map[string][]PlacementRow, error) {
	out := make(map[string][]PlacementRow, len(ids))
	ids = uuidsOnly(ids)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, agent_id, hostname, executors, policy, outcome FROM placements
		WHERE job_id = ANY($1::uuid[]) ORDER BY job_id, agent_id`, pq.Array(ids))
	if err != nil {
		return nil, fmt.Errorf("read placements: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var p PlacementRow
		if err := rows.Scan(&id, &p.AgentID, &p.Hostname, &p.Executors, &p.Policy, &p.Outcome); err != nil {
			return nil, fmt.Errorf("read placements: %w", err)
		}
		out[id] = append(out[id], p)
	}
	return out, rows.Err()
}

// CountByState counts jobs by state (for metrics).
func (s *Store) CountByState(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT state, count(*) FROM jobs GROUP BY state`)
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	defer rows.Close()
	// Every state is there, at 0 when no job is in it: a series that
	// vanishes is not a series at 0 to Prometheus (rate(), alerts).
	out := make(map[string]int, len(scheduler.AllStates))
	for _, st := range scheduler.AllStates {
		out[string(st)] = 0
	}
	for rows.Next() {
		var st string
		var n int
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("count jobs: %w", err)
		}
		out[st] = n
	}
	return out, rows.Err()
}

// DeadlineOutcomes counts the deadline jobs that ended: met (FINISHED by
// the deadline) and missed (FINISHED after it, or FAILED or KILLED after
// it had passed); a job cancelled or rejected did not run, so it neither
// met nor missed.
func (s *Store) DeadlineOutcomes(ctx context.Context) (met, missed int, err error) {
	return s.DeadlineOutcomesBetween(ctx, time.Time{}, time.Time{})
}

// DeadlineOutcomesBetween is DeadlineOutcomes for the jobs that ended in
// [from, to); a zero time leaves that side open.
func (s *Store) DeadlineOutcomesBetween(ctx context.Context, from, to time.Time) (met, missed int, err error) {
	var lo, hi any
	if !from.IsZero() {
		lo = from
	}
	if !to.IsZero() {
		hi = to
	}
	err = s.db.QueryRowContext(ctx, `
		SELECT count(*) FILTER (WHERE state = 'FINISHED' AND finished_at <= deadline_at),
		       count(*) FILTER (WHERE finished_at > deadline_at AND state IN ('FINISHED', 'FAILED', 'KILLED'))
		FROM jobs WHERE deadline_at IS NOT NULL AND finished_at IS NOT NULL
		  AND ($1::timestamptz IS NULL OR finished_at >= $1) AND ($2::timestamptz IS NULL OR finished_at < $2)`, lo, hi).Scan(&met, &missed)
	if err != nil {
		return 0, 0, fmt.Errorf("count deadline outcomes: %w", err)
	}
	return met, missed, nil
}

var _ scheduler.Store = (*Store)(nil)
