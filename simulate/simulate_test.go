package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

func tracePath(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	p := filepath.Join(filepath.Dir(file), "..", "workload", "traces", workload.FB2009Name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("trace: %v", err)
	}
	return p
}

func loadTrace(t testing.TB) []workload.TraceJob {
	f, err := os.Open(tracePath(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	jobs, err := workload.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

func oneAgent(t *testing.T) clusterspec.Cluster {
	c, err := clusterspec.ParseBytes([]byte(`{"name": "one", "agents": [{"id": "a1", "hostname": "a1", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTinyTraceByHand: one agent of 2 cpus at $1/h; three empty jobs (one
// executor of 2 cpus each, 10 s of startup and nothing else):
//
//	j0 at 0 s runs 0-10; j1 at 0 s waits for j0 and runs 10-20; j2 at 100 s runs 100-110.
//	cost = 30 agent-seconds x $1/h = $0.008333; JCT 10, 20, 10 -> mean 13.33, p95 20;
//	waits 0, 10, 0 -> mean 3.33. Every job has a deadline of 1.5 x 10 s = 15 s:
//	j1 ends at 20 s > 15 s, so 1 of 3 is violated (33.3%).
func TestTinyTraceByHand(t *testing.T) {
	trace := []workload.TraceJob{{ID: "j0"}, {ID: "j1"}, {ID: "j2", Submit: 100 * time.Second}}
	for _, pol := range []string{"bfd", "fifo-spread", "exact", "ilp"} {
		t.Run(pol, func(t *testing.T) {
			p, err := LookupPolicy(pol)
			if err != nil {
				t.Fatal(err)
			}
			r, err := Run(context.Background(), Options{Jobs: trace, Cluster: oneAgent(t), Policy: p, DeadlineFraction: 1, Slack: 1.5, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			check := func(name string, got, want float64) {
				t.Helper()
				if d := got - want; d > 1e-6 || d < -1e-6 {
					t.Errorf("%s = %v, want %v", name, got, want)
				}
			}
			if r.Jobs != 3 || r.Completed != 3 || r.DeadlineJobs != 3 || r.DeadlineMissed != 1 {
				t.Fatalf("%+v", r)
			}
			check("cost", r.TotalCostUSD, 30.0/3600)
			check("agent-active s", r.AgentActiveS, 30)
			check("jct mean", r.JCTMeanS, 40.0/3)
			check("jct p95", r.JCTP95S, 20)
			check("wait mean", r.WaitMeanS, 10.0/3)
			check("violation %", r.DeadlineViolationPct, 100.0/3)
			check("makespan", r.MakespanS, 110)
			if r.Placements < 3 {
				t.Errorf("placements %d", r.Placements)
			}
			if n := len(r.Series); n < 4 || r.Series[n-1].USD != r.TotalCostUSD {
				t.Errorf("series %+v", r.Series)
			}
		})
	}
}

func TestDeterministic(t *testing.T) {
	jobs := workload.Hour(loadTrace(t), 4)
	run := func(pol string, seed uint64) Result {
		p, _ := LookupPolicy(pol)
		r, err := Run(context.Background(), Options{Jobs: jobs, From: 4 * time.Hour, Cluster: clusterspec.Thesis14(), Policy: p, DeadlineFraction: 0.5, Slack: 1.5, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		r.SchedDelayMeanMS, r.SchedDelayP99MS = 0, 0 // real time
		return r
	}
	for _, pol := range []string{"bfd", "exact", "fifo-spread", "gio"} {
		a, b := run(pol, 7), run(pol, 7)
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if !bytes.Equal(ja, jb) || len(a.Series) != len(b.Series) {
			t.Errorf("%s: two runs differ:\n%s\n%s", pol, ja, jb)
		}
		for i := range a.Series {
			if a.Series[i] != b.Series[i] {
				t.Fatalf("%s: series differ at %d", pol, i)
			}
		}
	}
	if a, c := run("bfd", 7), run("bfd", 8); a.DeadlineJobs == c.DeadlineJobs && a.TotalCostUSD == c.TotalCostUSD {
		t.Errorf("seeds 7 and 8 gave identical runs")
	}
}

// TestSimulatedHour replays one real hour end to end with every policy.
func TestSimulatedHour(t *testing.T) {
	jobs := workload.Hour(loadTrace(t), 0)
	var fifo, bfd Result
	for _, p := range Policies {
		r, err := Run(context.Background(), Options{Jobs: jobs, Cluster: clusterspec.Thesis14(), Policy: p, DeadlineFraction: 0.5, Slack: 2, Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if r.Jobs != len(jobs) || r.Completed+r.Rejected != r.Jobs || r.Unfinished != 0 {
			t.Errorf("%s: %+v", p.Name, r)
		}
		if r.TotalCostUSD <= 0 || r.AgentActiveS <= 0 || r.JCTMeanS < 10 || r.JCTP95S < r.JCTMeanS/10 {
			t.Errorf("%s: implausible %+v", p.Name, r)
		}
		switch p.Name {
		case "fifo-spread":
			fifo = r
		case "bfd":
			bfd = r
		}
	}
	if bfd.TotalCostUSD >= fifo.TotalCostUSD {
		t.Errorf("bfd $%.4f not cheaper than fifo-spread $%.4f", bfd.TotalCostUSD, fifo.TotalCostUSD)
	}
}

func TestMemStoreChecksTransitions(t *testing.T) {
	ctx := context.Background()
	s := NewMemStore(nil)
	s.KeepEvents = true
	if _, err := s.Create(scheduler.Job{Spec: scheduler.Spec{ID: "a"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Create(scheduler.Job{Spec: scheduler.Spec{ID: "a"}}); err == nil {
		t.Fatal("duplicate accepted")
	}
	if _, err := s.Transition(ctx, "a", scheduler.Submitted, scheduler.Running, "", nil); err == nil {
		t.Fatal("illegal transition accepted")
	}
	if _, err := s.Transition(ctx, "a", scheduler.Queued, scheduler.Placing, "", nil); err == nil {
		t.Fatal("stale transition accepted")
	}
	if _, err := s.Transition(ctx, "a", scheduler.Submitted, scheduler.Queued, "q", nil); err != nil {
		t.Fatal(err)
	}
	if err := s.SetWaiting(ctx, "a", "why", true); err != nil {
		t.Fatal(err)
	}
	if j, _ := s.Get("a"); j.WaitingReason != "why" || !j.AtRisk {
		t.Fatalf("%+v", j)
	}
	if u, _ := s.Unfinished(ctx); len(u) != 1 || len(s.Events()) != 2 {
		t.Fatalf("unfinished %v events %v", u, s.Events())
	}
}

func runCommand(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := Command(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestCommandHelpDocumentsEveryFlag(t *testing.T) {
	out, _, err := runCommand(t, "--help")
	if err != nil {
		t.Fatal(err)
	}
	var f flags
	newFlagSet(&f).VisitAll(func(fl *flag.Flag) {
		if !strings.Contains(out, "-"+fl.Name) || fl.Usage == "" {
			t.Errorf("--help does not document --%s", fl.Name)
		}
	})
}

func TestCommandErrors(t *testing.T) {
	trace := tracePath(t)
	for _, args := range [][]string{
		{"--hour", "24"},
		{"--hour", "1", "--from", "0"},
		{"--from", "2h", "--to", "1h"},
		{"--from", "yesterday"},
		{"--policies", "magic"},
		{"--format", "xml"},
		{"--deadline-fraction", "2"},
		{"--slack", "0"},
		{"--scale", "-1"},
		{"--cluster", "/nonexistent.json"},
		{"--trace", "/nonexistent.tsv"},
		{"stray"},
		{"--bogus"},
	} {
		if _, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet"}, args...)...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

func TestCommandOutputs(t *testing.T) {
	trace := tracePath(t)
	chart := filepath.Join(t.TempDir(), "c.svg")
	out, progress, err := runCommand(t, "--trace", trace, "--hour", "0", "--policies", "fifo-spread,bfd", "--format", "json", "--chart", chart)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress, "bfd") || !strings.Contains(progress, "jobs done") {
		t.Errorf("no progress on stderr: %q", progress)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	// The first keys, in this order, are the contract.
	want := []string{"policy", "jobs", "total_cost_usd", "jct_mean_s", "jct_p95_s", "deadline_jobs", "deadline_violation_pct", "sched_delay_mean_ms", "sched_delay_p99_ms", "agent_active_s"}
	dec := json.NewDecoder(strings.NewReader(out))
	var keys []string
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				depth++
			} else {
				depth--
			}
		case string:
			if depth == 2 && len(keys) < len(want) && dec.More() {
				keys = append(keys, v)
				if _, err := dec.Token(); err != nil { // its value
					t.Fatal(err)
				}
			}
		}
		if len(keys) == len(want) {
			break
		}
	}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("json keys %v, want %v", keys, want)
	}
	if rows[0]["policy"] != "fifo-spread" || rows[1]["jobs"].(float64) != 78 {
		t.Errorf("rows %v", rows)
	}
	svg, err := os.ReadFile(chart)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		if _, err := d.Token(); err != nil {
			if err != io.EOF {
				t.Fatalf("chart is not well-formed XML: %v", err)
			}
			break
		}
	}
	if !bytes.Contains(svg, []byte("<polyline")) || !bytes.Contains(svg, []byte("Deadline violations")) {
		t.Error("chart lacks its parts")
	}

	out, _, err = runCommand(t, "--trace", trace, "--from", "0", "--to", "1800", "--policies", "bfd", "--format", "csv", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], strings.Join(want, ",")) || !strings.HasPrefix(lines[1], "bfd,") {
		t.Errorf("csv:\n%s", out)
	}
	out, _, err = runCommand(t, "--trace", trace, "--hour", "0", "--policies", "bfd,exact", "--quiet")
	if err != nil || !strings.Contains(out, "violations %") || !strings.Contains(out, "exact") {
		t.Errorf("table: %v\n%s", err, out)
	}
}

// BenchmarkFullTraceBFD replays all 24 hours with bfd.
func BenchmarkFullTraceBFD(b *testing.B) {
	jobs := loadTrace(b)
	p, _ := LookupPolicy("bfd")
	for b.Loop() {
		r, err := Run(context.Background(), Options{Jobs: jobs, Cluster: clusterspec.Thesis14(), Policy: p, DeadlineFraction: 0.5, Slack: 2, Seed: 1})
		if err != nil || r.Completed != len(jobs) {
			b.Fatalf("%v %+v", err, r)
		}
	}
}
