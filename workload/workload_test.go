package workload

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	in := "# comment\njob0\t49\t49\t740773\t2339561\t627471\r\n\njob1\t101.5\t52.5\t0\t0\t0\n"
	jobs, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []TraceJob{
		{ID: "job0", Submit: 49 * time.Second, Gap: 49 * time.Second, InputBytes: 740773, ShuffleBytes: 2339561, OutputBytes: 627471, Line: 2},
		{ID: "job1", Submit: 101500 * time.Millisecond, Gap: 52500 * time.Millisecond, Line: 4},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Fatalf("got %+v\nwant %+v", jobs, want)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"job0\t1\t1\t1\t1\n", "want 6 tab-separated fields"},
		{"job0 1 1 1 1 1\n", "want 6"},
		{"\t1\t1\t1\t1\t1\n", "job id: empty"},
		{"j\t-1\t1\t1\t1\t1\n", "submit time"},
		{"j\tNaN\t1\t1\t1\t1\n", "submit time"},
		{"j\t1\tx\t1\t1\t1\n", "gap"},
		{"j\t1\t1\t1.5\t1\t1\n", "map input bytes"},
		{"j\t1\t1\t1\t-2\t1\n", "shuffle bytes"},
		{"j\t1\t1\t1\t1\t99999999999999999999\n", "output bytes"},
		{"a\t5\t5\t1\t1\t1\nb\t4\t0\t1\t1\t1\n", "line 2: submit time"},
		{strings.Repeat("x", MaxLineBytes+10), "longer than"},
	} {
		_, err := Parse(strings.NewReader(tc.in))
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%.30q) = %v, want a ParseError containing %q", tc.in, err, tc.want)
		}
	}
}

func tracePath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "shared", "traces", "FB-2009_samples_24_times_1hr_0.tsv")
}

func TestParseFBTrace(t *testing.T) {
	f, err := os.Open(tracePath())
	if err != nil {
		t.Skipf("trace not available: %v", err)
	}
	defer f.Close()
	jobs, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 5894 {
		t.Fatalf("%d jobs, want 5894", len(jobs))
	}
	total := 0
	for h := 0; h < 24; h++ {
		total += len(Hour(jobs, h))
	}
	// Two jobs of the last sample are submitted just after 24 h.
	if total != 5892 {
		t.Fatalf("24 hours hold %d jobs", total)
	}
	if n := len(Hour(jobs, 0)); n != 78 {
		t.Fatalf("hour 0: %d jobs", n)
	}
}

func FuzzParseTrace(f *testing.F) {
	f.Add("job0\t49\t49\t740773\t2339561\t627471\njob1\t101\t52\t736346\t1700537\t432269\n")
	f.Add("# x\n\nj\t0\t0\t0\t0\t0\r\n")
	f.Add("j\t1e3\t0.5\t1\t2\t3\n")
	f.Add("j\t\t\t\t\t\n")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := Parse(strings.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a ParseError", err)
			}
			return
		}
		for i, j := range jobs {
			if j.Submit < 0 || j.Gap < 0 || j.InputBytes < 0 || j.ShuffleBytes < 0 || j.OutputBytes < 0 || j.ID == "" {
				t.Fatalf("invalid job %+v", j)
			}
			if i > 0 && j.Submit < jobs[i-1].Submit {
				t.Fatalf("submit times decrease")
			}
			p := DefaultModel.Profile(j)
			if p.Executors < 1 || p.Executors > DefaultModel.MaxExecutors {
				t.Fatalf("profile %v", p)
			}
			if d := DefaultModel.Reference(p); d < DefaultModel.Startup {
				t.Fatalf("duration %v", d)
			}
		}
		// Formatting and parsing again gives the same jobs (bar line numbers
		// and sub-nanosecond times).
		var buf bytes.Buffer
		if err := Format(&buf, jobs); err != nil {
			t.Fatal(err)
		}
		again, err := Parse(&buf)
		if err != nil {
			t.Fatalf("reparse: %v\n%s", err, buf.String())
		}
		if len(again) != len(jobs) {
			t.Fatalf("reparse: %d jobs, want %d", len(again), len(jobs))
		}
		for i := range jobs {
			a, b := jobs[i], again[i]
			a.Line, b.Line = 0, 0
			if a.ID != strings.TrimSpace(b.ID) || a.InputBytes != b.InputBytes || a.ShuffleBytes != b.ShuffleBytes ||
				a.OutputBytes != b.OutputBytes || absDur(a.Submit-b.Submit) > time.Microsecond {
				t.Fatalf("reparse changed %+v to %+v", a, b)
			}
		}
	})
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		in, shuffle int64
		want        AppType
	}{
		{0, 0, WordCount},
		{0, 5, PageRank},
		{1000, 0, WordCount},
		{1000, 99, WordCount},
		{1000, 100, Sort},
		{1000, 2000, Sort},
		{1000, 2001, PageRank},
	} {
		if got := Classify(tc.in, tc.shuffle); got != tc.want {
			t.Errorf("Classify(%d, %d) = %s, want %s", tc.in, tc.shuffle, got, tc.want)
		}
	}
}

func TestProfileSizing(t *testing.T) {
	m := DefaultModel
	for _, tc := range []struct {
		in, shuffle, out int64
		wantE            int
		wantMem          int
	}{
		{100, 0, 100, 1, 2048},
		{256 << 20, 0, 0, 1, 2048},
		{256<<20 + 1, 0, 0, 2, 2048},
		{1 << 30, 1 << 30, 0, 3, 4096},        // 4 steps of 256 MiB: 1 + log2(4)
		{1 << 20, 8 << 30, 0, 6, 6144},        // pagerank sized by its shuffle: 1 + log2(32)
		{7551263722208, 0, 0, 16, 2048},       // capped
		{62, 0, 1000000622, 3, 2048},          // output-only job
		{1 << 40, 1 << 40, 1 << 40, 13, 4096}, // 1 + log2(4096)
	} {
		p := m.Profile(TraceJob{ID: "j", InputBytes: tc.in, ShuffleBytes: tc.shuffle, OutputBytes: tc.out})
		if p.Executors != tc.wantE || p.ExecutorMemoryMB != tc.wantMem || p.ExecutorCores != 2 {
			t.Errorf("Profile(%d,%d,%d) = %v, want %d executors of %d MiB", tc.in, tc.shuffle, tc.out, p, tc.wantE, tc.wantMem)
		}
	}
}

// TestDurationHandComputed checks the performance model on numbers worked
// out by hand.
func TestDurationHandComputed(t *testing.T) {
	m := DefaultModel
	// Sort, 4 executors x 2 cores = 8 cores; input 8 GB, shuffle 8 GB, output 4.8 GB.
	p := Profile{JobID: "s", App: Sort, InputBytes: 8e9, ShuffleBytes: 8e9, OutputBytes: 4.8e9, Executors: 4, ExecutorCores: 2}
	// Packed on one agent, idle otherwise (u = 8/12 on a 12-cpu agent):
	//   compute = (8000/50 + 4800/60) / 8 = (160 + 80) / 8 = 30 s; slowdown
	//   1 + 0.15 x 0.3 x (0.667-0.5)/0.5 = 1.015 -> 30.45 s
	//   shuffle = 8000 / 8 x (1/100) = 10 s
	b := m.Duration(p, []AgentShare{{Executors: 4, CPUs: 12, UsedCPUs: 8}})
	if b.RemoteFraction != 0 || b.Compute != 30450*time.Millisecond || b.Shuffle != 10*time.Second || b.Total() != 50450*time.Millisecond {
		t.Fatalf("packed: %+v total %v", b, b.Total())
	}
	// Spread one executor per agent on 4 idle 8-cpu agents (u = 2/8 < 0.5):
	//   r = 1 - 4 x (1/4)^2 = 0.75; shuffle = 1000 x (0.25/100 + 0.75/25) = 32.5 s
	//   compute = 30 s; total = 10 + 30 + 32.5 = 72.5 s
	spread := []AgentShare{{1, 8, 2}, {1, 8, 2}, {1, 8, 2}, {1, 8, 2}}
	b = m.Duration(p, spread)
	if b.RemoteFraction != 0.75 || b.Compute != 30*time.Second || b.Shuffle != 32500*time.Millisecond || b.Total() != 72500*time.Millisecond {
		t.Fatalf("spread: %+v total %v", b, b.Total())
	}
	// A CPU-bound WordCount on a full agent is 15% slower in its compute phase.
	wc := Profile{JobID: "w", App: WordCount, InputBytes: 16e9, Executors: 4, ExecutorCores: 2}
	free := m.Duration(wc, []AgentShare{{Executors: 4, CPUs: 16, UsedCPUs: 8}})
	full := m.Duration(wc, []AgentShare{{Executors: 4, CPUs: 8, UsedCPUs: 8}})
	if free.Compute != 100*time.Second || full.Compute != 115*time.Second {
		t.Fatalf("wordcount compute free %v full %v, want 100 s and 115 s", free.Compute, full.Compute)
	}
	if ref := m.Reference(p); ref != 50*time.Second {
		t.Fatalf("reference %v, want 50 s (packed, uncontended)", ref)
	}
	if d := m.Duration(p, nil).Total(); d != 50*time.Second {
		t.Fatalf("no shares: %v", d)
	}
}
