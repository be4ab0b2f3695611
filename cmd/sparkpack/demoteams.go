package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/sparkpack/sparkpack/workload"
)

// The demo's teams (--teams): the sample below by default, so that a
// newcomer sees team guarantees, limits and usage per team, a file of the
// operator's, or none.
const (
	demoTeamsSample = "sample"
	demoTeamsOff    = "off"
)

// The sample's teams, as its jobs carry them (their team label).
const (
	teamAnalytics = "analytics"
	teamETL       = "etl"
	teamReporting = "reporting"
)

// demoTeamsFile is examples/demo-teams.txt (a test keeps the two the
// same): the binary carries it so that the demo runs from anywhere.
const demoTeamsFile = `# The demo's sample teams: ` + "`sparkpack demo`" + ` runs with these (--teams FILE for your own,
# --teams off for none), and its sample jobs carry them as their team label: analytics
# (wordcount, pagerank), etl (sort, the nightly big job), reporting (the hourly deadline
# job). Keys and policy: docs/teams.md. The demo edits a copy (PUT /api/v1/teams).
# team      settings
analytics   weight=2 guaranteed-cpus=16 guaranteed-memory=64g
etl         weight=1 max-waiting=200
reporting   weight=1 guaranteed-cpus=4 guaranteed-memory=16g max-deadline=10
`

// sampleTeam is the team of a trace job of the sample, by its kind of
// application.
func sampleTeam(app workload.AppType) string {
	if app == workload.Sort {
		return teamETL
	}
	return teamAnalytics
}

// demoTeams resolves --teams to serve's teams file: the sample is written
// to a file of the demo's own (PUT /api/v1/teams replaces it, not the
// repository's example), removed by cleanup.
func demoTeams(flag string) (path string, cleanup func(), err error) {
	switch flag {
	case demoTeamsOff, "":
		return "", func() {}, nil
	case demoTeamsSample:
	default:
		return flag, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "sparkpack-demo-teams-")
	if err != nil {
		return "", nil, fmt.Errorf("--teams: %w", err)
	}
	path = filepath.Join(dir, "teams")
	if err := os.WriteFile(path, []byte(demoTeamsFile), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("--teams: write the sample teams: %w", err)
	}
	return path, func() { os.RemoveAll(dir) }, nil
}
