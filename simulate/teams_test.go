package simulate

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/teams"
)

func TestParseTeamMix(t *testing.T) {
	got, err := ParseTeamMix("analytics=0.5, ml=0.3,-=0.2")
	if err != nil || len(got) != 3 || got[0] != (TeamShare{"analytics", 0.5}) || got[2] != (TeamShare{"", 0.2}) {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range []string{"analytics", "a=0", "a=-1", "a=x", "a=1,a=2", "bad team=1", "a=Inf"} {
		if _, err := ParseTeamMix(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestSimulateTeams: with a team mix every job gets a team (the same for
// every policy), the per-team results add up to the run's, and a team's
// maximum in the teams file makes that team wait longer.
func TestSimulateTeams(t *testing.T) {
	wl := thesisHour(t, 0, 60, 2)
	dap, _ := LookupPolicy("dap")
	mix, err := ParseTeamMix("analytics=0.3,ml=0.5,etl=0.2")
	if err != nil {
		t.Fatal(err)
	}
	run := func(file string) Result {
		var cfg *teams.Config
		if file != "" {
			if cfg, err = teams.Parse(strings.NewReader(file)); err != nil {
				t.Fatal(err)
			}
		}
		r, err := Run(context.Background(), Options{Workload: wl, Cluster: clusterspec.Thesis14(), Policy: dap,
			DeadlineFraction: 1, Slack: 1.5, Seed: 2, Teams: cfg, TeamMix: mix})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	free, capped := run(""), run("ml max-cpus=24\n")
	for _, r := range []Result{free, capped} {
		if len(r.Teams) != 3 {
			t.Fatalf("teams %+v", r.Teams)
		}
		jobs, missed, usd := 0, 0, 0.0
		for _, tr := range r.Teams {
			jobs += tr.Jobs
			missed += tr.DeadlineMissed
			usd += tr.CostUSD
		}
		if jobs != r.Jobs || missed != r.DeadlineMissed || math.Abs(usd-r.TotalCostUSD) > 1e-6*r.TotalCostUSD {
			t.Errorf("teams add up to %d jobs, %d missed, $%g; the run: %d, %d, $%g", jobs, missed, usd, r.Jobs, r.DeadlineMissed, r.TotalCostUSD)
		}
	}
	for i := range free.Teams {
		f, c := free.Teams[i], capped.Teams[i]
		if f.Team != c.Team || f.Jobs != c.Jobs {
			t.Fatalf("the mix differs between runs: %+v %+v", f, c)
		}
		if f.Team == "ml" && !(c.WaitMeanS > f.WaitMeanS) {
			t.Errorf("ml capped waits %.1f s on average, uncapped %.1f s", c.WaitMeanS, f.WaitMeanS)
		}
	}
}
