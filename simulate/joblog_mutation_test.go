package simulate

// Tests of --job-log's writer (issue 33); expected values by hand.

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJobLogCSVRowByHand: every column of a CSV row, from a record whose
// values are all different: times with 3 decimals, the noise as few
// digits as it needs (1.2345 stays 1.2345), the agents separated by a
// space; a job without a deadline has empty slack and deadline cells.
func TestJobLogCSVRowByHand(t *testing.T) {
	recs := []JobRecord{
		{ID: "j0", Kind: "sort", App: "sort", Executors: 3, CPUs: 6, SubmitS: 10, StartS: 12.5, EndS: 112.25, WaitS: 2.5, RunS: 99.75,
			Deadline: true, DeadlineS: f64(160), SlackS: f64(50.0004), Missed: false, Done: true, ProfiledS: 99.9996, EstimateS: 120, Noise: 1.2345,
			FreeCPUs: 8, MaxAgentFreeCPUs: 4, Agents: []string{"a1", "a2"},
			Shares: []JobShare{{Executors: 2}, {Executors: 1}}},
		{ID: "j1", Kind: "pagerank", App: "pagerank", Executors: 1, CPUs: 2, SubmitS: 40, Noise: 1, Done: false},
	}
	var buf bytes.Buffer
	l, err := openJobLog(&buf, JobLogCSV)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.write("hour 3", 7, "dap", time.Minute, recs); err != nil {
		t.Fatal(err)
	}
	if err := l.flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// j1 arrives 30 s after j0, within the 60 s boot: 1 arrival before it.
	want := [][]string{
		{"window", "seed", "policy", "job", "submit_s", "wait_s", "run_s", "cpus", "deadline", "slack_s", "missed",
			"arrivals_in_boot_before", "free_cpus_at_arrival", "max_agent_free_cpus",
			"kind", "app", "executors", "start_s", "end_s", "deadline_s", "done", "profiled_s", "estimate_s", "noise", "agents"},
		{"hour 3", "7", "dap", "j0", "10.000", "2.500", "99.750", "6", "true", "50.000", "false", "0", "8.000", "4.000",
			"sort", "sort", "3", "12.500", "112.250", "160.000", "true", "100.000", "120.000", "1.2345", "a1 a2"},
		{"hour 3", "7", "dap", "j1", "40.000", "0.000", "0.000", "2", "false", "", "false", "1", "0.000", "0.000",
			"pagerank", "pagerank", "1", "0.000", "0.000", "", "false", "0.000", "0.000", "1", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d:\n got %q\nwant %q", i, rows[i], want[i])
		}
	}
}

// TestJobLogJSONLineByHand: a JSON line carries the run, the whole record
// (shares included, which CSV leaves out) and the arrivals before it.
func TestJobLogJSONLineByHand(t *testing.T) {
	rec := JobRecord{ID: "j0", Kind: "sort", Executors: 3, CPUs: 6, SubmitS: 10, Noise: 1.2345, Deadline: true, DeadlineS: f64(65), SlackS: f64(5),
		Agents: []string{"a1", "a2"}, Shares: []JobShare{{Executors: 2}, {Executors: 1}}}
	var buf bytes.Buffer
	l, err := openJobLog(&buf, JobLogJSONL)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.write("[00:00:00, end)", 2, "bfd", time.Minute, []JobRecord{rec, {ID: "j1", SubmitS: 69.9}, {ID: "j2", SubmitS: 70}}); err != nil {
		t.Fatal(err)
	}
	if err := l.flush(); err != nil {
		t.Fatal(err)
	}
	lines := readJobLogLines(t, &buf)
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	got := lines[0]
	if got.Window != "[00:00:00, end)" || got.Seed != 2 || got.Policy != "bfd" || got.ID != "j0" || got.Noise != 1.2345 ||
		got.CPUs != 6 || !got.Deadline || got.SlackS == nil || *got.SlackS != 5 || got.DeadlineS == nil || *got.DeadlineS != 65 || len(got.Shares) != 2 || got.Shares[0].Executors != 2 ||
		strings.Join(got.Agents, ",") != "a1,a2" || got.ArrivalsInBootBefore != 0 {
		t.Errorf("line 0: %+v", got)
	}
	// j1 at 69.9 s: j0 (10 s) is in (9.9, 69.9]: 1. j2 at 70 s: (10, 70]
	// holds j1 but not j0 (exactly 60 s before): 1.
	if lines[1].ArrivalsInBootBefore != 1 || lines[2].ArrivalsInBootBefore != 1 {
		t.Errorf("arrivals before: %d, %d; want 1, 1", lines[1].ArrivalsInBootBefore, lines[2].ArrivalsInBootBefore)
	}
}

// f64 is a pointer to x (a record's deadline and slack).
func f64(x float64) *float64 { return &x }

// TestArrivalsInBootBeforeZeroBoot: with --boot-time 0 the log is written
// (no index past the end; the interval (t, t] is empty, so every job
// counts 0 others, even one submitted at the same second as another; it
// counted -1 before).
func TestArrivalsInBootBeforeZeroBoot(t *testing.T) {
	recs := []JobRecord{{ID: "a", SubmitS: 0}, {ID: "b", SubmitS: 5}, {ID: "c", SubmitS: 5}}
	got := arrivalsInBootBefore(recs, 0)
	if !slices.Equal(got, []int{0, 0, 0}) {
		t.Fatalf("arrivals in a zero boot before: %v; want 0, 0, 0", got)
	}
}
