package main

import (
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/api"
)

// TestPrintClusterPowerSince: sparkpack cluster says since when an agent
// is off or booting, and names an agent whose power call failed with the
// error; an agent on shows just "on".
func TestPrintClusterPowerSince(t *testing.T) {
	off, boot := time.Now().Add(-3*time.Hour), time.Now().Add(-90*time.Second)
	c := &api.ClusterView{Agents: []api.AgentView{
		{ID: "S0", Hostname: "agent-01", State: "idle", Power: "on", PowerSince: &off},
		{ID: "S1", Hostname: "agent-02", State: "off", Power: "off", PowerSince: &off},
		{ID: "S2", Hostname: "agent-03", State: "off", Power: "booting", PowerSince: &boot, PowerError: "power on: exit status 1"},
	}}
	var b strings.Builder
	printCluster(&b, c, false)
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.Contains(lines[1], " on ") || strings.Contains(lines[1], "3h") {
		t.Errorf("an agent on: %q", lines[1])
	}
	if !strings.Contains(lines[2], "off 3h") {
		t.Errorf("an agent off for 3 hours: %q", lines[2])
	}
	if !strings.Contains(lines[3], "booting 1m") || !strings.Contains(lines[3], "(!)") ||
		!strings.Contains(out, "(!) power: agent-03: power on: exit status 1") {
		t.Errorf("a booting agent whose power-on failed:\n%s", out)
	}
}
