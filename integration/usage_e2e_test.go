package integration

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestE2ETeamBills: three teams on the emulator, one flooding the queue.
// After every job ended, the per-team bills of GET /api/v1/usage?by=team
// plus the idle remainder add up to sparkpack's meter (/api/v1/cost) and to
// the emulator's own bill of the agents while they held work
// (/sim/bill activeUSD) within 1%; each team's bill is the sum of its
// jobs' costUSD; and the meter's jobsUSD + idleUSD is its total.
func TestE2ETeamBills(t *testing.T) {
	// TimeScale 1: the emulator bills in wall time, as the meter does.
	emu := startEmulator(t, mesossim.Config{Cluster: powerCluster(), TimeScale: 1, OfferInterval: 20 * time.Millisecond})
	sp := startSparkpack(t, emu.URL, e2eDB(t))
	type sub struct {
		team string
		n    int
		exec int
		secs float64
	}
	ids := map[string][]string{}
	for _, s := range []sub{{"analytics", 8, 2, 18}, {"search", 3, 1, 24}, {"etl", 2, 3, 30}} {
		for i := 0; i < s.n; i++ {
			body := sparkJob(fmt.Sprintf("%s-%d", s.team, i), s.exec, 2, 2048, s.secs)
			body["labels"] = map[string]string{"team": s.team}
			ids[s.team] = append(ids[s.team], submit(t, sp.API, body))
		}
	}
	for team, list := range ids {
		for _, id := range list {
			if v := waitState(t, sp.API, id, 5*time.Minute, "FINISHED", "FAILED"); v.State != "FINISHED" {
				t.Fatalf("%s job %s %s: %s", team, id, v.State, v.WaitingReason)
			}
		}
	}
	// Every agent idle again, and the ledger saved (every 10 s) up to the
	// meter's total: then the figures no longer move.
	type usageView struct {
		Rows []struct {
			Group   string  `json:"group"`
			Idle    bool    `json:"idle"`
			CostUSD float64 `json:"costUSD"`
		} `json:"rows"`
	}
	var cost struct {
		TotalUSD           float64  `json:"totalUSD"`
		BurnRateUSDPerHour float64  `json:"burnRateUSDPerHour"`
		JobsUSD            *float64 `json:"jobsUSD"`
		IdleUSD            *float64 `json:"idleUSD"`
	}
	teams := map[string]float64{}
	sum := 0.0
	deadline := time.Now().Add(90 * time.Second)
	for {
		getJSON(t, sp.API+"/api/v1/cost", &cost)
		var u usageView
		getJSON(t, sp.API+"/api/v1/usage?by=team&from="+time.Now().Add(-time.Hour).UTC().Format(time.RFC3339), &u)
		teams, sum = map[string]float64{}, 0
		for _, r := range u.Rows {
			sum += r.CostUSD
			if !r.Idle {
				teams[r.Group] += r.CostUSD
			}
		}
		if cost.BurnRateUSDPerHour == 0 && cost.TotalUSD > 0 && math.Abs(sum-cost.TotalUSD) <= 1e-6*cost.TotalUSD {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the usage report adds up to $%v, the meter says $%v (burn rate $%v/h)", sum, cost.TotalUSD, cost.BurnRateUSDPerHour)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if cost.JobsUSD == nil || cost.IdleUSD == nil || math.Abs(*cost.JobsUSD+*cost.IdleUSD-cost.TotalUSD) > 1e-6*cost.TotalUSD {
		t.Fatalf("/api/v1/cost: jobs %v + idle %v != total %v", cost.JobsUSD, cost.IdleUSD, cost.TotalUSD)
	}
	bill := emulatorBill(t, emu.URL)
	names := make([]string, 0, len(teams))
	for n := range teams {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		t.Logf("team %-9s $%.6f (%.1f%%)", n, teams[n], 100*teams[n]/sum)
	}
	t.Logf("teams + idle $%.6f, meter $%.6f, emulator's active bill $%.6f (%+.2f%%), its power-on bill $%.6f",
		sum, cost.TotalUSD, bill.ActiveUSD, 100*(sum/bill.ActiveUSD-1), bill.TotalUSD)
	if len(teams) != 3 {
		t.Fatalf("teams %v, want analytics, search and etl", teams)
	}
	for _, n := range names {
		if teams[n] <= 0 {
			t.Errorf("team %s billed $%v", n, teams[n])
		}
	}
	if math.Abs(sum-bill.ActiveUSD) > 0.01*bill.ActiveUSD {
		t.Errorf("the teams' bills and idle add up to $%.6f, the emulator billed $%.6f for the agents while they held work: off by more than 1%%", sum, bill.ActiveUSD)
	}
	// The per-team metrics read the same ledger: each team's cost, the
	// idle part, and cpu- and memory-seconds held.
	m := scrape(t, sp.API)
	idle := metricSum(m, "sparkpack_idle_cost_usd_total")
	metricsTotal := idle
	for _, n := range names {
		c := metricSum(m, "sparkpack_team_cost_usd_total", `team="`+n+`"`)
		metricsTotal += c
		if math.Abs(c-teams[n]) > 1e-6*teams[n] || metricSum(m, "sparkpack_team_cpu_seconds_total", `team="`+n+`"`) <= 0 ||
			metricSum(m, "sparkpack_team_memory_mib_seconds_total", `team="`+n+`"`) <= 0 {
			t.Errorf("metrics of team %s: cost %v (bill %v), cpu-seconds %v, MiB-seconds %v", n, c, teams[n],
				metricSum(m, "sparkpack_team_cpu_seconds_total", `team="`+n+`"`), metricSum(m, "sparkpack_team_memory_mib_seconds_total", `team="`+n+`"`))
		}
	}
	if math.Abs(metricsTotal-cost.TotalUSD) > 1e-6*cost.TotalUSD {
		t.Errorf("sparkpack_team_cost_usd_total + sparkpack_idle_cost_usd_total = %v; the meter says %v", metricsTotal, cost.TotalUSD)
	}
	// Each team's bill is the sum of its jobs' costUSD.
	for team, list := range ids {
		jobs := 0.0
		for _, id := range list {
			var v struct {
				CostUSD *float64 `json:"costUSD"`
			}
			getJSON(t, sp.API+"/api/v1/jobs/"+id, &v)
			if v.CostUSD == nil || *v.CostUSD <= 0 {
				t.Fatalf("job %s of %s: costUSD %v", id, team, v.CostUSD)
			}
			jobs += *v.CostUSD
		}
		if math.Abs(jobs-teams[team]) > 1e-6*teams[team] {
			t.Errorf("team %s: its jobs' costUSD add up to $%v, its bill is $%v", team, jobs, teams[team])
		}
	}
}

// TestCostAttributionSurvivesARestart: a job's attributed cost and the
// split of the meter into jobs and idle are the same after a restart (the
// ledger is saved with the meter's total), read from the store by the new
// instance.
func TestCostAttributionSurvivesARestart(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db)
	id := submit(t, sp.API, sparkJob("attributed", 2, 2, 2048, 60))
	waitState(t, sp.API, id, 60*time.Second, "FINISHED")
	type costView struct {
		TotalUSD           float64  `json:"totalUSD"`
		BurnRateUSDPerHour float64  `json:"burnRateUSDPerHour"`
		JobsUSD            *float64 `json:"jobsUSD"`
		IdleUSD            *float64 `json:"idleUSD"`
	}
	type jobCost struct {
		CostUSD *float64 `json:"costUSD"`
	}
	var before costView
	var job jobCost
	deadline := time.Now().Add(30 * time.Second)
	for {
		getJSON(t, sp.API+"/api/v1/cost", &before)
		getJSON(t, sp.API+"/api/v1/jobs/"+id, &job)
		if before.BurnRateUSDPerHour == 0 && job.CostUSD != nil && *job.CostUSD > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job ended, yet the meter burns $%v/h and the job's cost is %v", before.BurnRateUSDPerHour, job.CostUSD)
		}
		time.Sleep(200 * time.Millisecond)
	}
	sp.stop()

	sp2 := startSparkpack(t, emu.URL, db)
	var after costView
	var job2 jobCost
	deadline = time.Now().Add(30 * time.Second)
	for {
		// 503 until the restarted instance leads.
		if resp, err := http.Get(sp2.API + "/api/v1/cost"); err == nil {
			if resp.StatusCode == 200 {
				json.NewDecoder(resp.Body).Decode(&after)
			}
			resp.Body.Close()
		}
		getJSON(t, sp2.API+"/api/v1/jobs/"+id, &job2)
		if after.JobsUSD != nil && after.TotalUSD >= before.TotalUSD && job2.CostUSD != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a restart: cost %+v, job cost %v", after, job2.CostUSD)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if math.Abs(*job2.CostUSD-*job.CostUSD) > 1e-6**job.CostUSD {
		t.Errorf("the job's cost was $%v, after a restart $%v", *job.CostUSD, *job2.CostUSD)
	}
	if math.Abs(*after.JobsUSD-*before.JobsUSD) > 1e-6**before.JobsUSD || math.Abs(*after.JobsUSD+*after.IdleUSD-after.TotalUSD) > 1e-6*after.TotalUSD {
		t.Errorf("before: jobs $%v idle $%v total $%v; after: jobs $%v idle $%v total $%v",
			*before.JobsUSD, *before.IdleUSD, before.TotalUSD, *after.JobsUSD, *after.IdleUSD, after.TotalUSD)
	}
}

// metricSum is sum (demo_product_test.go), for tests with a variable of that name.
var metricSum = sum
