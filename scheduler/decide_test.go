package scheduler

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/sparkpack/sparkpack/placement"
)

// The pass's decide step is a pure function: these tests give it a
// snapshot, queue entries and a time, and read the decisions, with no
// store, no cluster and no core.

// testDecider is the decider of a core built with cfg (defaults filled in).
func testDecider(t *testing.T, cfg Config) *decider {
	t.Helper()
	cfg.Log = DiscardLogger()
	c, err := New(cfg, newTestCluster(), newTestStore(), newManualClock(t0))
	if err != nil {
		t.Fatal(err)
	}
	return &c.dec
}

// snapOf is a snapshot of agents with everything free, then the given
// free cpus where listed ("a1=2").
func snapOf(agents []placement.Agent, free ...string) placement.Snapshot {
	out := slices.Clone(agents)
	for i := range out {
		out[i].FreeCPUs, out[i].FreeMemMB = out[i].CPUs, out[i].MemMB
		for _, f := range free {
			var id string
			var cpus float64
			if _, err := fmt.Sscanf(strings.Replace(f, "=", " ", 1), "%s %g", &id, &cpus); err == nil && id == out[i].ID {
				out[i].FreeCPUs = cpus
				out[i].Active = true
			}
		}
	}
	return placement.Snapshot{Agents: out}
}

func entriesOf(jobs ...Job) []*Entry {
	out := make([]*Entry, len(jobs))
	for i := range jobs {
		out[i] = NewEntry(&jobs[i])
		out[i].queued, out[i].inDQ = true, jobs[i].DeadlineAt != nil
	}
	return out
}

// describe renders decisions as one line each: "start j on a1x2",
// "reject j: reason", "wait j: coarse reason [skipped]", "evict r1,r2 for d".
func describe(ds []decision, promoteAfter time.Duration) []string {
	var out []string
	for _, d := range ds {
		switch d.kind {
		case decStart:
			var on []string
			for _, as := range d.plan.Assignments {
				on = append(on, fmt.Sprintf("%sx%d", as.AgentID, as.Executors))
			}
			s := "start " + d.entry.ID + " on " + strings.Join(on, ",")
			if len(d.plan.Activated) > 0 {
				s += " activating " + strings.Join(d.plan.Activated, ",")
			}
			if d.atRisk {
				s += " at risk"
			}
			out = append(out, s)
		case decReject:
			out = append(out, "reject "+d.entry.ID+": "+d.reason)
		case decWait:
			s := "wait " + d.entry.ID + ": " + d.wait.coarse(d.entry.Promoted, promoteAfter)
			if d.wait.atRisk {
				s += " [at risk]"
			}
			if d.skipped {
				s += " [skipped]"
			}
			out = append(out, s)
		case decEvict:
			var ids []string
			for _, v := range d.victims {
				ids = append(ids, v.ID)
			}
			out = append(out, "evict "+strings.Join(ids, ",")+" for "+d.entry.ID)
		}
	}
	return out
}

func TestDecide(t *testing.T) {
	two := []placement.Agent{agent("a1", 4, 16384, 0.24), agent("a2", 8, 32768, 0.48)}
	one := []placement.Agent{agent("a1", 4, 16384, 0.24)}
	dl := withDeadline(time.Hour)
	type tc struct {
		name     string
		cfg      Config
		snap     placement.Snapshot
		standby  []placement.Agent
		deadline []Job
		regular  []Job
		// fresh: the regular entries (by index) that entered the queue
		// since the last pass; with it the pass is not full.
		fresh   []int
		blocked bool
		running []runningJob
		now     time.Time
		want    []string
	}
	cases := []tc{{
		name:    "a start takes its resources from the pass's snapshot",
		snap:    snapOf(one),
		regular: []Job{mkJob("r1", 2, 2), mkJob("r2", 1, 2, submittedAt(time.Second)), mkJob("r3", 1, 1, submittedAt(2*time.Second))},
		want: []string{
			"start r1 on a1x2 activating a1",
			"wait r2: does not fit now: short of cpus [skipped]",
			"wait r3: does not fit now: short of cpus [skipped]",
		},
	}, {
		name:     "EDF: deadline jobs first, earliest deadline first; regular jobs wait while one does",
		snap:     snapOf(one),
		deadline: []Job{mkJob("late", 1, 4, withDeadline(2*time.Hour)), mkJob("early", 1, 4, dl), mkJob("third", 1, 4, withDeadline(3*time.Hour))},
		regular:  []Job{mkJob("r1", 1, 1)},
		want: []string{
			"start early on a1x1 activating a1",
			"wait late: does not fit now: short of cpus",
			"wait third: does not fit now: short of cpus",
			"wait r1: deadline jobs first [skipped]",
		},
	}, {
		name:    "a regular job that does not fit is skipped, the next one tried",
		snap:    snapOf(two, "a1=0"),
		regular: []Job{mkJob("big", 3, 4), mkJob("small", 2, 4, submittedAt(time.Second))},
		want: []string{
			"wait big: does not fit now: short of cpus [skipped]",
			"start small on a2x2 activating a2",
		},
	}, {
		name:     "never fits: rejected; deadline queue empty then, so regular jobs run",
		snap:     snapOf(two),
		deadline: []Job{mkJob("huge", 1, 16, dl)},
		regular:  []Job{mkJob("r1", 1, 4)},
		want: []string{
			"reject huge: does not fit: one executor is larger than every agent (short of cpus)",
			"start r1 on a1x1 activating a1",
		},
	}, {
		name:    "no agent known (a restart, a partition): wait, never reject",
		snap:    placement.Snapshot{},
		regular: []Job{mkJob("huge", 1, 16)},
		want:    []string{"wait huge: does not fit now: short of cpus [skipped]"},
	}, {
		name:    "fits the empty cluster only with all agents: waits; more than all: rejected",
		snap:    snapOf(two, "a1=0"),
		regular: []Job{mkJob("all", 3, 4), mkJob("more", 4, 4, submittedAt(time.Second))},
		want: []string{
			"wait all: does not fit now: short of cpus [skipped]",
			"reject more: does not fit even on the empty cluster: it needs 4 executors of 4 cpus and 1408 MiB",
		},
	}, {
		// Counts in the right number: it said "of 1 cpus".
		name:    "a rejection of one-cpu executors says cpu",
		snap:    snapOf(two, "a1=0"),
		regular: []Job{mkJob("many", 500, 1)},
		want:    []string{"reject many: does not fit even on the empty cluster: it needs 500 executors of 1 cpu and 1408 MiB"},
	}, {
		name:    "a powered-off agent is powered on for a job that fits nowhere else, then it is booting",
		snap:    snapOf(one, "a1=0"),
		standby: snapOf([]placement.Agent{agent("off1", 8, 32768, 0.48)}).Agents,
		regular: []Job{mkJob("b1", 1, 6), mkJob("b2", 1, 6, submittedAt(time.Second))},
		want: []string{
			"start b1 on off1x1 activating off1",
			"wait b2: does not fit now: short of cpus [skipped]",
		},
	}, {
		name:    "an incremental pass looks only at the fresh regular jobs",
		snap:    snapOf(two),
		regular: []Job{mkJob("old", 1, 4), mkJob("new", 1, 4, submittedAt(time.Second))},
		fresh:   []int{1},
		want:    []string{"start new on a1x1 activating a1"},
	}, {
		name:    "after deadline jobs blocked the last pass, regular jobs are all looked at",
		snap:    snapOf(two),
		regular: []Job{mkJob("old", 1, 4), mkJob("new", 1, 4, submittedAt(time.Second))},
		fresh:   []int{1},
		blocked: true,
		want:    []string{"start old on a1x1 activating a1", "start new on a2x1 activating a2"},
	}, {
		name:     "feasible EDF: a job that cannot meet its deadline goes after those that can",
		snap:     snapOf(one),
		deadline: []Job{mkJob("hopeless", 1, 4, withDeadline(time.Minute), withEstimate(time.Hour)), mkJob("ok", 1, 4, dl, withEstimate(time.Minute))},
		want: []string{
			"start ok on a1x1 activating a1",
			"wait hopeless: does not fit now: short of cpus [at risk]",
		},
	}, {
		name:     "a deadline job that will miss its deadline waiting evicts a running regular job",
		cfg:      Config{Preemption: PreemptMDF},
		snap:     snapOf(one, "a1=0"),
		deadline: []Job{mkJob("d", 1, 4, withDeadline(20*time.Minute), withEstimate(10*time.Minute))},
		running: []runningJob{{id: "r", state: Running, startedAt: ptr(t0.Add(-time.Minute)), estimate: time.Hour,
			plan: &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}}, demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}},
		want: []string{"evict r for d"},
	}, {
		name:     "without preemption it only says so",
		snap:     snapOf(one, "a1=0"),
		deadline: []Job{mkJob("d", 1, 4, withDeadline(20*time.Minute), withEstimate(10*time.Minute))},
		running: []runningJob{{id: "r", state: Running, startedAt: ptr(t0.Add(-time.Minute)), estimate: time.Hour,
			plan: &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}}, demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}},
		want: []string{"wait d: does not fit now: short of cpus; will miss its deadline waiting; preemption is off"},
	}, {
		name:    "with DriverRoom a start keeps its driver's cpu",
		cfg:     Config{DriverRoom: true},
		snap:    snapOf(one),
		regular: []Job{mkJob("r1", 1, 3), mkJob("r2", 1, 1, submittedAt(time.Second))},
		want:    []string{"start r1 on a1x1 activating a1", "wait r2: does not fit now: short of cpus [skipped]"},
	}, {
		name:    "without it the driver's room is the cluster's affair",
		snap:    snapOf(one),
		regular: []Job{mkJob("r1", 1, 3), mkJob("r2", 1, 1, submittedAt(time.Second))},
		want:    []string{"start r1 on a1x1 activating a1", "start r2 on a1x1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Policy = "bfd"
			d := testDecider(t, c.cfg)
			now := c.now
			if now.IsZero() {
				now = t0
			}
			dq, jq := entriesOf(c.deadline...), entriesOf(c.regular...)
			slices.SortFunc(dq, edfLess)
			var fresh []*Entry
			for _, i := range c.fresh {
				fresh = append(fresh, jq[i])
			}
			in := passInput{now: now, snap: c.snap, standby: c.standby, deadline: dq, deadlineQueued: len(dq),
				regular: jq, regularFresh: fresh, full: c.fresh == nil, blocked: c.blocked, running: c.running}
			before := slices.Clone(c.snap.Agents)
			out := d.decide(in)
			if got := describe(out.decisions, d.cfg.PromoteAfter); !slices.Equal(got, c.want) {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
			if !slices.EqualFunc(before, c.snap.Agents, func(a, b placement.Agent) bool { return a.FreeCPUs == b.FreeCPUs && a.Active == b.Active }) {
				t.Fatal("decide changed the snapshot it was given")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestDecideMarksStartsOnItsCopy: the snapshot a pass leaves has its starts
// taken, the plans' agents active for at least the jobs' estimates.
func TestDecideMarksStartsOnItsCopy(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	snap := snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24), agent("a2", 8, 32768, 0.48)})
	in := passInput{now: t0, snap: snap, regular: entriesOf(mkJob("r1", 2, 2, withEstimate(time.Hour))), full: true}
	out := d.decide(in)
	if len(out.decisions) != 1 || out.decisions[0].kind != decStart {
		t.Fatalf("decisions %v", describe(out.decisions, 0))
	}
	a1 := out.snap.Agents[0]
	if a1.FreeCPUs != 0 || a1.FreeMemMB != 16384-2*1408 || !a1.Active || a1.RemainingActive != time.Hour {
		t.Fatalf("a1 after the start: %+v", a1)
	}
	if c, _ := out.ix.Free(); c != 8 {
		t.Fatalf("the index of the left snapshot has %g cpus free, want 8", c)
	}
}

// TestDecideWritesNothingWhenNothingChanged: a second pass over the same
// waiting jobs, their waits recorded, decides nothing about them.
func TestDecideWritesNothingWhenNothingChanged(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	snap := snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)}, "a1=0")
	jq := entriesOf(mkJob("r1", 1, 2), mkJob("r2", 2, 2, submittedAt(time.Second)))
	in := passInput{now: t0, snap: snap, regular: jq, full: true}
	out := d.decide(in)
	if len(out.decisions) != 2 {
		t.Fatalf("first pass: %v", describe(out.decisions, 0))
	}
	for _, dc := range out.decisions { // what apply does of them
		dc.entry.wait, dc.entry.SkippedSince = dc.wait, t0
	}
	in.now = t0.Add(time.Minute)
	if out := d.decide(in); len(out.decisions) != 0 {
		t.Fatalf("second pass: %v", describe(out.decisions, 0))
	}
	// The promotion timer of the skipped jobs is the pass's wake time.
	if out.wakeAt != t0.Add(DefaultPromoteAfter) {
		t.Fatalf("wake at %v, want %v", out.wakeAt, t0.Add(DefaultPromoteAfter))
	}
}

func TestPromotions(t *testing.T) {
	jq := entriesOf(mkJob("never", 1, 1), mkJob("recent", 1, 1), mkJob("due", 1, 1))
	jq[1].SkippedSince = t0.Add(-time.Minute)
	jq[2].SkippedSince = t0.Add(-DefaultPromoteAfter)
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{Config{}, []string{"due"}},
		{Config{PromoteAfter: -1}, nil},
		{Config{Ordering: OrderFIFO}, nil},
		{Config{PromoteAfter: 30 * time.Second}, []string{"recent", "due"}},
	} {
		var got []string
		for _, e := range testDecider(t, c.cfg).promotions(jq, t0) {
			got = append(got, e.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%+v: promoted %v, want %v", c.cfg, got, c.want)
		}
	}
}

// TestWillMissAgreesWithItsTimes (issue 28): a waiting deadline job is
// said to miss its deadline waiting exactly when the room is expected
// after the latest start the view shows; before, the view claimed a miss
// with the room expected a few seconds before that latest start (the time
// a start takes was counted in the decision but not in the time shown).
func TestWillMissAgreesWithItsTimes(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	snap := snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)}, "a1=0")
	plan := &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}}
	// The deadline job can start at t0+10m at the latest by its estimate.
	for _, c := range []struct {
		roomAt   time.Duration // when the running job is expected to end
		willMiss bool
	}{
		{10*time.Minute - 3*time.Second, true}, // too close: starting takes up to startAllowance
		{10*time.Minute + time.Minute, true},
		{10*time.Minute - time.Minute, false},
	} {
		dq := entriesOf(mkJob("d", 1, 4, withDeadline(20*time.Minute), withEstimate(10*time.Minute)))
		running := []runningJob{{id: "r", state: Running, startedAt: ptr(t0.Add(-time.Minute)), estimate: c.roomAt + time.Minute,
			plan: plan, demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}}
		out := d.decide(passInput{now: t0, snap: snap, deadline: dq, deadlineQueued: 1, full: true, running: running})
		if len(out.decisions) != 1 {
			t.Fatalf("room at +%s: decisions %v", c.roomAt, describe(out.decisions, 0))
		}
		pv := out.decisions[0].wait.pre
		if got := pv != nil && pv.WillMiss; got != c.willMiss {
			t.Fatalf("room at +%s: will miss %v, want %v (%+v)", c.roomAt, got, c.willMiss, pv)
		}
		if pv == nil {
			continue
		}
		if pv.RoomExpectedAt == nil || !pv.RoomExpectedAt.Equal(t0.Add(c.roomAt)) {
			t.Fatalf("room at +%s: view says %v", c.roomAt, pv.RoomExpectedAt)
		}
		if !pv.RoomExpectedAt.After(pv.LatestStart) {
			t.Fatalf("room at +%s: the view says it will miss with the room expected at %s, before its latest start %s",
				c.roomAt, pv.RoomExpectedAt.Format(time.TimeOnly), pv.LatestStart.Format(time.TimeOnly))
		}
	}
}

// firstRoom is a test policy that places every executor on the first
// agent with room for all of them, allocating nothing per agent: what a
// pass costs besides its policy.
type firstRoom struct{}

func (firstRoom) Name() string { return "first-room" }

func (firstRoom) Place(s placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	n := float64(d.Executors)
	for _, a := range s.Agents {
		if a.FreeCPUs >= n*d.CPUs && a.FreeMemMB >= n*d.MemMB {
			p := placement.Plan{Policy: "first-room", Assignments: []placement.Assignment{{AgentID: a.ID, Hostname: a.Hostname, Executors: d.Executors}}}
			if !a.Active {
				p.Activated = []string{a.ID}
			}
			return p, nil
		}
	}
	return placement.Plan{}, &placement.NoFit{}
}

// TestDecideCopiesTheSnapshotOncePerPass: a pass that starts many jobs on
// a large cluster copies the snapshot once, not once per start (a pass
// starting 50 jobs at 30,000 agents copied and indexed 1.5 million
// agents), and leaves the caller's snapshot as it was.
func TestDecideCopiesTheSnapshotOncePerPass(t *testing.T) {
	const agents, starts = 5000, 40
	d := testDecider(t, Config{Policy: "bfd"})
	d.policy = firstRoom{}
	list := make([]placement.Agent, agents)
	for i := range list {
		list[i] = agent(fmt.Sprintf("a%05d", i), 4, 16384, 0.24)
	}
	snap := snapOf(list)
	before := slices.Clone(snap.Agents)
	var jobs []Job
	for i := range starts {
		jobs = append(jobs, mkJob(fmt.Sprintf("r%03d", i), 1, 4, submittedAt(time.Duration(i)*time.Second)))
	}
	in := passInput{now: t0, snap: snap, regular: entriesOf(jobs...), full: true}
	var ms0, ms1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms0)
	out := d.decide(in)
	runtime.ReadMemStats(&ms1)
	if n := len(out.decisions); n != starts {
		t.Fatalf("%d decisions, want %d starts", n, starts)
	}
	for i, dc := range out.decisions {
		if dc.kind != decStart || dc.plan.Assignments[0].AgentID != list[i].ID {
			t.Fatalf("decision %d: %v", i, describe(out.decisions[i:i+1], 0))
		}
	}
	for i := range starts {
		if a := out.snap.Agents[i]; a.FreeCPUs != 0 || !a.Active {
			t.Fatalf("agent %s after its start: %+v", a.ID, a)
		}
	}
	if !reflect.DeepEqual(snap.Agents, before) {
		t.Fatal("the caller's snapshot was changed")
	}
	// One copy of the agents and one index of them by id; per start only
	// a few small things (the decision, the plan, a fit index).
	copyBytes := uint64(agents) * uint64(unsafe.Sizeof(placement.Agent{}))
	if got, limit := ms1.TotalAlloc-ms0.TotalAlloc, 4*copyBytes; got > limit {
		t.Fatalf("the pass allocated %d KiB for %d starts on %d agents, want at most %d KiB (4 copies of the agents)",
			got>>10, starts, agents, limit>>10)
	}
}
