package mesossim

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/integration/realmesos"
	"github.com/sparkpack/sparkpack/integration/realmesos/probe"
)

// TestEmulatorMatchesTheRealMasterRecording runs package probe's session
// against the emulator with the three agents of realmesos.ThreeAgents and
// compares it with the record of a real Mesos 1.12.0 master
// (testdata/real/probe.json, written by integration/realmesos): offers to
// a framework without MULTI_ROLE, command task status updates, kills,
// failures, reconciliation, GET_TASKS and GET_FRAMEWORKS after a
// teardown, offers with reservations in both formats, and an agent that
// is lost and comes back. Differences the emulator cannot produce are
// listed in emulatorKnownDifferences with the reason.
func TestEmulatorMatchesTheRealMasterRecording(t *testing.T) {
	want, err := probe.Load(filepath.Join("testdata", "real", "probe.json"))
	if err != nil {
		t.Fatal(err)
	}
	// The recorded cluster marks a lost agent unreachable after its ping
	// timeouts (1 s x 3, see realmesos.Cluster): so does the emulator.
	m, base := testMaster(t, Config{Cluster: realmesos.ThreeAgents(), OfferInterval: 200 * time.Millisecond, TaskStartDelay: 100 * time.Millisecond,
		UnreachableAfter: 3 * time.Second})
	idOf := map[string]string{}
	for _, a := range realmesos.ThreeAgents().Agents {
		idOf[a.Hostname] = a.ID
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	got, err := probe.Run(ctx, probe.Options{URL: base,
		LoseAgent:   func(h string) error { return m.CrashAgent(idOf[h]) },
		ReturnAgent: func(h string) error { return m.RestartAgent(idOf[h]) }})
	if err != nil {
		t.Fatalf("probe against the emulator: %v", err)
	}
	for _, d := range probe.Compare(want, got) {
		t.Error(d)
	}
}

var _ = strings.Contains
