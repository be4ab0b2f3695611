package simulate

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
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
				if r.SlackS == nil {
					t.Fatalf("%s: no slack", r.ID)
				}
				near(t, r.ID+" slack", *r.SlackS, 50)
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
	want := []int{0, 1, 1, 2, 0}
	// CSV.
	var buf bytes.Buffer
	w, err := openJobLog(&buf, JobLogCSV)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.write("hour 0", 1, "x", time.Minute, recs); err != nil {
		t.Fatal(err)
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slicesIndex(rows[0], "arrivals_in_boot_before")
	for i, n := range want {
		if got := rows[i+1][col]; got != strconv.Itoa(n) {
			t.Errorf("csv: arrival at %v s: %s arrivals before, want %d", recs[i].SubmitS, got, n)
		}
	}
	if rows[1][slicesIndex(rows[0], "slack_s")] != "" || rows[1][slicesIndex(rows[0], "deadline_s")] != "" {
		t.Error("csv: a job without a deadline has a slack or a deadline")
	}
	// JSON lines.
	buf.Reset()
	if w, err = openJobLog(&buf, JobLogJSONL); err != nil {
		t.Fatal(err)
	}
	if err := w.write("hour 0", 1, "x", time.Minute, recs); err != nil {
		t.Fatal(err)
	}
	if err := w.flush(); err != nil {
		t.Fatal(err)
	}
	lines := readJobLogLines(t, &buf)
	if len(lines) != len(recs) {
		t.Fatalf("jsonl: %d lines, want %d", len(lines), len(recs))
	}
	for i, n := range want {
		if l := lines[i]; l.ArrivalsInBootBefore != n || l.ID != recs[i].ID || l.Window != "hour 0" || l.Seed != 1 || l.Policy != "x" {
			t.Errorf("jsonl: line %d: %+v, want %s with %d arrivals before", i, l, recs[i].ID, n)
		}
	}
}

// TestJobLogFormatOf: .jsonl is JSON lines, anything else CSV.
func TestJobLogFormatOf(t *testing.T) {
	for name, want := range map[string]JobLogFormat{"jobs.csv": JobLogCSV, "jobs": JobLogCSV, "a/jobs.jsonl": JobLogJSONL, "JOBS.JSONL": JobLogJSONL, "jobs.json": JobLogCSV} {
		if got := jobLogFormatOf(name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
}

// readJobLogLines reads a --job-log in JSON lines.
func readJobLogLines(t *testing.T, r io.Reader) []jobLogLine {
	t.Helper()
	var out []jobLogLine
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l jobLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", len(out)+1, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
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
// misses add up to the results' and whose kind is filled (the app type for
// the thesis mix), and a file it cannot create is an error.
func TestCommandJobLog(t *testing.T) {
	trace := tracePath(t)
	for _, name := range []string{"jobs.csv", "jobs.jsonl"} {
		file := filepath.Join(t.TempDir(), name)
		out, _, err := runCommand(t, "--trace", trace, "--quiet", "--workload", "thesis", "--hours", "5", "--seeds", "4-5", "--sample", "15",
			"--policies", "fifo-consolidate,dap", "--power-off-after", "30s", "--format", "json", "--job-log", file)
		if err != nil {
			t.Fatal(err)
		}
		var runs []RunResult
		if err := json.Unmarshal([]byte(out), &runs); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		// The log's rows as seed/policy, missed, free cpus at arrival.
		type row struct {
			run       string
			missed    bool
			free      float64
			kind, app string
		}
		var rs []row
		if jobLogFormatOf(file) == JobLogJSONL {
			for _, l := range readJobLogLines(t, bytes.NewReader(data)) {
				rs = append(rs, row{strconv.FormatUint(l.Seed, 10) + "/" + l.Policy, l.Missed, l.FreeCPUs, l.Kind, l.App})
			}
		} else {
			rows, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows[1:] {
				free, _ := strconv.ParseFloat(r[slicesIndex(rows[0], "free_cpus_at_arrival")], 64)
				rs = append(rs, row{r[1] + "/" + r[2], r[slicesIndex(rows[0], "missed")] == "true", free,
					r[slicesIndex(rows[0], "kind")], r[slicesIndex(rows[0], "app")]})
			}
		}
		if len(rs) != 2*2*15 {
			t.Fatalf("%s: %d records, want 60", name, len(rs))
		}
		missed := map[string]int{}
		for _, r := range rs {
			if r.missed {
				missed[r.run]++
			}
			if r.free < 0 || r.free > 100 {
				t.Errorf("%s: free cpus %v on thesis14", name, r.free)
			}
			// The thesis mix has no kinds of its own: a job's kind is
			// its application type (it was left empty).
			if r.app == "" || r.kind != r.app {
				t.Errorf("%s: kind %q, app %q: want the app as the kind", name, r.kind, r.app)
			}
		}
		for _, r := range runs {
			for _, p := range r.Results {
				if got := missed[strconv.FormatUint(r.Seed, 10)+"/"+p.Policy]; got != p.DeadlineMissed {
					t.Errorf("%s: seed %d %s: %d missed in the log, %d in the results", name, r.Seed, p.Policy, got, p.DeadlineMissed)
				}
			}
		}
	}
	if _, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "5", "--jobs", "3", "--policies", "bfd", "--job-log", filepath.Join(t.TempDir(), "no", "such", "dir.csv")); err == nil {
		t.Error("an unwritable --job-log was accepted")
	}
}

// TestJobLogAgreesWithTheRun: with JobLog set, a run's records, written
// as JSON lines and read back, agree with the run's own summary (misses,
// completions, run times, where the jobs ran), and the results are those
// of a run without the log.
func TestJobLogAgreesWithTheRun(t *testing.T) {
	wl := thesisHour(t, 22, 30, 3)
	dap, _ := LookupPolicy("dap")
	o := Options{Workload: wl, From: 22 * 3600e9, Cluster: clusterspec.Thesis14(), Policy: dap,
		DeadlineFraction: 1, Slack: 1.5, Seed: 3, Estimates: EstimatesLearned, EstimateError: 0.5, HideAppType: true, RunNoise: 0.1}
	plain, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := openJobLog(&buf, JobLogJSONL)
	if err != nil {
		t.Fatal(err)
	}
	o.JobLog = func(recs []JobRecord) {
		if err := w.write("hour 22", 3, "dap", time.Minute, recs); err != nil {
			t.Error(err)
		}
	}
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalCostUSD != plain.TotalCostUSD || r.DeadlineMissed != plain.DeadlineMissed || r.JCTMeanS != plain.JCTMeanS {
		t.Errorf("with the log: cost %v missed %d JCT %v; without: %v %d %v", r.TotalCostUSD, r.DeadlineMissed, r.JCTMeanS, plain.TotalCostUSD, plain.DeadlineMissed, plain.JCTMeanS)
	}
	var n, missed, done int
	for _, l := range readJobLogLines(t, &buf) {
		n++
		if l.Missed {
			missed++
		}
		if l.Done {
			done++
			if l.StartS < l.SubmitS || math.Abs(l.EndS-l.StartS-l.RunS) > 1e-6 || math.Abs(l.StartS-l.SubmitS-l.WaitS) > 1e-6 || l.RunS <= 0 ||
				len(l.Shares) == 0 || len(l.Agents) != len(l.Shares) || l.Noise <= 0 || l.ProfiledS <= 0 || l.EstimateS <= 0 {
				t.Errorf("%s: submit %v start %v wait %v end %v run %v shares %v agents %v noise %v profiled %v estimate %v",
					l.ID, l.SubmitS, l.StartS, l.WaitS, l.EndS, l.RunS, l.Shares, l.Agents, l.Noise, l.ProfiledS, l.EstimateS)
			}
		}
		if l.DeadlineS == nil || l.SlackS == nil {
			t.Fatalf("%s: every job has a deadline here, and its line has none: %+v", l.ID, l)
		}
		if l.Missed != (!l.Done || l.EndS > *l.DeadlineS) {
			t.Errorf("%s: missed %v, done %v, end %v, deadline %v", l.ID, l.Missed, l.Done, l.EndS, *l.DeadlineS)
		}
	}
	if n != r.Jobs || missed != r.DeadlineMissed || done != r.Completed {
		t.Errorf("log: %d jobs, %d missed, %d done; run: %d, %d, %d", n, missed, done, r.Jobs, r.DeadlineMissed, r.Completed)
	}
	if done == 0 {
		t.Error("no job ran")
	}
}
