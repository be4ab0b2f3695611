package warmpool

// Tests written from the mutants scripts/mutation.sh found alive in
// warmpool.go (docs/testing.md, "Mutation testing"); the expected figures
// are derived by hand in the comments.

import (
	"math"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
)

// TestLeadDefaultsToTheBootTime: every agent off, 0.5 jobs forecast one
// boot time (60 s) ahead, miss cost $0.25 (TestPowerOnAheadByHand: a
// saves $0.0984, b $0.0225, c $0.0041). Lead unset is the boot time: a
// power-on bills 120 s, a and b go on for 2 x $0.24 x 120/3600 = $0.016.
// Lead 5 minutes: 360 s, $0.024 each: only a saves more than that.
func TestLeadDefaultsToTheBootTime(t *testing.T) {
	in := Input{Now: now, Agents: agents(Off), Forecast: demand(0.1), Ahead: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25}
	p := Decide(in)
	check(t, p, "", "a,b", "")
	if math.Abs(p.IdleBillUSD-0.016) > 1e-12 {
		t.Fatalf("bill $%v, want $0.016", p.IdleBillUSD)
	}
	in.Lead = 5 * time.Minute
	p = Decide(in)
	check(t, p, "", "a", "")
	if math.Abs(p.IdleBillUSD-0.024) > 1e-12 {
		t.Fatalf("bill $%v, want $0.024", p.IdleBillUSD)
	}
}

// TestCheapestPerCPUFirst: the floor (4 cpus) takes the agent cheapest per
// cpu: y (8 cpus, $0.48/h: $0.06 a cpu) before x (4 cpus, $0.40/h: $0.10
// a cpu), though x is cheaper per hour; an agent of no cpus (and no
// price) is never taken for the floor.
func TestCheapestPerCPUFirst(t *testing.T) {
	ag := []Agent{
		{ID: "z", CPUs: 0, MemMB: 0, PricePerHour: 0, State: On},
		{ID: "x", CPUs: 4, MemMB: 16384, PricePerHour: 0.40, State: On},
		{ID: "y", CPUs: 8, MemMB: 32768, PricePerHour: 0.48, State: On},
	}
	p := Decide(Input{Now: now, Agents: ag, Forecast: forecast.Demand{Reason: "none"}, BootTime: time.Minute, MinWarmCPUs: 4})
	check(t, p, "y", "", "z,x")
}

// TestFloorWithinTolerance: the floor is met within 1e-9 cpus: a and b (8
// cpus) meet a floor of 8 + 1e-9; c is not kept for it.
func TestFloorWithinTolerance(t *testing.T) {
	p := Decide(Input{Now: now, Agents: agents(On), Forecast: forecast.Demand{Reason: "none"}, BootTime: time.Minute, MinWarmCPUs: 8 + 1e-9})
	check(t, p, "a,b", "", "c")
}

// TestUsableWithoutAShape: a forecast shape with no cpus (or no memory)
// counts an agent's cpus as they are: the floor's a and b are 8 warm cpus
// (with a 3-cpu shape and memory they would be 2 x 3).
func TestUsableWithoutAShape(t *testing.T) {
	for _, c := range []struct{ ec, em float64 }{{0, 4096}, {3, 0}} {
		f := forecast.Demand{Reason: "none", ExecCPUs: c.ec, ExecMemMB: c.em}
		p := Decide(Input{Now: now, Agents: agents(On), Forecast: f, BootTime: time.Minute, MinWarmCPUs: 8})
		if p.WarmCPUs != 8 {
			t.Fatalf("shape %v cpus %v MB: %v warm cpus, want 8", c.ec, c.em, p.WarmCPUs)
		}
	}
}

// TestNoBootTime: with no boot time a booting agent's and a running job's
// room count whole (there is no boot-time window to spread over): the same
// warm cpus and expected misses as the same room free on a busy agent.
func TestNoBootTime(t *testing.T) {
	booting := []Agent{{ID: "c", CPUs: 8, MemMB: 32768, PricePerHour: 0.48, State: Booting, ReadyAt: now.Add(40 * time.Second)}}
	p := Decide(Input{Now: now, Agents: booting, Forecast: forecast.Demand{Reason: "none"}})
	if p.WarmCPUs != 8 {
		t.Fatalf("booting c, no boot time: %v warm cpus, want 8", p.WarmCPUs)
	}
	busy := []Agent{{ID: "b", CPUs: 8, MemMB: 32768, State: On, Busy: true, FreeCPUs: 4, FreeMemMB: 8192}}
	want := Decide(Input{Now: now, Agents: busy, Forecast: demand(2)}).ExpectedMisses
	busy[0].FreeCPUs, busy[0].FreeMemMB = 0, 0
	got := Decide(Input{Now: now, Agents: busy, Forecast: demand(2), Running: []Running{{CPUs: 4, MemMB: 8192, EndsAt: now.Add(time.Minute)}}}).ExpectedMisses
	none := Decide(Input{Now: now, Agents: busy, Forecast: demand(2)}).ExpectedMisses
	if math.Abs(got-want) > 1e-12 || !(none > want) {
		t.Fatalf("misses with a running job's 4 cpus %v, with 4 free cpus %v (want equal), with neither %v (want more)", got, want, none)
	}
}

// TestNoJobsForecast: a forecast of no jobs expects no misses.
func TestNoJobsForecast(t *testing.T) {
	p := Decide(Input{Now: now, Agents: agents(On), Forecast: forecast.Demand{OK: true}, BootTime: time.Minute})
	if p.ExpectedMisses != 0 {
		t.Fatalf("expected misses %v, want 0", p.ExpectedMisses)
	}
	check(t, p, "", "", "c,b,a")
}

// TestAgentTheSizeOfAnExecutorFits: an agent exactly one forecast
// executor big (4 cpus, 16384 MB), or within 1e-9 of it, can hold it:
// 0.5 jobs of one such executor, miss cost $1: a is kept (it saves
// 0.3935, TestMissCostByHand).
func TestAgentTheSizeOfAnExecutorFits(t *testing.T) {
	for _, c := range []struct{ ec, em float64 }{{4, 16384}, {4 + 1e-9, 16384}, {4, 16384 + 1e-9}} {
		f := demand(0.5)
		f.ExecCPUs, f.ExecMemMB = c.ec, c.em
		ag := agents(On)[1:] // b, a
		p := Decide(Input{Now: now, Agents: ag, Forecast: f, BootTime: time.Minute, MissCostUSD: 1})
		if len(p.KeepOn) == 0 || p.KeepOn[0].AgentID != "a" {
			t.Fatalf("executor %v cpus %v MB: keep %v, want a first", c.ec, c.em, ids(p.KeepOn))
		}
	}
}
