package simulate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestBillStartsAtTheWindow: one agent of 2 cpus at $1/h, power off after
// 60 s idle, boot 30 s; the window starts at 0 and the only job comes at
// 400 s (runs 100 s). The agent is idle from the window's start: powered
// off at 60 s; the job powers it on at 400 s, boots until 430 s, runs
// 430-530. Bill: 0-60 and 400-530 = 190 s ($0.052778); always on 530 s.
// (The defect: power management first looked at the agents at the first
// arrival, so an agent idle before it was billed until then and never
// powered off: 530 s for both.)
func TestBillStartsAtTheWindow(t *testing.T) {
	m := workload.DefaultModel
	m.Contention = 0
	r, err := Run(context.Background(), Options{Workload: []workload.Job{wc("j0", 400, 100)}, Cluster: oneAgent(t), Model: &m, Seed: 1,
		Policy:        PolicySpec{Name: "x", Ordering: scheduler.OrderAlgorithm3, Placement: "exact"},
		PowerOffAfter: 60 * time.Second, BootTime: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if r.Completed != 1 {
		t.Fatalf("%+v", r)
	}
	near(t, "bill", r.BillUSD, 190.0/3600)
	near(t, "always on", r.AlwaysOnUSD, 530.0/3600)
	near(t, "wait", r.WaitMeanS, 30)
	// One power-on; 2 cpus on for 190 of 530 s.
	near(t, "mean cpus on", r.MeanOnCPUs, 2*190.0/530)
	if r.Boots != 1 {
		t.Errorf("boots %d, want 1", r.Boots)
	}
}

// TestTraceThatStartsLate: a trace file whose jobs start at 16 h (as one
// hour cut from the SWIM trace), replayed whole (no --hour, no --from):
// the window is [16 h, end). Two empty jobs (10 s of startup each) at
// 57600 s and 57700 s on one agent of 2 cpus at $1/h, power off after
// 60 s, boot 30 s: j0 runs 57600-57610, the agent goes off at 57670, j1
// boots it at 57700 and runs 57730-57740. Bill 70 + 40 = 110 s
// ($0.030556), always on 140 s ($0.038889). (The defect: the window began
// at 0 s, and the always-on bill counted 16 idle hours: $16.03.)
func TestTraceThatStartsLate(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "late.tsv")
	if err := os.WriteFile(trace, []byte("j0\t57600\t0\t0\t0\t0\nj1\t57700\t100\t0\t0\t0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cluster := filepath.Join(dir, "one.json")
	if err := os.WriteFile(cluster, []byte(`{"name": "one", "agents": [{"id": "a1", "hostname": "a1", "cpus": 2, "memMB": 16384, "pricePerHour": 1.0}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCommand(t, "--trace", trace, "--cluster", cluster, "--policies", "exact", "--power-off-after", "60s", "--boot-time", "30s",
		"--deadline-fraction", "0", "--format", "json", "--quiet")
	if err != nil {
		t.Fatal(err)
	}
	var rs []Result
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Completed != 2 {
		t.Fatalf("%s", out)
	}
	near(t, "bill", rs[0].BillUSD, 110.0/3600)
	near(t, "always on", rs[0].AlwaysOnUSD, 140.0/3600)
	near(t, "makespan", rs[0].MakespanS, 140)
}
