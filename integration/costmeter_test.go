package integration

import (
	"encoding/json"
	"net/http"
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
