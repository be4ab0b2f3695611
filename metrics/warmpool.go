package metrics

import "github.com/prometheus/client_golang/prometheus"

// warmPoolMetrics are the live warm pool's (package warmlive): what it
// keeps warm, what it powered on ahead, and the forecast behind it.
type warmPoolMetrics struct {
	// WarmCPUs is the free cpus on or booting after the last decision.
	WarmCPUs prometheus.Gauge
	// PoweredOnAhead counts agents powered on ahead of the forecast.
	PoweredOnAhead prometheus.Counter
	// ForecastArrivalsP50 is the median of the jobs forecast to arrive
	// in the next hour (0 without a forecast).
	ForecastArrivalsP50 prometheus.Gauge
}

func (m *Metrics) registerWarmPool() {
	m.WarmCPUs = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sparkpack_warm_pool_cpus", Help: "Free cpus on or booting that the warm pool's last decision keeps (power management on)."})
	m.PoweredOnAhead = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "sparkpack_warm_pool_powered_on_ahead_total", Help: "Agents the warm pool powered on ahead of the forecast demand."})
	m.ForecastArrivalsP50 = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "sparkpack_forecast_arrivals_p50", Help: "Median of the jobs forecast to arrive in the next hour (0 without a forecast)."})
	m.Registry.MustRegister(m.WarmCPUs, m.PoweredOnAhead, m.ForecastArrivalsP50)
}

// SetWarmPool records a decision: the warm cpus, the agents powered on
// ahead by it, and the forecast's median arrivals in the next hour.
func (m *Metrics) SetWarmPool(warmCPUs float64, poweredOnAhead int, arrivalsP50 float64) {
	if m == nil {
		return
	}
	m.WarmCPUs.Set(warmCPUs)
	if poweredOnAhead > 0 {
		m.PoweredOnAhead.Add(float64(poweredOnAhead))
	}
	m.ForecastArrivalsP50.Set(arrivalsP50)
}
