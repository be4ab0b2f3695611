package warmpool

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/sparkpack/sparkpack/forecast"
)

// DefaultMissCostUSD is the price of one missed deadline when none is
// configured: $2, about twenty minutes of the whole thesis14 cluster
// ($6/h) or eight hours of its cheapest agent. A 4-cpu agent at $0.24/h is
// then kept warm over a 60 s boot time while it avoids more than one
// expected miss in 500 such windows. Tuned on hour 0, seeds 1-3, of the
// thesis workload (of $0.5, $1, $2, $4: the lowest whose 2-minute warm
// pool missed no more deadlines than plain 10-minute power-off, at a lower
// bill; still so after the slack fix, though with boot-aware placement no
// value meets that for both fifo-consolidate and dap, and $8 is the
// lowest within 2 points of always-on's misses there); docs/power.md, "A
// warm pool sized from a forecast".
const DefaultMissCostUSD = 2.0

// State is an agent's power state as the rule sees it.
type State string

const (
	On      State = "on"
	Off     State = "off"
	Booting State = "booting"
)

// Agent is one agent power management may keep on, power off or on.
type Agent struct {
	ID           string
	CPUs, MemMB  float64
	PricePerHour float64
	State        State
	// ReadyAt: when a booting agent registers (zero: unknown, within the
	// boot time).
	ReadyAt time.Time
	// Busy: an on agent that holds work (it stays on whatever the rule
	// says), or a booting one that a plan already counts on (a job placed
	// on it waits for its boot, and is not in the queue's waiting
	// demand); FreeCPUs and FreeMemMB are what it has left.
	Busy                bool
	FreeCPUs, FreeMemMB float64
}

// Running is a running job: its cpus and memory free at EndsAt.
type Running struct {
	CPUs, MemMB float64
	EndsAt      time.Time
}

// Input is everything Decide needs.
type Input struct {
	Now    time.Time
	Agents []Agent
	// Forecast is the demand arriving in [Now, Now+BootTime): what an
	// agent powered off now could not come back for. Ahead is the demand
	// arriving in [Now+BootTime, Now+BootTime+Lead): what an agent powered
	// on now is the last to be ready for (if it is not powered on until
	// the next decision, Lead later, it misses them).
	Forecast, Ahead forecast.Demand
	Lead            time.Duration
	// QueueDelay is how long a job that finds no warm room is expected to
	// wait in the queue besides the boot (the caller measures it, e.g. the
	// recent jobs' waits beyond a boot). A forecast deadline job that
	// finds no warm room misses its deadline when its slack (the
	// forecast's Slacks: deadline minus submission minus the measured run
	// time) is below BootTime + QueueDelay; a forecast without slacks
	// takes every deadline job as tight.
	QueueDelay time.Duration
	// WaitingCPUs and WaitingMemMB are the queue's waiting demand: it
	// takes warm capacity before any forecast job.
	WaitingCPUs, WaitingMemMB float64
	Running                   []Running
	BootTime                  time.Duration
	// MissCostUSD is the price of one missed deadline (<= 0:
	// DefaultMissCostUSD).
	MissCostUSD float64
	// MinWarmCPUs is the floor: the cpus of the agents on (busy or not)
	// never drop below it.
	MinWarmCPUs float64
}

// Decision is one agent's part of a Plan, with the reason (for the logs
// and the dashboard).
type Decision struct {
	AgentID string
	Reason  string
}

// Plan is Decide's answer. Every on agent is in KeepOn or MayPowerOff; an
// off agent to power on now is in PowerOnNow; the others stay off.
type Plan struct {
	KeepOn, PowerOnNow, MayPowerOff []Decision
	// WarmCPUs is the free cpus on or booting after the plan.
	WarmCPUs float64
	// ExpectedMisses over the boot time with the plan's warm capacity, and
	// the bill of the idle agents it keeps (or powers) on over that time.
	ExpectedMisses, IdleBillUSD float64
	// Reason sums the plan up ("no forecast: ...", "forecast ...").
	Reason string
}

type cand struct {
	i    int
	cost float64 // $ over its window
}

// Decide chooses the warm pool. Agents are taken cheapest per cpu first
// (then cheapest, then by id), skipping those too small for one executor
// of the forecast jobs' p90 shape; an agent is kept (or powered on) while
// the expected misses it saves, times the miss cost, exceed its bill over
// the window. Runtime is O(n log n) in the agents.
func Decide(in Input) Plan {
	missCost := in.MissCostUSD
	if !(missCost > 0) || math.IsInf(missCost, 0) {
		missCost = DefaultMissCostUSD
	}
	boot := max(in.BootTime, 0)
	lead := in.Lead
	if lead <= 0 {
		lead = boot
	}
	// A job without warm room waits for a boot and the queue: the
	// deadline jobs whose slack is below that wait are the tight ones.
	wait := boot + max(in.QueueDelay, 0)
	var p Plan
	decided := make([]bool, len(in.Agents))
	order := make([]int, len(in.Agents))
	for i := range order {
		order[i] = i
	}
	sort.Slice(order, func(x, y int) bool {
		a, b := in.Agents[order[x]], in.Agents[order[y]]
		pa, pb := perCPU(a), perCPU(b)
		if pa != pb {
			return pa < pb
		}
		if a.PricePerHour != b.PricePerHour {
			return a.PricePerHour < b.PricePerHour
		}
		return a.ID < b.ID
	})

	// Busy and booting agents stay; their free capacity is warm.
	onCPUs := 0.0
	// Warm capacity is counted in usable cpus: whole executors of the
	// forecast's p90 shape that fit in what an agent has free (a busy
	// agent's 2 free cpus without the memory for an executor hold none).
	ec, em := in.Forecast.ExecCPUs, in.Forecast.ExecMemMB
	usable := func(c, m float64) float64 {
		c, m = math.Max(c, 0), math.Max(m, 0)
		if !(ec > 0) || !(em > 0) {
			return c
		}
		return ec * math.Min(math.Floor(c/ec+1e-9), math.Floor(m/em+1e-9))
	}
	var freeC, freeM float64
	for i, a := range in.Agents {
		switch {
		case a.State == On && a.Busy:
			decided[i] = true
			onCPUs += a.CPUs
			freeC += usable(a.FreeCPUs, a.FreeMemMB)
			freeM += math.Max(a.FreeMemMB, 0)
			p.KeepOn = append(p.KeepOn, Decision{a.ID, "holds work"})
		case a.State == Booting:
			// Arrivals spread over the boot time find it ready for the
			// part of it after ReadyAt.
			decided[i] = true
			w := 1.0
			if !a.ReadyAt.IsZero() && boot > 0 {
				w = math.Min(math.Max(in.Now.Add(boot).Sub(a.ReadyAt).Seconds()/boot.Seconds(), 0), 1)
			}
			c, m := a.CPUs, a.MemMB
			if a.Busy { // the part a plan counts on is no warm room
				c, m = a.FreeCPUs, a.FreeMemMB
			}
			freeC += w * usable(c, m)
			freeM += w * math.Max(m, 0)
			why := "booting"
			if !a.ReadyAt.IsZero() {
				why = fmt.Sprintf("booting, ready in %s", a.ReadyAt.Sub(in.Now).Round(time.Second))
			}
			p.KeepOn = append(p.KeepOn, Decision{a.ID, why})
		}
	}
	// The floor: cheapest idle agents until the cpus on reach it.
	for _, i := range order {
		a := in.Agents[i]
		if decided[i] || a.State != On || onCPUs >= in.MinWarmCPUs-1e-9 {
			continue
		}
		decided[i] = true
		onCPUs += a.CPUs
		freeC += usable(a.CPUs, a.MemMB)
		freeM += a.MemMB
		p.KeepOn = append(p.KeepOn, Decision{a.ID, fmt.Sprintf("min warm cpus %g", in.MinWarmCPUs)})
	}

	rest := func(reason string) Plan {
		for i, a := range in.Agents {
			if !decided[i] && a.State == On {
				p.MayPowerOff = append(p.MayPowerOff, Decision{a.ID, reason})
			}
		}
		p.WarmCPUs = freeC
		return p
	}
	if !in.Forecast.OK {
		p.Reason = "no forecast: " + in.Forecast.Reason
		return rest(p.Reason)
	}

	// The queue's waiting demand comes first; running jobs ending within
	// the boot time give theirs back for the part of it after their end. misses is the expected number of deadline jobs
	// (that cannot absorb a boot) arriving beyond the warm capacity.
	f := in.Forecast
	var endC float64
	for _, r := range in.Running {
		// Arrivals spread over the boot time find its cpus free for the
		// part of it after its end.
		w := 1.0
		if boot > 0 {
			w = math.Min(math.Max(in.Now.Add(boot).Sub(r.EndsAt).Seconds()/boot.Seconds(), 0), 1)
		}
		endC += w * usable(r.CPUs, r.MemMB)
	}
	// One table a demand: misses is asked once per candidate agent.
	tables := map[*forecast.Demand]*forecast.BeyondTable{}
	misses := func(d *forecast.Demand, c, m float64) float64 {
		if !(d.Jobs > 0) {
			return 0
		}
		t, ok := tables[d]
		if !ok {
			t = d.BeyondTable(d.Tails())
			tables[d] = t
		}
		// (Memory is in c already: usable cpus.)
		c = c + endC - in.WaitingCPUs
		return d.DeadlineJobs / d.Jobs * d.TightShare(wait) * t.At(math.Max(c, 0))
	}
	// An agent powered on now also serves the boot time's jobs that find
	// no room but come late enough for their slack to cover the rest of
	// its boot (lateShare of them): ahead is the lead window's demand
	// while agents are powered on ahead. Idle agents still on serve those
	// jobs whether kept for the lead or not (keeping them for the boot
	// time was weighed before): they count from the start (onFrom).
	var ahead *forecast.Demand
	var onFrom float64
	late, inWindow := lateShare(f, boot, max(in.QueueDelay, 0), wait), misses
	misses = func(d *forecast.Demand, c, m float64) float64 {
		if d == ahead {
			return inWindow(d, c, m) + late*inWindow(&f, math.Max(c, onFrom), m)
		}
		return inWindow(d, c, m)
	}
	fits := func(a Agent) bool {
		return a.CPUs+1e-9 >= f.ExecCPUs && a.MemMB+1e-9 >= f.ExecMemMB
	}
	small := fmt.Sprintf("too small for the forecast executors (%g cpus, %g MB)", f.ExecCPUs, f.ExecMemMB)

	// best is the prefix of cands (in their order) whose bill plus
	// expected miss cost over d is lowest: the first k of them are taken.
	// Not a greedy stop: an agent that only covers the queue saves nothing
	// alone, but makes the next one worth it.
	best := func(cands []cand, d *forecast.Demand) int {
		c, m, bill := freeC, freeM, 0.0
		bestK, bestTotal := 0, missCost*misses(d, c, m)
		for k, x := range cands {
			if bill+x.cost >= bestTotal { // bills only grow: no longer prefix is cheaper
				break
			}
			a := in.Agents[x.i]
			c, m, bill = c+usable(a.CPUs, a.MemMB), m+a.MemMB, bill+x.cost
			if total := bill + missCost*misses(d, c, m); total < bestTotal-1e-15 {
				bestK, bestTotal = k+1, total
			}
		}
		return bestK
	}
	take := func(a Agent, d *forecast.Demand, cost float64, what string) Decision {
		before := misses(d, freeC, freeM)
		freeC += usable(a.CPUs, a.MemMB)
		freeM += a.MemMB
		p.IdleBillUSD += cost
		return Decision{a.ID, fmt.Sprintf("%s: expected misses %.4f -> %.4f, for $%.4f", what, before, misses(d, freeC, freeM), cost)}
	}
	why := map[int]string{}
	notWorth := func(d *forecast.Demand, cands []cand, suffix string) {
		base := misses(d, freeC, freeM)
		gains := map[[2]float64]float64{} // by agent size: agents alike cost one Excess
		for _, x := range cands {
			a := in.Agents[x.i]
			if decided[x.i] || why[x.i] != "" {
				continue
			}
			size := [2]float64{a.CPUs, a.MemMB}
			gain, ok := gains[size]
			if !ok {
				gain = missCost * (base - misses(d, freeC+usable(a.CPUs, a.MemMB), freeM+a.MemMB))
				gains[size] = gain
			}
			why[x.i] = fmt.Sprintf("not worth keeping: saves $%.4f of expected misses for $%.4f%s", gain, x.cost, suffix)
		}
	}

	// Keep idle agents on where they save more than they cost over the
	// boot time (an agent powered off now cannot be back sooner).
	var cands []cand
	for _, i := range order {
		a := in.Agents[i]
		if decided[i] || a.State != On {
			continue
		}
		if !fits(a) {
			why[i] = small
			continue
		}
		cands = append(cands, cand{i, a.PricePerHour * boot.Hours()})
	}
	k := best(cands, &f)
	for _, x := range cands[:k] {
		decided[x.i] = true
		p.KeepOn = append(p.KeepOn, take(in.Agents[x.i], &f, x.cost, "warm for the forecast in "+boot.String()))
	}
	p.ExpectedMisses = misses(&f, freeC, freeM)
	notWorth(&f, cands[k:], " in "+boot.String())

	// Power on ahead of the demand one boot time away: first idle agents
	// still on (no boot to pay), then agents that are off (the boot and
	// the lead billed).
	if in.Ahead.OK && in.Ahead.Jobs > 0 {
		ah := in.Ahead
		ahead = &ah
		lh := lead.Hours()
		var cands []cand
		onFrom = freeC
		for _, i := range order {
			if a := in.Agents[i]; !decided[i] && a.State == On && fits(a) {
				cands = append(cands, cand{i, a.PricePerHour * lh})
				onFrom += usable(a.CPUs, a.MemMB)
			}
		}
		for _, i := range order {
			if a := in.Agents[i]; a.State == Off && fits(a) {
				cands = append(cands, cand{i, a.PricePerHour * (lh + boot.Hours())})
			}
		}
		k := best(cands, &ah)
		what := fmt.Sprintf("forecast %.2f jobs (p90 %g) in %s from %s", ah.Jobs, ah.JobsP90, lead, boot)
		for _, x := range cands[:k] {
			decided[x.i] = true
			a := in.Agents[x.i]
			d := take(a, &ah, x.cost, what)
			if a.State == On {
				p.KeepOn = append(p.KeepOn, d)
			} else {
				p.PowerOnNow = append(p.PowerOnNow, d)
			}
		}
		notWorth(&ah, cands[k:], "")
	}
	p.Reason = fmt.Sprintf("forecast %.2f jobs (p90 %g), %.2f with a deadline (%.0f%% with less slack than a %s wait), in the next %s; %.3f expected misses with %.1f warm cpus",
		f.Jobs, f.JobsP90, f.DeadlineJobs, 100*f.TightShare(wait), readable(wait), readable(boot), p.ExpectedMisses, freeC)
	for i, a := range in.Agents {
		if !decided[i] && a.State == On {
			r := why[i]
			if r == "" {
				r = "not needed"
			}
			p.MayPowerOff = append(p.MayPowerOff, Decision{a.ID, r})
		}
	}
	p.WarmCPUs = freeC
	return p
}

func perCPU(a Agent) float64 {
	if a.CPUs <= 0 {
		return math.Inf(1)
	}
	return a.PricePerHour / a.CPUs
}

// lateShare is the share of the boot time's deadline jobs that find no
// warm room and would still meet their deadline on an agent powered on
// now. Such a job waits the rest of the boot and the queue delay; one
// arriving u into the boot time with slack s makes it when boot - u +
// queueDelay <= s. Arrivals spread over the boot time: a share (s -
// queueDelay) / boot of them, for each slack of the forecast below wait
// (the jobs that miss without warm room), over those. Without slacks,
// none.
func lateShare(f forecast.Demand, boot, queueDelay, wait time.Duration) float64 {
	if boot <= 0 {
		return 0
	}
	n, sum := 0, 0.0
	for _, s := range f.Slacks {
		if s >= wait.Seconds() {
			break
		}
		n++
		sum += math.Min(math.Max(s-queueDelay.Seconds(), 0)/boot.Seconds(), 1)
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// readable rounds a duration for the decision's reason (which the
// dashboard, `sparkpack forecast` and the log show): a measured queue
// delay makes the wait "3.4874443s", read as "3.5s".
func readable(d time.Duration) time.Duration {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second)
	case d >= time.Second:
		return d.Round(100 * time.Millisecond)
	default:
		return d.Round(time.Millisecond)
	}
}
