package scheduler

import (
	"testing"
	"time"
)

// TestCostSeriesThinning: past MaxPoints points the series keeps its first
// point, the points at even positions and its last point. By hand: agent
// "a" at $1 a second (3600e6 micro-USD per hour) is active from each odd
// second to the next, so the total is 0 at 0 s and 1 s, 1 at 2 s and 3 s,
// 2 at 4 s; one point is added per second.
func TestCostSeriesThinning(t *testing.T) {
	for _, tc := range []struct {
		name      string
		maxPoints int
		changes   int // SetActive at 1 s, 2 s, ..., changes s
		wantT     []int
		wantUSD   []float64
	}{
		{"at the limit: nothing dropped", 4, 3, []int{0, 1, 2, 3}, []float64{0, 0, 1, 1}},
		{"one past the limit of 4: first, even positions, last", 4, 4, []int{0, 2, 4}, []float64{0, 1, 2}},
		{"one past the smallest limit, 3", 3, 3, []int{0, 2, 3}, []float64{0, 1, 1}},
		{"limit 5: odd last position", 5, 5, []int{0, 2, 4, 5}, []float64{0, 1, 2, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := NewCostMeter(t0)
			m.MaxPoints = tc.maxPoints
			at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
			for i := 1; i <= tc.changes; i++ {
				m.SetActive(at(i), "a", 3600e6, i%2 == 1)
			}
			r := m.Report(at(tc.changes)) // no extra point: the last change is at this time
			if len(r.Series) != len(tc.wantT) {
				t.Fatalf("series %+v, want times %v", r.Series, tc.wantT)
			}
			for i, p := range r.Series {
				if !p.T.Equal(at(tc.wantT[i])) || !near(p.TotalUSD, tc.wantUSD[i]) {
					t.Fatalf("series[%d] = +%v $%v, want +%ds $%v (series %+v)", i, p.T.Sub(t0), p.TotalUSD, tc.wantT[i], tc.wantUSD[i], r.Series)
				}
			}
		})
	}
}

// TestCostSeriesDefaultBound: MaxPoints 0 bounds the series at 4096
// points (DefaultCostSeriesPoints' documented value); 5,000 changes would
// give 5,001 points.
func TestCostSeriesDefaultBound(t *testing.T) {
	m := NewCostMeter(t0)
	last := t0
	for i := 1; i <= 5000; i++ {
		last = t0.Add(time.Duration(i) * time.Second)
		m.SetActive(last, "a", 3600e6, i%2 == 1)
	}
	r := m.Report(last)
	if n := len(r.Series); n > 4096 || n < 2 {
		t.Fatalf("%d points, want between 2 and 4096", n)
	}
	if !r.Series[0].T.Equal(t0) || !r.Series[len(r.Series)-1].T.Equal(last) || !near(r.TotalUSD, 2500) {
		t.Fatalf("first %v, last %v, total %v; want t0, +5000 s, $2500", r.Series[0], r.Series[len(r.Series)-1], r.TotalUSD)
	}
}

// TestCostReportAgentPrice: the report gives each agent's price in USD per
// hour: 240,000 micro-USD per hour is $0.24, 1,500,000 is $1.50.
func TestCostReportAgentPrice(t *testing.T) {
	m := NewCostMeter(t0)
	m.SetActive(t0, "a", 240000, true)
	m.SetActive(t0, "b", 1500000, true)
	want := map[string]float64{"a": 0.24, "b": 1.5}
	r := m.Report(t0.Add(time.Hour))
	if len(r.Agents) != 2 {
		t.Fatalf("agents %+v", r.Agents)
	}
	for _, a := range r.Agents {
		if !near(a.PriceUSDPerHour, want[a.AgentID]) || !near(a.CostUSD, want[a.AgentID]) {
			t.Errorf("agent %s: $%v/h, $%v for its hour; want $%v for both", a.AgentID, a.PriceUSDPerHour, a.CostUSD, want[a.AgentID])
		}
	}
}
