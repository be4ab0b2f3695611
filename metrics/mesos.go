package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// mesosMetrics show the framework's subscription to the Mesos master:
// whether it is open, and for how long the framework, while it ran (on
// the leader), was without one.
type mesosMetrics struct {
	mesosMu      sync.Mutex
	running      bool      // the framework runs (this instance leads)
	connected    bool      // a subscription is open
	downSince    time.Time // running and not connected since
	downTotal    time.Duration
	mesosNow     func() time.Time
	MesosUp      prometheus.GaugeFunc
	MesosDownSec prometheus.CounterFunc
}

func (m *Metrics) registerMesos() {
	m.mesosNow = time.Now
	m.MesosUp = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "sparkpack_mesos_connected", Help: "1 while the framework holds a subscription to the Mesos master, else 0."},
		func() float64 {
			m.mesosMu.Lock()
			defer m.mesosMu.Unlock()
			if m.connected {
				return 1
			}
			return 0
		})
	m.MesosDownSec = prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "sparkpack_mesos_disconnected_seconds_total", Help: "Time the running framework spent without a subscription to the Mesos master (the current outage included)."},
		func() float64 { return m.MesosDisconnected().Seconds() })
	m.Registry.MustRegister(m.MesosUp, m.MesosDownSec)
}

// ObserveConnected records that the framework runs and has (true) or has
// not (false) a subscription (package offers' Observer).
func (m *Metrics) ObserveConnected(connected bool) {
	if m == nil {
		return
	}
	m.mesosMu.Lock()
	defer m.mesosMu.Unlock()
	now := m.mesosNow()
	m.closeOutageLocked(now)
	m.running, m.connected = true, connected
	if !connected {
		m.downSince = now
	}
}

// ObserveStopped records that the framework stopped running (this
// instance no longer leads): its time without a subscription stops
// counting.
func (m *Metrics) ObserveStopped() {
	if m == nil {
		return
	}
	m.mesosMu.Lock()
	defer m.mesosMu.Unlock()
	m.closeOutageLocked(m.mesosNow())
	m.running, m.connected = false, false
}

func (m *Metrics) closeOutageLocked(now time.Time) {
	if m.running && !m.connected && !m.downSince.IsZero() {
		m.downTotal += now.Sub(m.downSince)
	}
	m.downSince = time.Time{}
}

// MesosDisconnected is the time the running framework spent without a
// subscription so far, the current outage included.
func (m *Metrics) MesosDisconnected() time.Duration {
	m.mesosMu.Lock()
	defer m.mesosMu.Unlock()
	d := m.downTotal
	if m.running && !m.connected && !m.downSince.IsZero() {
		d += m.mesosNow().Sub(m.downSince)
	}
	return d
}
