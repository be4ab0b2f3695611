package scheduler

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// describeBoot renders decisions as describe does, with the power-on
// decisions and the detailed waiting reasons (the transcript of boot.go).
func describeBoot(ds []decision) []string {
	var out []string
	for _, d := range ds {
		switch d.kind {
		case decWait, decPowerOn:
			s := "wait " + d.entry.ID + ": " + d.wait.detail(false, 0)
			if d.kind == decPowerOn {
				s = "power on " + strings.Join(d.powerOn, ",") + " for " + d.entry.ID + ": " + d.wait.detail(false, 0)
			}
			if d.wait.atRisk {
				s += " [at risk]"
			}
			out = append(out, s)
		default:
			out = append(out, describe([]decision{d}, 0)...)
		}
	}
	return out
}

func withNotBefore(d time.Duration) jobOpt {
	return func(j *Job) { j.NotBefore = &NotBefore{Time: t0.Add(d)} }
}

func fullAgent(a placement.Agent) placement.Agent {
	a.FreeCPUs, a.FreeMemMB = a.CPUs, a.MemMB
	return a
}

// TestDecideBootAware is the transcript of boot-aware placement and of
// shifting work in time: the pass's decisions for a cluster with agents
// on, booting and off, a 60 s boot time.
func TestDecideBootAware(t *testing.T) {
	a1 := agent("a1", 4, 16384, 0.24) // on, full unless said otherwise
	b1 := agent("b1", 8, 32768, 0.48) // booting, ready by 10:00:40 UTC
	off1 := fullAgent(agent("off1", 8, 32768, 0.48))
	booting := []BootingAgent{{Agent: fullAgent(b1), ReadyAt: t0.Add(40 * time.Second)}}
	// b1 is listed by the Standby too, with nothing free (as power does).
	b1standby := b1
	// A job running on a1 that ends in 5 minutes (its estimate).
	started := t0.Add(-5 * time.Minute)
	runningA1 := []runningJob{{id: "run", state: Running, startedAt: &started, estimate: 10 * time.Minute,
		plan:   &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}},
		demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}}
	type tc struct {
		name       string
		driverRoom bool
		bootTime   time.Duration
		snap       placement.Snapshot
		standby    []placement.Agent
		booting    []BootingAgent
		running    []runningJob
		deadline   []Job
		regular    []Job
		now        time.Time
		want       []string
	}
	cases := []tc{{
		name: "a job with slack waits for a booting agent and shares its boot; the next one powers an agent on",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1standby, off1}, booting: booting,
		deadline: []Job{
			mkJob("d1", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute)),
			mkJob("d2", 1, 4, withDeadline(2*time.Hour), withEstimate(10*time.Minute)),
			mkJob("d3", 1, 4, withDeadline(3*time.Hour), withEstimate(10*time.Minute)),
		},
		want: []string{
			"wait d1: waiting for b1 to boot, ready by 10:00:40 UTC",
			"wait d2: waiting for b1 to boot, ready by 10:00:40 UTC",
			"power on off1 for d3: waiting for off1 to boot, ready by 10:01 UTC",
		},
	}, {
		name: "once every boot is promised, the next job waits: it never starts on an agent the pass powers on for others",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1standby, off1}, booting: booting,
		deadline: []Job{
			mkJob("d1", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute)),
			mkJob("d2", 1, 4, withDeadline(2*time.Hour), withEstimate(10*time.Minute)),
			mkJob("d3", 1, 4, withDeadline(3*time.Hour), withEstimate(10*time.Minute)),
			mkJob("d4", 1, 4, withDeadline(4*time.Hour), withEstimate(10*time.Minute)),
			mkJob("d5", 1, 4, withDeadline(5*time.Hour), withEstimate(10*time.Minute)),
		},
		want: []string{
			"wait d1: waiting for b1 to boot, ready by 10:00:40 UTC",
			"wait d2: waiting for b1 to boot, ready by 10:00:40 UTC",
			"power on off1 for d3: waiting for off1 to boot, ready by 10:01 UTC",
			"wait d4: waiting for off1 to boot, ready by 10:01 UTC",
			"wait d5: does not fit: short of 4 cpus; the cluster can hold 0 executors now (at most 0 on one agent)",
		},
	}, {
		name: "the room kept for a driver counts: the boot is shared only while room is left for both drivers",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1standby, off1}, booting: booting, driverRoom: true,
		deadline: []Job{
			mkJob("d1", 1, 5, withDeadline(time.Hour), withEstimate(10*time.Minute)),
			mkJob("d2", 1, 3, withDeadline(2*time.Hour), withEstimate(10*time.Minute)),
			mkJob("d3", 1, 1, withDeadline(3*time.Hour), withEstimate(10*time.Minute)),
		},
		// b1: 8 cpus, d1 takes 5 and 1 for its driver; d2 (3 + 1) does
		// not fit the 2 left; d3 (1 + 1) does.
		want: []string{
			"wait d1: waiting for b1 to boot, ready by 10:00:40 UTC",
			"power on off1 for d2: waiting for off1 to boot, ready by 10:01 UTC",
			"wait d3: waiting for b1 to boot, ready by 10:00:40 UTC",
		},
	}, {
		name: "an agent that registered before power management marked it on is still the boot the jobs share",
		snap: snapOf([]placement.Agent{a1, b1}, "a1=0", "b1=0"), standby: []placement.Agent{off1}, booting: booting,
		deadline: []Job{
			mkJob("d1", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute)),
			mkJob("d2", 1, 4, withDeadline(2*time.Hour), withEstimate(10*time.Minute)),
			mkJob("d3", 1, 4, withDeadline(3*time.Hour), withEstimate(10*time.Minute)),
		},
		want: []string{
			"wait d1: waiting for b1 to boot, ready by 10:00:40 UTC",
			"wait d2: waiting for b1 to boot, ready by 10:00:40 UTC",
			"power on off1 for d3: waiting for off1 to boot, ready by 10:01 UTC",
		},
	}, {
		name: "a job whose deadline cannot absorb the boot still waits for the agent booting (nothing is sooner), at risk",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{b1standby}, booting: booting,
		deadline: []Job{mkJob("tight", 1, 4, withDeadline(5*time.Minute+20*time.Second), withEstimate(5*time.Minute))},
		want:     []string{"wait tight: waiting for b1 to boot, ready by 10:00:40 UTC [at risk]"},
	}, {
		name: "a tight deadline job powers an agent on at once, even with room expected on the agents on",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{off1}, running: runningA1,
		deadline: []Job{mkJob("tight", 1, 4, withDeadline(7*time.Minute), withEstimate(6*time.Minute))},
		want:     []string{"power on off1 for tight: waiting for off1 to boot, ready by 10:01 UTC"},
	}, {
		name: "a job with slack waits for the warm capacity a running job gives back instead of powering an agent on",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{off1}, running: runningA1,
		deadline: []Job{mkJob("slack", 1, 4, withDeadline(30*time.Minute), withEstimate(10*time.Minute))},
		// Room at 10:05; the last moment to power on and still make it:
		// 10:30 - 10 m - 60 s boot - 30 s margin = 10:18:30.
		want: []string{"wait slack: waiting for warm capacity, starts by 10:18:30 UTC at the latest"},
	}, {
		name: "three minutes later the room is still expected in time: it still waits",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{off1}, running: runningA1,
		deadline: []Job{mkJob("slack", 1, 4, withDeadline(30*time.Minute), withEstimate(10*time.Minute))},
		now:      t0.Add(3 * time.Minute), // room expected at 10:05 < 10:18:30: still waits
		want:     []string{"wait slack: waiting for warm capacity, starts by 10:18:30 UTC at the latest"},
	}, {
		name: "a deadline job that fits on an agent that is on goes there (even if dearer) and powers nothing on",
		snap: snapOf([]placement.Agent{agent("dear", 8, 32768, 0.96)}), standby: []placement.Agent{fullAgent(agent("cheap", 8, 32768, 0.12))},
		deadline: []Job{mkJob("d", 1, 4, withDeadline(10*time.Minute), withEstimate(5*time.Minute))},
		want:     []string{"start d on dearx1 activating dear"},
	}, {
		name: "notBefore holds a job; a regular job behind it is not held back",
		snap: snapOf([]placement.Agent{a1}),
		deadline: []Job{
			mkJob("later", 1, 4, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour+40*time.Minute)),
		},
		regular: []Job{mkJob("r", 1, 4)},
		want: []string{
			"wait later: waiting for its start time 12:40 UTC",
			"start r on a1x1 activating a1",
		},
	}, {
		name: "one boot time before its start time, a job that needs an agent off has it powered on",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{off1},
		deadline: []Job{
			mkJob("later", 1, 4, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour+40*time.Minute)),
		},
		now:  t0.Add(2*time.Hour + 39*time.Minute),
		want: []string{"power on off1 for later: waiting for off1 to boot, ready by 12:40 UTC"},
	}, {
		name: "earlier than that it only waits for its start time",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{off1},
		deadline: []Job{
			mkJob("later", 1, 4, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour+40*time.Minute)),
		},
		now:  t0.Add(2*time.Hour + 38*time.Minute),
		want: []string{"wait later: waiting for its start time 12:40 UTC"},
	}, {
		name: "at its start time the job starts",
		snap: snapOf([]placement.Agent{a1}),
		deadline: []Job{
			mkJob("later", 1, 4, withDeadline(5*time.Hour), withEstimate(10*time.Minute), withNotBefore(2*time.Hour+40*time.Minute)),
		},
		now:  t0.Add(2*time.Hour + 40*time.Minute),
		want: []string{"start later on a1x1 activating a1"},
	}, {
		name: "a deadline job waiting for a boot does not hold back a regular job that fits on the agents on",
		snap: snapOf([]placement.Agent{a1, agent("a2", 2, 8192, 0.12)}, "a1=0"), standby: []placement.Agent{off1},
		deadline: []Job{mkJob("big", 1, 8, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		regular:  []Job{mkJob("r", 1, 2)},
		want: []string{
			"power on off1 for big: waiting for off1 to boot, ready by 10:01 UTC",
			"start r on a2x1 activating a2",
		},
	}, {
		name: "without a boot time the pass starts the job on a plan that powers the agent on (as before)",
		snap: snapOf([]placement.Agent{a1}, "a1=0"), standby: []placement.Agent{off1}, bootTime: -1,
		deadline: []Job{mkJob("d", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		want:     []string{"start d on off1x1 activating off1"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := testDecider(t, Config{Policy: "bfd", DriverRoom: c.driverRoom})
			now := c.now
			if now.IsZero() {
				now = t0
			}
			boot := BootState{BootTime: time.Minute, Booting: c.booting}
			if c.bootTime < 0 {
				boot = BootState{}
			}
			dq, jq := entriesOf(c.deadline...), entriesOf(c.regular...)
			slices.SortFunc(dq, edfLess)
			in := passInput{now: now, snap: c.snap, standby: c.standby, boot: boot, deadline: dq, deadlineQueued: len(dq),
				regular: jq, full: true, running: c.running}
			out := d.decide(in)
			if got := describeBoot(out.decisions); !slices.Equal(got, c.want) {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

// TestDecideWarmCapacityGivesUp: once the room the running jobs give back
// is not expected before the last moment to power on, the job waiting for
// warm capacity powers an agent on.
func TestDecideWarmCapacityGivesUp(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	started := t0
	// Its estimate says it ends at 10:25: after 10:18:30.
	running := []runningJob{{id: "run", state: Running, startedAt: &started, estimate: 25 * time.Minute,
		plan:   &placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 1}}},
		demand: placement.Demand{Executors: 1, CPUs: 4, MemMB: 1408}}}
	in := passInput{now: t0, snap: snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)}, "a1=0"),
		standby: []placement.Agent{fullAgent(agent("off1", 8, 32768, 0.48))}, boot: BootState{BootTime: time.Minute},
		deadline: entriesOf(mkJob("slack", 1, 4, withDeadline(30*time.Minute), withEstimate(10*time.Minute))), deadlineQueued: 1,
		full: true, running: running}
	got := describeBoot(d.decide(in).decisions)
	if want := []string{"power on off1 for slack: waiting for off1 to boot, ready by 10:01 UTC"}; !slices.Equal(got, want) {
		t.Fatalf("decisions %q; want %q", got, want)
	}
}

// bootPower is a fakePower that knows the boot time: agents it powers on
// are booting, ready a boot time after.
type bootPower struct {
	fakePower
	boot    time.Duration
	now     func() time.Time
	booting map[string]time.Time
}

func (b *bootPower) PowerOn(ctx context.Context, id string) error {
	b.mu.Lock()
	if b.booting == nil {
		b.booting = map[string]time.Time{}
	}
	if _, ok := b.booting[id]; !ok {
		b.booting[id] = b.now().Add(b.boot)
	}
	b.mu.Unlock()
	return b.fakePower.PowerOn(ctx, id)
}

func (b *bootPower) BootState() BootState {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := BootState{BootTime: b.boot}
	for id, at := range b.booting {
		for _, a := range b.off {
			if a.ID == id {
				st.Booting = append(st.Booting, BootingAgent{Agent: fullAgent(a), ReadyAt: at})
			}
		}
	}
	return st
}

// TestBootAwareApply: the pass's decision to power an agent on is carried
// out (the Provisioner is asked), the job stays queued with the reason,
// a second pass does not power anything else on while it boots, and once
// the agent is on the job starts there.
func TestBootAwareApply(t *testing.T) {
	off := fullAgent(agent("off1", 8, 32768, 0.48))
	bp := &bootPower{fakePower: fakePower{off: []placement.Agent{off}}, boot: time.Minute}
	h := newHarness(t, Config{Provisioner: bp, Standby: bp}, agent("a1", 2, 16384, 0.24))
	bp.now = h.clock.Now
	h.schedule()
	h.submit(mkJob("big", 1, 4, withDeadline(time.Hour), withEstimate(10*time.Minute)))
	h.schedule()
	j := h.store.get("big")
	if j.State != Queued || !slices.Equal(bp.on, []string{"off1"}) {
		t.Fatalf("big %s, powered on %v; want it queued while off1 boots", j.State, bp.on)
	}
	if want := "waiting for off1 to boot, ready by 10:01 UTC"; j.WaitingReason != want {
		t.Fatalf("waiting reason %q; want %q", j.WaitingReason, want)
	}
	if want := (PowerOnCause{Job: "big", Reason: "a plan needs it: job big waits for it to boot"}); !slices.Equal(bp.causes, []PowerOnCause{want}) {
		t.Errorf("power-on causes %+v, want %+v", bp.causes, want)
	}
	h.clock.Advance(20 * time.Second)
	h.submit(mkJob("big2", 1, 4, withDeadline(2*time.Hour), withEstimate(10*time.Minute), submittedAt(20*time.Second)))
	h.schedule()
	if j := h.store.get("big2"); j.State != Queued || j.WaitingReason != "waiting for off1 to boot, ready by 10:01 UTC" || len(bp.on) != 1 {
		t.Fatalf("big2 %s (%q), powered on %v; want it sharing off1's boot", j.State, j.WaitingReason, bp.on)
	}
	// 20 s on, big's reason still holds as it was: when off1 is ready is a
	// time of day, not a count of seconds that was shown unchanged a minute
	// later ("ready in 60 s"), or changed at every pass, a "waited" event
	// in its timeline each time.
	if j := h.store.get("big"); j.WaitingReason != "waiting for off1 to boot, ready by 10:01 UTC" {
		t.Fatalf("big's reason 20 s on: %q, want it unchanged", j.WaitingReason)
	}
	// off1 registers: it is on.
	h.clock.Advance(40 * time.Second)
	bp.mu.Lock()
	bp.off, bp.booting = nil, nil
	bp.mu.Unlock()
	h.cluster.mu.Lock()
	h.cluster.agents = append(h.cluster.agents, off)
	h.cluster.mu.Unlock()
	h.core.ClusterChanged()
	h.schedule()
	for _, id := range []string{"big", "big2"} {
		if st := h.store.get(id).State; st != Reserving {
			t.Fatalf("%s %s after off1 came up", id, st)
		}
		if p := h.store.plans[id]; len(p.Assignments) != 1 || p.Assignments[0].AgentID != "off1" {
			t.Fatalf("%s plan %+v", id, p)
		}
	}
}

// TestHeldJobsKeepNothingWarm: a job held for a start time more than a
// boot time ahead does not make power management keep an agent on
// (CouldUse); within a boot time of it, it does.
func TestHeldJobsKeepNothingWarm(t *testing.T) {
	bp := &bootPower{boot: time.Minute}
	h := newHarness(t, Config{Provisioner: bp, Standby: bp}, agent("a1", 2, 16384, 0.24))
	bp.now = h.clock.Now
	h.schedule()
	h.submit(mkJob("hog", 1, 2))
	h.submit(mkJob("later", 1, 2, withDeadline(3*time.Hour), withEstimate(10*time.Minute), withNotBefore(time.Hour)))
	h.schedule()
	if j := h.store.get("later"); j.State != Queued || j.WaitingReason != "waiting for its start time 11:00 UTC" {
		t.Fatalf("later %s %q", j.State, j.WaitingReason)
	}
	if h.core.CouldUse(8, 32768) {
		t.Fatal("a job held for an hour keeps agents warm")
	}
	h.clock.Advance(59*time.Minute + 30*time.Second)
	h.schedule()
	if !h.core.CouldUse(8, 32768) {
		t.Fatal("30 s before its start time the job does not keep agents warm")
	}
}

// TestDecideBootWakes: a pass with jobs waiting for a boot wakes at the
// ready time; when the agent registered already but power management has
// not marked it on, or the boot is overdue, it looks again within a second
// or a twentieth of the boot time.
func TestDecideBootWakes(t *testing.T) {
	d := testDecider(t, Config{Policy: "bfd"})
	b1 := agent("b1", 8, 32768, 0.48)
	job := func() []*Entry { return entriesOf(mkJob("r", 1, 4)) }
	for _, c := range []struct {
		name   string
		snap   []placement.Agent
		ready  time.Time
		wakeAt time.Time
	}{
		{"booting: at its ready time", nil, t0.Add(40 * time.Second), t0.Add(40 * time.Second)},
		{"registered, not yet marked on: in a second", []placement.Agent{b1}, t0.Add(40 * time.Second), t0.Add(time.Second)},
		{"overdue: in a twentieth of the boot time", nil, t0.Add(-time.Second), t0.Add(3 * time.Second)},
	} {
		snap := placement.Snapshot{}
		if c.snap != nil {
			snap = snapOf(c.snap, "b1=0")
		}
		in := passInput{now: t0, snap: snap, boot: BootState{BootTime: time.Minute, Booting: []BootingAgent{{Agent: fullAgent(b1), ReadyAt: c.ready}}},
			regular: job(), full: true}
		out := d.decide(in)
		if len(out.decisions) != 1 || out.decisions[0].kind != decWait || !out.wakeAt.Equal(c.wakeAt) {
			t.Errorf("%s: decisions %q, wake at %s; want a wait, a wake at %s", c.name, describeBoot(out.decisions), out.wakeAt, c.wakeAt)
		}
	}
}
