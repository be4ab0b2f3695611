package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/internal/latest"
	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/power"
)

type blipCloud struct{}

func (blipCloud) Name() string                                 { return "test" }
func (blipCloud) PowerOff(context.Context, power.Target) error { return nil }
func (blipCloud) PowerOn(context.Context, power.Target) error  { return nil }

type blipMesos struct{}

func (blipMesos) DeactivateAgent(context.Context, string) error { return nil }
func (blipMesos) ReactivateAgent(context.Context, string) error { return nil }

// TestClusterPowerRightAfterABoot: GET /api/v1/cluster serves the view
// last built (up to clusterViewGap old). An agent that registers again
// after a boot is on for power management at once, while that view still
// shows it gone ("off"): its power field must not vanish in between
// (booting, then on), as it did while the view caught up (the flake
// hunt's blip, about 250 ms). An agent gone while power management had
// it on (lost) still shows no power state, and one never powered off is
// on.
func TestClusterPowerRightAfterABoot(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, log := quietStore(ctx, t)
	was := time.Now().Add(-time.Hour)
	for _, r := range []power.Record{
		{AgentID: "a1", Hostname: "host-1", CPUs: 4, MemMB: 16384, State: power.StateBooting, Requested: true, Since: time.Now(), RegisteredAt: was},
		{AgentID: "a2", Hostname: "host-2", CPUs: 4, MemMB: 16384, State: power.StateOn, Since: was, RegisteredAt: was},
	} {
		if err := st.PutPowerRecord(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	l := &live{st: st, broker: api.NewBroker()}
	pm, err := power.NewManager(power.Config{OffAfter: time.Hour, Provider: blipCloud{}, Log: log, OnChange: l.powerChanged}, st, blipMesos{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pm.Load(ctx); err != nil {
		t.Fatal(err)
	}
	l.power = pm
	agent := func(id string, gone bool) offers.AgentState {
		return offers.AgentState{Agent: offers.Agent{ID: id, Hostname: "host-" + id[1:], CPUs: 4, MemMB: 16384, FreeCPUs: 4, FreeMemMB: 16384}, Gone: gone}
	}
	// The view as built while a1 was still booting (and a2 lost): it is
	// not built again (nothing calls Changed), as within the gap.
	l.views = latest.New(func(ctx context.Context) (clusterSnap, bool) {
		return l.buildClusterViewOf(ctx, func() []offers.AgentState {
			return []offers.AgentState{agent("a1", true), agent("a2", true), agent("a3", false)}
		})
	}, latest.Options[clusterSnap]{})
	done := make(chan struct{})
	go func() { defer close(done); l.views.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if _, err := l.views.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(api.New(api.Config{Views: l, Log: log}).Handler())
	defer srv.Close()
	cluster := func() map[string]map[string]any {
		t.Helper()
		resp, err := http.Get(srv.URL + "/api/v1/cluster")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var v struct {
			Agents []map[string]any `json:"agents"`
		}
		if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&v) != nil {
			t.Fatalf("GET /api/v1/cluster: %s", resp.Status)
		}
		out := map[string]map[string]any{}
		for _, a := range v.Agents {
			out[a["id"].(string)] = a
		}
		return out
	}
	check := func(when string, want map[string]any) {
		t.Helper()
		got := cluster()
		for id, w := range want {
			p, ok := got[id]["power"]
			if w == nil && ok || w != nil && p != w {
				t.Errorf("%s: agent %s state %v power %v (present %v), want %v", when, id, got[id]["state"], p, ok, w)
			}
		}
	}
	check("while a1 boots", map[string]any{"a1": "booting", "a2": nil, "a3": "on"})
	// a1 registers again: power management has it on at once.
	listed := func(id string, reg time.Time) power.Agent {
		return power.Agent{ID: id, Hostname: "host-" + id[1:], CPUs: 4, MemMB: 16384, Listed: true, Active: true, RegisteredAt: reg}
	}
	if err := pm.Tick(ctx, []power.Agent{listed("a1", time.Now()), listed("a3", was)}, nil); err != nil {
		t.Fatal(err)
	}
	if s := pm.StateOf("a1"); s != power.StateOn {
		t.Fatalf("a1 is %s after registering again, want on", s)
	}
	check("a1 registered, the view not yet rebuilt", map[string]any{"a1": "on", "a2": nil, "a3": "on"})
	if n := l.views.Builds(); n != 1 {
		t.Fatalf("%d view builds; the test needs the first view only", n)
	}
}
