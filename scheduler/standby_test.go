package scheduler

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// fakePower is a Standby and a Provisioner: agents in off are powered-off
// agents a plan may power on.
type fakePower struct {
	mu     sync.Mutex
	off    []placement.Agent
	on     []string
	causes []PowerOnCause // of the agents in on, in order (PowerOnCauseOf)
}

func (f *fakePower) StandbyAgents() []placement.Agent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.off)
}

func (f *fakePower) PowerOn(ctx context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Agents that are on already are left as they are (as power.Manager
	// does); a booting agent stays standby with nothing free.
	for i := range f.off {
		if f.off[i].ID == id && f.off[i].FreeCPUs > 0 {
			f.on = append(f.on, id)
			c, _ := PowerOnCauseOf(ctx)
			f.causes = append(f.causes, c)
			f.off[i].FreeCPUs, f.off[i].FreeMemMB = 0, 0
		}
	}
	return nil
}

// TestStandbyAgents: a job that fits no powered-on agent is placed on a
// powered-off one, which the plan powers on; one that fits the agents on
// never powers anything on; a job that fits only with the powered-off
// agents is not rejected.
func TestStandbyAgents(t *testing.T) {
	off := agent("off1", 8, 32768, 0.48)
	off.FreeCPUs, off.FreeMemMB = off.CPUs, off.MemMB
	fp := &fakePower{off: []placement.Agent{off}}
	h := newHarness(t, Config{Provisioner: fp, Standby: fp}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("small", 1, 2))
	h.schedule()
	if st := h.store.get("small").State; st != Reserving || len(fp.on) != 0 {
		t.Fatalf("small job %s, powered on %v; want it on a1 without powering anything on", st, fp.on)
	}
	// 6 cpus: only the powered-off agent has room.
	h.submit(mkJob("big", 1, 6, submittedAt(time.Second)))
	h.schedule()
	if st := h.store.get("big").State; st != Reserving || !slices.Equal(fp.on, []string{"off1"}) {
		t.Fatalf("big job %s, powered on %v; want it placed on off1, powered on", st, fp.on)
	}
	// Power management's log line says which job's plan needs it.
	if want := (PowerOnCause{Job: "big", Reason: "a plan needs it: job big starts on it"}); !slices.Equal(fp.causes, []PowerOnCause{want}) {
		t.Errorf("power-on causes %+v, want %+v", fp.causes, want)
	}
	plan := h.store.plans["big"]
	if len(plan.Assignments) != 1 || plan.Assignments[0].AgentID != "off1" || !slices.Equal(plan.Activated, []string{"off1"}) {
		t.Fatalf("plan %+v", plan)
	}
	// Nothing powered off is left: a second big job waits, not rejected.
	h.submit(mkJob("big2", 1, 6, submittedAt(2*time.Second)))
	h.schedule()
	if st := h.store.get("big2").State; st != Queued {
		t.Fatalf("big2 %s", st)
	}
	// An executor larger than every agent, powered off or not, is rejected.
	fp.mu.Lock()
	fp.off = []placement.Agent{off}
	fp.mu.Unlock()
	h.submit(mkJob("huge", 1, 16, submittedAt(3*time.Second)))
	h.schedule()
	if st := h.store.get("huge").State; st != Rejected {
		t.Fatalf("huge %s", st)
	}
}
