package integration

import (
	"context"
	"database/sql"
	"io"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// How a run's times survive a restart of sparkpack (docs/learning.md, "How
// a run's times survive a restart"), on the emulator with sparkpack
// SIGKILLed: the run history, which the learned run-time model learns
// from, and the job view keep the times sparkpack saw before the crash.

// launchRow is what the test reads of a job's current driver launch. The
// launch's time is read as to_jsonb(...) so that the query also runs
// against a schema without launched_at (the test run on the code before
// migration 0021, to see it fail).
type launchRow struct {
	state      string
	updatedAt  time.Time
	runningAt  sql.NullTime
	launchedAt sql.NullString
}

func readLaunch(ctx context.Context, db *sql.DB, id string) (launchRow, error) {
	var r launchRow
	err := db.QueryRowContext(ctx, `SELECT d.state, d.updated_at, l.running_at, to_jsonb(l) ->> 'launched_at'
		FROM drivers d JOIN driver_launches l ON l.job_id = d.job_id AND l.attempt = d.attempt WHERE d.job_id = $1`, id).
		Scan(&r.state, &r.updatedAt, &r.runningAt, &r.launchedAt)
	return r, err
}

// waitLaunch polls the job's driver launch until ok says so.
func waitLaunch(t *testing.T, db *sql.DB, id string, timeout time.Duration, what string, ok func(launchRow) bool) launchRow {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last launchRow
	var lastErr error
	for time.Now().Before(deadline) {
		r, err := readLaunch(context.Background(), db, id)
		if err == nil && ok(r) {
			return r
		}
		last, lastErr = r, err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s: %s not within %s (driver launch %+v, %v)", id, what, timeout, last, lastErr)
	return last
}

func openStores(t *testing.T, dbURL string) (*store.Store, *sql.DB) {
	t.Helper()
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), dbURL, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	db, err := sql.Open("postgres", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return st, db
}

// onlyRun is the job's one run in the run history.
func onlyRun(t *testing.T, st *store.Store, id string) scheduler.RunRecord {
	t.Helper()
	runs, err := st.JobRuns(context.Background(), id)
	if err != nil || len(runs) != 1 {
		t.Fatalf("run history of job %s: %+v, %v; want one run", id, runs, err)
	}
	return runs[0]
}

func near(a, b time.Time) bool { return a.Sub(b).Abs() <= time.Millisecond }

// TestE2ERunningStartSurvivesARestart: the driver's TASK_RUNNING is stored
// (driver_launches.running_at) but the job's RUNNING transition is held
// back (a test trigger in PostgreSQL refuses it, as a database that fails
// the report would), sparkpack is SIGKILLed, and restarted 5 s later. The
// restarted process reports RUNNING with the stored start: the job's
// startedAt and its run-history row start at the first TASK_RUNNING, before
// the crash, and the run time counts the downtime. Before, the run started
// at the restarted process's report: about 8 s of the run were lost.
func TestE2ERunningStartSurvivesARestart(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2)})
	dbURL := e2eDB(t)
	sp := startSparkpack(t, emu.URL, dbURL)
	st, db := openStores(t, dbURL)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE FUNCTION test_hold_running() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.state = 'RUNNING' AND OLD.state <> 'RUNNING' THEN
				RAISE EXCEPTION 'test: the RUNNING transition is held back';
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER test_hold_running BEFORE UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION test_hold_running()`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// 600 simulated seconds: 30 s of wall time on the emulator.
	id := submit(t, sp.API, sparkJob("running-held", 1, 1, 1024, 600))
	seen := waitLaunch(t, db, id, 2*time.Minute, "its TASK_RUNNING stored", func(r launchRow) bool { return r.runningAt.Valid })
	runningAt := seen.runningAt.Time.UTC()
	time.Sleep(2 * time.Second) // the report is refused (and tried again) meanwhile
	if j, err := st.GetJob(ctx, id); err != nil || j.State != scheduler.Launching {
		t.Fatalf("job before the crash: %s, %v; want LAUNCHING (the trigger holds RUNNING back)", j.State, err)
	}
	sp.kill()
	killedAt := time.Now()
	if _, err := db.ExecContext(ctx, `DROP TRIGGER test_hold_running ON jobs`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Second) // the downtime
	sp = startSparkpack(t, emu.URL, dbURL)
	restartedAt := time.Now()
	v := waitState(t, sp.API, id, 3*time.Minute, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" {
		t.Fatalf("job ended %s:%s", v.State, timeline(v))
	}
	j, err := st.GetJob(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	r := onlyRun(t, st, id)
	t.Logf("first TASK_RUNNING %s, SIGKILL %s, restarted %s; job started %s, run %s to %s (%.2f s)",
		runningAt.Format(time.RFC3339Nano), killedAt.UTC().Format(time.RFC3339Nano), restartedAt.UTC().Format(time.RFC3339Nano),
		j.StartedAt.UTC().Format(time.RFC3339Nano), r.StartedAt.Format(time.RFC3339Nano), r.EndedAt.Format(time.RFC3339Nano), r.Seconds)
	if j.StartedAt == nil || !near(*j.StartedAt, runningAt) || j.LastStartedAt == nil || !near(*j.LastStartedAt, runningAt) ||
		v.StartedAt == nil || !near(*v.StartedAt, runningAt) {
		t.Fatalf("job started %v (last %v, view %v); want the first TASK_RUNNING's %v, before the SIGKILL at %v",
			j.StartedAt, j.LastStartedAt, v.StartedAt, runningAt, killedAt)
	}
	if r.Outcome != scheduler.RunFinished || r.RunTimeUnknown || !near(r.StartedAt, runningAt) ||
		r.Seconds < r.EndedAt.Sub(runningAt).Seconds()-0.01 || r.Seconds > r.EndedAt.Sub(runningAt).Seconds()+0.01 {
		t.Fatalf("recorded run %+v; want it from the first TASK_RUNNING %v to its end, the downtime counted", r, runningAt)
	}
}

// TestE2ELaunchTimeSurvivesTwoRestarts: the driver's launch is sent
// (LAUNCH_SENT stored), sparkpack is SIGKILLed and restarted, Mesos answers
// its reconciliation with TASK_STAGING (the emulator's driver starts only
// after 45 s), which is stored over the LAUNCH_SENT state, and sparkpack is
// SIGKILLed and restarted again. The driver is then never seen running (the
// emulator shows only its TASK_FINISHED): its run is recorded with its
// launch as its start (driver_launches.launched_at, migration 0021), the run
// time unknown, and the job view shows it launched, not started at its end.
// Before, the second restart had lost the launch's time ("start unknown"):
// the run started at its end.
func TestE2ELaunchTimeSurvivesTwoRestarts(t *testing.T) {
	const startDelay = 45 * time.Second
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2), TaskStartDelay: startDelay})
	emu.SetUpdateFaults(mesossim.UpdateFaults{TerminalOnly: true})
	dbURL := e2eDB(t)
	sp := startSparkpack(t, emu.URL, dbURL)
	st, db := openStores(t, dbURL)
	ctx := context.Background()

	id := submit(t, sp.API, sparkJob("launch-then-staging", 1, 1, 1024, 20))
	sent := waitLaunch(t, db, id, 2*time.Minute, "its LAUNCH_SENT stored", func(r launchRow) bool { return r.state == "LAUNCH_SENT" })
	launchSent := time.Now()
	sp.kill()
	sp = startSparkpack(t, emu.URL, dbURL)
	staged := waitLaunch(t, db, id, time.Minute, "the reconciliation's TASK_STAGING stored", func(r launchRow) bool { return r.state == "TASK_STAGING" })
	sp.kill()
	sp = startSparkpack(t, emu.URL, dbURL)
	if since := time.Since(launchSent); since > startDelay-5*time.Second {
		t.Fatalf("the second restart came %s after the launch, too close to the driver's start (%s): the test proves nothing; raise the start delay", since, startDelay)
	}
	v := waitState(t, sp.API, id, 3*time.Minute, "FINISHED", "FAILED", "KILLED")
	if v.State != "FINISHED" {
		t.Fatalf("job ended %s:%s", v.State, timeline(v))
	}
	for _, e := range v.Events {
		if e.To == "RUNNING" {
			t.Fatalf("the job was reported RUNNING (%q): the fault did not hide TASK_RUNNING", e.Reason)
		}
	}
	r := onlyRun(t, st, id)
	t.Logf("LAUNCH_SENT stored %s, TASK_STAGING stored %s; run %s to %s, run time unknown %v",
		sent.updatedAt.UTC().Format(time.RFC3339Nano), staged.updatedAt.UTC().Format(time.RFC3339Nano),
		r.StartedAt.Format(time.RFC3339Nano), r.EndedAt.Format(time.RFC3339Nano), r.RunTimeUnknown)
	// The launch's time is when its LAUNCH_SENT record was stored: the
	// record's own time, within the moment between the two clocks reads.
	if r.Outcome != scheduler.RunFinished || !r.RunTimeUnknown || r.StartedAt.Sub(sent.updatedAt).Abs() > 500*time.Millisecond ||
		r.EndedAt.Sub(r.StartedAt) < 30*time.Second {
		t.Fatalf("recorded run %+v; want it started at its launch (LAUNCH_SENT stored at %v), the run time unknown", r, sent.updatedAt)
	}
	if v.StartedAt == nil || v.FinishedAt == nil || !near(*v.StartedAt, r.StartedAt) || v.FinishedAt.Sub(*v.StartedAt) < 30*time.Second {
		t.Fatalf("job view: started %v, finished %v; want started at its launch %v, not at its end", v.StartedAt, v.FinishedAt, r.StartedAt)
	}
	end, err := readLaunch(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	if !end.launchedAt.Valid {
		t.Fatal("driver_launches.launched_at is NULL after the launch")
	}
	la, err := time.Parse(time.RFC3339Nano, end.launchedAt.String)
	if err != nil {
		// to_jsonb writes 2026-11-27T12:00:00.123456+00:00
		la, err = time.Parse("2006-01-02T15:04:05.999999-07:00", end.launchedAt.String)
	}
	if err != nil || !near(la, r.StartedAt) {
		t.Fatalf("driver_launches.launched_at %q (%v); want the run's start %v", end.launchedAt.String, err, r.StartedAt)
	}
}
