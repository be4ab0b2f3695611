package scheduler

import (
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

func TestEstimateGap(t *testing.T) {
	saved := time.Date(2026, 11, 27, 10, 0, 30, 0, time.UTC)
	agent := func(id string, dollarsPerHour float64, first time.Time, p GapPower, holds ...placement.Holding) GapAgent {
		return GapAgent{Agent: placement.Agent{ID: id, CPUs: 8, MemMB: 16384, PriceMicroUSDPerHour: int64(dollarsPerHour * 1e6), Active: true},
			Holdings: holds, FirstActive: first, Power: p}
	}
	after := func(d time.Duration) time.Time { return saved.Add(d) }
	cases := []struct {
		name    string
		in      GapInput
		usd     float64
		capped  bool
		skipped []string
	}{
		{"never saved: nothing to fill", GapInput{Agents: []GapAgent{agent("a", 3.6, after(time.Hour), GapPower{})}}, 0, false, nil},
		{"on without a power record: the whole gap", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, after(20*time.Second), GapPower{})}}, 0.02, false, nil},
		{"on, two agents, each to its own first count", GapInput{SavedAt: saved, Agents: []GapAgent{
			agent("a", 3.6, after(20*time.Second), GapPower{State: "on", Since: saved.Add(-time.Hour)}),
			agent("b", 7.2, after(30*time.Second), GapPower{State: "on", Since: saved.Add(10 * time.Second)})}}, 0.02 + 0.06, false, nil},
		{"off through the gap: nothing", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, after(time.Minute), GapPower{State: "off", Since: saved.Add(-time.Minute)})}}, 0, false, []string{"a"}},
		{"went off during the gap: until then", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, after(time.Minute), GapPower{State: "off", Since: after(10 * time.Second)})}}, 0.01, false, nil},
		{"booting before the checkpoint: the whole gap (a plan committed it)", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, after(40*time.Second), GapPower{State: "booting", Since: saved.Add(-time.Minute)})}}, 0.04, false, nil},
		{"booting since inside the gap: from then", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, after(40*time.Second), GapPower{State: "booting", Since: after(30 * time.Second)})}}, 0.01, false, nil},
		{"clock went backwards: nothing", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, saved.Add(-5*time.Second), GapPower{})}}, 0, false, []string{"a"}},
		{"no gap at all", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 3.6, saved, GapPower{})}}, 0, false, []string{"a"}},
		{"longer than a day: a day", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 1, after(72*time.Hour), GapPower{})}}, 24, true, nil},
		{"longer than the bound given", GapInput{SavedAt: saved, Max: 10 * time.Second, Agents: []GapAgent{agent("a", 3.6, after(time.Hour), GapPower{})}}, 0.01, true, nil},
		{"free agent: counted at $0", GapInput{SavedAt: saved, Agents: []GapAgent{agent("a", 0, after(time.Hour), GapPower{})}}, 0, false, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			est := EstimateGap(c.in)
			if math.Abs(est.USD-c.usd) > 1e-9 {
				t.Errorf("USD %v, want %v (%+v)", est.USD, c.usd, est.Agents)
			}
			if est.Capped != c.capped {
				t.Errorf("capped %v, want %v", est.Capped, c.capped)
			}
			if len(est.Skipped) != len(c.skipped) {
				t.Errorf("skipped %v, want %v", est.Skipped, c.skipped)
			}
			for _, id := range c.skipped {
				if est.Skipped[id] == "" {
					t.Errorf("%s not skipped: %v", id, est.Skipped)
				}
			}
			ledger := 0.0
			for _, e := range est.Entries {
				ledger += e.CostUSD
			}
			if math.Abs(ledger-est.USD) > 1e-9 {
				t.Errorf("ledger entries add up to %v, the gap to %v", ledger, est.USD)
			}
		})
	}
}

// TestEstimateGapAttributesToTheJobsHeld: the gap's cost goes to the jobs
// the agent held at the first look, by their shares, the rest to idle, in
// the ledger's one-minute buckets.
func TestEstimateGapAttributesToTheJobsHeld(t *testing.T) {
	saved := time.Date(2026, 11, 27, 10, 0, 30, 0, time.UTC)
	a := GapAgent{Agent: placement.Agent{ID: "a", CPUs: 8, MemMB: 16384, PriceMicroUSDPerHour: 3_600_000, Active: true},
		Holdings:    []placement.Holding{{JobID: "j1", CPUs: 4, MemMB: 8192}},
		FirstActive: saved.Add(60 * time.Second)}
	est := EstimateGap(GapInput{SavedAt: saved, Agents: []GapAgent{a}})
	if math.Abs(est.USD-0.06) > 1e-9 {
		t.Fatalf("USD %v, want 0.06", est.USD)
	}
	got := map[string]float64{}
	buckets := map[time.Time]bool{}
	for _, e := range est.Entries {
		got[e.JobID] += e.CostUSD
		buckets[e.Bucket] = true
	}
	if math.Abs(got["j1"]-0.03) > 1e-9 || math.Abs(got[""]-0.03) > 1e-9 {
		t.Errorf("attributed %v, want j1 $0.03 and idle $0.03", got)
	}
	if len(buckets) != 2 {
		t.Errorf("buckets %v, want the two minutes the gap spans", buckets)
	}
}

// TestCostMeterFirstLook: the meter remembers the agents active at its
// first look at the cluster, and only those (an empty cluster is a look:
// a cluster without agents must not keep the meter from resuming).
func TestCostMeterFirstLook(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	m := NewCostMeter(t0)
	if _, ok := m.FirstLook(); ok {
		t.Fatal("a first look before any Observe")
	}
	m.Observe(t0.Add(2*time.Second), placement.Snapshot{Agents: []placement.Agent{
		{ID: "a", PriceMicroUSDPerHour: 1e6, Active: true}, {ID: "b", PriceMicroUSDPerHour: 1e6}}})
	m.Observe(t0.Add(3*time.Second), placement.Snapshot{Agents: []placement.Agent{
		{ID: "a", PriceMicroUSDPerHour: 1e6, Active: true}, {ID: "b", PriceMicroUSDPerHour: 1e6, Active: true}}})
	first, ok := m.FirstLook()
	if !ok || len(first) != 1 || first[0].ID != "a" || !first[0].FirstActive.Equal(t0.Add(2*time.Second)) {
		t.Fatalf("first look %+v %v, want agent a at +2s", first, ok)
	}
}

func TestCostMeterFirstLookOfAnEmptyCluster(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	m := NewCostMeter(t0)
	m.Observe(t0.Add(time.Second), placement.Snapshot{})
	m.Observe(t0.Add(2*time.Second), placement.Snapshot{Agents: []placement.Agent{{ID: "a", PriceMicroUSDPerHour: 1e6, Active: true}}})
	if first, ok := m.FirstLook(); !ok || len(first) != 0 {
		t.Fatalf("first look %+v %v, want an empty one", first, ok)
	}
}

// TestCostMeterIdleChanges counts the agents that went idle (the saver
// saves soon after).
func TestCostMeterIdleChanges(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	m := NewCostMeter(t0)
	busy := placement.Snapshot{Agents: []placement.Agent{{ID: "a", PriceMicroUSDPerHour: 1e6, Active: true}, {ID: "b", PriceMicroUSDPerHour: 1e6, Active: true}}}
	m.Observe(t0, busy)
	m.Observe(t0.Add(time.Second), busy)
	if n := m.IdleChanges(); n != 0 {
		t.Fatalf("%d idle changes while all stay busy", n)
	}
	m.Observe(t0.Add(2*time.Second), placement.Snapshot{Agents: []placement.Agent{{ID: "a", PriceMicroUSDPerHour: 1e6, Active: true}, {ID: "b", PriceMicroUSDPerHour: 1e6}}})
	m.Observe(t0.Add(3*time.Second), placement.Snapshot{}) // a gone from the cluster
	if n := m.IdleChanges(); n != 2 {
		t.Fatalf("%d idle changes, want 2", n)
	}
}
