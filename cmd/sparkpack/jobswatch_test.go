package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/store"
)

// TestJobsWatchRowsLineUp: the rows sparkpack jobs --watch prints under
// its first table line up with that table's header, although they are
// printed later and are narrower (a short name) or wider (a longer state)
// than the rows before (each batch went through a tabwriter of its own,
// lined up only with itself).
func TestJobsWatchRowsLineUp(t *testing.T) {
	now := time.Now()
	start, end := now.Add(-90*time.Second), now.Add(-30*time.Second)
	first := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f", Name: "nightly-etl-aggregation"},
		State: scheduler.Finished, SubmittedAt: now.Add(-2 * time.Minute), StartedAt: &start, LastStartedAt: &start, FinishedAt: &end}}
	later := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: "0a1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e80", Name: "b"},
		State: scheduler.Reserving, SubmittedAt: now.Add(-3 * time.Second)}}
	// The server lists the first job, then the later one too; at the
	// third look the watch is stopped (Ctrl-C).
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := api.ListResponse{Jobs: []api.JobView{first}}
		switch calls.Add(1) {
		case 1:
		case 2:
			page.Jobs = []api.JobView{later, first}
		default:
			page.Jobs = []api.JobView{later, first}
			stop()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	}))
	defer srv.Close()
	var b, errb bytes.Buffer
	if err := runJobs(ctx, []string{"--server", srv.URL, "--watch", "--interval", "100ms"}, &b, &errb); err != nil {
		t.Fatalf("jobs --watch: %v (%s)", err, errb.String())
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("printed %q", b.String())
	}
	header, row := lines[0], lines[2]
	for col, want := range map[string]string{"ID": later.ID, "NAME": "b", "STATE": "RESERVING", "RAN": "-", "DEADLINE": "-", "COST": "-"} {
		if got := columnAt(header, row, col); got != want {
			t.Errorf("the watched row's %s reads %q under its header, want %q:\n%s", col, got, want, b.String())
		}
	}
	if strings.HasSuffix(row, " ") {
		t.Errorf("the watched row ends in spaces: %q", row)
	}
}

// TestJobWatchTimelineLinesUp: the timeline rows sparkpack job --watch
// adds as the job moves line up with the timeline printed first, although
// their moves are longer (they went through a tabwriter of their own).
func TestJobWatchTimelineLinesUp(t *testing.T) {
	const id = "6f1d2c1e-8a7b-4c1d-9e2f-3a4b5c6d7e8f"
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	ev := func(sec int, from, to scheduler.State, why string) store.Event {
		e := store.Event{At: t0.Add(time.Duration(sec) * time.Second), To: to, Reason: why}
		if from != "" {
			e.From = &from
		}
		return e
	}
	events := []store.Event{ev(0, "", scheduler.Submitted, "submitted"), ev(1, scheduler.Submitted, scheduler.Queued, "queued")}
	later := append(slices.Clip(events), ev(2, scheduler.Queued, scheduler.Placing, "placing"),
		ev(3, scheduler.Placing, scheduler.Reserving, "plan"), ev(4, scheduler.Reserving, scheduler.Launching, "launching"),
		ev(5, scheduler.Launching, scheduler.Running, "running"), ev(9, scheduler.Running, scheduler.Finished, "done"))
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := api.JobView{Job: scheduler.Job{Spec: scheduler.Spec{ID: id, Name: "etl", Executors: 1, ExecutorCores: 1, ExecutorMemoryMB: 1024},
			State: scheduler.Queued, SubmittedAt: t0}, Placement: []store.PlacementRow{}, Events: events}
		if calls.Add(1) > 1 {
			v.State, v.Events = scheduler.Finished, later
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(v)
	}))
	defer srv.Close()
	code, out, errOut := runCmd(t, "job", "--server", srv.URL, "--watch", "--interval", "100ms", id)
	if code != 0 {
		t.Fatalf("job --watch: %d %q %q", code, out, errOut)
	}
	_, tl, _ := strings.Cut(out, "\ntimeline:\n")
	lines := strings.Split(strings.TrimRight(tl, "\n"), "\n")
	if len(lines) != len(later) {
		t.Fatalf("job --watch printed %d timeline rows, want %d:\n%s", len(lines), len(later), out)
	}
	// Every row's reason starts in the same column.
	col := -1
	for i, l := range lines {
		why := later[i].Reason
		at := utf8.RuneCountInString(l[:strings.LastIndex(l, why)])
		if col < 0 {
			col = at
		}
		if at != col {
			t.Errorf("timeline row %d's reason starts at %d, the first's at %d:\n%s", i, at, col, tl)
		}
	}
}
