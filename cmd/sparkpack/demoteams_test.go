package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/teams"
)

// TestDemoSampleTeams: the demo's built-in teams are
// examples/demo-teams.txt, a valid teams file naming every team the
// sample's jobs carry, and every sample job carries one of them; the
// demo hands serve a copy of it (PUT /api/v1/teams must not rewrite the
// example), none with --teams off and the operator's file as given.
func TestDemoSampleTeams(t *testing.T) {
	ex, err := os.ReadFile("../../examples/demo-teams.txt")
	if err != nil {
		t.Fatal(err)
	}
	if string(ex) != demoTeamsFile {
		t.Fatalf("examples/demo-teams.txt and the demo's built-in teams differ:\n%s\n---\n%s", ex, demoTeamsFile)
	}
	cfg, err := teams.Parse(strings.NewReader(demoTeamsFile))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tm := range cfg.Teams {
		names = append(names, tm.Name)
	}

	s, err := newSampler(16, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for wave := 1; wave <= 2; wave++ {
		for _, j := range s.wave(wave, capacity{CPUs: 100, AgentCPUs: 12, AgentMemMB: 49152}) {
			team := j.body(1)["labels"].(map[string]string)["team"]
			if !slices.Contains(names, team) {
				t.Fatalf("sample job %s (%s) has team %q, not one of the sample's %v", j.name(), j.kind, team, names)
			}
			seen[team]++
		}
	}
	for _, n := range names {
		if seen[n] == 0 {
			t.Errorf("no sample job of team %s in two waves (%v)", n, seen)
		}
	}

	path, cleanup, err := demoTeams(demoTeamsSample)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != demoTeamsFile || strings.Contains(path, "examples") {
		t.Fatalf("the sample's copy %s: %v", path, err)
	}
	cleanup()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the sample's copy %s outlived the demo: %v", path, err)
	}
	if p, _, _ := demoTeams(demoTeamsOff); p != "" {
		t.Errorf("--teams off: %q", p)
	}
	if p, _, _ := demoTeams("/etc/our-teams"); p != "/etc/our-teams" {
		t.Errorf("--teams FILE: %q", p)
	}
}
