package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// waitMetrics are how long jobs waited and what power management saved.
type waitMetrics struct {
	// JobWait is the time from a job's submission to its first start.
	JobWait prometheus.Histogram
	// PowerSavings is the always-on cost minus the bill, when a bill is
	// known (the Mesos emulator's); absent otherwise.
	PowerSavings prometheus.Gauge
	savingsKnown bool
}

func (m *Metrics) registerWaiting() {
	m.JobWait = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "sparkpack_job_wait_seconds", Help: "Time from a job's submission to its first start (PLACING), by job.",
		Buckets: []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600}})
	m.PowerSavings = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sparkpack_power_savings_usd", Help: "What powering idle agents off saved so far: the cluster's cost always on minus the bill, when the bill is known."})
	m.Registry.MustRegister(m.JobWait)
}

// ObserveWait records one job's wait before its first start.
func (m *Metrics) ObserveWait(d time.Duration) {
	if d >= 0 {
		m.JobWait.Observe(d.Seconds())
	}
}

// SetPowerSavings sets the savings; the gauge is served from the first
// call on (a deployment without a known bill does not show it).
func (m *Metrics) SetPowerSavings(usd float64) {
	m.mu.Lock()
	if !m.savingsKnown {
		m.savingsKnown = true
		m.Registry.MustRegister(m.PowerSavings)
	}
	m.mu.Unlock()
	m.PowerSavings.Set(usd)
}
