package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/scheduler"
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
	var b bytes.Buffer
	table := &jobsTable{}
	table.reserveStates()
	if err := table.print(&b, io.Discard, outTable, []api.JobView{first}, true); err != nil {
		t.Fatal(err)
	}
	if err := table.print(&b, io.Discard, outTable, []api.JobView{later}, false); err != nil {
		t.Fatal(err)
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
