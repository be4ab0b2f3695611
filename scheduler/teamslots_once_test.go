package scheduler

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// secondThoughts places the jobs it is told about on one agent each,
// a different one at each call (as ilp can: CBC stopped at its time limit
// keeps whatever incumbent it has, so two solves of one model may answer
// two plans); other jobs go to next.
type secondThoughts struct {
	next  placement.Policy
	picks map[string][]string // job -> the agent of its 1st, 2nd, ... call
	calls map[string]int
}

func (p *secondThoughts) Name() string { return "second-thoughts" }

func (p *secondThoughts) Place(s placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	picks, ok := p.picks[d.JobID]
	if !ok {
		return p.next.Place(s, d)
	}
	n := p.calls[d.JobID]
	p.calls[d.JobID]++
	return placement.Plan{Policy: p.Name(), Outcome: placement.OutcomeIncumbent,
		Assignments: []placement.Assignment{{AgentID: picks[n%len(picks)], Executors: d.Executors}}}, nil
}

// TestProtectSlotsChecksThePlanStarted: the executor-slot check of a
// deadline job past its team's guarantee (protectSlots) is made on the
// plan the job starts with: the job is placed once. a1 holds the one
// 4-cpu slot g1 (owed, within g's guarantee) asks for; x1 (2 cpus, team
// x, no guarantee) fits a1 or a3. Placed twice, the check passed on the
// first plan (a3) and x1 started on the second (a1), taking g1's slot.
func TestProtectSlotsChecksThePlanStarted(t *testing.T) {
	agents := []placement.Agent{agent("a1", 8, 65536, 0.24), agent("a2", 8, 65536, 0.24), agent("a3", 8, 65536, 0.24)}
	for _, c := range []struct {
		picks []string
		want  []string
	}{
		{[]string{"a3", "a1"}, []string{"start x1 on a3x1", "start g1 on a1x1"}},
		{[]string{"a1", "a3"}, []string{"wait x1: team x past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team g (their executors would no longer fit)",
			"start g1 on a1x1"}},
	} {
		d := testDecider(t, Config{Policy: "firstfit"})
		pol := &secondThoughts{next: d.policy, picks: map[string][]string{"x1": c.picks}, calls: map[string]int{}}
		d.policy = pol
		in := passInput{now: t0, snap: snapOf(agents, "a1=4", "a2=3", "a3=2"), full: true,
			deadline: entriesOf(mkJob("x1", 1, 2, inTeam("x"), withDeadline(time.Hour)), mkJob("g1", 1, 4, inTeam("g"), withDeadline(2*time.Hour)))}
		in.deadlineQueued = len(in.deadline)
		in.teams, in.deadlineAll = teamsOf(t, "g guaranteed-cpus=8"), in.deadline
		if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, c.want) {
			t.Errorf("x1 placed on %v at its calls:\n got  %q\n want %q", c.picks, got, c.want)
		}
		if n := pol.calls["x1"]; n != 1 {
			t.Errorf("x1 placed on %v at its calls: the policy placed it %d times, want once", c.picks, n)
		}
	}
}

// TestProtectSlotsHeldJobNotPlaced: a deadline job past its team's
// guarantee that waits for its start time, or for its team's budget, is
// not placed for the slot check: it says why it waits (not the team's
// protection), and one waiting for its start time waits by choice, so
// regular jobs do not wait behind it. Same cluster as above: x1's plan
// would take g1's slot.
func TestProtectSlotsHeldJobNotPlaced(t *testing.T) {
	agents := []placement.Agent{agent("a1", 8, 65536, 0.24), agent("a2", 8, 65536, 0.24), agent("a3", 8, 65536, 0.24)}
	for _, c := range []struct {
		name   string
		x1     Job
		budget map[string]string
		want   []string
	}{{
		name: "start time ahead",
		x1:   mkJob("x1", 1, 2, inTeam("x"), withDeadline(time.Hour), withNotBefore(10*time.Minute)),
		want: []string{"wait x1: waiting for its start time 10:10 UTC", "start g1 on a1x1", "start r1 on a2x1"},
	}, {
		name:   "team budget",
		x1:     mkJob("x1", 1, 2, inTeam("x"), withDeadline(time.Hour)),
		budget: map[string]string{"x": "team x at its budget"},
		want:   []string{"wait x1: team x at its budget", "start g1 on a1x1", "start r1 on a2x1"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "firstfit"})
			pol := &secondThoughts{next: d.policy, picks: map[string][]string{"x1": {"a1"}}, calls: map[string]int{}}
			d.policy = pol
			in := passInput{now: t0, snap: snapOf(agents, "a1=4", "a2=3", "a3=2"), full: true, budgetHeld: c.budget,
				deadline: entriesOf(c.x1, mkJob("g1", 1, 4, inTeam("g"), withDeadline(2*time.Hour))),
				regular:  entriesOf(mkJob("r1", 1, 2, inTeam("g")))}
			in.deadlineQueued = len(in.deadline)
			in.teams, in.deadlineAll = teamsOf(t, "g guaranteed-cpus=8"), in.deadline
			if c.budget != nil {
				in.deadlineQueued-- // x1's (Core.budgetInput)
			}
			if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, c.want) {
				t.Errorf("\n got  %q\n want %q", got, c.want)
			}
			if n := pol.calls["x1"]; n != 0 {
				t.Errorf("the policy placed x1 %d times, want never", n)
			}
		})
	}
}

// placeCounter counts the policy's successful placements by job and room
// (the free cpus and memory of every agent placed on).
type placeCounter struct {
	placement.Policy
	n map[string]int
}

func (p *placeCounter) Place(s placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	plan, err := p.Policy.Place(s, d)
	if err == nil {
		var b strings.Builder
		fmt.Fprintf(&b, "%s|%v", d.JobID, d.Now.UnixNano())
		for _, a := range s.Agents {
			fmt.Fprintf(&b, "|%s:%g:%g", a.ID, a.FreeCPUs, a.FreeMemMB)
		}
		p.n[b.String()]++
	}
	return plan, err
}

// TestTeamPassInvariants (property) over random passes with teams
// guaranteed cpus or memory, teams without a guarantee, agents with
// fragmented room, powered-off agents, drivers kept or not. In every pass:
//   - no job is decided twice;
//   - the policy never places one job twice on the same room (protectSlots
//     placed a job it let start, then try placed it again);
//   - every start's and power-on's agents are agents the pass was given
//     (on, or off for a plan that powers them on);
//   - the starts' executors fit the agents' free room, the earlier starts'
//     taken.
func TestTeamPassInvariants(t *testing.T) {
	risky := 0 // passes where some job was past its guarantee with an owed slot at stake
	for seed := int64(1); seed <= 3000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		names := []string{"", "g", "h", "x"}
		var lines []string
		for _, n := range names[1:3] {
			l := fmt.Sprintf("%s guaranteed-cpus=%d", n, 2+rng.Intn(14))
			if rng.Intn(3) == 0 {
				l += fmt.Sprintf(" guaranteed-memory=%dm", 4096+rng.Intn(30000))
			}
			lines = append(lines, l)
		}
		if rng.Intn(3) == 0 {
			lines = append(lines, fmt.Sprintf("x max-cpus=%d", 4+rng.Intn(20)))
		}
		cfg := teamsOf(t, strings.Join(lines, "\n"))
		var agents, standby []placement.Agent
		onAt := map[string]int{}
		for i := 0; i < 2+rng.Intn(5); i++ {
			a := agent(fmt.Sprintf("a%d", i), float64(4+4*rng.Intn(4)), float64(8192*(1+rng.Intn(4))), 0.2)
			if rng.Intn(5) == 0 {
				a.ID = fmt.Sprintf("off%d", i)
				a.FreeCPUs, a.FreeMemMB = a.CPUs, a.MemMB
				standby = append(standby, a)
				continue
			}
			a.FreeCPUs, a.FreeMemMB = float64(rng.Intn(int(a.CPUs)+1)), float64(rng.Intn(int(a.MemMB)+1))
			a.Active = a.FreeCPUs < a.CPUs
			onAt[a.ID] = len(agents)
			agents = append(agents, a)
		}
		var running []runningJob
		for i := 0; i < rng.Intn(5); i++ {
			running = append(running, holding(fmt.Sprintf("r%d", i), names[rng.Intn(len(names))], float64(2+rng.Intn(6))))
		}
		var dj, rj []Job
		for i := 0; i < 2+rng.Intn(10); i++ {
			j := mkJob(fmt.Sprintf("j%02d", i), 1+rng.Intn(3), 1+rng.Intn(5), inTeam(names[rng.Intn(len(names))]),
				submittedAt(time.Duration(rng.Intn(100))*time.Second))
			j.ExecutorMemoryMB = 512 + 512*rng.Intn(8)
			if rng.Intn(4) == 0 {
				j.Spec.Driver = &Driver{Cores: float64(1 + rng.Intn(2)), MemoryMB: 1024 * (1 + rng.Intn(2))}
			}
			if rng.Intn(3) > 0 {
				withDeadline(time.Duration(10+rng.Intn(120)) * time.Minute)(&j)
				if rng.Intn(8) == 0 {
					withNotBefore(time.Duration(1+rng.Intn(20)) * time.Minute)(&j)
				}
				dj = append(dj, j)
			} else {
				rj = append(rj, j)
			}
		}
		pol := []string{"bfd", "firstfit", "dap", "spread", "consolidate"}[rng.Intn(5)]
		d := testDecider(t, Config{Policy: pol, DriverRoom: rng.Intn(2) == 0})
		pc := &placeCounter{Policy: d.policy, n: map[string]int{}}
		d.policy = pc
		in := passInput{now: t0, snap: placement.Snapshot{Agents: agents}, standby: standby, full: true, running: running,
			deadline: entriesOf(dj...), regular: entriesOf(rj...), teams: cfg}
		in.deadlineAll, in.deadlineQueued = in.deadline, len(in.deadline)
		tag := fmt.Sprintf("seed %d (%s)", seed, pol)
		ds := d.decide(in).decisions
		decided := map[*Entry]bool{}
		free := slices.Clone(agents)
		for _, dc := range ds {
			if decided[dc.entry] {
				t.Fatalf("%s: job %s decided twice in one pass: %q", tag, dc.entry.ID, describe(ds, 0))
			}
			decided[dc.entry] = true
			if dc.decisionExtra == nil {
				continue
			}
			for _, id := range dc.powerOn {
				if !slices.ContainsFunc(standby, func(a placement.Agent) bool { return a.ID == id }) {
					t.Fatalf("%s: job %s powers on %s, not an agent that is off", tag, dc.entry.ID, id)
				}
			}
			if dc.kind != decStart {
				continue
			}
			for _, as := range dc.plan.Assignments {
				i, on := onAt[as.AgentID]
				if !on {
					if !slices.Contains(dc.plan.Activated, as.AgentID) ||
						!slices.ContainsFunc(standby, func(a placement.Agent) bool { return a.ID == as.AgentID }) {
						t.Fatalf("%s: job %s starts on %s, an agent the pass was not given", tag, dc.entry.ID, as.AgentID)
					}
					continue
				}
				takeRoom(t, tag, &free[i], dc, as, ds)
			}
		}
		pc.placedOnce(t, tag, ds)
		if slices.ContainsFunc(ds, func(dc decision) bool {
			return dc.kind == decWait && strings.Contains(dc.wait.text, "executors would no longer fit")
		}) {
			risky++
		}
	}
	t.Logf("%d passes held a job for another team's executor slots", risky)
	if risky < 10 {
		t.Errorf("only %d passes held a job for another team's executor slots: the generator misses the case", risky)
	}
}

// TestPassInvariantsWide (property): as TestTeamPassInvariants, over
// passes that also boot agents (boot-aware placement, agents booting),
// evict running jobs (a preemption policy, teams reclaiming their
// guarantee) and hold teams at their maximum. In every pass:
//   - no job is decided twice, and the policy never places one job twice
//     on the same room;
//   - a start's agents are agents that are on, or off ones its plan powers
//     on; a power-on's agents are off (not on, not booting);
//   - an eviction's victims are running jobs the pass was given, not being
//     evicted already, and no job is evicted by two decisions;
//   - the starts' executors fit the agents' free room.
func TestPassInvariantsWide(t *testing.T) {
	seen := map[string]int{} // what the passes decided, so that none of the cases is missed
	for seed := int64(1); seed <= 4000; seed++ {
		rng := rand.New(rand.NewSource(seed))
		names := []string{"", "g", "h", "x"}
		var lines []string
		for _, n := range names[1:] {
			var l []string
			g := 0
			if rng.Intn(2) == 0 {
				g = 2 + rng.Intn(14)
				l = append(l, fmt.Sprintf("guaranteed-cpus=%d", g))
			}
			if rng.Intn(4) == 0 {
				l = append(l, fmt.Sprintf("max-cpus=%d", g+4+rng.Intn(20)))
			}
			if len(l) > 0 {
				lines = append(lines, n+" "+strings.Join(l, " "))
			}
		}
		if len(lines) == 0 {
			lines = append(lines, "g weight=2")
		}
		cfg := teamsOf(t, strings.Join(lines, "\n"))
		var on, standby []placement.Agent
		var booting []BootingAgent
		kind := map[string]string{}
		for i := 0; i < 2+rng.Intn(5); i++ {
			a := agent(fmt.Sprintf("a%d", i), float64(4+4*rng.Intn(4)), float64(8192*(1+rng.Intn(4))), 0.2)
			a.FreeCPUs, a.FreeMemMB = a.CPUs, a.MemMB
			switch rng.Intn(6) {
			case 0:
				kind[a.ID] = "off"
				standby = append(standby, a)
			case 1:
				kind[a.ID] = "booting"
				booting = append(booting, BootingAgent{Agent: a, ReadyAt: t0.Add(time.Duration(5+rng.Intn(50)) * time.Second)})
				b := a
				b.FreeCPUs, b.FreeMemMB = 0, 0
				standby = append(standby, b)
			default:
				kind[a.ID] = "on"
				on = append(on, a)
			}
		}
		// Running jobs, placed on the agents that are on.
		var running []runningJob
		runningAt := map[string]bool{}
		for i := 0; i < rng.Intn(6) && len(on) > 0; i++ {
			k := rng.Intn(len(on))
			a := &on[k]
			cpus := float64(1 + rng.Intn(3))
			if a.FreeCPUs < cpus || a.FreeMemMB < 2048 {
				continue
			}
			a.FreeCPUs -= cpus
			a.FreeMemMB -= 2048
			a.Active = true
			id := fmt.Sprintf("r%d", i)
			started := t0.Add(-time.Duration(1+rng.Intn(60)) * time.Minute)
			r := runningJob{id: id, state: Running, startedAt: &started, estimate: time.Duration(10+rng.Intn(60)) * time.Minute,
				team: names[rng.Intn(len(names))], plan: &placement.Plan{Assignments: []placement.Assignment{{AgentID: a.ID, Executors: 1}}},
				demand: placement.Demand{JobID: id, Executors: 1, CPUs: cpus, MemMB: 2048}, driverCPUs: 1, driverMemMB: 1024}
			if rng.Intn(3) == 0 {
				dl := t0.Add(time.Duration(30+rng.Intn(120)) * time.Minute)
				r.deadline = &dl
			}
			running = append(running, r)
			runningAt[id] = true
		}
		onAt := map[string]int{}
		for i := range on {
			onAt[on[i].ID] = i
		}
		var dj, rj []Job
		for i := 0; i < 2+rng.Intn(10); i++ {
			j := mkJob(fmt.Sprintf("j%02d", i), 1+rng.Intn(3), 1+rng.Intn(5), inTeam(names[rng.Intn(len(names))]),
				submittedAt(-time.Duration(rng.Intn(100))*time.Second))
			j.ExecutorMemoryMB = 512 + 512*rng.Intn(8)
			if rng.Intn(2) == 0 {
				withEstimate(time.Duration(5+rng.Intn(60)) * time.Minute)(&j)
			}
			if rng.Intn(3) > 0 {
				withDeadline(time.Duration(10+rng.Intn(120)) * time.Minute)(&j)
				if rng.Intn(8) == 0 {
					withNotBefore(time.Duration(1+rng.Intn(20)) * time.Minute)(&j)
				}
				dj = append(dj, j)
			} else {
				rj = append(rj, j)
			}
		}
		pol := []string{"bfd", "firstfit", "dap", "spread", "consolidate"}[rng.Intn(5)]
		pre := []PreemptionPolicy{PreemptNone, PreemptMDF, PreemptMLF, PreemptSRT}[rng.Intn(4)]
		d := testDecider(t, Config{Policy: pol, DriverRoom: rng.Intn(2) == 0, Preemption: pre})
		pc := &placeCounter{Policy: d.policy, n: map[string]int{}}
		d.policy = pc
		in := passInput{now: t0, snap: placement.Snapshot{Agents: on}, standby: standby, full: true, running: running,
			deadline: entriesOf(dj...), regular: entriesOf(rj...), teams: cfg}
		if rng.Intn(2) == 0 {
			in.boot = BootState{BootTime: 60 * time.Second, Booting: booting}
		}
		in.deadlineAll, in.deadlineQueued = in.deadline, len(in.deadline)
		tag := fmt.Sprintf("seed %d (%s, %s, boot %v)", seed, pol, pre, in.boot.BootTime)
		ds := d.decide(in).decisions
		decided := map[*Entry]bool{}
		evicted := map[string]bool{}
		free := slices.Clone(on)
		for _, dc := range ds {
			if decided[dc.entry] {
				t.Fatalf("%s: job %s decided twice in one pass: %q", tag, dc.entry.ID, describe(ds, 0))
			}
			decided[dc.entry] = true
			seen[dc.kind.String()]++
			if dc.kind == decWait && strings.Contains(dc.wait.text, "to boot") {
				seen["boot wait"]++
			}
			if dc.decisionExtra == nil {
				continue
			}
			if dc.kind == decStart && len(dc.plan.Activated) > 0 {
				seen["start powering on"]++
			}
			for _, id := range dc.powerOn {
				if kind[id] != "off" {
					t.Fatalf("%s: job %s powers on %s, which is %q", tag, dc.entry.ID, id, kind[id])
				}
			}
			for _, v := range dc.victims {
				if !runningAt[v.ID] || evicted[v.ID] {
					t.Fatalf("%s: job %s evicts %s: not a running job, or evicted already: %q", tag, dc.entry.ID, v.ID, describe(ds, 0))
				}
				evicted[v.ID] = true
			}
			if dc.kind != decStart {
				continue
			}
			for _, as := range dc.plan.Assignments {
				i, isOn := onAt[as.AgentID]
				if !isOn {
					if kind[as.AgentID] != "off" || !slices.Contains(dc.plan.Activated, as.AgentID) {
						t.Fatalf("%s: job %s starts on %s (%q), an agent that is not on and that it does not power on", tag, dc.entry.ID, as.AgentID, kind[as.AgentID])
					}
					continue
				}
				takeRoom(t, tag, &free[i], dc, as, ds)
			}
		}
		pc.placedOnce(t, tag, ds)
	}
	t.Logf("decisions: %v", seen)
	for _, k := range []string{"start", "wait", "evict", "power-on", "start powering on", "boot wait"} {
		if seen[k] < 5 {
			t.Errorf("only %d decisions %q: the generator misses the case", seen[k], k)
		}
	}
}

// TestProtectHeldJobNotJudged: the team protection's aggregate check
// (protect) does not judge a deadline job that waits for its start time
// or for its team's budget either: the job says why it waits, and one
// waiting for its start time waits by choice, so regular jobs do not wait
// behind it. x1 (3 cpus and a 1-cpu driver) would leave 4 of a1's 8 free
// cpus, less than g1's 5 (owed, within g's guarantee).
func TestProtectHeldJobNotJudged(t *testing.T) {
	agents := []placement.Agent{agent("a1", 8, 65536, 0.24)}
	for _, c := range []struct {
		name   string
		x1     Job
		budget map[string]string
		want   []string
	}{{
		name: "not held",
		x1:   mkJob("x1", 1, 3, inTeam("x"), withDeadline(time.Hour)),
		want: []string{"wait x1: team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g", "start g1 on a1x1", "wait r1: deadline jobs first [skipped]"},
	}, {
		name: "start time ahead",
		x1:   mkJob("x1", 1, 3, inTeam("x"), withDeadline(time.Hour), withNotBefore(10*time.Minute)),
		want: []string{"wait x1: waiting for its start time 10:10 UTC", "start g1 on a1x1", "start r1 on a1x1"},
	}, {
		name:   "team budget",
		x1:     mkJob("x1", 1, 3, inTeam("x"), withDeadline(time.Hour)),
		budget: map[string]string{"x": "team x at its budget"},
		want:   []string{"wait x1: team x at its budget", "start g1 on a1x1", "start r1 on a1x1"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "firstfit"})
			in := passInput{now: t0, snap: snapOf(agents, "a1=8"), full: true, budgetHeld: c.budget,
				deadline: entriesOf(c.x1, mkJob("g1", 1, 4, inTeam("g"), withDeadline(2*time.Hour))),
				regular:  entriesOf(mkJob("r1", 1, 2))}
			in.deadlineQueued = len(in.deadline)
			if c.budget != nil {
				in.deadlineQueued-- // x1's (Core.budgetInput)
			}
			in.teams, in.deadlineAll = teamsOf(t, "g guaranteed-cpus=8"), in.deadline
			if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, c.want) {
				t.Errorf("\n got  %q\n want %q", got, c.want)
			}
		})
	}
}

// takeRoom takes as's executors of dc's job from a, the room left on an
// agent that is on, and fails when they overfill it.
func takeRoom(t *testing.T, tag string, a *placement.Agent, dc decision, as placement.Assignment, ds []decision) {
	t.Helper()
	n := float64(as.Executors)
	a.FreeCPUs -= n * dc.entry.Demand.CPUs
	a.FreeMemMB -= n * dc.entry.Demand.MemMB
	if a.FreeCPUs < -1e-6 || a.FreeMemMB < -1e-6 {
		t.Fatalf("%s: job %s's %d executors overfill %s: %q", tag, dc.entry.ID, as.Executors, as.AgentID, describe(ds, 0))
	}
}

// placedOnce fails when the policy placed one job twice on the same room.
func (pc *placeCounter) placedOnce(t *testing.T, tag string, ds []decision) {
	t.Helper()
	for k, n := range pc.n {
		if n > 1 {
			t.Fatalf("%s: the policy placed one job %d times on the same room (%s): %q", tag, n, k, describe(ds, 0))
		}
	}
}
