package simulate

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/sparkpack/sparkpack/clusterspec"
)

// TestJobLogAgreesWithTheRun: with SPARKPACK_SIM_JOBLOG set, a run writes
// one line per job whose misses, completions and run times agree with the
// run's own summary, and the results are those of a run without the log.
func TestDebugLogAgreesWithTheRun(t *testing.T) {
	wl := thesisHour(t, 22, 30, 3)
	dap, _ := LookupPolicy("dap")
	o := Options{Workload: wl, From: 22 * 3600e9, Cluster: clusterspec.Thesis14(), Policy: dap,
		DeadlineFraction: 1, Slack: 1.5, Seed: 3, Estimates: EstimatesLearned, EstimateError: 0.5, HideAppType: true, RunNoise: 0.1}
	t.Setenv(JobLogEnv, "")
	plain, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Setenv(JobLogEnv, dir)
	r, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if r.TotalCostUSD != plain.TotalCostUSD || r.DeadlineMissed != plain.DeadlineMissed || r.JCTMeanS != plain.JCTMeanS {
		t.Errorf("with the log: cost %v missed %d JCT %v; without: %v %d %v", r.TotalCostUSD, r.DeadlineMissed, r.JCTMeanS, plain.TotalCostUSD, plain.DeadlineMissed, plain.JCTMeanS)
	}
	f, err := os.Open(filepath.Join(dir, "dap.22.3.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n, missed, done int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l jobLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v", n+1, err)
		}
		n++
		if l.Missed {
			missed++
		}
		if l.Done {
			done++
			if l.StartS < l.SubmitS || math.Abs(l.EndS-l.StartS-l.RanS) > 1e-6 || l.RanS <= 0 || len(l.Shares) == 0 || len(l.Agents) != len(l.Shares) {
				t.Errorf("%s: submit %v start %v end %v ran %v shares %v agents %v", l.ID, l.SubmitS, l.StartS, l.EndS, l.RanS, l.Shares, l.Agents)
			}
		}
		if l.Missed != (!l.Done || l.EndS > l.DeadlineS) {
			t.Errorf("%s: missed %v, done %v, end %v, deadline %v", l.ID, l.Missed, l.Done, l.EndS, l.DeadlineS)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != r.Jobs || missed != r.DeadlineMissed || done != r.Completed {
		t.Errorf("log: %d jobs, %d missed, %d done; run: %d, %d, %d", n, missed, done, r.Jobs, r.DeadlineMissed, r.Completed)
	}
	if done == 0 {
		t.Error("no job ran")
	}
}
