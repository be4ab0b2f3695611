package integration

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/mesossim"
)

// TestCostMeterSurvivesARestart: the cost meter (/api/v1/cost and
// sparkpack_cluster_cost_usd) goes on from the total it had when sparkpack
// stopped, not from $0 (issue 28, item 5).
func TestCostMeterSurvivesARestart(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db)
	id := submit(t, sp.API, sparkJob("costly", 2, 2, 2048, 60))
	waitState(t, sp.API, id, 60*time.Second, "FINISHED")
	var before struct{ TotalUSD float64 }
	getJSON(t, sp.API+"/api/v1/cost", &before)
	if before.TotalUSD <= 0 {
		t.Fatalf("the job ran, yet the meter says $%g", before.TotalUSD)
	}
	sp.stop()

	sp2 := startSparkpack(t, emu.URL, db)
	var after struct{ TotalUSD float64 }
	deadline := time.Now().Add(30 * time.Second)
	for {
		// 503 until the restarted instance leads.
		if resp, err := http.Get(sp2.API + "/api/v1/cost"); err == nil {
			if resp.StatusCode == 200 {
				json.NewDecoder(resp.Body).Decode(&after)
			}
			resp.Body.Close()
		}
		if after.TotalUSD >= before.TotalUSD {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after a restart the meter says $%g; before it, $%g", after.TotalUSD, before.TotalUSD)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := sum(scrape(t, sp2.API), "sparkpack_cluster_cost_usd"); got < before.TotalUSD {
		t.Errorf("sparkpack_cluster_cost_usd after a restart %g; before it %g", got, before.TotalUSD)
	}
}

// TestCostMeterCountsTheTimeSparkpackWasKilled: after a SIGKILL of serve
// and a restart, the cost meter (/api/v1/cost, sparkpack_cluster_cost_usd)
// is never below what it showed before the kill, and it counts the time
// serve was down for the agents that held the running job (they stayed
// on, the provider billed them). Before, it went back to the last save
// (up to 10 s older) and the downtime was not counted (a UAT: $0.17275
// before the kill, $0.17195 after).
func TestCostMeterCountsTheTimeSparkpackWasKilled(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db)
	// 3600 simulated seconds: 3 minutes at the emulator's x20, longer
	// than the test.
	id := submit(t, sp.API, sparkJob("runs-through-the-kill", 2, 2, 2048, 3600))
	waitState(t, sp.API, id, 60*time.Second, "RUNNING")
	type costView struct {
		TotalUSD           float64  `json:"totalUSD"`
		BurnRateUSDPerHour float64  `json:"burnRateUSDPerHour"`
		JobsUSD            *float64 `json:"jobsUSD"`
		IdleUSD            *float64 `json:"idleUSD"`
	}
	// readCost is /api/v1/cost, zero while it answers 503 (the instance
	// does not lead yet, or its meter has not resumed).
	readCost := func(api string) costView {
		var v costView
		if resp, err := http.Get(api + "/api/v1/cost"); err == nil {
			if resp.StatusCode == 200 {
				json.NewDecoder(resp.Body).Decode(&v)
			}
			resp.Body.Close()
		}
		return v
	}
	var before costView
	deadline := time.Now().Add(30 * time.Second)
	for before = readCost(sp.API); before.BurnRateUSDPerHour <= 0; before = readCost(sp.API) {
		if time.Now().After(deadline) {
			t.Fatalf("the job runs, yet the meter burns nothing: %+v", before)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Past a save (every 10 s), and some seconds unsaved.
	time.Sleep(13 * time.Second)
	getJSON(t, sp.API+"/api/v1/cost", &before)
	metricBefore := sum(scrape(t, sp.API), "sparkpack_cluster_cost_usd")
	shown := math.Max(before.TotalUSD, metricBefore)
	sp.kill()
	killed := time.Now()
	const down = 8 * time.Second
	time.Sleep(down)

	sp2 := startSparkpack(t, emu.URL, db)
	var after costView
	deadline = time.Now().Add(60 * time.Second)
	for {
		// 503 until the restarted instance leads and its meter resumed.
		if after = readCost(sp2.API); after.JobsUSD != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted instance shows no cost meter: %s", tail(sp2.logText(), 40))
		}
		time.Sleep(100 * time.Millisecond)
	}
	restarted := time.Now()
	if v, err := getJob(sp2.API, id); err != nil || v.State != "RUNNING" {
		t.Fatalf("the job is %s (%v) after the restart; the test needs it running through the kill", v.State, err)
	}
	// The agents that held the job cost their price the whole time serve
	// was down; the meter must count at least most of it.
	owed := before.BurnRateUSDPerHour * down.Hours()
	t.Logf("before the kill: $%.6f (metric $%.6f, burning $%.4f/h); after the restart (%.1f s later): $%.6f; downtime owed at least $%.6f",
		before.TotalUSD, metricBefore, before.BurnRateUSDPerHour, restarted.Sub(killed).Seconds(), after.TotalUSD, owed)
	if after.TotalUSD < shown {
		t.Errorf("the meter went back: $%.6f before the kill, $%.6f after the restart", shown, after.TotalUSD)
	}
	if after.TotalUSD < before.TotalUSD+0.9*owed {
		t.Errorf("the downtime is not counted: $%.6f before the kill, $%.6f after, less than the $%.6f the running agents cost in the %s down",
			before.TotalUSD, after.TotalUSD, owed, down)
	}
	if got := sum(scrape(t, sp2.API), "sparkpack_cluster_cost_usd"); got < after.TotalUSD-1e-9 {
		t.Errorf("sparkpack_cluster_cost_usd after the restart $%.6f, below /api/v1/cost $%.6f (before the kill $%.6f)", got, after.TotalUSD, shown)
	}
	if math.Abs(*after.JobsUSD+*after.IdleUSD-after.TotalUSD) > 1e-6*after.TotalUSD {
		t.Errorf("after the restart: jobs $%v + idle $%v != total $%v", *after.JobsUSD, *after.IdleUSD, after.TotalUSD)
	}
	if !strings.Contains(sp2.logText(), "the cost meter counted the time no meter ran") {
		t.Errorf("the restarted instance does not say that it counted the downtime:\n%s", tail(sp2.logText(), 40))
	}
}
