package offers

import (
	"testing"
	"time"
)

// TestReplacedSeenAgain: a replacement that every refresh finds again
// (the old agent stays listed inactive until its ping timeouts) is known
// since the refresh that first found it: once AgentWait has passed since
// then and no followed job's plan names the old id, it is dropped, however
// often it was found in between. A replacement found again under another
// new id (the machine came back a second time) names the latest one.
func TestReplacedSeenAgain(t *testing.T) {
	t0 := time.Now()
	a2 := map[string]replacement{"A": {by: "A2", host: "m-1"}}

	cl := NewCluster(ClusterConfig{Store: newMemStore(), Log: quietLog(), AgentWait: time.Minute})
	cl.noteReplacedLocked(a2, nil, t0)
	cl.noteReplacedLocked(a2, nil, t0.Add(59*time.Second))
	if got := cl.replacedLocked("A").by; got != "A2" {
		t.Fatalf("found again within AgentWait: by %q; want A2", got)
	}
	// First found at t0, AgentWait (1 min) ago, no job: dropped, although
	// the last refresh that found it was 1 s ago.
	cl.noteReplacedLocked(nil, nil, t0.Add(time.Minute))
	if rp, ok := cl.replaced["A"]; ok {
		t.Fatalf("a minute after it was first found, no plan naming A: %+v kept; want it dropped", rp)
	}

	cl = NewCluster(ClusterConfig{Store: newMemStore(), Log: quietLog(), AgentWait: time.Minute})
	cl.noteReplacedLocked(a2, nil, t0)
	cl.noteReplacedLocked(map[string]replacement{"A": {by: "A3", host: "m-1"}}, nil, t0.Add(time.Second))
	if got := cl.replacedLocked("A").by; got != "A3" {
		t.Fatalf("A's machine back again as A3: by %q; want A3 (the latest listing)", got)
	}
}
