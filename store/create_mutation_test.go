package store

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/sparkpack/sparkpack/internal/pgtest"
	"github.com/sparkpack/sparkpack/scheduler"
)

// Tests written for the mutants of create.go that mutation testing found
// alive (scripts/mutation.sh store; docs/testing.md). Expected values are
// worked out by hand from CreateJob's contract.

// committerGoroutines counts the goroutines running (or about to run) a
// store's commit loop: a goroutine created but not yet started is listed
// with its start function.
func committerGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	count := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "startCommitters.func1") {
			count++
		}
	}
	return count
}

// TestWithCommittersRunsThatMany: WithCommitters(n) runs exactly n group
// committers (the tests of this package run one at a time, and a closed
// store's committers have returned).
func TestWithCommittersRunsThatMany(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	for _, n := range []int{1, 3} {
		before := committerGoroutines()
		s, err := Open(ctx, url, WithLogger(quietLog()), WithCommitters(n))
		if err != nil {
			t.Fatal(err)
		}
		got := committerGoroutines() - before
		s.Close()
		if got != n {
			t.Fatalf("WithCommitters(%d) started %d committers", n, got)
		}
	}
}

// TestCreateJobFingerprint: an empty fingerprint is computed from the
// spec as stored (the same as Spec.Fingerprint); a given one is kept as
// given (the caller computed it).
func TestCreateJobFingerprint(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j := newJob(t, nil)
	want := j.Spec.Fingerprint()
	j.Fingerprint = ""
	got, created, err := s.CreateJob(ctx, j, "")
	if err != nil || !created || got.Fingerprint != want {
		t.Fatalf("empty fingerprint: created %v, %q, %v; want %q", created, got.Fingerprint, err, want)
	}
	if stored, err := s.GetJob(ctx, j.ID); err != nil || stored.Fingerprint != want {
		t.Fatalf("stored fingerprint %q, %v; want %q", stored.Fingerprint, err, want)
	}
	k := newJob(t, nil)
	k.Fingerprint = "given-by-the-caller"
	got, _, err = s.CreateJob(ctx, k, "")
	if err != nil || got.Fingerprint != "given-by-the-caller" {
		t.Fatalf("given fingerprint: %q, %v", got.Fingerprint, err)
	}
	if stored, err := s.GetJob(ctx, k.ID); err != nil || stored.Fingerprint != "given-by-the-caller" {
		t.Fatalf("stored fingerprint %q, %v; want the given one", stored.Fingerprint, err)
	}
}

// TestCreateJobWithoutLabels: a job without labels is stored with none
// (an empty object, not JSON null) and reads back without any.
func TestCreateJobWithoutLabels(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j := newJob(t, func(sp *scheduler.Spec) { sp.Labels = nil })
	if _, _, err := s.CreateJob(ctx, j, ""); err != nil {
		t.Fatal(err)
	}
	var labels string
	if err := s.db.QueryRowContext(ctx, `SELECT labels::text FROM jobs WHERE id = $1`, j.ID).Scan(&labels); err != nil {
		t.Fatal(err)
	}
	if labels != "{}" {
		t.Fatalf("stored labels %s; want {}", labels)
	}
	got, err := s.GetJob(ctx, j.ID)
	if err != nil || len(got.Labels) != 0 {
		t.Fatalf("read back labels %v, %v; want none", got.Labels, err)
	}
}

// TestCreateJobQueuedAtSubmission: a job the core admitted at submission
// (State QUEUED) is stored QUEUED; any other state given is stored as
// SUBMITTED.
func TestCreateJobQueuedAtSubmission(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	for _, c := range []struct {
		given, want scheduler.State
	}{{scheduler.Queued, scheduler.Queued}, {scheduler.Running, scheduler.Submitted}, {"", scheduler.Submitted}} {
		j := newJob(t, nil)
		j.State = c.given
		got, _, err := s.CreateJob(ctx, j, "")
		if err != nil || got.State != c.want || got.FinishedAt != nil {
			t.Fatalf("given %q: %s (finished %v), %v; want %s, not finished", c.given, got.State, got.FinishedAt, err, c.want)
		}
		if stored, err := s.GetJob(ctx, j.ID); err != nil || stored.State != c.want || stored.FinishedAt != nil {
			t.Fatalf("given %q: stored %s (finished %v), %v", c.given, stored.State, stored.FinishedAt, err)
		}
	}
}

// TestCreateJobPreparesItsStatementOnce: the insert is prepared at the
// first group commit and kept (the announcing one in slot 0; the quiet
// one, in slot 1, only once a quiet commit ran).
func TestCreateJobPreparesItsStatementOnce(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	if _, _, err := s.CreateJob(ctx, newJob(t, nil), ""); err != nil {
		t.Fatal(err)
	}
	s.gc.stmtMu.Lock()
	announcing, quiet := s.gc.stmt[0], s.gc.stmt[1]
	s.gc.stmtMu.Unlock()
	if announcing == nil || quiet != nil {
		t.Fatalf("after an announced commit: announcing %v, quiet %v; want only the announcing one prepared", announcing, quiet)
	}
	if _, _, err := s.CreateJob(ctx, newJob(t, nil), ""); err != nil {
		t.Fatal(err)
	}
	s.gc.stmtMu.Lock()
	again := s.gc.stmt[0]
	s.gc.stmtMu.Unlock()
	if again != announcing {
		t.Fatal("the announcing insert was prepared again")
	}
}

// TestCreateJobDatabaseGone: when the database refuses connections the
// insert cannot be prepared; CreateJob answers an error (it does not
// crash), through the committers and without them.
func TestCreateJobDatabaseGone(t *testing.T) {
	ctx := context.Background()
	for _, committers := range []int{DefaultCommitters, 0} {
		url := pgtest.URL(t)
		s, err := Open(ctx, url, WithLogger(quietLog()), WithCommitters(committers))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// Another database of the same server, to alter this one from.
		admin, err := sql.Open("postgres", pgtest.URL(t))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		name := dbName(url)
		if _, err := admin.ExecContext(ctx, `ALTER DATABASE `+name+` ALLOW_CONNECTIONS false`); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.ExecContext(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, name); err != nil {
			t.Fatal(err)
		}
		// Bounded: a submission retried without end fails the test, not hangs it.
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, _, err = s.CreateJob(cctx, newJob(t, nil), "")
		cancel()
		if err == nil {
			t.Fatalf("committers %d: CreateJob succeeded on a database refusing connections", committers)
		}
		if _, err := admin.ExecContext(ctx, `ALTER DATABASE `+name+` ALLOW_CONNECTIONS true`); err != nil {
			t.Fatal(err)
		}
	}
}

// dbName is the database a pgtest URL names.
func dbName(url string) string {
	rest := url[strings.LastIndex(url, "/")+1:]
	name, _, _ := strings.Cut(rest, "?")
	return name
}

// holdCommits locks the jobs table against inserts until the returned
// transaction ends: a group commit started meanwhile waits for it.
func holdCommits(t *testing.T, s *Store) *sql.Tx {
	t.Helper()
	hold, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hold.Rollback() })
	if _, err := hold.Exec(`LOCK TABLE jobs IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	return hold
}

// awaitHeldCommit returns once a statement waits for holdCommits' lock.
func awaitHeldCommit(t *testing.T, s *Store) {
	t.Helper()
	for waiting := 0; waiting == 0; time.Sleep(10 * time.Millisecond) {
		if err := s.db.QueryRow(`SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
			WHERE c.relname = 'jobs' AND NOT l.granted`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
}

// awaitPending returns once n submissions wait for a committer.
func awaitPending(s *Store, n int) {
	for s.pendingCreates() < n {
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCreateJobBurstOverOneBatch: more submissions pending than one group
// commit takes (maxCreateBatch) are all committed, in batches: the single
// committer is held (the jobs table locked) while 600 more submissions
// queue, then let go; every one is answered "created".
func TestCreateJobBurstOverOneBatch(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), WithLogger(quietLog()), WithCommitters(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hold := holdCommits(t, s)
	// A generous bound: a lost submission fails the test instead of hanging it.
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	const burst = 600 // > maxCreateBatch (512)
	errs := make(chan error, burst+1)
	submit := func() {
		j := newJob(t, nil)
		_, created, err := s.CreateJob(cctx, j, "")
		if err == nil && !created {
			err = fmt.Errorf("job %s not created", j.ID)
		}
		errs <- err
	}
	go submit()
	awaitHeldCommit(t, s) // the committer is inside its insert
	for range burst {
		go submit()
	}
	awaitPending(s, burst)
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	for range burst + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM jobs`).Scan(&n); err != nil || n != burst+1 {
		t.Fatalf("%d jobs stored, %v; want %d", n, err, burst+1)
	}
}

// TestCreateJobOneBadRowInABatch: a group commit whose statement fails
// because of one row (a NUL character, which jsonb refuses) is written one
// by one: only that submission fails, the others of its batch are created.
func TestCreateJobOneBadRowInABatch(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, pgtest.URL(t), WithLogger(quietLog()), WithCommitters(1))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	hold := holdCommits(t, s)
	cctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	type answer struct {
		bad     bool
		created bool
		err     error
	}
	answers := make(chan answer, 6)
	submit := func(bad bool) {
		j := newJob(t, nil)
		if bad {
			j.Name = "nul\x00"
		}
		_, created, err := s.CreateJob(cctx, j, "")
		answers <- answer{bad, created, err}
	}
	go submit(false)
	awaitHeldCommit(t, s)
	for i := range 5 { // one batch: 4 good, 1 bad
		go submit(i == 2)
	}
	awaitPending(s, 5)
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	for range 6 {
		a := <-answers
		if a.bad && (a.err == nil || a.created) {
			t.Errorf("the bad row: created %v, %v; want an error", a.created, a.err)
		}
		if !a.bad && (a.err != nil || !a.created) {
			t.Errorf("a good row of the batch: created %v, %v; want created", a.created, a.err)
		}
	}
}

// TestAnnounceInNotifications: Announce sends the ids 150 to a
// notification ("s:<id>,..."), returns once they are sent (151 ids: two
// notifications, the second of one id) and sends nothing for no ids.
func TestAnnounceInNotifications(t *testing.T) {
	url := pgtest.URL(t)
	s, err := Open(context.Background(), url, WithLogger(quietLog()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := pq.NewListener(url, 100*time.Millisecond, time.Second, nil)
	defer l.Close()
	if err := l.Listen(JobsChannel); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 151)
	for i := range ids {
		ids[i] = fmt.Sprintf("id-%03d", i)
	}
	// Bounded: an Announce that never returns fails the test.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Announce(ctx, nil); err != nil {
		t.Fatalf("Announce(nothing): %v", err)
	}
	if err := s.Announce(ctx, ids); err != nil {
		t.Fatalf("Announce(151 ids): %v", err)
	}
	if _, err := s.db.Exec(`SELECT pg_notify($1, 'end')`, JobsChannel); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		select {
		case n := <-l.Notify:
			if n == nil {
				t.Fatal("the test's listener lost its connection")
			}
			if n.Extra == "end" {
				want := []string{"s:" + strings.Join(ids[:150], ","), "s:" + ids[150]}
				if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
					t.Fatalf("notifications %q; want %q", got, want)
				}
				return
			}
			got = append(got, n.Extra)
		case <-ctx.Done():
			t.Fatalf("no end of the notifications within a minute (heard %d)", len(got))
		}
	}
}
