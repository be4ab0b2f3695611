package scheduler

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/teams"
)

func inTeam(team string) jobOpt { return func(j *Job) { j.Team = team } }

func teamsOf(t *testing.T, text string) *teams.Config {
	t.Helper()
	c, err := teams.Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// holding is a running job of team that holds cpus (one executor of
// cpus-1 and a 1-cpu driver) and 2 GiB.
func holding(id, team string, cpus float64) runningJob {
	return runningJob{id: id, state: Running, startedAt: ptr(t0.Add(-time.Minute)), estimate: time.Hour, team: team,
		demand: placement.Demand{JobID: id, Executors: 1, CPUs: cpus - 1, MemMB: 1024}, driverCPUs: 1, driverMemMB: 1024}
}

// TestDecideTeams: the team policy in one pass, against the same pass
// without a teams configuration.
func TestDecideTeams(t *testing.T) {
	big := []placement.Agent{agent("a1", 16, 65536, 0.24)}
	three8 := []placement.Agent{agent("a1", 8, 65536, 0.24), agent("a2", 8, 65536, 0.24), agent("a3", 8, 65536, 0.24)}
	dl := func(d time.Duration) jobOpt { return withDeadline(d) }
	cases := []struct {
		name     string
		teams    string
		snap     placement.Snapshot
		deadline []Job
		regular  []Job
		running  []runningJob
		want     []string // with the teams
		without  []string // the same pass without them
	}{{
		name:    "a team at its maximum waits with the reason, not skipped; another team starts",
		teams:   "a max-cpus=10",
		snap:    snapOf(big, "a1=10"),
		regular: []Job{mkJob("a1", 2, 2, inTeam("a")), mkJob("b1", 2, 2, inTeam("b"), submittedAt(time.Second))},
		running: []runningJob{holding("ra", "a", 6)},
		want:    []string{"start b1 on a1x2", "wait a1: team a at its cpu limit"},
		without: []string{"start a1 on a1x2", "start b1 on a1x2"},
	}, {
		name:    "a job larger than its team's maximum says so",
		teams:   "a max-cpus=4",
		snap:    snapOf(big),
		regular: []Job{mkJob("a1", 2, 2, inTeam("a"))},
		want:    []string{"wait a1: team a at its cpu limit: the job alone needs 5 cpus and 3840 MiB, more than the team's maximum"},
		without: []string{"start a1 on a1x2 activating a1"},
	}, {
		name:     "a deadline job held by its team's maximum does not hold regular jobs back",
		teams:    "a max-memory=4g",
		snap:     snapOf(big, "a1=10"),
		deadline: []Job{mkJob("d1", 1, 1, inTeam("a"), dl(time.Hour))},
		regular:  []Job{mkJob("b1", 2, 2, inTeam("b"))},
		running:  []runningJob{holding("ra", "a", 6)},
		want:     []string{"wait d1: team a at its memory limit", "start b1 on a1x2"},
		without:  []string{"start d1 on a1x1", "start b1 on a1x2"},
	}, {
		name:    "regular jobs: the team with the smaller share goes first, whatever the queue order",
		teams:   "a weight=1",
		snap:    snapOf(big, "a1=5"),
		regular: []Job{mkJob("a1", 2, 2, inTeam("a")), mkJob("b1", 2, 2, inTeam("b"), submittedAt(time.Second))},
		running: []runningJob{holding("ra", "a", 11)},
		want:    []string{"start b1 on a1x2", "wait a1: does not fit now: short of cpus [skipped]"},
		without: []string{"start a1 on a1x2", "wait b1: does not fit now: short of cpus [skipped]"},
	}, {
		name:    "a weight scales the share",
		teams:   "a weight=3",
		snap:    snapOf(big, "a1=5"),
		regular: []Job{mkJob("b1", 2, 2, inTeam("b")), mkJob("a1", 2, 2, inTeam("a"), submittedAt(time.Second))},
		// a holds 6 cpus / 3 = 2, b 5: a goes first.
		running: []runningJob{holding("ra", "a", 6), holding("rb", "b", 5)},
		want:    []string{"start a1 on a1x2", "wait b1: does not fit now: short of cpus [skipped]"},
		without: []string{"start b1 on a1x2", "wait a1: does not fit now: short of cpus [skipped]"},
	}, {
		name:    "a team below its guarantee goes before one with a smaller share",
		teams:   "g guaranteed-cpus=12\na weight=10",
		snap:    snapOf(big, "a1=5"),
		regular: []Job{mkJob("a1", 2, 2, inTeam("a")), mkJob("g1", 2, 2, inTeam("g"), submittedAt(time.Second))},
		running: []runningJob{holding("rg", "g", 8), holding("ra", "a", 3)},
		want:    []string{"start g1 on a1x2", "wait a1: does not fit now: short of cpus [skipped]"},
		without: []string{"start a1 on a1x2", "wait g1: does not fit now: short of cpus [skipped]"},
	}, {
		name:  "a deadline job past its team's guarantee leaves the room owed to another team's guaranteed deadline jobs",
		teams: "g guaranteed-cpus=10",
		snap:  snapOf(big, "a1=8"),
		// g1 (9 cpus, 10 with its driver) does not fit in 8; x1 (3 cpus
		// with its driver) would, but g is owed 10 of the 8 free.
		deadline: []Job{mkJob("g1", 1, 9, inTeam("g"), dl(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), dl(2*time.Hour))},
		running:  []runningJob{holding("rx", "x", 8)},
		want:     []string{"wait g1: does not fit now: short of cpus", "wait x1: team x past its guarantee: the room left is kept for the guaranteed deadline jobs of team g"},
		without:  []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1"},
	}, {
		name:  "the summed room holds the owed job but no agent would hold its executor: the job past its guarantee waits",
		teams: "g guaranteed-cpus=8",
		// 15 cpus free, 5 on each agent. x1 (3 executors of 3 cpus, 10
		// with its driver) leaves 5 in the sums, what g1 (one 4-cpu
		// executor, 5 with its driver) is owed; but one 3-cpu executor
		// goes on each agent, which then has 2 cpus free: g1's executor
		// would fit nowhere.
		snap:     snapOf(three8, "a1=5", "a2=5", "a3=5"),
		deadline: []Job{mkJob("x1", 3, 3, inTeam("x"), dl(time.Hour)), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour))},
		want: []string{"wait x1: team x past its guarantee: the agents' room is kept for the guaranteed deadline jobs of team g (their executors would no longer fit)",
			"start g1 on a1x1"},
		without: []string{"start x1 on a1x1,a2x1,a3x1", "wait g1: does not fit now: no set of agents holds its executors"},
	}, {
		name:     "the owed job's executor still fits on an agent after the job past its guarantee: both start",
		teams:    "g guaranteed-cpus=8",
		snap:     snapOf(three8, "a1=7", "a2=7", "a3=7"),
		deadline: []Job{mkJob("x1", 3, 3, inTeam("x"), dl(time.Hour)), mkJob("g1", 1, 4, inTeam("g"), dl(2*time.Hour))},
		want:     []string{"start x1 on a1x2,a2x1", "start g1 on a2x1"},
		without:  []string{"start x1 on a1x2,a2x1", "start g1 on a2x1"},
	}, {
		name:     "within its own guarantee a deadline job starts in EDF order",
		teams:    "g guaranteed-cpus=10\nx guaranteed-cpus=4",
		snap:     snapOf(big, "a1=8"),
		deadline: []Job{mkJob("g1", 1, 9, inTeam("g"), dl(time.Hour)), mkJob("x1", 1, 2, inTeam("x"), dl(2*time.Hour))},
		running:  []runningJob{holding("rg", "g", 2)},
		want:     []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1"},
		without:  []string{"wait g1: does not fit now: short of cpus", "start x1 on a1x1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, with := range []bool{true, false} {
				d := testDecider(t, Config{Policy: "bfd"})
				in := passInput{now: t0, snap: c.snap, deadline: entriesOf(c.deadline...), regular: entriesOf(c.regular...),
					full: true, running: c.running}
				in.deadlineQueued = len(in.deadline)
				want := c.without
				if with {
					in.teams, in.deadlineAll, want = teamsOf(t, c.teams), in.deadline, c.want
				}
				got := describe(d.decide(in).decisions, 0)
				if !slices.Equal(got, want) {
					t.Errorf("teams %v:\n got  %q\n want %q", with, got, want)
				}
			}
		})
	}
}

// placed is a running regular job of team on agent a1: one executor of
// cpus-1 and a 1-cpu driver, started a minute ago, an hour to go.
func placed(id, team string, cpus float64) runningJob {
	r := holding(id, team, cpus)
	r.plan = &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Hostname: "a1", Executors: 1}}}
	return r
}

// TestDecideTeamsPreemption: with preemption on, a team below its
// guarantee reclaims room from a team above its own, never taking a
// victim team below its guarantee; deadline preemption keeps that rule.
func TestDecideTeamsPreemption(t *testing.T) {
	full := []placement.Agent{agent("a1", 16, 65536, 0.24)}
	cases := []struct {
		name       string
		teams      string
		preemption PreemptionPolicy
		deadline   []Job
		regular    []Job
		running    []runningJob
		want       []string
	}{{
		name:       "a team below its guarantee evicts a job of a team above its own",
		teams:      "g guaranteed-cpus=8\nx weight=1",
		preemption: PreemptMDF,
		regular:    []Job{mkJob("g1", 1, 4, inTeam("g"))},
		running:    []runningJob{placed("x1", "x", 8), placed("x2", "x", 8)},
		want:       []string{"evict x1 for g1"},
	}, {
		name:       "without preemption it waits",
		teams:      "g guaranteed-cpus=8\nx weight=1",
		preemption: PreemptNone,
		regular:    []Job{mkJob("g1", 1, 4, inTeam("g"))},
		running:    []runningJob{placed("x1", "x", 8), placed("x2", "x", 8)},
		want:       []string{"wait g1: does not fit now: short of cpus [skipped]"},
	}, {
		name:       "never below the victim team's guarantee",
		teams:      "g guaranteed-cpus=5\nx guaranteed-cpus=8\nz guaranteed-cpus=3",
		preemption: PreemptMDF,
		regular:    []Job{mkJob("g1", 1, 4, inTeam("g"))},
		// x holds its guarantee; z holds 5 beyond its own, less than its job.
		running: []runningJob{placed("x1", "x", 8), placed("z1", "z", 8)},
		want:    []string{"wait g1: does not fit now: short of cpus [skipped]"},
	}, {
		name:       "a team past its guarantee reclaims nothing",
		teams:      "g guaranteed-cpus=4\nx weight=1",
		preemption: PreemptMDF,
		regular:    []Job{mkJob("g1", 1, 4, inTeam("g"))},
		running:    []runningJob{placed("x1", "x", 8), placed("g0", "g", 8)},
		want:       []string{"wait g1: does not fit now: short of cpus [skipped]"},
	}, {
		name:       "a deadline job's eviction spares a victim team at its guarantee",
		teams:      "x guaranteed-cpus=8\ny weight=1",
		preemption: PreemptMDF,
		deadline:   []Job{mkJob("d1", 1, 6, inTeam("g"), withDeadline(10*time.Minute), withEstimate(5*time.Minute))},
		running:    []runningJob{placed("x1", "x", 8), placed("y1", "y", 8)},
		want:       []string{"evict y1 for d1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd", Preemption: c.preemption})
			in := passInput{now: t0, snap: snapOf(full, "a1=0"), deadline: entriesOf(c.deadline...), regular: entriesOf(c.regular...),
				full: true, running: c.running, teams: teamsOf(t, c.teams)}
			in.deadlineAll, in.deadlineQueued = in.deadline, len(in.deadline)
			got := describe(d.decide(in).decisions, 0)
			if !slices.Equal(got, c.want) {
				t.Errorf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

// TestTeamsWorkedExample is the worked example of docs/teams.md: the pass
// it describes, decided with and without the teams file.
func TestTeamsWorkedExample(t *testing.T) {
	agents := []placement.Agent{agent("a1", 16, 65536, 0.77), agent("a2", 16, 65536, 0.77), agent("a3", 16, 65536, 0.77)}
	file := "analytics weight=2 guaranteed-cpus=12 max-cpus=32\nml max-cpus=16 max-waiting=50\netl weight=1\n"
	// Every job: one 4-cpu executor (4 GiB + 409 MiB overhead) and a 1-cpu, 1 GiB driver: 5 cpus.
	job := func(id, team string, at int) Job {
		j := mkJob(id, 1, 4, inTeam(team), submittedAt(time.Duration(at)*time.Second))
		j.ExecutorMemoryMB = 4096
		return j
	}
	running := []runningJob{holding("ml-1", "ml", 5), holding("ml-2", "ml", 5), holding("ml-3", "ml", 5),
		holding("etl-1", "etl", 5), holding("etl-2", "etl", 5), holding("analytics-1", "analytics", 6)}
	regular := []Job{job("ml-4", "ml", 1), job("etl-3", "etl", 2), job("analytics-2", "analytics", 3), job("analytics-3", "analytics", 4), job("etl-4", "etl", 5)}
	for _, c := range []struct {
		teams bool
		want  []string
	}{{true, []string{
		"start analytics-2 on a2x1",
		"start analytics-3 on a3x1",
		"start etl-3 on a1x1",
		"wait ml-4: team ml at its cpu limit",
		"wait etl-4: does not fit now: short of cpus [skipped]",
	}}, {false, []string{
		"start ml-4 on a2x1",
		"start etl-3 on a3x1",
		"start analytics-2 on a1x1",
		"wait analytics-3: does not fit now: short of cpus [skipped]",
		"wait etl-4: does not fit now: short of cpus [skipped]",
	}}} {
		d := testDecider(t, Config{Policy: "bfd", DriverRoom: true})
		// 31 of 48 cpus held: 17 free (7, 5, 5).
		in := passInput{now: t0, snap: snapOf(agents, "a1=7", "a2=5", "a3=5"), regular: entriesOf(regular...), full: true, running: running}
		if c.teams {
			in.teams = teamsOf(t, file)
		}
		if got := describe(d.decide(in).decisions, 0); !slices.Equal(got, c.want) {
			t.Errorf("teams %v:\n got  %q\n want %q", c.teams, got, c.want)
		}
		if !c.teams {
			continue
		}
		// The queue view (publishFair) before this pass lists etl-4 before
		// ml-4: the pass follows it until etl-3 starts and puts etl's
		// share level with ml's (etl started last), as teams.md says.
		tc, tm := in.snap.Totals()
		tp := teamRanking(in.teams, teams.Usage{CPUs: tc, MemMB: tm}, running, nil, t0)
		var view []string
		(&passRun{teams: tp}).fairOrder(in.regular, func(e *Entry) outcome { view = append(view, e.ID); return waited })
		if want := []string{"analytics-2", "analytics-3", "etl-3", "etl-4", "ml-4"}; !slices.Equal(view, want) {
			t.Errorf("the queue view before the pass: %v, want %v", view, want)
		}
	}
}

// TestCoreTeams: a core with a teams holder holds a team at its maximum
// (the reason stored, the team in the queue view), looks at every waiting
// job again when another configuration comes in force, and reports each
// team's usage and the cluster's capacity.
func TestCoreTeams(t *testing.T) {
	holder := &teams.Holder{}
	holder.Set(teamsOf(t, "a max-cpus=6"))
	h := newHarness(t, Config{Policy: "bfd", Teams: holder}, agent("a1", 16, 65536, 0.24))
	h.submit(mkJob("a1", 2, 2, inTeam("a")), mkJob("a2", 2, 2, inTeam("a"), submittedAt(time.Second)), mkJob("b1", 2, 2, inTeam("b"), submittedAt(2*time.Second)))
	if n := h.schedule(); n != 2 {
		t.Fatalf("started %d, want 2 (a1, b1)", n)
	}
	if j := h.store.get("a2"); j.State != Queued || j.WaitingReason != "team a at its cpu limit" {
		t.Fatalf("a2: %s %q", j.State, j.WaitingReason)
	}
	if q := h.core.Queues().Regular; len(q) != 1 || q[0].ID != "a2" || q[0].Team != "a" || q[0].WaitingReason != "team a at its cpu limit" {
		t.Fatalf("queue view %+v", q)
	}
	use := h.core.TeamUsage()
	if use["a"].CPUs != 5 || use["b"].CPUs != 5 {
		t.Fatalf("team usage %+v", use)
	}
	if cpus, mem, ok := h.core.Capacity(); !ok || cpus != 16 || mem != 65536 {
		t.Fatalf("capacity %g %g %v", cpus, mem, ok)
	}
	holder.Set(teamsOf(t, "a max-cpus=12"))
	if n := h.schedule(); n != 1 || h.store.get("a2").State == Queued {
		t.Fatalf("after raising a's maximum: started %d, a2 %s", n, h.store.get("a2").State)
	}
}
