package scheduler

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestNeverFitsIsRejectedAtIntake (issue 28): a job whose executors each
// fit an agent but that the whole cluster, powered-off agents included,
// could never hold is rejected when it arrives, through Submit and through
// Decide alike, even while deadline jobs wait (a pass would not try it
// then); one that fits only with a powered-off agent is accepted.
func TestNeverFitsIsRejectedAtIntake(t *testing.T) {
	off := agent("off1", 4, 16384, 0.24)
	off.FreeCPUs, off.FreeMemMB = off.CPUs, off.MemMB
	fp := &fakePower{off: []placement.Agent{off}}
	h := newHarness(t, Config{Standby: fp, Provisioner: fp}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("run", 1, 4))
	h.schedule()
	h.submit(mkJob("d", 1, 4, withDeadline(time.Hour), submittedAt(time.Second)))
	h.schedule()
	if st := h.store.get("run").State; st != Reserving {
		t.Fatalf("run %s", st)
	}
	if st := h.store.get("d").State; st != Reserving {
		t.Fatalf("d %s, want it on the powered-off agent", st)
	}
	h.submit(mkJob("d2", 1, 4, withDeadline(time.Hour), submittedAt(2*time.Second)))
	h.schedule()
	if st := h.store.get("d2").State; st != Queued {
		t.Fatalf("d2 %s, want it waiting", st)
	}
	// 3 executors of 4 cpus: each fits an agent, the two agents hold 2.
	huge := mkJob("huge", 3, 4, submittedAt(3*time.Second))
	if d := h.core.Decide(&huge, t0); !strings.Contains(d.Reject, "does not fit even on the empty cluster") {
		t.Fatalf("Decide: %+v, want a rejection", d)
	}
	h.submit(huge)
	if j := h.store.get("huge"); j.State != Rejected || !strings.Contains(j.WaitingReason, "3 executors") {
		t.Fatalf("huge is %s (%q) at intake, want REJECTED", j.State, j.WaitingReason)
	}
	// Two executors fit (one per agent once both are empty): accepted.
	two := mkJob("two", 2, 4, submittedAt(4*time.Second))
	if d := h.core.Decide(&two, t0); d.Reject != "" {
		t.Fatalf("Decide two: %+v", d)
	}
}
