package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// attribution.go, boot.go, predict.go and teams.go (docs/testing.md,
// "Mutation testing"); the expected figures are derived by hand in the
// comments.

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

// TestAttributionFollowsAgentSize: agent a ($1/h) active 10:00-11:00, job
// j holding 2 cpus and 4 GiB all along; at 10:30 the agent's size changes
// (the holding does not). Shares by hand: 8 cpus/32 GiB: max(2/8, 4/32) =
// 1/4; 4 cpus/32 GiB: max(2/4, 4/32) = 1/2; 8 cpus/8 GiB: max(2/8, 4/8) =
// 1/2. So j = $0.125 + $0.25 = $0.375 and idle = $0.625 in both cases.
func TestAttributionFollowsAgentSize(t *testing.T) {
	for _, c := range []struct {
		name      string
		cpus, mem float64
	}{{"fewer cpus", 4, 32768}, {"less memory", 8, 8192}} {
		t.Run(c.name, func(t *testing.T) {
			m := NewCostMeter(t0)
			a := placement.Agent{ID: "a", CPUs: 8, MemMB: 32768, PriceMicroUSDPerHour: 1e6, Active: true}
			hold := map[string][]placement.Holding{"a": {{JobID: "j", CPUs: 2, MemMB: 4096}}}
			m.Observe(t0, placement.Snapshot{Agents: []placement.Agent{a}, Holdings: hold})
			a.CPUs, a.MemMB = c.cpus, c.mem
			m.Observe(t0.Add(30*time.Minute), placement.Snapshot{Agents: []placement.Agent{a}, Holdings: hold})
			a.Active = false
			m.Observe(t0.Add(time.Hour), placement.Snapshot{Agents: []placement.Agent{a}})
			jobs, idle := m.Attributed(t0.Add(time.Hour))
			if !near(jobs["j"].CostUSD, 0.375) || !near(idle, 0.625) {
				t.Fatalf("j $%v, idle $%v; want $0.375, $0.625", jobs["j"].CostUSD, idle)
			}
		})
	}
}

// TestCheckpointOrder: the ledger comes sorted by bucket, then job id
// (idle, "", first): job y in the 10:00 bucket, job x in the 10:01 one.
func TestCheckpointOrder(t *testing.T) {
	m := NewCostMeter(t0)
	a := placement.Agent{ID: "a", CPUs: 8, MemMB: 32768, PriceMicroUSDPerHour: 1e6, Active: true}
	m.Observe(t0, placement.Snapshot{Agents: []placement.Agent{a}, Holdings: map[string][]placement.Holding{"a": {{JobID: "y", CPUs: 2}}}})
	m.Observe(t0.Add(time.Minute), placement.Snapshot{Agents: []placement.Agent{a}, Holdings: map[string][]placement.Holding{"a": {{JobID: "x", CPUs: 2}}}})
	_, ledger := m.Checkpoint(t0.Add(2 * time.Minute))
	var got []string
	for _, e := range ledger {
		got = append(got, e.Bucket.Format("15:04")+" "+e.JobID)
	}
	want := []string{"10:00 ", "10:00 y", "10:01 ", "10:01 x"}
	if !slices.Equal(got, want) {
		t.Fatalf("ledger order %q, want %q", got, want)
	}
}

// TestDecideBootHeldOnBootingAgents: what running jobs hold on an agent
// that is booting is not free when it is up. b1 (8 cpus, 32 GiB) boots,
// ready by 10:00:40 UTC; a job of one 4-cpu executor (1024 + 384 MiB) shares its
// boot when b1 is free (TestDecideBootAware's first case) but not when a
// running job holds 6 of its cpus (2 left) or 31744 of its MiB (1024
// left): then off1 is powered on. A running job recovered after a restart
// (no plan) holds nothing known.
func TestDecideBootHeldOnBootingAgents(t *testing.T) {
	a1 := agent("a1", 4, 16384, 0.24)
	b1 := agent("b1", 8, 32768, 0.48)
	off1 := fullAgent(agent("off1", 8, 32768, 0.48))
	onB1 := func(cpus, mem float64) runningJob {
		return runningJob{id: "early", state: Running, plan: &placement.Plan{Assignments: []placement.Assignment{{AgentID: "b1", Executors: 1}}},
			demand: placement.Demand{Executors: 1, CPUs: cpus, MemMB: mem}}
	}
	recovered := runningJob{id: "recovered", state: Running}
	for _, c := range []struct {
		name    string
		running []runningJob
		want    string
	}{
		{"b1 free", []runningJob{recovered}, "wait d1: waiting for b1 to boot, ready by 10:00:40 UTC"},
		{"6 of b1's cpus held", []runningJob{recovered, onB1(6, 1408)}, "power on off1 for d1: waiting for off1 to boot, ready by 10:01 UTC"},
		{"31744 of b1's MiB held", []runningJob{onB1(1, 31744), recovered}, "power on off1 for d1: waiting for off1 to boot, ready by 10:01 UTC"},
		{"2 executors of 3 cpus held", []runningJob{{id: "early", state: Running, plan: &placement.Plan{Assignments: []placement.Assignment{{AgentID: "b1", Executors: 2}}},
			demand: placement.Demand{Executors: 2, CPUs: 3, MemMB: 1408}}}, "power on off1 for d1: waiting for off1 to boot, ready by 10:01 UTC"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd"})
			dq := entriesOf(mkJob("d1", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute)))
			in := passInput{now: t0, snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1, off1},
				boot:     BootState{BootTime: time.Minute, Booting: []BootingAgent{{Agent: fullAgent(b1), ReadyAt: t0.Add(40 * time.Second)}}},
				deadline: dq, deadlineQueued: len(dq), full: true, running: c.running}
			got := describeBoot(d.decide(in).decisions)
			if len(got) != 1 || got[0] != c.want {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), c.want)
			}
		})
	}
}

func withExecMemory(mb int) jobOpt { return func(j *Job) { j.ExecutorMemoryMB = mb } }

// TestDecideBootMore: more of boot.go's transcript, each case derived by
// hand. Executors of mkJob hold 1024 + 384 MiB; withExecMemory(m) m +
// max(384, m/10).
func TestDecideBootMore(t *testing.T) {
	a1 := agent("a1", 4, 16384, 0.24)
	b1 := agent("b1", 8, 32768, 0.48)
	b1small := agent("b1", 4, 16384, 0.24)
	off1 := fullAgent(agent("off1", 8, 32768, 0.48))
	off1.Hostname = "host-off1"
	bootingAt := func(a placement.Agent, d time.Duration) []BootingAgent {
		return []BootingAgent{{Agent: fullAgent(a), ReadyAt: t0.Add(d)}}
	}
	started := t0.Add(-5 * time.Minute)
	runningA1 := []runningJob{{id: "run", state: Running, startedAt: &started, estimate: 10 * time.Minute,
		plan:   &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}},
		demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}}
	cases := []struct {
		name     string
		snap     placement.Snapshot
		standby  []placement.Agent
		booting  []BootingAgent
		running  []runningJob
		deadline []Job
		regular  []Job
		want     []string
	}{{
		// 2 x 8 cpus: b1 (ready by 10:00:40 UTC) and off1 (60 s): off1 is ready
		// last, named by its hostname.
		name: "a plan over two agents not on names the one ready last, by hostname, and how many more",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1, off1}, booting: bootingAt(b1, 40*time.Second),
		deadline: []Job{mkJob("d", 2, 8, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		want:     []string{"power on off1 for d: waiting for host-off1 (and 1 more) to boot, ready by 10:01 UTC"},
	}, {
		name: "a boot that is overdue is ready any moment",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1}, booting: bootingAt(b1, -10*time.Second),
		deadline: []Job{mkJob("d1", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		want:     []string{"wait d1: waiting for b1 to boot, ready any moment"},
	}, {
		// Room on a1 at 10:05, but b1 is booting already (paid for):
		// sharing it powers nothing on, so there is no warm capacity to
		// wait for instead.
		name: "a job sharing a boot does not wait for warm capacity",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1}, booting: bootingAt(b1, 40*time.Second), running: runningA1,
		deadline: []Job{mkJob("slack", 1, 4, withDeadline(30*time.Minute), withEstimate(10*time.Minute))},
		want:     []string{"wait slack: waiting for b1 to boot, ready by 10:00:40 UTC"},
	}, {
		// Start 12:40 + 10 minutes = 12:50, after the 12:45 deadline: at
		// risk; a job without a deadline is never at risk.
		name:     "a job held until its start time is at risk when its estimate ends after its deadline",
		snap:     snapOf([]placement.Agent{a1}),
		deadline: []Job{mkJob("later", 1, 4, withDeadline(2*time.Hour+45*time.Minute), withEstimate(10*time.Minute), withNotBefore(2*time.Hour+40*time.Minute))},
		regular:  []Job{mkJob("r", 1, 4, withNotBefore(2*time.Hour+40*time.Minute))},
		want: []string{
			"wait later: waiting for its start time 12:40 UTC [at risk]",
			"wait r: waiting for its start time 12:40 UTC",
		},
	}, {
		// d1's executor holds 25000 + 2500 MiB of b1's 32768: 5268 left,
		// less than d2's 5000 + 500: d2 cannot share b1's boot.
		name: "the memory a boot wait takes is not shared",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1, off1}, booting: bootingAt(b1, 40*time.Second),
		deadline: []Job{
			mkJob("d1", 1, 1, withDeadline(time.Hour), withEstimate(10*time.Minute), withExecMemory(25000)),
			mkJob("d2", 1, 1, withDeadline(2*time.Hour), withEstimate(10*time.Minute), withExecMemory(5000)),
		},
		want: []string{
			"wait d1: waiting for b1 to boot, ready by 10:00:40 UTC",
			"power on off1 for d2: waiting for host-off1 to boot, ready by 10:01 UTC",
		},
	}, {
		// d (2 x 4 cpus) waits for b1 (4 cpus) with one executor on a1,
		// which is on: a1's 4 cpus are d's, r (4 cpus) does not start there.
		name: "the cpus a boot wait takes on an agent on are not started on",
		snap: snapOf([]placement.Agent{a1}, "a1=4"), standby: []placement.Agent{b1small}, booting: bootingAt(b1small, 40*time.Second),
		deadline: []Job{mkJob("d", 2, 4, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		regular:  []Job{mkJob("r", 1, 4)},
		want: []string{
			"wait d: waiting for b1 to boot, ready by 10:00:40 UTC",
			"wait r: does not fit: short of 4 cpus; the cluster can hold 0 executors now (at most 0 on one agent)",
		},
	}, {
		// d (2 x 4 cpus) takes a1's 4 free cpus and powers off1 (4 cpus)
		// on: both are d's, r (4 cpus) fits on neither.
		name: "an agent a boot wait powers on is not shared once the pass's view of the agents on changed",
		snap: snapOf([]placement.Agent{a1}, "a1=4"), standby: []placement.Agent{fullAgent(agent("off1", 4, 16384, 0.24))},
		deadline: []Job{mkJob("d", 2, 4, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		regular:  []Job{mkJob("r", 1, 4)},
		want: []string{
			"power on off1 for d: waiting for off1 to boot, ready by 10:01 UTC",
			"wait r: does not fit: short of 4 cpus; the cluster can hold 0 executors now (at most 0 on one agent)",
		},
	}, {
		// d's executors hold 12000 + 1200 MiB: one on a1 (16384), one on
		// b1; a1 keeps 3 cpus and 3184 MiB, 1216 short of r's 4000 + 400.
		name: "the memory a boot wait takes on an agent on is not started on",
		snap: snapOf([]placement.Agent{a1}, "a1=4"), standby: []placement.Agent{b1small}, booting: bootingAt(b1small, 40*time.Second),
		deadline: []Job{mkJob("d", 2, 1, withDeadline(time.Hour), withEstimate(10*time.Minute), withExecMemory(12000))},
		regular:  []Job{mkJob("r", 1, 1, withExecMemory(4000))},
		want: []string{
			"wait d: waiting for b1 to boot, ready by 10:00:40 UTC",
			"wait r: does not fit: short of 1216 MiB of memory; the cluster can hold 0 executors now (at most 0 on one agent)",
		},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd"})
			dq, jq := entriesOf(c.deadline...), entriesOf(c.regular...)
			slices.SortFunc(dq, edfLess)
			in := passInput{now: t0, snap: c.snap, standby: c.standby, boot: BootState{BootTime: time.Minute, Booting: c.booting},
				deadline: dq, deadlineQueued: len(dq), regular: jq, full: true, running: c.running}
			if got := describeBoot(d.decide(in).decisions); !slices.Equal(got, c.want) {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

// fixedModel answers every job with the same p50 and p90 (seconds).
type fixedModel struct {
	p50, p90 float64
	version  uint64
}

func (m *fixedModel) Predict(RunKey, int, perfmodel.Placement) (perfmodel.Prediction, bool) {
	return perfmodel.Prediction{P50: m.p50, P90: m.p90, Level: perfmodel.LevelSignature, Runs: 10}, true
}
func (m *fixedModel) Traits(RunKey) (perfmodel.Traits, bool) { return perfmodel.Traits{}, false }
func (m *fixedModel) Predictor(k RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	return func(e int) (perfmodel.Prediction, error) { p, _ := m.Predict(k, e, pl); return p, nil }
}
func (m *fixedModel) Observe(RunRecord) {}
func (m *fixedModel) Version() uint64   { return m.version }

// TestLearnedNeedsBothQuantiles: a prediction is used only when its p50
// and p90 are both positive; otherwise the job keeps its own estimate.
func TestLearnedNeedsBothQuantiles(t *testing.T) {
	for _, c := range []struct {
		p50, p90 float64
		ok       bool
	}{{0, 100, false}, {100, 0, false}, {100, 150, true}} {
		m := &fixedModel{p50: c.p50, p90: c.p90}
		d := testDecider(t, Config{Policy: "bfd", Model: m})
		e := learnEntries(mkJob("j", 1, 1, withEstimate(10*time.Minute)))[0]
		p50, p90, _, ok := d.learned(e, 1, perfmodel.Placement{})
		if ok != c.ok || (ok && (p50 != 100*time.Second || p90 != 150*time.Second)) {
			t.Fatalf("p50 %v p90 %v: learned %v %v %v, want ok=%v", c.p50, c.p90, p50, p90, ok, c.ok)
		}
	}
}

// TestLearnedEstimateFollowsTheModelVersion: the learned estimate is
// cached until the model's version changes.
func TestLearnedEstimateFollowsTheModelVersion(t *testing.T) {
	m := &fixedModel{p50: 40, p90: 60, version: 1}
	d := testDecider(t, Config{Policy: "bfd", Model: m})
	e := learnEntries(mkJob("j", 1, 1, withEstimate(10*time.Minute)))[0]
	if est, ok := d.learnedEstimate(e); !ok || est != 60*time.Second {
		t.Fatalf("estimate %v %v, want 60 s", est, ok)
	}
	m.p90 = 120 // the same version: the cached answer
	if est, _ := d.learnedEstimate(e); est != 60*time.Second {
		t.Fatalf("same version: estimate %v, want the cached 60 s", est)
	}
	m.version = 2
	if est, _ := d.learnedEstimate(e); est != 120*time.Second {
		t.Fatalf("new version: estimate %v, want 120 s", est)
	}
}

// TestRightSizeRecordsTheModelsLevel: the sizing records the level of
// the model's answer for the count chosen (fixedModel answers at the
// signature level).
func TestRightSizeRecordsTheModelsLevel(t *testing.T) {
	j := mkJob("j", 0, 1)
	j.Sizing, j.MinExecutors, j.MaxExecutors = &Sizing{Auto: true}, 1, 4
	if err := RightSize(&fixedModel{p50: 40.04, p90: 60.06}, &j, t0); err != nil {
		t.Fatal(err)
	}
	if j.Sizing == nil || j.Sizing.Level != string(perfmodel.LevelSignature) {
		t.Fatalf("sizing %+v, want level %q", j.Sizing, perfmodel.LevelSignature)
	}
	// The run times are kept to a tenth of a second: 40.04 -> 40, 60.06 -> 60.1.
	if j.Sizing.P50Seconds != 40 || j.Sizing.P90Seconds != 60.1 {
		t.Fatalf("sizing p50 %v p90 %v, want 40 and 60.1", j.Sizing.P50Seconds, j.Sizing.P90Seconds)
	}
}

// TestAdmissionKeepsTheEstimateWithoutAP90: admission takes the model's
// p90 as the job's estimate only when it is positive.
func TestAdmissionKeepsTheEstimateWithoutAP90(t *testing.T) {
	for _, c := range []struct{ p90, want float64 }{{0, 600}, {90, 90}} {
		core := &Core{}
		core.cfg.Model = &fixedModel{p50: c.p90 / 2, p90: c.p90}
		j := mkJob("j", 1, 1, withEstimate(10*time.Minute))
		core.learnedAdmission(&j)
		if j.EstimatedDurationSeconds != c.want {
			t.Fatalf("model p90 %v: estimate %v s, want %v s", c.p90, j.EstimatedDurationSeconds, c.want)
		}
	}
}

// TestTeamLimitReasonsPerResource: in one pass (whose reasons are made once
// a pass per resource), one job of team a over its
// cpu maximum and one over its memory maximum each wait with their own
// reason. a holds 6 cpus and 2 GiB; a1 needs 2 x 2 cpus + a 1-cpu driver
// (11 > 10 cpus); a2 1 cpu + 1 and 5000 + 500 + 1024 MiB (2048 + 6524 =
// 8572 > 8192 MiB, 8 cpus).
func TestTeamLimitReasonsPerResource(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	in := passInput{now: t0, snap: snapOf([]placement.Agent{agent("a1", 16, 65536, 0.24)}, "a1=10"),
		regular: entriesOf(mkJob("a1", 2, 2, inTeam("a")), mkJob("a2", 1, 1, inTeam("a"), withExecMemory(5000), submittedAt(time.Second))),
		full:    true, running: []runningJob{holding("ra", "a", 6)}, teams: teamsOf(t, "a max-cpus=10 max-memory=8g")}
	got := describe(d.decide(in).decisions, 0)
	want := []string{"wait a1: team a at its cpu limit", "wait a2: team a at its memory limit"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestTeamsProtectMore: more cases of the room kept for other teams'
// guaranteed deadline jobs, by hand (mkJob's executors hold 1024 + 384
// MiB, the default driver 1 cpu and 1024 MiB).
func TestTeamsProtectMore(t *testing.T) {
	a1 := agent("a1", 16, 65536, 0.24)
	tight := snapOf([]placement.Agent{a1}, "a1=8")
	tight.Agents[0].FreeMemMB = 4096
	exactMem := snapOf([]placement.Agent{a1}, "a1=8")
	exactMem.Agents[0].FreeMemMB = 4864
	cases := []struct {
		name     string
		teams    string
		snap     placement.Snapshot
		deadline []Job
		running  []runningJob
		want     []string
	}{{
		// g1 (9 + 1 cpus) does not fit in 8; g is owed its 2432 MiB
		// (guaranteed 16 GiB, holding none). x1 (2 + 1 cpus, 2432 MiB)
		// would leave 4096 - 2432 = 1664 MiB: it waits.
		name:     "memory owed to a team's guaranteed deadline jobs is kept",
		teams:    "g guaranteed-memory=16g",
		snap:     tight,
		deadline: []Job{mkJob("g1", 1, 9, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour))},
		want:     []string{"wait g1: does not fit now: short of cpus", "wait x1: team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g"},
	}, {
		// g holds 6 cpus, beyond its guarantee of 4: it is owed nothing,
		// though its g1 waits. x1's executor (2 cpus) fits the 2 free, its
		// footprint with the driver (3) does not: nothing is kept from it.
		name:     "a team at or past its guarantee is owed nothing",
		teams:    "g guaranteed-cpus=4",
		snap:     snapOf([]placement.Agent{a1}, "a1=2"),
		deadline: []Job{mkJob("g1", 1, 9, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour))},
		running:  []runningJob{holding("rg", "g", 6)},
		want:     []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1"},
	}, {
		// As the first case with 4864 MiB free: x1 leaves exactly the 2432
		// g is owed: it starts.
		name:     "a job that leaves exactly the memory owed starts",
		teams:    "g guaranteed-memory=16g",
		snap:     exactMem,
		deadline: []Job{mkJob("g1", 1, 9, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour))},
		want:     []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1"},
	}, {
		// g1 (9 + 1 cpus) does not fit in 6; g is owed what its guarantee
		// leaves, 3 cpus (holding none). x1 (2 + 1 cpus) leaves exactly 3
		// of the 6 free: it starts.
		name:     "a job that leaves exactly the cpus owed starts",
		teams:    "g guaranteed-cpus=3",
		snap:     snapOf([]placement.Agent{a1}, "a1=6"),
		deadline: []Job{mkJob("g1", 1, 9, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour))},
		want:     []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1"},
	}, {
		// g is owed 3 cpus (its guarantee; g1, 2 x 7 + 1 cpus, does not fit
		// in 9). Each x job takes 3: x1 leaves 6, x2 3 (both start), x3
		// would leave 0: it waits.
		name:  "the room a start takes counts for the next job in the pass",
		teams: "g guaranteed-cpus=3",
		snap:  snapOf([]placement.Agent{a1}, "a1=9"),
		deadline: []Job{mkJob("g1", 2, 7, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour)),
			mkJob("x2", 1, 2, inTeam("x"), withDeadline(3*time.Hour)), mkJob("x3", 1, 2, inTeam("x"), withDeadline(4*time.Hour))},
		want: []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1", "start x2 on a1x1",
			"wait x3: team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g"},
	}, {
		// As above in memory: g is owed g1's 2 x 1408 + 1024 = 3840 MiB
		// (g1 does not fit in the 9 cpus free);
		// 8704 free: x1 (2432) leaves 6272, x2 3840 (both start), x3 1408.
		name:  "the memory a start takes counts for the next job in the pass",
		teams: "g guaranteed-memory=16g",
		snap:  memFree(snapOf([]placement.Agent{a1}, "a1=9"), 8704),
		deadline: []Job{mkJob("g1", 2, 7, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour)),
			mkJob("x2", 1, 2, inTeam("x"), withDeadline(3*time.Hour)), mkJob("x3", 1, 2, inTeam("x"), withDeadline(4*time.Hour))},
		want: []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1", "start x2 on a1x1",
			"wait x3: team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g"},
	}, {
		// g (guaranteed far more than it asks) is owed g0 + g1: 3 + 29
		// cpus. g0 starts: 32 of the 35 free left, g owed 29 more. x1 (3)
		// leaves 29: it starts; then g1 (29) does.
		name:  "a team's deadline start lowers what it is owed",
		teams: "g guaranteed-cpus=100",
		snap:  snapOf([]placement.Agent{agent("a1", 64, 262144, 0.24)}, "a1=35"),
		deadline: []Job{mkJob("g0", 1, 2, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour)),
			mkJob("g1", 2, 14, inTeam("g"), withDeadline(3*time.Hour))},
		want: []string{"start g0 on a1x1", "start x1 on a1x1", "start g1 on a1x2"},
	}, {
		// In memory: g owed g0's 2432 + g1's 20000 + 2000 + 1024 = 23024
		// MiB; 27888 free: g0 starts (25456 left, 23024 owed), x1 (2432)
		// leaves 23024: it starts; then g1.
		name:  "a team's deadline start lowers the memory it is owed",
		teams: "g guaranteed-memory=1000g",
		snap:  memFree(snapOf([]placement.Agent{agent("a1", 64, 262144, 0.24)}, "a1=64"), 27888),
		deadline: []Job{mkJob("g0", 1, 2, inTeam("g"), withDeadline(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), withDeadline(2*time.Hour)),
			mkJob("g1", 1, 1, inTeam("g"), withDeadline(3*time.Hour), withExecMemory(20000))},
		want: []string{"start g0 on a1x1", "start x1 on a1x1", "start g1 on a1x1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd"})
			in := passInput{now: t0, snap: c.snap, deadline: entriesOf(c.deadline...), full: true, running: c.running, teams: teamsOf(t, c.teams)}
			in.deadlineQueued, in.deadlineAll = len(in.deadline), in.deadline
			if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, c.want) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// memFree sets the first agent's free memory.
func memFree(s placement.Snapshot, mb float64) placement.Snapshot {
	s.Agents[0].FreeMemMB = mb
	return s
}

// TestTeamVictimsSpare: a victim team may lose only what it holds beyond
// its guarantee, counted down victim by victim. x1 and x2 (placed: 7 + 1
// cpus, 1024 + 1024 MiB each) fill a1; x holds 16 cpus and 4096 MiB.
func TestTeamVictimsSpare(t *testing.T) {
	full := []placement.Agent{agent("a1", 16, 65536, 0.24)}
	xs := []runningJob{placed("x1", "x", 8), placed("x2", "x", 8)}
	const wait = "wait g1: does not fit now: short of cpus [skipped]"
	cases := []struct {
		name, teams string
		g1          Job
		want        string
		share       float64 // PreemptMaxShare (0: the default)
	}{
		// 16 - 8 = 8 spare: exactly x1's 8 cpus.
		{"exactly the spare cpus", "g guaranteed-cpus=8\nx guaranteed-cpus=8", mkJob("g1", 1, 4, inTeam("g")), "evict x1 for g1", 1},
		// 4096 - 2048 = 2048 spare MiB: exactly x1's.
		{"exactly the spare memory", "g guaranteed-cpus=8\nx guaranteed-memory=2g", mkJob("g1", 1, 4, inTeam("g")), "evict x1 for g1", 1},
		// 4096 - 3072 = 1024 spare MiB: less than a victim's 2048.
		{"less memory spare than a victim holds", "g guaranteed-cpus=8\nx guaranteed-memory=3g", mkJob("g1", 1, 4, inTeam("g")), wait, 1},
		// g1 (11 + 1 cpus, within g's 16) needs both: taken from a team
		// without a guarantee when PreemptMaxShare (1) lets all 16 cpus go,
		// not with the default share of the 16 cpus running (a single
		// victim may exceed it, two may not)...
		{"two victims beyond the eviction allowance", "g guaranteed-cpus=16\nx weight=1", mkJob("g1", 1, 11, inTeam("g")), wait, 0},
		{"two victims", "g guaranteed-cpus=16\nx weight=1", mkJob("g1", 1, 11, inTeam("g")), "evict x1,x2 for g1", 1},
		// ... but x may lose 8 cpus: one victim, not enough.
		{"the spare cpus counted down", "g guaranteed-cpus=16\nx guaranteed-cpus=8", mkJob("g1", 1, 11, inTeam("g")), wait, 1},
		// x may lose 2048 MiB: one victim.
		{"the spare memory counted down", "g guaranteed-cpus=16\nx guaranteed-memory=2g", mkJob("g1", 1, 11, inTeam("g")), wait, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd", Preemption: PreemptMDF, PreemptMaxShare: c.share})
			in := passInput{now: t0, snap: snapOf(full, "a1=0"), regular: entriesOf(c.g1), full: true,
				running: slices.Clone(xs), teams: teamsOf(t, c.teams)}
			if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, []string{c.want}) {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestTeamsTieOrder: teams alike (same share, neither has started a job)
// go in the order of their names: a before b, whatever the queue order;
// only one job fits.
func TestTeamsTieOrder(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	in := passInput{now: t0, snap: snapOf([]placement.Agent{agent("a1", 16, 65536, 0.24)}, "a1=5"),
		regular: entriesOf(mkJob("b1", 2, 2, inTeam("b")), mkJob("a1", 2, 2, inTeam("a"), submittedAt(time.Second))),
		full:    true, teams: teamsOf(t, "a weight=1\nb weight=1")}
	got := describe(d.decide(in).decisions, 0)
	want := []string{"start a1 on a1x2", "wait b1: does not fit now: short of cpus [skipped]"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestNoteTeamStarts: the core remembers each team's last start (its
// starts, not its waits) for a day: at exactly 24 hours it is kept, later
// forgotten.
func TestNoteTeamStarts(t *testing.T) {
	h := &teams.Holder{}
	h.Set(teamsOf(t, "a weight=1"))
	c := &Core{}
	c.cfg.Teams = h
	ea, eb := entriesOf(mkJob("ja", 1, 1, inTeam("a")))[0], entriesOf(mkJob("jb", 1, 1, inTeam("b")))[0]
	c.noteTeamStarts([]decision{{kind: decStart, entry: ea}, {kind: decWait, entry: eb}}, t0)
	if at, ok := c.teams.lastStart["a"]; !ok || !at.Equal(t0) || len(c.teams.lastStart) != 1 {
		t.Fatalf("last starts %v, want a at %v only", c.teams.lastStart, t0)
	}
	c.noteTeamStarts(nil, t0.Add(24*time.Hour))
	if _, ok := c.teams.lastStart["a"]; !ok {
		t.Fatal("a's start forgotten at exactly 24 hours")
	}
	c.noteTeamStarts(nil, t0.Add(24*time.Hour+time.Second))
	if len(c.teams.lastStart) != 0 {
		t.Fatalf("last starts %v after 24 hours, want none", c.teams.lastStart)
	}
}

// TestAtRiskAtTheDeadline: a job without an estimate is at risk from its
// deadline on (at exactly the deadline it cannot finish by it), not
// before.
func TestAtRiskAtTheDeadline(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	e := entriesOf(mkJob("j", 1, 1, withDeadline(time.Hour)))[0]
	for _, c := range []struct {
		at   time.Duration
		want bool
	}{{time.Hour - time.Second, false}, {time.Hour, true}, {time.Hour + time.Second, true}} {
		if got := d.atRisk(e, t0.Add(c.at)); got != c.want {
			t.Errorf("at %v: at risk %v, want %v", c.at, got, c.want)
		}
	}
}
