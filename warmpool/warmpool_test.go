package warmpool

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
)

var now = time.Date(2026, 11, 5, 9, 0, 0, 0, time.UTC)

// three idle agents on: a and b (4 cpus, 16 GB, $0.24/h), c (8, 32, $0.48/h).
func agents(s State) []Agent {
	return []Agent{
		{ID: "c", CPUs: 8, MemMB: 32768, PricePerHour: 0.48, State: s},
		{ID: "b", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, State: s},
		{ID: "a", CPUs: 4, MemMB: 16384, PricePerHour: 0.24, State: s},
	}
}

// half a job of 4 cpus and 8 GB, with a deadline, in one executor of 2 cpus.
func demand(jobs float64) forecast.Demand {
	d := forecast.Demand{OK: true, Jobs: jobs, CPUs: 4 * jobs, MemMB: 8192 * jobs, DeadlineJobs: jobs, Dispersion: 1, ExecCPUs: 2, ExecMemMB: 4096}
	d.JobsP90 = d.Quantile(0.9)
	return d
}

func ids(ds []Decision) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.AgentID)
	}
	return strings.Join(s, ",")
}

func check(t *testing.T, p Plan, keep, on, off string) {
	t.Helper()
	if ids(p.KeepOn) != keep || ids(p.PowerOnNow) != on || ids(p.MayPowerOff) != off {
		t.Fatalf("keep [%s] power on [%s] may power off [%s]; want [%s] [%s] [%s]\n%+v", ids(p.KeepOn), ids(p.PowerOnNow), ids(p.MayPowerOff), keep, on, off, p)
	}
	for _, ds := range [][]Decision{p.KeepOn, p.PowerOnNow, p.MayPowerOff} {
		for _, d := range ds {
			if d.Reason == "" {
				t.Fatalf("%s: no reason", d.AgentID)
			}
		}
	}
}

// TestNoForecastKeepsOnlyTheFloor: without a forecast the rule keeps the
// cheapest agents up to the floor (8 cpus: a and b) and nothing else, and
// powers nothing on; with no floor it keeps nothing.
func TestNoForecastKeepsOnlyTheFloor(t *testing.T) {
	none := forecast.Demand{Reason: "empty history"}
	p := Decide(Input{Now: now, Agents: agents(On), Forecast: none, Ahead: none, BootTime: time.Minute, MinWarmCPUs: 8})
	check(t, p, "a,b", "", "c")
	if p.Reason != "no forecast: empty history" || p.MayPowerOff[0].Reason != p.Reason {
		t.Fatalf("%+v", p)
	}
	p = Decide(Input{Now: now, Agents: agents(Off), Forecast: none, Ahead: none, BootTime: time.Minute})
	check(t, p, "", "", "")
	p = Decide(Input{Now: now, Agents: agents(On), Forecast: none, Ahead: none, BootTime: time.Minute})
	check(t, p, "", "", "c,b,a")
}

// TestMissCostByHand: 0.5 forecast jobs in the boot time (60 s), each
// 4 cpus (one slot of a 4-cpu agent, two of c), all deadline jobs.
// Poisson(0.5) excess E[(N-k)+]: k=0 0.5, 1 0.10653, 2 0.01633, 3 0.00194,
// 4 0.00019. Bills over 60 s: a, b $0.004, c $0.008.
//
//	miss cost $1:    a saves 0.3935, b 0.0902, c 0.0161 (> 0.008): all kept.
//	miss cost $0.25: a saves 0.0984, b 0.0225, c 0.0040 (< 0.008): c may go.
func TestMissCostByHand(t *testing.T) {
	in := Input{Now: now, Agents: agents(On), Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 1}
	p := Decide(in)
	check(t, p, "a,b,c", "", "")
	if !strings.Contains(p.KeepOn[0].Reason, "warm for the forecast in 1m0s: expected misses 0.5000 -> 0.1065, for $0.0040") {
		t.Fatalf("%q", p.KeepOn[0].Reason)
	}
	in.MissCostUSD = 0.25
	p = Decide(in)
	check(t, p, "a,b", "", "c")
	if want := "not worth keeping: saves $0.0040 of expected misses for $0.0080 in 1m0s"; p.MayPowerOff[0].Reason != want {
		t.Fatalf("%q, want %q", p.MayPowerOff[0].Reason, want)
	}
	// Expected misses left with a and b warm (2 slots): 0.01633.
	if math.Abs(p.ExpectedMisses-0.01633) > 1e-5 || p.WarmCPUs != 8 {
		t.Fatalf("%+v", p)
	}
	// The default miss cost is $2: all kept, as at $1.
	in.MissCostUSD = 0
	check(t, Decide(in), "a,b,c", "", "")
}

// TestSlackAgainstBootAndQueue (issue 31's defect: a deadline job whose
// slack exceeds the boot time was taken as loose, though it waits in the
// queue besides the boot): the 0.5 forecast jobs of TestMissCostByHand
// (miss cost $1), with slacks of 70 s against a boot of 60 s. With no
// queue delay none is tight: no expected miss, nothing kept. With 30 s of
// queue delay the wait is 90 s: all are tight, all agents kept as in
// TestMissCostByHand. With a quarter of the slacks at 30 s and no queue
// delay, a quarter are tight: a saves $1 x 0.25 x 0.3935 = $0.0984, b
// $0.0225, c $0.0040 < $0.008: c may go.
func TestSlackAgainstBootAndQueue(t *testing.T) {
	f := demand(0.5)
	f.Slacks = make([]float64, forecast.SizeSample)
	for i := range f.Slacks {
		f.Slacks[i] = 70
	}
	in := Input{Now: now, Agents: agents(On), Forecast: f, BootTime: time.Minute, MissCostUSD: 1}
	p := Decide(in)
	check(t, p, "", "", "c,b,a")
	if p.ExpectedMisses != 0 || !strings.Contains(p.Reason, "(0% with less slack than a 1m0s wait)") {
		t.Fatalf("%+v", p)
	}
	in.QueueDelay = 30 * time.Second
	p = Decide(in)
	check(t, p, "a,b,c", "", "")
	if !strings.Contains(p.Reason, "(100% with less slack than a 1m30s wait)") {
		t.Fatalf("%q", p.Reason)
	}
	// a measured queue delay is not read to the nanosecond
	in.QueueDelay = 30*time.Second + 487444300*time.Nanosecond
	p = Decide(in)
	if !strings.Contains(p.Reason, "less slack than a 1m30s wait") {
		t.Fatalf("the wait is not rounded for reading: %q", p.Reason)
	}
	in.BootTime, in.QueueDelay = 2*time.Second, 1487444300*time.Nanosecond
	p = Decide(in)
	if !strings.Contains(p.Reason, "less slack than a 3.5s wait), in the next 2s") {
		t.Fatalf("the wait is not rounded for reading: %q", p.Reason)
	}
	in.BootTime = time.Minute
	in.QueueDelay = 0
	for i := range forecast.SizeSample / 4 {
		in.Forecast.Slacks[i] = 30
	}
	p = Decide(in)
	check(t, p, "a,b", "", "c")
	if want := "not worth keeping: saves $0.0040 of expected misses for $0.0080 in 1m0s"; p.MayPowerOff[0].Reason != want {
		t.Fatalf("%q, want %q", p.MayPowerOff[0].Reason, want)
	}
}

// TestReasonRoundsCPUs: the plan's reason gives the warm cpus to a tenth
// (a busy agent's free cpus counted for part of the boot time are not a
// round number).
func TestReasonRoundsCPUs(t *testing.T) {
	ag := agents(On)
	ag[0].State, ag[0].ReadyAt = Booting, now.Add(17*time.Second) // 8 x 43/60 = 5.7333 cpus
	p := Decide(Input{Now: now, Agents: ag, Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25})
	if !regexp.MustCompile(` with \d+(\.\d)? warm cpus$`).MatchString(p.Reason) || p.WarmCPUs == math.Round(p.WarmCPUs*10)/10 {
		t.Fatalf("%q (%v)", p.Reason, p.WarmCPUs)
	}
}

// TestQueueRunningAndShapes: the queue's waiting demand takes warm
// capacity first: with one job (4 cpus) waiting, a alone saves nothing
// but a and b together save $0.0984 for $0.008, and c (two slots more)
// $0.0226 for $0.008: all kept at $0.25 (the best prefix, not a greedy
// stop). With two waiting, also all. A running job ending within the boot
// time gives its cpus back for the part of the boot time after its end. Executors of 6 cpus make the 4-cpu
// agents useless, so the dearer c is kept instead of them.
func TestQueueRunningAndShapes(t *testing.T) {
	in := Input{Now: now, Agents: agents(On), Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25}
	check(t, Decide(in), "a,b", "", "c") // nothing waiting: as in TestMissCostByHand
	in.WaitingCPUs, in.WaitingMemMB = 4, 8192
	check(t, Decide(in), "a,b,c", "", "")
	in.WaitingCPUs, in.WaitingMemMB = 8, 16384
	check(t, Decide(in), "a,b,c", "", "")
	in.WaitingCPUs, in.WaitingMemMB = 4, 8192
	// A job ending now gives its 4 cpus back for the whole boot time, one
	// ending in 60 s none of them: as if nothing waited.
	in.Running = []Running{{CPUs: 4, MemMB: 8192, EndsAt: now}, {CPUs: 4, MemMB: 8192, EndsAt: now.Add(60 * time.Second)}}
	check(t, Decide(in), "a,b", "", "c")
	// Ending in 20 s and 50 s: 4 x (40/60 + 10/60) = 3.33 cpus back, 0.67
	// still waiting: b alone no longer covers the first forecast job.
	in.Running = []Running{{CPUs: 4, MemMB: 8192, EndsAt: now.Add(20 * time.Second)}, {CPUs: 4, MemMB: 8192, EndsAt: now.Add(50 * time.Second)}}
	check(t, Decide(in), "a,b,c", "", "")
	in = Input{Now: now, Agents: agents(On), Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25}
	in.Forecast.ExecCPUs = 6
	p := Decide(in)
	check(t, p, "c", "", "b,a")
	if !strings.HasPrefix(p.MayPowerOff[0].Reason, "too small for the forecast executors (6 cpus") {
		t.Fatalf("%q", p.MayPowerOff[0].Reason)
	}
}

// TestBusyAndBooting: busy agents and booting ones stay, and their free
// capacity is warm: a booting agent for the part of the boot time after it
// is ready. c (8 cpus, 2 slots) ready now covers the forecast, so a and b
// may go (a saves 0.25 x (0.01633 - 0.00194) = $0.0036 < $0.004); ready
// in 40 s it counts 8 x 20/60 = 2.67 cpus, less than one job: a and b are
// kept as if c were not there (a saves $0.0984, b $0.0225).
// A busy b with nothing free is no warm capacity: a and c are kept as
// they would be without b (a saves $0.0984, c then 0.25 x (0.10653 -
// 0.00194) = $0.0261). A booting c that a plan already fills is no warm
// room either.
func TestBusyAndBooting(t *testing.T) {
	ag := agents(On)
	ag[0].State, ag[0].ReadyAt = Booting, now
	p := Decide(Input{Now: now, Agents: ag, Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25})
	check(t, p, "c", "", "b,a")
	ag[0].ReadyAt = now.Add(40 * time.Second)
	p = Decide(Input{Now: now, Agents: ag, Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25})
	check(t, p, "c,a,b", "", "")
	if p.KeepOn[0].Reason != "booting, ready in 40s" {
		t.Fatalf("%q", p.KeepOn[0].Reason)
	}
	// c ready now but booting for a job placed on it (busy, nothing
	// free): no warm room, a and b are kept as if c were not there.
	ag[0].ReadyAt, ag[0].Busy = now, true
	p = Decide(Input{Now: now, Agents: ag, Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25})
	check(t, p, "c,a,b", "", "")
	ag = agents(On)
	ag[1].Busy, ag[1].FreeCPUs, ag[1].FreeMemMB = true, 0, 0
	p = Decide(Input{Now: now, Agents: ag, Forecast: demand(0.5), BootTime: time.Minute, MissCostUSD: 0.25})
	check(t, p, "b,a,c", "", "")
	if p.KeepOn[0].Reason != "holds work" {
		t.Fatalf("%q", p.KeepOn[0].Reason)
	}
}

// TestPowerOnAheadByHand: every agent off, 0.5 jobs forecast one boot
// time ahead (Lead 60 s): powering on costs the boot and the lead, 120 s:
// a, b $0.008, c $0.016. Miss cost $0.25: a saves 0.0984, b 0.0225, c
// 0.0041: a and b are powered on now, c stays off.
func TestPowerOnAheadByHand(t *testing.T) {
	in := Input{Now: now, Agents: agents(Off), Forecast: demand(0.1), Ahead: demand(0.5), Lead: time.Minute, BootTime: time.Minute, MissCostUSD: 0.25}
	p := Decide(in)
	check(t, p, "", "a,b", "")
	if !strings.Contains(p.PowerOnNow[0].Reason, "forecast 0.50 jobs (p90 1) in 1m0s from 1m0s: expected misses 0.5000 -> 0.1065, for $0.0080") {
		t.Fatalf("%q", p.PowerOnNow[0].Reason)
	}
	// An idle agent still on (a; nothing forecast within the boot time,
	// so not kept for that) is used before any agent that is off: it costs
	// the lead only ($0.004); then b is powered on.
	ag := agents(Off)
	ag[2].State = On
	in.Agents, in.Forecast = ag, demand(0)
	p = Decide(in)
	check(t, p, "a", "b", "")
}

// excess is E[(N-m)+] for N Poisson with mean mu: mu - m + sum over k < m
// of (m-k) P(N=k).
func excess(mu float64, m int) float64 {
	e, p := mu-float64(m), math.Exp(-mu)
	for k := 0; k < m; k++ {
		e += float64(m-k) * p
		p *= mu / float64(k+1)
	}
	return e
}

// TestPowerOnForTheBootTimesLateJobs: c (8 cpus) is on and idle, a and b
// (4 cpus each) are off; 2 deadline jobs of 4 cpus, each with 30 s of
// slack, are forecast within the 60 s boot time and 0.1 in the 15 s lead
// after it. c is kept: with its 8 cpus the jobs beyond the first two
// miss, E[(N-2)+] = 4/e^2 = 0.5413. An agent powered on now is ready at
// the end of the boot time: a job that finds no room u into it waits 60
// - u and makes its 30 s of slack when u >= 30, half of them (lateShare
// 0.5). So a power-on saves half of the boot time's misses besides the
// lead's: with 8 warm cpus 0.5 x 0.5413 + E[(N-2)+] at 0.1 (0.0002) =
// 0.2708; with a (12 cpus) 0.5 x E[(N-3)+] at 2 (0.2180) + 0.0000 =
// 0.1090; with b too (16) 0.5 x E[(N-4)+] (0.0751) = 0.0376. a saves
// 2 x 0.1618 = $0.32 and b $0.14, each for $0.005 (75 s at $0.24/h):
// both are powered on. The lead's 0.1 jobs alone would find c's 8 cpus
// free (a saves $0.0003): without the late jobs nothing is powered on,
// and with no slack known (every job tight, none late) neither.
func TestPowerOnForTheBootTimesLateJobs(t *testing.T) {
	ag := agents(Off)
	ag[0].State = On
	f := demand(2)
	f.Slacks = []float64{30}
	in := Input{Now: now, Agents: ag, Forecast: f, Ahead: demand(0.1), Lead: 15 * time.Second, BootTime: time.Minute, MissCostUSD: 2}
	p := Decide(in)
	check(t, p, "c", "a,b", "")
	if want := excess(2, 2); math.Abs(p.ExpectedMisses-want) > 1e-9 {
		t.Fatalf("expected misses %v, want %v", p.ExpectedMisses, want)
	}
	steps := []float64{0.5*excess(2, 2) + excess(0.1, 2), 0.5*excess(2, 3) + excess(0.1, 3), 0.5*excess(2, 4) + excess(0.1, 4)}
	for i, d := range p.PowerOnNow {
		if want := fmt.Sprintf("expected misses %.4f -> %.4f, for $0.0050", steps[i], steps[i+1]); !strings.Contains(d.Reason, want) {
			t.Fatalf("%s: %q, want %q", d.AgentID, d.Reason, want)
		}
	}
	in.Forecast.Slacks = nil
	check(t, Decide(in), "c", "", "")
}

// TestForecastBurstPowersOnOneBootTimeAhead: ten deadline jobs arrive at
// 10:00 every day (three days of history); a decision every 10 s with a
// boot time of 60 s powers the cheapest agent on in the decision whose
// lead window [now+60 s, now+70 s) first reaches 10:00 (09:58:55), not
// in the one before (09:58:45), and keeps nothing warm in the quiet hour
// before.
func TestForecastBurstPowersOnOneBootTimeAhead(t *testing.T) {
	var h []forecast.Job
	day := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	for d := 0; d < 3; d++ {
		for k := 0; k < 10; k++ {
			h = append(h, forecast.Job{SubmittedAt: day.Add(time.Duration(d)*24*time.Hour + time.Duration(k)*3*time.Second),
				CPUs: 4, MemMB: 8192, ExecutorCPUs: 2, ExecutorMemMB: 4096, Deadline: true, SlackSeconds: 30, RunSeconds: 100})
		}
	}
	boot, lead := time.Minute, 10*time.Second
	decide := func(at time.Time) Plan {
		m := forecast.Fit(h, at, forecast.Options{})
		if !m.OK || m.Level != forecast.LevelDay {
			t.Fatalf("%+v", m)
		}
		return Decide(Input{Now: at, Agents: agents(Off), Forecast: m.Expect(at, at.Add(boot)), Ahead: m.Expect(at.Add(boot), at.Add(boot+lead)),
			Lead: lead, BootTime: boot})
	}
	burst := day.Add(3 * 24 * time.Hour)
	first := time.Time{}
	for at := burst.Add(-time.Hour + 5*time.Second); at.Before(burst); at = at.Add(lead) {
		if p := decide(at); len(p.PowerOnNow) > 0 {
			first = at
			if ids(p.PowerOnNow)[0] != 'a' {
				t.Fatalf("at %s: %+v", at, p)
			}
			break
		}
	}
	if want := burst.Add(-boot - 5*time.Second); !first.Equal(want) {
		t.Fatalf("first power-on at %s, want %s (one boot time and half a lead before the burst)", first.Format(time.TimeOnly), want.Format(time.TimeOnly))
	}
}

func BenchmarkDecide10kAgents(b *testing.B) {
	var ag []Agent
	for i := 0; i < 10000; i++ {
		s := []State{On, Off, Off, Booting}[i%4]
		ag = append(ag, Agent{ID: fmt.Sprintf("a%05d", i), CPUs: float64(4 * (1 + i%3)), MemMB: float64(16384 * (1 + i%3)), PricePerHour: 0.24 * float64(1+i%3), State: s, Busy: i%8 == 0, FreeCPUs: 2, FreeMemMB: 4096})
	}
	in := Input{Now: now, Agents: ag, Forecast: demand(300), Ahead: demand(300), BootTime: time.Minute, MinWarmCPUs: 100}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Decide(in)
	}
}

// TestUsableCapacity: warm capacity counts whole executors of the
// forecast's shape (2 cpus, 6 GB here). A busy b with 4 cpus but 4 GB
// free holds none: a (4 cpus: 2 executors) and c (8 cpus: 4) are kept as
// with nothing warm (a saves $0.0984, c $0.0261 at $0.25). With 16 GB
// free, b holds one job: a saves 0.25 x (0.10653 - 0.01633) = $0.0225,
// c 0.25 x (0.01633 - 0.00019) = $0.0040 < $0.008: c may go.
func TestUsableCapacity(t *testing.T) {
	f := demand(0.5)
	f.MemMB, f.ExecMemMB = 12288*0.5, 6144
	ag := agents(On)
	ag[1].Busy, ag[1].FreeCPUs, ag[1].FreeMemMB = true, 4, 4096
	p := Decide(Input{Now: now, Agents: ag, Forecast: f, BootTime: time.Minute, MissCostUSD: 0.25})
	check(t, p, "b,a,c", "", "")
	ag[1].FreeMemMB = 16384
	p = Decide(Input{Now: now, Agents: ag, Forecast: f, BootTime: time.Minute, MissCostUSD: 0.25})
	check(t, p, "b,a", "", "c")
}

// FuzzDecide (property): whatever the agents and the forecast (NaN,
// negative, huge), Decide does not panic; every on agent is in exactly one
// of KeepOn and MayPowerOff, every booting one in KeepOn, and only agents
// that are off are powered on.
func FuzzDecide(f *testing.F) {
	f.Add(4.0, 16384.0, 0.24, 0.5, 4.0, 2.0, 4096.0, 2.0, 8.0, uint8(7))
	f.Add(math.NaN(), -1.0, math.Inf(1), 1e300, math.NaN(), 0.0, -5.0, -1.0, math.NaN(), uint8(255))
	f.Fuzz(func(t *testing.T, cpus, mem, price, jobs, jobCPUs, execC, execM, missCost, floor float64, states uint8) {
		var ag []Agent
		for i := 0; i < 8; i++ {
			s := []State{On, Off, Booting, On}[(states>>(i%4*2))&3]
			ag = append(ag, Agent{ID: fmt.Sprint("a", i), CPUs: cpus * float64(i%3+1), MemMB: mem, PricePerHour: price * float64(i%2+1), State: s,
				Busy: i%3 == 0, FreeCPUs: cpus / 2, FreeMemMB: mem / 2, ReadyAt: now.Add(time.Duration(i) * time.Second)})
		}
		d := forecast.Demand{OK: true, Jobs: jobs, CPUs: jobs * jobCPUs, MemMB: jobs * mem, DeadlineJobs: jobs / 2, Dispersion: 1, ExecCPUs: execC, ExecMemMB: execM,
			JobCPUs: []float64{jobCPUs, 2 * jobCPUs}}
		if !(jobs >= 0 && jobs < 1e6) { // what Expect can answer: finite, bounded by MaxHorizon
			d.Jobs, d.CPUs, d.DeadlineJobs = 1, jobCPUs, 0.5
		}
		p := Decide(Input{Now: now, Agents: ag, Forecast: d, Ahead: d, Lead: 15 * time.Second, BootTime: time.Minute, MissCostUSD: missCost, MinWarmCPUs: floor})
		seen := map[string]int{}
		for _, ds := range [][]Decision{p.KeepOn, p.MayPowerOff} {
			for _, x := range ds {
				seen[x.AgentID]++
			}
		}
		for _, x := range p.PowerOnNow {
			if ag[x.AgentID[1]-'0'].State != Off {
				t.Fatalf("%s powered on: %+v", x.AgentID, ag)
			}
		}
		for _, a := range ag {
			if (a.State == On || a.State == Booting) && seen[a.ID] != 1 {
				t.Fatalf("%s (%s) in %d lists: %+v", a.ID, a.State, seen[a.ID], p)
			}
		}
	})
}

// BenchmarkDecide300Agents2000Jobs: a busy cluster's decision: 300
// agents (half idle and on, a quarter busy, a quarter off), 2000 running
// jobs ending 4 to 14 minutes from now, and forecasts fitted on 2000 jobs submitted over the last 20
// minutes (about 500 and 250 jobs expected in the boot time and the lead
// after it).
func BenchmarkDecide300Agents2000Jobs(b *testing.B) {
	var h []forecast.Job
	var run []Running
	for i := 0; i < 2000; i++ {
		c := float64(1 + (i*7)%16)
		h = append(h, forecast.Job{SubmittedAt: now.Add(-time.Duration(i) * 600 * time.Millisecond), CPUs: c, MemMB: 2048 * c,
			ExecutorCPUs: 1, ExecutorMemMB: 2048, Deadline: i%3 == 0, SlackSeconds: float64(60 + i%240), RunSeconds: 300})
		run = append(run, Running{CPUs: c, MemMB: 2048 * c, EndsAt: now.Add(4*time.Minute + time.Duration(i%600)*time.Second)})
	}
	m := forecast.Fit(h, now, forecast.Options{})
	boot, lead := 5*time.Minute, 2*time.Minute
	in := Input{Now: now, Forecast: m.Expect(now, now.Add(boot)), Ahead: m.Expect(now.Add(boot), now.Add(boot+lead)),
		Lead: lead, BootTime: boot, Running: run, WaitingCPUs: 200, WaitingMemMB: 409600, MissCostUSD: 0.5}
	if !in.Forecast.OK || in.Forecast.Jobs < 100 {
		b.Fatalf("%+v", in.Forecast)
	}
	for i := 0; i < 300; i++ {
		s := []State{On, On, On, Off}[i%4]
		a := Agent{ID: fmt.Sprintf("a%03d", i), CPUs: 16, MemMB: 65536, PricePerHour: 0.48 + 0.01*float64(i%5), State: s}
		if i%4 == 1 {
			a.Busy, a.FreeCPUs, a.FreeMemMB = true, 4, 8192
		}
		in.Agents = append(in.Agents, a)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Decide(in)
	}
}
