package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
)

// TestRunHistory: a run recorded with a job's end (Job.EndedRun) is
// written in the end's transaction and read back whole; a failed end
// writes no run; the history is append-only (UPDATE and DELETE fail) and
// PruneEnded deletes the runs that ended before its cut.
func TestRunHistory(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	run := func(id string, mod func(x *scheduler.Job)) error {
		t.Helper()
		from := scheduler.Submitted
		for _, st := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
			if _, err := s.Transition(ctx, id, from, st, "test", nil); err != nil {
				t.Fatalf("%s -> %s: %v", from, st, err)
			}
			from = st
		}
		_, err := s.Transition(ctx, id, scheduler.Running, scheduler.Finished, "done", mod)
		return err
	}
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	want := scheduler.RunRecord{JobID: j.ID, Attempt: 1, Signature: "local:///a.jar com.example.A", AppType: "sort", EstimateKey: "local:///a.jar com.example.A",
		InputSizeGB: 12.5, Iterations: 3, Executors: 6, ExecutorCores: 2, ExecutorMemoryMB: 2048,
		RunShape:  scheduler.RunShape{Agents: 2, MaxPerAgent: 4, PerAgent: []int{4, 2}, CrossShare: 0.444, BusiestLoad: 0.75, InstanceTypes: []string{"m5.xlarge", "m5.large"}},
		StartedAt: now.Add(-90 * time.Second), EndedAt: now, Seconds: 90, Outcome: scheduler.RunFinished, EstimateSeconds: 60,
		PredictedP50: 80, PredictedP90: 100, PredictionLevel: "signature"}
	if err := run(j.ID, func(x *scheduler.Job) { r := want; x.EndedRun = &r }); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunHistory(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("history: %d runs, want 1", len(got))
	}
	g := got[0]
	if g.JobID != want.JobID || g.Signature != want.Signature || g.AppType != "sort" || g.InputSizeGB != 12.5 || g.Iterations != 3 ||
		g.Executors != 6 || fmt.Sprint(g.PerAgent) != "[4 2]" || g.ExecutorCores != 2 || g.ExecutorMemoryMB != 2048 || g.Agents != 2 || g.MaxPerAgent != 4 ||
		g.CrossShare != 0.444 || g.BusiestLoad != 0.75 || strings.Join(g.InstanceTypes, ",") != "m5.xlarge,m5.large" ||
		!g.StartedAt.Equal(want.StartedAt) || !g.EndedAt.Equal(want.EndedAt) || g.Seconds != 90 || g.Outcome != "FINISHED" ||
		g.EstimateSeconds != 60 || g.PredictedP50 != 80 || g.PredictedP90 != 100 || g.PredictionLevel != "signature" {
		t.Fatalf("read back %+v\nwant %+v", g, want)
	}

	// A run whose end fails (a stale state) is not recorded: one transaction.
	bad := want
	if _, err := s.Transition(ctx, j.ID, scheduler.Running, scheduler.Failed, "late", func(x *scheduler.Job) { x.EndedRun = &bad }); err == nil {
		t.Fatal("a stale end succeeded")
	}
	// A run the history refuses (an unknown outcome) undoes the job's end.
	k, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	refused := want
	refused.JobID, refused.Outcome = k.ID, "LOST"
	if err := run(k.ID, func(x *scheduler.Job) { x.EndedRun = &refused }); err == nil {
		t.Fatal("a run with outcome LOST was stored")
	}
	if kk, err := s.GetJob(ctx, k.ID); err != nil || kk.State != scheduler.Running {
		t.Fatalf("job after a refused run: %v, %v; want still RUNNING", kk.State, err)
	}
	if got, _ := s.RunHistory(ctx, 0); len(got) != 1 {
		t.Fatalf("history after a stale and a refused end: %d runs, want 1", len(got))
	}

	// Append-only.
	if _, err := s.db.ExecContext(ctx, `UPDATE run_history SET seconds = 1`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("update: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, `DELETE FROM run_history`); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("delete: %v", err)
	}

	// Bounded: newest last, limit keeps the latest; prune cuts by age.
	older := want
	older.JobID, older.EndedAt, older.StartedAt = k.ID, now.Add(-72*time.Hour), now.Add(-73*time.Hour)
	if err := s.RecordRun(ctx, older); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.RunHistory(ctx, 1); len(got) != 1 || got[0].JobID != k.ID {
		t.Fatalf("latest 1: %+v", got)
	}
	if _, err := s.PruneEnded(ctx, now.Add(-24*time.Hour), 10); err != nil {
		t.Fatal(err)
	}
	got, _ = s.RunHistory(ctx, 0)
	if len(got) != 1 || got[0].JobID != j.ID {
		t.Fatalf("after prune: %+v; want the recent run only", got)
	}

	// A pruned job's runs go with it, all of them, whatever the batch.
	o, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	ended := now.Add(-48 * time.Hour)
	from := scheduler.Submitted
	for _, st := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running, scheduler.Finished} {
		if _, err := s.Transition(ctx, o.ID, from, st, "test", func(x *scheduler.Job) {
			if st.Terminal() {
				x.FinishedAt = &ended
			}
		}); err != nil {
			t.Fatal(err)
		}
		from = st
	}
	for i := range 3 {
		r := want
		r.JobID, r.Attempt, r.EndedAt, r.StartedAt = o.ID, i+1, ended.Add(-time.Duration(3-i)*time.Hour), ended.Add(-10*time.Hour)
		if err := s.RecordRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.PruneEnded(ctx, now.Add(-24*time.Hour), 1); err != nil || n != 1 {
		t.Fatalf("prune the old job: %d, %v", n, err)
	}
	if got, _ := s.RunHistory(ctx, 0); len(got) != 1 || got[0].JobID != j.ID {
		t.Fatalf("after pruning the old job: %d runs; want the recent run only", len(got))
	}
}

// TestMarkRunningAtRisk: a running job is flagged with an event; one that
// is not running is stale.
func TestMarkRunningAtRisk(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.MarkRunningAtRisk(ctx, j.ID, "at risk: test"); err == nil {
		t.Fatal("a SUBMITTED job was flagged")
	}
	from := scheduler.Submitted
	for _, st := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
		if _, err := s.Transition(ctx, j.ID, from, st, "test", nil); err != nil {
			t.Fatal(err)
		}
		from = st
	}
	if err := s.MarkRunningAtRisk(ctx, j.ID, "at risk: test"); err != nil {
		t.Fatal(err)
	}
	g, _ := s.GetJob(ctx, j.ID)
	evs, _ := s.Events(ctx, j.ID)
	if !g.AtRisk || g.State != scheduler.Running || evs[len(evs)-1].Reason != "at risk: test" {
		t.Fatalf("job %+v events %+v", g, evs)
	}
}

// TestRunsAfterAndSubmitter: RunsAfter reads the runs inserted after an
// ID, in ID order (what a follower's model catches up with), RunHistory
// gives the IDs too; a job keeps the name of the token that submitted it
// (whose estimates it counts with, scheduler.EstimateKeyOf), and its run
// records that key.
func TestRunsAfterAndSubmitter(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	j, _, err := s.CreateJob(WithActor(ctx, Actor{Name: "alice"}), newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.GetJob(ctx, j.ID)
	if err != nil || got.SubmittedBy != "alice" || scheduler.EstimateKeyOf(&got) != "token:alice" {
		t.Fatalf("stored job: submitted by %q (%v); want alice", got.SubmittedBy, err)
	}
	for i := range 5 {
		r := scheduler.RunRecord{JobID: j.ID, Attempt: i + 1, Signature: "sig", EstimateKey: scheduler.EstimateKeyOf(&got), Executors: 1 + i,
			StartedAt: now, EndedAt: now.Add(time.Minute), Seconds: 60, Outcome: scheduler.RunFinished}
		if err := s.RecordRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := s.RunHistory(ctx, 0)
	if err != nil || len(all) != 5 {
		t.Fatalf("history: %d runs, %v", len(all), err)
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID <= all[i-1].ID || all[i].EstimateKey != "token:alice" {
			t.Fatalf("history IDs/keys: %+v", all)
		}
	}
	after, err := s.RunsAfter(ctx, all[1].ID, 2)
	if err != nil || len(after) != 2 || after[0].ID != all[2].ID || after[1].ID != all[3].ID || after[0].Executors != 3 {
		t.Fatalf("runs after the second, 2 at most: %+v, %v", after, err)
	}
	if rest, err := s.RunsAfter(ctx, all[4].ID, 0); err != nil || len(rest) != 0 {
		t.Fatalf("runs after the last: %+v, %v", rest, err)
	}
}

// TestRunTimeUnknown: a run whose time is not known (its driver was never
// seen running, migration 0019) is written with the end of a LAUNCHING job
// (NULL seconds) and read back as unknown by every reader; a known run
// still reads back its seconds; a known run of 0 s is not unknown.
func TestRunTimeUnknown(t *testing.T) {
	s, _ := openStore(t)
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Microsecond)
	j, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	from := scheduler.Submitted
	for _, st := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching} {
		if _, err := s.Transition(ctx, j.ID, from, st, "test", nil); err != nil {
			t.Fatal(err)
		}
		from = st
	}
	launched := now.Add(-30 * time.Second)
	unknown := scheduler.RunRecord{JobID: j.ID, Attempt: 1, Signature: "sig", Executors: 2, StartedAt: launched, EndedAt: now,
		Seconds: 30, RunTimeUnknown: true, Outcome: scheduler.RunFinished}
	if _, err := s.Transition(ctx, j.ID, scheduler.Launching, scheduler.Finished, "driver TASK_FINISHED", func(x *scheduler.Job) {
		x.Attempt, x.StartedAt, x.LastStartedAt = 1, &launched, &launched
		r := unknown
		x.EndedRun = &r
	}); err != nil {
		t.Fatal(err)
	}
	other, _, err := s.CreateJob(ctx, newJob(t, nil), "")
	if err != nil {
		t.Fatal(err)
	}
	if u, err := s.RunTimesUnknown(ctx, []string{j.ID, other.ID}); err != nil || len(u) != 1 || !u[j.ID] {
		t.Fatalf("RunTimesUnknown after the unknown run: %v, %v; want only %s", u, err, j.ID)
	}
	known := unknown
	known.Attempt, known.Seconds, known.RunTimeUnknown = 2, 0, false
	if err := s.RecordRun(ctx, known); err != nil {
		t.Fatal(err)
	}
	if u, err := s.RunTimesUnknown(ctx, []string{j.ID, other.ID}); err != nil || len(u) != 0 {
		t.Fatalf("RunTimesUnknown after a known run: %v, %v; want none (the last run counts)", u, err)
	}
	var nulls int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM run_history WHERE seconds IS NULL`).Scan(&nulls); err != nil || nulls != 1 {
		t.Fatalf("rows with NULL seconds: %d, %v; want 1", nulls, err)
	}
	all, err := s.RunHistory(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	after, err := s.RunsAfter(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	mine, err := s.JobRuns(ctx, j.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, runs := range map[string][]scheduler.RunRecord{"RunHistory": all, "RunsAfter": after, "JobRuns": mine} {
		if len(runs) != 2 || !runs[0].RunTimeUnknown || runs[0].Seconds != 0 || !runs[0].StartedAt.Equal(launched) ||
			runs[1].RunTimeUnknown || runs[1].Seconds != 0 {
			t.Fatalf("%s read back %+v", name, runs)
		}
	}
	if got, err := s.GetJob(ctx, j.ID); err != nil || got.Attempt != 1 || got.StartedAt == nil || !got.StartedAt.Equal(launched) {
		t.Fatalf("job after its end: %+v, %v", got, err)
	}
}
