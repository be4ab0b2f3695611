package main

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/offers"
	"github.com/sparkpack/sparkpack/power"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/warmlive"
	"github.com/sparkpack/sparkpack/warmpool"
)

// TestWarmAgents: what the sizing rule sees of the live agents: power
// states from power management (never stepped: on), busy from Mesos, free
// room from the core's view; agents on their way off, gone or avoided are
// left out; an agent outside the selector counts as busy.
func TestWarmAgents(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	ag := func(id string, cpus float64) offers.Agent {
		return offers.Agent{ID: id, Hostname: "h-" + id, CPUs: cpus, MemMB: 4096 * cpus, PricePerHour: 0.1 * cpus,
			Attributes: map[string]string{"location": "cloud"}}
	}
	statuses := []offers.AgentStatus{
		{Agent: ag("new", 4), Active: true},
		{Agent: ag("idle", 4), Active: true},
		{Agent: ag("busy", 8), Active: true, Busy: true},
		{Agent: ag("draining", 4), Active: false, Deactivated: true},
		{Agent: ag("local", 2), Active: true},
	}
	statuses[4].Attributes = map[string]string{"location": "local"}
	states := []offers.AgentState{{Agent: ag("busy", 8)}}
	states[0].FreeCPUs, states[0].FreeMemMB = 3, 1000
	rec := func(id string, s power.State, cpus float64) power.Record {
		a := ag(id, cpus)
		return power.Record{AgentID: id, Hostname: a.Hostname, Attributes: a.Attributes, CPUs: cpus, MemMB: a.MemMB, PricePerHour: a.PricePerHour, State: s, Since: now.Add(-10 * time.Second)}
	}
	avoided := rec("avoided", power.StateOff, 4)
	avoided.AvoidUntil = now.Add(time.Minute)
	recs := []power.Record{rec("idle", power.StateOn, 4), rec("busy", power.StateOn, 8), rec("draining", power.StateDraining, 4),
		rec("off", power.StateOff, 4), rec("booting", power.StateBooting, 8), avoided, rec("powering", power.StatePoweringOff, 4)}
	sel, err := power.ParseSelector("location=cloud")
	if err != nil {
		t.Fatal(err)
	}
	got := warmAgents(recs, statuses, states, sel, time.Minute, now)
	by := map[string]warmpool.Agent{}
	var ids []string
	for _, a := range got {
		by[a.ID] = a
		ids = append(ids, a.ID)
	}
	slices.Sort(ids)
	if want := []string{"booting", "busy", "idle", "local", "new", "off"}; !slices.Equal(ids, want) {
		t.Fatalf("agents %v; want %v", ids, want)
	}
	if a := by["new"]; a.State != warmpool.On || a.Busy || a.FreeCPUs != 4 || a.PricePerHour != 0.4 {
		t.Errorf("never stepped agent: %+v", a)
	}
	if a := by["busy"]; !a.Busy || a.FreeCPUs != 3 || a.FreeMemMB != 1000 {
		t.Errorf("busy agent: %+v", a)
	}
	if a := by["local"]; !a.Busy {
		t.Errorf("an agent outside the selector must count as busy: %+v", a)
	}
	if a := by["off"]; a.State != warmpool.Off || a.CPUs != 4 {
		t.Errorf("off agent: %+v", a)
	}
	if a := by["booting"]; a.State != warmpool.Booting || !a.ReadyAt.Equal(now.Add(50*time.Second)) {
		t.Errorf("booting agent: %+v (ready one boot time after its power-on)", a)
	}
}

// TestExpectedEnds: start plus the scaled estimate; no estimate: far away.
func TestExpectedEnds(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	start := now.Add(-time.Minute)
	held := map[string]*warmpool.Running{"a": {CPUs: 2, MemMB: 100}, "b": {CPUs: 1, MemMB: 50}}
	jobs := []scheduler.Job{{StartedAt: &start}, {StartedAt: &start}, {}}
	jobs[0].ID, jobs[1].ID, jobs[2].ID = "a", "b", "gone"
	jobs[0].EstimatedDurationSeconds = 600
	got := expectedEnds(held, jobs, 0.1, now)
	if len(got) != 2 || got[0].CPUs != 2 || !got[0].EndsAt.Equal(now) || !got[1].EndsAt.After(now.Add(24*time.Hour)) {
		t.Fatalf("%+v", got)
	}
}

// TestPrintForecast: the table shows the steps with their actuals and
// the agents kept warm with why; a fallback says so.
func TestPrintForecast(t *testing.T) {
	at := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	v := warmlive.View{Model: warmlive.ModelView{OK: true, Jobs: 180, Level: "mean", MeanPerHour: 180, DeadlineShare: 1},
		Steps: []warmlive.Step{{From: at, Jobs: warmlive.Band{P10: 1, P50: 3, P90: 5}, Actual: &warmlive.Actual{Jobs: 4}}},
		WarmPool: &warmlive.WarmPoolView{At: at, Reason: "forecast 1.00 jobs", WarmCPUs: 4,
			KeepOn: []warmlive.DecisionView{{AgentID: "w-cheap", Reason: "warm for the forecast in 20s"}}}}
	var b strings.Builder
	printForecast(&b, &v, false)
	for _, want := range []string{"180 jobs in the history", "w-cheap", "keep on", "warm for the forecast in 20s", "1         3    5    4"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing %q in:\n%s", want, b.String())
		}
	}
	v.Model, v.WarmPool.Fallback = warmlive.ModelView{Reason: "empty history"}, "no forecast: empty history"
	b.Reset()
	printForecast(&b, &v, true)
	if !strings.Contains(b.String(), "no forecast: empty history") || !strings.Contains(b.String(), "idle agents power off after their idle timeout") {
		t.Errorf("fallback:\n%s", b.String())
	}
	// The step under way says its actual arrivals are partial (they read
	// as a forecast missed by a wide margin otherwise).
	v.At = at.Add(5 * time.Minute)
	v.Steps[0].To = at.Add(15 * time.Minute)
	b.Reset()
	printForecast(&b, &v, false)
	if !strings.Contains(b.String(), "4 so far") {
		t.Errorf("the current step's actual is not marked partial:\n%s", b.String())
	}
	v.At = v.Steps[0].To
	b.Reset()
	printForecast(&b, &v, false)
	if strings.Contains(b.String(), "so far") {
		t.Errorf("a step that ended is marked partial:\n%s", b.String())
	}
	// Without a forecast the bands are not printed as zeros that look
	// like one; the actual arrivals still are.
	v.Steps[0].Jobs = warmlive.Band{}
	b.Reset()
	printForecast(&b, &v, false)
	if strings.Contains(b.String(), "UTC  0") || !strings.Contains(b.String(), "UTC  -         -    -    4") || !strings.Contains(b.String(), "learned from the submitted jobs' history") {
		t.Errorf("no forecast:\n%s", b.String())
	}
}

// TestWarmPoolOff: --power-warm-pool=false keeps power management's plain
// idle timeout: the warm pool only forecasts, it reads no agents, keeps
// none warm and powers none on (scripts/demo-power-figures.sh measures
// the demo with and without it).
func TestWarmPoolOff(t *testing.T) {
	var pc powerConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	powerFlags(fs, &pc)
	if err := fs.Parse([]string{"--power-off-after", "2m", "--power-provider", "emulator", "--power-warm-pool=false"}); err != nil {
		t.Fatal(err)
	}
	if !pc.noWarmPool {
		t.Fatal("--power-warm-pool=false did not turn the warm pool off")
	}
	if err := fs.Parse([]string{"--power-warm-pool=maybe"}); err == nil {
		t.Error("--power-warm-pool=maybe was accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	st, log := quietStore(ctx, t)
	// Power management is on (a manager), but no cluster or core: a warm
	// pool that decided would read the agents from them.
	r, err := startWarmPool(mesosConfig{power: pc}, st, nil, nil, &power.Manager{}, log, nil)
	if err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != nil {
				t.Fatalf("the warm pool decided (it read the agents) with --power-warm-pool=false: %v", p)
			}
		}()
		if err := r.Step(ctx); err != nil {
			t.Fatal(err)
		}
	}()
	if st := r.Status(); st.Plan != nil || r.Wanted("thesis14-S0") {
		t.Errorf("with the warm pool off: plan %+v, agent wanted %v; want no plan, nothing kept", st.Plan, r.Wanted("thesis14-S0"))
	}
}
