package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/latest"
	"github.com/sparkpack/sparkpack/power"
)

// TestPowerChangeTellsTheDashboard: an agent's power state change sends
// the dashboard a "cluster" event (with the active agents of the last
// view), although the cluster view itself did not change: the view reads
// power states per request, and its signature does not show them.
// Without it TestDashboardShowsPower waited in vain for an agent shown
// off (the view was published as the agent left Mesos, before power
// management recorded it off).
func TestPowerChangeTellsTheDashboard(t *testing.T) {
	b := api.NewBroker()
	l := &live{broker: b}
	l.views = latest.New(func(context.Context) (clusterSnap, bool) { return clusterSnap{active: 3}, true }, latest.Options[clusterSnap]{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); l.views.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if _, err := l.views.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	events, stop := b.Subscribe()
	defer stop()
	l.powerChanged(power.Record{AgentID: "agent-03", State: power.StateOff})
	select {
	case ev := <-events:
		var data map[string]int
		if ev.Name != "cluster" || json.Unmarshal(ev.Data, &data) != nil || data["activeAgents"] != 3 {
			t.Fatalf("event %q %s, want cluster with 3 active agents", ev.Name, ev.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event after a power state change")
	}
}
