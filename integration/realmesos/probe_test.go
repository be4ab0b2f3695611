package realmesos

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/integration/realmesos/probe"
)

// ProbeRecording is where the real master's probe record is kept; the
// emulator's tests compare against it.
func probeRecording() string {
	return filepath.Join(RepoRoot(), "mesossim", "testdata", "real", "probe.json")
}

func runProbe(t *testing.T, tg *target) *probe.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rec, err := probe.Run(ctx, probe.Options{URL: tg.url, Logf: t.Logf,
		LoseAgent:   func(h string) error { tg.loseAgent(t, h); return nil },
		ReturnAgent: func(h string) error { tg.returnAgent(t, h); return nil }})
	if err != nil {
		t.Fatalf("%s: probe: %v", tg.name, err)
	}
	return rec
}

// TestProbeRealMasterAgainstRecordingAndEmulator runs the probe session
// against a fresh real cluster of its own and the emulator: the real
// master must match
// its recording (with REALMESOS_RECORD=1 the recording is written
// again), and the emulator must match the real master.
func TestProbeRealMasterAgainstRecordingAndEmulator(t *testing.T) {
	mesosBin(t)
	var real, emu *probe.Record
	t.Run("group", func(t *testing.T) {
		t.Run("real", func(t *testing.T) {
			t.Parallel()
			real = runProbe(t, privateTarget(t))
		})
		t.Run("emulator", func(t *testing.T) {
			t.Parallel()
			emu = runProbe(t, emulatorTarget(t))
		})
	})
	if real == nil {
		return
	}
	path := probeRecording()
	if os.Getenv("REALMESOS_RECORD") != "" {
		real.Comment = "Recorded by integration/realmesos (TestProbeRealMasterAgainstRecordingAndEmulator, REALMESOS_RECORD=1) from a real Apache Mesos 1.12.0 master " +
			"and the three agents of realmesos.ThreeAgents on loopback (posix launcher). Normalised by package probe: ids, times, uuids, pids and ports are placeholders."
		b, err := real.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("recorded %s", path)
	}
	want, err := probe.Load(path)
	if err != nil {
		t.Fatalf("the real master's recording: %v (REALMESOS_RECORD=1 writes it)", err)
	}
	if d := probe.Compare(want, real); len(d) > 0 {
		t.Errorf("the real master no longer matches %s (REALMESOS_RECORD=1 records it again):\n%s", path, strings.Join(d, "\n"))
	}
	if emu != nil {
		if d := probe.Compare(real, emu); len(d) > 0 {
			t.Errorf("the emulator differs from the real master:\n%s", strings.Join(d, "\n"))
		}
	}
}
