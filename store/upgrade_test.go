package store

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/internal/pgtest"
)

// TestMigrationsUpgradeWithData: a database at schema 0011 (before teams,
// run history, notBefore, cost attribution and driver launches) holding
// jobs of every kind, drivers, a cost meter total and events takes the
// later migrations at start, and what it held reads back (its drivers
// without ran or running_at, migration 0020, or launched_at, 0021).
func TestMigrationsUpgradeWithData(t *testing.T) {
	const before = 11
	url := pgtest.URL(t)
	ctx := context.Background()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE schema_migrations (
		version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.version <= before {
			if err := applyOne(ctx, conn, m); err != nil {
				t.Fatal(err)
			}
		}
	}
	conn.Close()
	spec := func(id string, extra string) string {
		return `{"id":"` + id + `","name":"old","app":{"appResource":"local:///jobs/etl.jar","mainClass":"com.example.ETL"},` +
			`"executors":4,"executorCores":2,"executorMemoryMB":4096` + extra + `,"labels":{"team":"analytics"}}`
	}
	now := time.Now().UTC().Truncate(time.Second)
	const (
		done    = "11111111-1111-1111-1111-111111111111"
		running = "22222222-2222-2222-2222-222222222222"
		queued  = "33333333-3333-3333-3333-333333333333"
	)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO jobs (id, name, spec, fingerprint, state, submitted_at, started_at, finished_at, attempt, labels, updated_at, submit_state)
		  VALUES ($1, 'old', $2, 'f1', 'FINISHED', $3, $3, $4, 1, '{"team":"analytics"}', $4, 'QUEUED')`,
			[]any{done, spec(done, ""), now.Add(-3 * time.Hour), now.Add(-2 * time.Hour)}},
		{`INSERT INTO jobs (id, name, spec, fingerprint, state, submitted_at, started_at, deadline_at, attempt, labels, updated_at)
		  VALUES ($1, 'old', $2, 'f2', 'RUNNING', $3, $3, $4, 2, '{"team":"analytics"}', $3)`,
			[]any{running, spec(running, `,"deadline":14400`), now.Add(-time.Hour), now.Add(3 * time.Hour)}},
		{`INSERT INTO jobs (id, name, spec, fingerprint, state, submitted_at, attempt, labels, updated_at, submit_state)
		  VALUES ($1, 'old', $2, 'f3', 'QUEUED', $3, 0, '{"team":"analytics"}', $3, 'QUEUED')`,
			[]any{queued, spec(queued, ""), now.Add(-time.Minute)}},
		{`INSERT INTO job_events (job_id, at, from_state, to_state) VALUES ($1, $2, 'QUEUED', 'RUNNING')`, []any{running, now.Add(-time.Hour)}},
		{`INSERT INTO drivers (job_id, attempt, task_id, agent_id, state, ended, created_at, updated_at)
		  VALUES ($1, 1, 'task-done-1', 'agent-a', 'TASK_FINISHED', true, $2, $2)`, []any{done, now.Add(-2 * time.Hour)}},
		{`INSERT INTO drivers (job_id, attempt, task_id, agent_id, state, created_at, updated_at)
		  VALUES ($1, 2, 'task-run-2', 'agent-b', 'TASK_RUNNING', $2, $2)`, []any{running, now.Add(-time.Hour)}},
		{`INSERT INTO placements (job_id, agent_id, hostname, executors, created_at) VALUES ($1, 'agent-b', 'b', 4, $2)`, []any{running, now}},
		{`INSERT INTO cost_meter (id, total_usd, updated_at) VALUES (1, 12.5, $1)`, []any{now.Add(-30 * time.Second)}},
	} {
		if _, err := db.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}

	s, err := Open(ctx, url, WithLogger(quietLog()))
	if err != nil {
		t.Fatalf("open (migrating %d to %d) a database with data: %v", before, LatestVersion(), err)
	}
	defer s.Close()
	if v, err := s.SchemaVersion(ctx); err != nil || v != LatestVersion() {
		t.Fatalf("schema version %d, %v; want %d", v, err, LatestVersion())
	}
	for _, id := range []string{done, running, queued} {
		j, err := s.GetJob(ctx, id)
		if err != nil || j.ID != id || j.Executors != 4 {
			t.Fatalf("job %s after the upgrade: %+v, %v", id, j, err)
		}
		if j.NotBeforeAt() != nil {
			t.Errorf("job %s: notBefore %v from nowhere", id, j.NotBeforeAt())
		}
		// Its team label makes it the team's (migration 0017).
		if j.Team != "analytics" {
			t.Errorf("job %s labelled team=analytics belongs to team %q after the upgrade", id, j.Team)
		}
	}
	if d, err := s.DriverLaunch(ctx, running, 2); err != nil || d.TaskID != "task-run-2" || d.AgentID != "agent-b" {
		t.Errorf("launch 2 of the running job: %+v, %v", d, err)
	}
	// Stored before migrations 0020 and 0021: nothing proves a run, no
	// running or launch time (lifecycle.New times them from updated_at, as
	// before).
	if d, err := s.Driver(ctx, running); err != nil || d.Attempt != 2 || d.Ran || !d.RunningAt.IsZero() || !d.LaunchedAt.IsZero() ||
		!d.UpdatedAt.Equal(now.Add(-time.Hour)) {
		t.Errorf("driver of the running job: %+v, %v; want attempt 2, not ran, no running or launch time, updated an hour ago", d, err)
	}
	if _, _, err := s.ListJobs(ctx, ListOptions{Limit: 10}); err != nil {
		t.Errorf("list after the upgrade: %v", err)
	}
	rows, err := s.Usage(ctx, UsageQuery{By: UsageByTeam, From: now.Add(-24 * time.Hour).Truncate(time.Minute), To: now.Add(time.Minute).Truncate(time.Minute)})
	if err != nil {
		t.Fatalf("usage after the upgrade: %v", err)
	}
	total := 0.0
	for _, r := range rows {
		total += r.CostUSD
	}
	if total < 12.5-1e-9 || total > 12.5+1e-9 {
		t.Errorf("usage after the upgrade adds up to %v USD; the meter counted 12.5 before attribution existed", total)
	}
	if n, err := s.PruneEnded(ctx, now, 10); err != nil || n != 1 {
		t.Errorf("prune after the upgrade: %d, %v; want the finished job", n, err)
	}
}
