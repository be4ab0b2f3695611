package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/internal/jsontext"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Group commit of submissions. With fsync on, a transaction costs a WAL
// flush; a client per submission each waiting for its own flush made the
// API a fraction of what the database can commit. CreateJob hands its job
// to a few committer goroutines, which write whatever submissions are
// pending at that moment in ONE statement (the jobs, as one JSON
// document), so concurrent submissions share a round trip and a flush. A
// submission's answer still waits for its own commit: a 2xx is only ever
// given for a durable job.

// maxCreateBatch bounds the jobs of one group commit.
const maxCreateBatch = 512

// idsPerNotification is how many job ids one NOTIFY of a group commit
// carries ("s:<id>,<id>,..."): a notification per job cost PostgreSQL and
// every listener a message per submission; 150 ids (5.5 kB) stay under
// PostgreSQL's 8,000-byte payload limit.
const idsPerNotification = 150

// DefaultCommitters is how many group commits may be under way at once.
const DefaultCommitters = 2

type createReq struct {
	ctx    context.Context
	j      scheduler.Job
	spec   string
	labels string
	done   chan createResult
	// state is reqWaiting until either the committer answers
	// (reqAnswered) or the caller gives up waiting (reqAbandoned).
	state atomic.Int32
}

const (
	reqWaiting int32 = iota
	reqAnswered
	reqAbandoned
)

// answer hands the caller its result; false when the caller had given up
// waiting (it never sees the result).
func (r *createReq) answer(res createResult) bool {
	r.done <- res // buffered: never blocks
	return r.state.CompareAndSwap(reqWaiting, reqAnswered)
}

type createResult struct {
	job     scheduler.Job
	created bool
	err     error
}

// WithCommitters sets how many group commits of submissions may run at
// once (default DefaultCommitters; 0 writes every submission on its own,
// in the caller's goroutine).
func WithCommitters(n int) Option { return func(s *Store) { s.committers = n } }

// startCommitters runs the committer goroutines until Close.
func (s *Store) startCommitters() {
	s.gc.kick = make(chan struct{}, 1)
	s.gc.stop = make(chan struct{})
	for i := 0; i < s.committers; i++ {
		s.gc.wg.Add(1)
		go func() {
			defer s.gc.wg.Done()
			s.commitLoop()
		}()
	}
}

func (s *Store) commitLoop() {
	for {
		select {
		case <-s.gc.stop:
			return
		case <-s.gc.kick:
		}
		for {
			batch := s.takeCreates()
			if len(batch) == 0 {
				break
			}
			// Others may take what arrives meanwhile.
			if s.pendingCreates() > 0 {
				s.kickCommitters()
			}
			s.commitCreates(batch)
		}
	}
}

func (s *Store) kickCommitters() {
	select {
	case s.gc.kick <- struct{}{}:
	default:
	}
}

func (s *Store) pendingCreates() int {
	s.gc.mu.Lock()
	defer s.gc.mu.Unlock()
	return len(s.gc.pending)
}

func (s *Store) takeCreates() []*createReq {
	s.gc.mu.Lock()
	defer s.gc.mu.Unlock()
	n := min(len(s.gc.pending), maxCreateBatch)
	batch := s.gc.pending[:n:n]
	s.gc.pending = s.gc.pending[n:]
	if len(s.gc.pending) == 0 {
		s.gc.pending = nil
	}
	return batch
}

// CreateJob stores a new job in state SUBMITTED (or straight on to
// REJECTED when rejectReason is not empty, or to QUEUED when j.State is
// QUEUED: the core admitted it at submission), recording its submission
// in the row (Events shows it), and returns once it is committed. j.ID
// and j.SubmittedAt must be set; an empty j.Fingerprint is computed
// (j.Spec.Fingerprint()) from the spec as stored, which spares the caller
// encoding the spec twice.
//
// Idempotency: when a job with the same id exists, CreateJob returns it
// with created=false if its fingerprint matches, and scheduler.ErrConflict
// otherwise. Concurrent calls with one id create exactly one job.
func (s *Store) CreateJob(ctx context.Context, j scheduler.Job, rejectReason string) (scheduler.Job, bool, error) {
	if j.ID == "" {
		return j, false, fmt.Errorf("create job: the id must be set")
	}
	spec, err := json.Marshal(&j.Spec)
	if err != nil {
		return j, false, fmt.Errorf("create job %s: encode spec: %w", j.ID, err)
	}
	if j.Fingerprint == "" {
		j.Fingerprint = scheduler.FingerprintOf(spec)
	}
	labels := []byte("{}")
	if len(j.Labels) > 0 {
		if labels, err = json.Marshal(j.Labels); err != nil {
			return j, false, fmt.Errorf("create job %s: encode labels: %w", j.ID, err)
		}
	}
	j.SubmittedAt = j.SubmittedAt.UTC().Truncate(time.Microsecond)
	switch {
	case rejectReason != "":
		j.State = scheduler.Rejected
		j.WaitingReason = rejectReason
	case j.State == scheduler.Queued:
		// Admitted by the scheduler core at submission (scheduler.Decide).
	default:
		j.State = scheduler.Submitted
	}
	req := &createReq{ctx: ctx, j: j, spec: string(spec), labels: string(labels), done: make(chan createResult, 1)}
	if s.committers <= 0 {
		s.commitCreates([]*createReq{req})
		r := <-req.done
		return r.job, r.created, r.err
	}
	s.gc.mu.Lock()
	if s.gc.closed {
		s.gc.mu.Unlock()
		return j, false, fmt.Errorf("create job %s: %w", j.ID, errClosed)
	}
	s.gc.pending = append(s.gc.pending, req)
	s.gc.mu.Unlock()
	s.kickCommitters()
	select {
	case r := <-req.done:
		return r.job, r.created, r.err
	case <-ctx.Done():
		if !req.state.CompareAndSwap(reqWaiting, reqAbandoned) {
			r := <-req.done // answered meanwhile
			return r.job, r.created, r.err
		}
		// It may still be committed: a retry with the same id finds it
		// (and the committer announces it, see insertJobs).
		return j, false, fmt.Errorf("create job %s: %w", j.ID, context.Cause(ctx))
	}
}

// commitCreates writes a batch of submissions in one statement and answers
// each. Should the batch fail for a reason other than the database being
// unreachable, each submission is tried on its own, so that one bad row
// fails only its own request.
func (s *Store) commitCreates(batch []*createReq) {
	live := batch[:0:0]
	for _, r := range batch {
		if err := r.ctx.Err(); err != nil {
			r.answer(createResult{job: r.j, err: fmt.Errorf("create job %s: %w", r.j.ID, context.Cause(r.ctx))})
			continue
		}
		live = append(live, r)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := s.insertJobs(ctx, live)
	if err == nil {
		return
	}
	if len(live) > 1 && !IsUnavailable(err) {
		s.log.WithError(err).WithField("jobs", len(live)).Warn("group commit of submissions failed; writing them one by one")
		for _, r := range live {
			s.commitCreates([]*createReq{r})
		}
		return
	}
	for _, r := range live {
		r.answer(createResult{job: r.j, err: err})
	}
}

// insertJobs inserts the batch's jobs in one statement, then
// answers every request: created, the identical job that existed, or a
// conflict. It returns an error (and answers nobody) when the statement
// failed.
func (s *Store) insertJobs(ctx context.Context, batch []*createReq) (err error) {
	now := s.timestamp()
	// One row per id: later requests for an id already in the batch are
	// answered from the first one.
	first := make(map[string]*createReq, len(batch))
	var rows []*createReq
	for _, r := range batch {
		if _, dup := first[r.j.ID]; dup {
			continue
		}
		first[r.j.ID] = r
		rows = append(rows, r)
	}
	n := len(rows)
	ids, doc := batchDocument(rows, now)
	announce := s.gc.announces()
	// A job stored quietly whose submitter stopped waiting (its request
	// timed out) reaches no core through the API: announce it afterwards.
	// So is every job of a quiet batch whose statement failed: it may have
	// been committed all the same (say the connection broke as the commit
	// was answered), and its submitter, told it failed, may never retry.
	// Announcing an id that was not stored is harmless.
	var abandoned []string
	defer func() {
		if err != nil {
			abandoned = ids
		}
		if !announce && len(abandoned) > 0 {
			actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := s.Announce(actx, abandoned); err != nil {
				s.log.WithError(err).WithField("jobs", len(abandoned)).Warn("cannot announce jobs stored without an answer to their submitters; the leader reads every waiting job when its notification connection reconnects or a new term begins (restarting the leading instance forces one)")
			}
		}
	}()
	answerCreated := func(r *createReq) {
		if !r.answer(createResult{job: withCreated(r.j, now), created: true}) {
			abandoned = append(abandoned, r.j.ID)
		}
	}
	q, qerr := s.insertJobsQuery(ctx, announce, doc, now)
	if qerr != nil {
		return fmt.Errorf("create %d jobs: %w", n, qerr)
	}
	created := make(map[string]bool, n)
	for q.Next() {
		var id string
		if err := q.Scan(&id); err != nil {
			q.Close()
			return fmt.Errorf("create %d jobs: %w", n, err)
		}
		created[id] = true
	}
	if err := q.Close(); err != nil {
		return fmt.Errorf("create %d jobs: %w", n, err)
	}
	if err := q.Err(); err != nil {
		return fmt.Errorf("create %d jobs: %w", n, err)
	}
	// Ids that existed before: read them to compare bodies.
	var existed []string
	for _, r := range rows {
		if !created[r.j.ID] {
			existed = append(existed, r.j.ID)
		}
	}
	stored := map[string]scheduler.Job{}
	if len(existed) > 0 {
		er, err := s.db.QueryContext(ctx, `SELECT `+jobColumns+` FROM jobs WHERE id = ANY($1::uuid[])`, pq.Array(existed))
		if err == nil {
			for er.Next() {
				j, _, serr := scanJob(er)
				if serr != nil {
					err = serr
					break
				}
				stored[j.ID] = j
			}
			er.Close()
		}
		if err != nil {
			// The created ones are committed: answer them; the others fail.
			for _, r := range batch {
				if created[r.j.ID] && first[r.j.ID] == r {
					answerCreated(r)
				} else {
					r.answer(createResult{job: r.j, err: fmt.Errorf("read existing job %s: %w", r.j.ID, err)})
				}
			}
			return nil
		}
	}
	for _, r := range batch {
		id := r.j.ID
		if created[id] && first[id] == r {
			answerCreated(r)
			continue
		}
		var existing scheduler.Job
		if created[id] {
			existing = withCreated(first[id].j, now)
		} else if ex, ok := stored[id]; ok {
			existing = ex
		} else {
			r.answer(createResult{job: r.j, err: fmt.Errorf("job %s: neither created nor found", id)})
			continue
		}
		if existing.Fingerprint != r.j.Fingerprint {
			r.answer(createResult{job: existing, err: fmt.Errorf("job %s: %w", id, scheduler.ErrConflict)})
			continue
		}
		r.answer(createResult{job: existing})
	}
	return nil
}

// batchDocument is the JSON document insertJobs' statement reads ($1): an
// array of one object per row, each spec and labels copied as they were
// encoded; and the rows' ids, in order.
func batchDocument(rows []*createReq, now time.Time) ([]string, []byte) {
	n := len(rows)
	ids := make([]string, n)
	finished := now.Format(pgTime)
	doc := make([]byte, 0, n*(len(rows[0].spec)+400))
	doc = append(doc, '[')
	for i, r := range rows {
		j := &r.j
		ids[i] = j.ID
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = appendField(doc, '{', "id", j.ID)
		doc = appendField(doc, ',', "name", j.Name)
		doc = append(doc, `,"spec":`...)
		doc = append(doc, r.spec...)
		doc = appendField(doc, ',', "fingerprint", j.Fingerprint)
		doc = appendField(doc, ',', "state", string(j.State))
		doc = appendField(doc, ',', "submitted_at", j.SubmittedAt.UTC().Format(pgTime))
		if j.State == scheduler.Rejected {
			doc = appendField(doc, ',', "finished_at", finished)
		}
		if j.DeadlineAt != nil {
			doc = appendField(doc, ',', "deadline_at", j.DeadlineAt.UTC().Format(pgTime))
		}
		if nb := j.NotBeforeAt(); nb != nil {
			doc = appendField(doc, ',', "not_before", nb.UTC().Format(pgTime))
		}
		doc = appendField(doc, ',', "waiting_reason", j.WaitingReason)
		doc = appendField(doc, ',', "team", j.Team)
		doc = append(doc, `,"labels":`...)
		doc = append(doc, r.labels...)
		doc = append(doc, `,"at_risk":`...)
		doc = strconv.AppendBool(doc, j.AtRisk)
		a := ActorFrom(r.ctx)
		doc = appendField(doc, ',', "actor", a.Name)
		doc = appendField(doc, ',', "client", a.Client)
		doc = append(doc, `,"n":`...)
		doc = strconv.AppendInt(doc, int64(i), 10)
		doc = append(doc, '}')
	}
	doc = append(doc, ']')
	return ids, doc
}

// insertJobsCTE is the body of insertJobs' statement: the batch's jobs,
// from one JSON document (an array of objects, $1; $2 is the time of the
// commit), which costs the client one copy of each spec and PostgreSQL one
// parse, where an array parameter per column cost both an escaped copy of
// every spec. Their submission (the state each was stored in, who sent it
// and from where) is recorded in the row itself, not as job_events rows
// (migration 0009; Events shows it).
const insertJobsCTE = `WITH input AS (
			SELECT * FROM jsonb_to_recordset($1::jsonb)
				AS i(id uuid, name text, spec jsonb, fingerprint text, state text, submitted_at timestamptz,
					finished_at timestamptz, deadline_at timestamptz, waiting_reason text, labels jsonb, at_risk bool,
					actor text, client text, n int, not_before timestamptz, team text)
		), ins AS (
			INSERT INTO jobs (id, name, spec, fingerprint, state, submitted_at, finished_at, deadline_at, waiting_reason, labels, at_risk, updated_at,
				submitted_by, submit_state, submitted_client, not_before, team)
			SELECT id, name, spec, fingerprint, state, submitted_at, finished_at, deadline_at, waiting_reason, labels, at_risk, $2,
				actor, state, client, not_before, team
			FROM input ORDER BY n
			ON CONFLICT (id) DO NOTHING
			RETURNING id
		)`

// pgTime is how timestamps travel to PostgreSQL as text (microseconds,
// the precision it keeps).
const pgTime = "2006-01-02T15:04:05.999999Z07:00"

// appendField appends sep, then "key":value with value as a JSON string.
func appendField(doc []byte, sep byte, key, value string) []byte {
	doc = append(doc, sep, '"')
	doc = append(doc, key...)
	doc = append(doc, '"', ':')
	return jsontext.AppendString(doc, value)
}

// insertJobsSQL stores a batch and announces it on JobsChannel in the same
// transaction, so that the leader hears of every job a follower stores.
// insertJobsQuietSQL stores it without announcing: NOTIFY takes a lock
// that PostgreSQL holds until the commit is flushed, so announced group
// commits were flushed one after the other, never together, and that
// serialisation capped submissions far below what the server can commit.
// The leader's own submissions need no notice (its core hears of them
// directly; see SetDirectIntake).
var (
	insertJobsSQL = insertJobsCTE + `, note AS (
			SELECT pg_notify('` + JobsChannel + `', 's:' || string_agg(g.id::text, ',')) FROM (
				SELECT id, (row_number() OVER () - 1) / ` + fmt.Sprint(idsPerNotification) + ` AS k FROM ins) g
			GROUP BY g.k
		)
		SELECT ins.id FROM ins CROSS JOIN (SELECT count(*) FROM note) AS n`
	insertJobsQuietSQL = insertJobsCTE + `
		SELECT ins.id FROM ins`
)

// SetDirectIntake tells the store when the scheduler of this process hears
// of the jobs stored through it without a database notification: direct
// returns true while this instance leads and its core is handed each job
// the API stores. Group commits made then do not NOTIFY. The caller must
// announce (Announce) a job stored that way if, once it is committed, its
// core can no longer take it. Until it is set, every group commit
// announces its jobs.
func (s *Store) SetDirectIntake(direct func() bool) { s.gc.direct.Store(&direct) }

// announces reports whether the next group commit must announce its jobs.
func (g *groupCommit) announces() bool {
	d := g.direct.Load()
	return d == nil || !(*d)()
}

// Announce notifies JobsChannel of stored jobs (as a group commit does),
// in its own transaction.
func (s *Store) Announce(ctx context.Context, ids []string) error {
	for len(ids) > 0 {
		n := min(len(ids), idsPerNotification)
		if _, err := s.db.ExecContext(ctx, `SELECT pg_notify($1, $2)`, JobsChannel, "s:"+strings.Join(ids[:n], ",")); err != nil {
			return fmt.Errorf("announce jobs (%d not announced): %w", len(ids), err)
		}
		ids = ids[n:]
	}
	return nil
}

// insertJobsQuery runs the insert (announcing or quiet) as a statement
// prepared once per connection. Unprepared, PostgreSQL parsed and planned
// it for every group commit, which cost it about as much as inserting a
// dozen jobs.
func (s *Store) insertJobsQuery(ctx context.Context, announce bool, args ...any) (*sql.Rows, error) {
	q, k := insertJobsSQL, 0
	if !announce {
		q, k = insertJobsQuietSQL, 1
	}
	stmt := s.gc.insertStmt(ctx, s.db, k, q)
	if stmt == nil {
		return s.db.QueryContext(ctx, q, args...)
	}
	return stmt.QueryContext(ctx, args...)
}

// insertStmt is the prepared statement q, kept in slot k (nil when it
// cannot be prepared now: the caller runs the statement unprepared, and
// the next call tries again).
func (g *groupCommit) insertStmt(ctx context.Context, db *sql.DB, k int, q string) *sql.Stmt {
	g.stmtMu.Lock()
	defer g.stmtMu.Unlock()
	if g.stmt[k] == nil {
		if st, err := db.PrepareContext(ctx, q); err == nil {
			g.stmt[k] = st
		}
	}
	return g.stmt[k]
}

// withCreated is the job as insertJobs stored it.
func withCreated(j scheduler.Job, now time.Time) scheduler.Job {
	if j.State == scheduler.Rejected {
		t := now
		j.FinishedAt = &t
	}
	return j
}
