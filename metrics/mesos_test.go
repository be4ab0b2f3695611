package metrics

import (
	"testing"
	"time"
)

// TestMesosDisconnectedTime: only time the running framework spends
// without a subscription counts, the current outage included; the gauge
// follows the subscription.
func TestMesosDisconnectedTime(t *testing.T) {
	m := New(nil)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m.mesosNow = func() time.Time { return now }
	step := func(d time.Duration) { now = now.Add(d) }

	step(time.Minute) // not running (a follower): nothing counts
	m.ObserveConnected(false)
	step(2 * time.Second) // starting, master not answering
	m.ObserveConnected(true)
	if got := m.MesosDisconnected(); got != 2*time.Second {
		t.Fatalf("disconnected %s, want 2s", got)
	}
	if got := gauge(t, m, "sparkpack_mesos_connected"); got != 1 {
		t.Fatalf("sparkpack_mesos_connected %g while subscribed, want 1", got)
	}
	step(time.Hour) // connected
	m.ObserveConnected(false)
	step(3 * time.Second) // an outage, still on
	if got := m.MesosDisconnected(); got != 5*time.Second {
		t.Fatalf("disconnected %s during an outage, want 5s", got)
	}
	if got := gauge(t, m, "sparkpack_mesos_connected"); got != 0 {
		t.Fatalf("sparkpack_mesos_connected %g during an outage, want 0", got)
	}
	if got := gauge(t, m, "sparkpack_mesos_disconnected_seconds_total"); got != 5 {
		t.Fatalf("sparkpack_mesos_disconnected_seconds_total %g, want 5", got)
	}
	m.ObserveStopped() // leadership lost: the outage stops counting
	step(time.Hour)
	if got := m.MesosDisconnected(); got != 5*time.Second {
		t.Fatalf("disconnected %s after stopping, want 5s", got)
	}
}

// gauge reads one unlabelled gauge or counter from the registry.
func gauge(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name || len(f.Metric) == 0 {
			continue
		}
		if g := f.Metric[0].GetGauge(); g != nil {
			return g.GetValue()
		}
		return f.Metric[0].GetCounter().GetValue()
	}
	t.Fatalf("no metric %s", name)
	return 0
}
