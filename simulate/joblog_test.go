package simulate

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestJobLogByHand: one agent of 2 cpus, no contention, deadlines at
// 1.5 x the run time; j0 at 400 s runs 100 s (deadline 550), j1 at 460 s
// runs 100 s (deadline 610).
//
//	always on:           j0 finds 2 free cpus, runs 400-500; j1 finds 0,
//	                     waits for j0, runs 500-600: both met.
//	power off after 60 s (boot 30 s): the agent is off from 60 s; j0 finds
//	                     0 free, boots 400-430, runs 430-530 (met); j1
//	                     finds 0, waits 70 s, runs 530-630: missed.
func TestJobLogByHand(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	type want struct {
		free, wait, run float64
		missed          bool
	}
	for _, tc := range []struct {
		name string
		off  time.Duration
		want []want
	}{
		{"always on", 0, []want{{2, 0, 100, false}, {0, 40, 100, false}}},
		{"power off after 60 s", 60 * time.Second, []want{{0, 30, 100, false}, {0, 70, 100, true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var recs []JobRecord
			_, err := Run(context.Background(), Options{Workload: []workload.Job{wc("j0", 400, 100), wc("j1", 460, 100)}, Cluster: oneAgent(t), Model: &m, Seed: 1,
				Policy:           PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
				DeadlineFraction: 1, Slack: 1.5,
				PowerOffAfter: tc.off, BootTime: 30 * time.Second,
				JobLog: func(r []JobRecord) { recs = r }})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 2 {
				t.Fatalf("%d records", len(recs))
			}
			for i, w := range tc.want {
				r := recs[i]
				near(t, r.ID+" free cpus", r.FreeCPUs, w.free)
				near(t, r.ID+" max free on one agent", r.MaxAgentFreeCPUs, w.free)
				near(t, r.ID+" wait", r.WaitS, w.wait)
				near(t, r.ID+" run", r.RunS, w.run)
				near(t, r.ID+" slack", r.SlackS, 50)
				if r.CPUs != 2 || !r.Deadline || !r.Done || r.Missed != w.missed {
					t.Errorf("%+v, want missed %v", r, w.missed)
				}
			}
		})
	}
}

// TestWriteJobLogArrivalsBefore: arrivals at 0, 30, 60, 61 and 200 s with
// a 60 s boot: the others in (t-60, t] are 0, 1 (30), 1 (30; 0 is not
// after 0), 2 (30, 60) and 0.
func TestWriteJobLogArrivalsBefore(t *testing.T) {
	var recs []JobRecord
	for i, s := range []float64{0, 30, 60, 61, 200} {
		recs = append(recs, JobRecord{ID: "j" + strconv.Itoa(i), SubmitS: s})
	}
	var buf bytes.Buffer
	w, err := openJobLog(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeJobLog(w, "hour 0", 1, "x", time.Minute, recs); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slicesIndex(rows[0], "arrivals_in_boot_before")
	for i, want := range []string{"0", "1", "1", "2", "0"} {
		if got := rows[i+1][col]; got != want {
			t.Errorf("arrival at %v s: %s arrivals before, want %s", recs[i].SubmitS, got, want)
		}
	}
	if rows[1][slicesIndex(rows[0], "slack_s")] != "" {
		t.Error("a job without a deadline has a slack")
	}
}

func slicesIndex(row []string, name string) int {
	for i, c := range row {
		if c == name {
			return i
		}
	}
	return -1
}

// TestCommandJobLog: --job-log writes a row per job, policy and seed whose
// misses add up to the results', and a file it cannot create is an error.
func TestCommandJobLog(t *testing.T) {
	trace := tracePath(t)
	file := filepath.Join(t.TempDir(), "jobs.csv")
	out, _, err := runCommand(t, "--trace", trace, "--quiet", "--workload", "thesis", "--hours", "5", "--seeds", "4-5", "--sample", "15",
		"--policies", "fifo-consolidate,dap", "--power-off-after", "30s", "--format", "json", "--job-log", file)
	if err != nil {
		t.Fatal(err)
	}
	var runs []RunResult
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+2*2*15 {
		t.Fatalf("%d rows, want a header and 60", len(rows))
	}
	missed := map[string]int{}
	for _, row := range rows[1:] {
		if row[slicesIndex(rows[0], "missed")] == "true" {
			missed[row[1]+"/"+row[2]]++
		}
		if free, _ := strconv.ParseFloat(row[slicesIndex(rows[0], "free_cpus_at_arrival")], 64); free < 0 || free > 100 {
			t.Errorf("free cpus %v on thesis14", free)
		}
	}
	for _, r := range runs {
		for _, p := range r.Results {
			if got := missed[strconv.FormatUint(r.Seed, 10)+"/"+p.Policy]; got != p.DeadlineMissed {
				t.Errorf("seed %d %s: %d missed in the log, %d in the results", r.Seed, p.Policy, got, p.DeadlineMissed)
			}
		}
	}
	if _, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "5", "--jobs", "3", "--policies", "bfd", "--job-log", filepath.Join(t.TempDir(), "no", "such", "dir.csv")); err == nil {
		t.Error("an unwritable --job-log was accepted")
	}
}
