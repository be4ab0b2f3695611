package scheduler

import (
	"fmt"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestCostMeterHandComputed: thesis eq. 4.11 on a hand-computed case.
//
//	a (4 cpu, $0.24/h): active 10:00-10:30 and 11:00-11:15 -> 45 min -> $0.18
//	b (8 cpu, $0.48/h): active 10:15-11:15                 -> 60 min -> $0.48
//	c (12 cpu, $0.72/h): never active                      -> $0
//
// Total at 11:15 = $0.66; at 10:20 = 20 min x 0.24 + 5 min x 0.48 = 0.08 + 0.04 = $0.12.
func TestCostMeterHandComputed(t *testing.T) {
	m := NewCostMeter(t0)
	at := func(min int) time.Time { return t0.Add(time.Duration(min) * time.Minute) }
	snap := func(active ...string) placement.Snapshot {
		on := map[string]bool{}
		for _, a := range active {
			on[a] = true
		}
		return placement.Snapshot{Agents: []placement.Agent{
			{ID: "a", PriceMicroUSDPerHour: 240000, Active: on["a"]},
			{ID: "b", PriceMicroUSDPerHour: 480000, Active: on["b"]},
			{ID: "c", PriceMicroUSDPerHour: 720000, Active: on["c"]},
		}}
	}
	m.Observe(at(0), snap("a"))
	_, act := m.Observe(at(15), snap("a", "b"))
	if len(act) != 1 || act[0] != "b" {
		t.Fatalf("went active %v", act)
	}
	if got := m.TotalUSD(at(20)); !near(got, 0.12) {
		t.Fatalf("total at 10:20 = %v, want 0.12", got)
	}
	if got := m.BurnRateUSDPerHour(); !near(got, 0.72) {
		t.Fatalf("burn %v, want 0.72", got)
	}
	idle, _ := m.Observe(at(30), snap("b"))
	if len(idle) != 1 || idle[0] != "a" {
		t.Fatalf("went idle %v", idle)
	}
	m.Observe(at(60), snap("a", "b"))
	m.Observe(at(75), snap())
	r := m.Report(at(120))
	if !near(r.TotalUSD, 0.66) || r.BurnRateUSDPerHour != 0 || r.ActiveAgents != 0 {
		t.Fatalf("report %+v, want $0.66 idle", r)
	}
	if !near(r.AgentActiveSeconds, 105*60) {
		t.Fatalf("active seconds %v, want 6300", r.AgentActiveSeconds)
	}
	want := map[string][2]float64{"a": {45 * 60, 0.18}, "b": {60 * 60, 0.48}, "c": {0, 0}}
	for _, a := range r.Agents {
		w := want[a.AgentID]
		if !near(a.ActiveSeconds, w[0]) || !near(a.CostUSD, w[1]) {
			t.Errorf("agent %s: %v s $%v, want %v s $%v", a.AgentID, a.ActiveSeconds, a.CostUSD, w[0], w[1])
		}
	}
	// Series: a point at every change, cumulative and non-decreasing,
	// ending at the report time.
	wantSeries := []struct {
		min int
		usd float64
	}{{0, 0}, {15, 0.06}, {30, 0.06 + 0.06 + 0.12}, {60, 0.12 + 0.36}, {75, 0.66}, {120, 0.66}}
	if len(r.Series) != len(wantSeries) {
		t.Fatalf("series %+v", r.Series)
	}
	for i, w := range wantSeries {
		p := r.Series[i]
		if !p.T.Equal(at(w.min)) || !near(p.TotalUSD, w.usd) {
			t.Errorf("series[%d] = %v %v, want +%dm %v", i, p.T, p.TotalUSD, w.min, w.usd)
		}
	}
}

func TestCostMeterSeriesBounded(t *testing.T) {
	m := NewCostMeter(t0)
	m.MaxPoints = 10
	for i := 1; i <= 100; i++ {
		m.SetActive(t0.Add(time.Duration(i)*time.Second), "a", 3600e6, i%2 == 1)
	}
	r := m.Report(t0.Add(100 * time.Second))
	if len(r.Series) > 11 {
		t.Fatalf("%d points", len(r.Series))
	}
	if !r.Series[0].T.Equal(t0) || !near(r.TotalUSD, 50) {
		t.Fatalf("first %v total %v", r.Series[0], r.TotalUSD)
	}
	for i := 1; i < len(r.Series); i++ {
		if r.Series[i].T.Before(r.Series[i-1].T) || r.Series[i].TotalUSD < r.Series[i-1].TotalUSD {
			t.Fatalf("series not monotone at %d: %+v", i, r.Series)
		}
	}
}

func TestCostMeterAgentRemoved(t *testing.T) {
	m := NewCostMeter(t0)
	m.Observe(t0, placement.Snapshot{Agents: []placement.Agent{{ID: "x", PriceMicroUSDPerHour: 1e6, Active: true}}})
	idle, _ := m.Observe(t0.Add(time.Hour), placement.Snapshot{})
	if len(idle) != 1 || !near(m.TotalUSD(t0.Add(3*time.Hour)), 1) {
		t.Fatalf("idle %v total %v", idle, m.TotalUSD(t0.Add(3*time.Hour)))
	}
}

// Totals gives Report's totals without building the per-agent list: the
// dashboard's sampler and the gauges read it every tick, and on a cluster
// of 30,000 agents the list was most of serve's garbage (issue 30).
func TestCostMeterTotals(t *testing.T) {
	m := NewCostMeter(t0)
	var snap placement.Snapshot
	for i := range 1000 {
		snap.Agents = append(snap.Agents, placement.Agent{ID: fmt.Sprintf("a%d", i), PriceMicroUSDPerHour: int64(1000 * (i%7 + 1)), Active: i%3 == 0})
	}
	m.Observe(t0, snap)
	at := t0.Add(90 * time.Minute)
	full, tot := m.Report(at), m.Totals(at)
	if tot.TotalUSD != full.TotalUSD || tot.BurnRateUSDPerHour != full.BurnRateUSDPerHour || tot.ActiveAgents != full.ActiveAgents ||
		tot.AgentActiveSeconds != full.AgentActiveSeconds || !tot.At.Equal(full.At) || full.ActiveAgents != 334 {
		t.Fatalf("totals %+v, report's %+v", tot, CostReport{At: full.At, TotalUSD: full.TotalUSD, BurnRateUSDPerHour: full.BurnRateUSDPerHour, ActiveAgents: full.ActiveAgents})
	}
	if len(tot.Agents) != 0 || len(full.Agents) != 1000 {
		t.Fatalf("totals list %d agents, report %d", len(tot.Agents), len(full.Agents))
	}
	if n := testing.AllocsPerRun(10, func() { _ = m.Totals(at) }); n != 0 {
		t.Errorf("Totals allocates %v times, want 0", n)
	}
	// Report's list is allocated once, at its size.
	if n := testing.AllocsPerRun(10, func() { _ = m.Report(at) }); n > 3 {
		t.Errorf("Report allocates %v times, want at most 3 (the list, the series and its point now)", n)
	}
}
