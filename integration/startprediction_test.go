package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/mesossim"
	"github.com/sparkpack/sparkpack/store"
)

// jobPrediction reads a job view's prediction fields.
type jobPrediction struct {
	State               string   `json:"state"`
	PredictedSeconds    *float64 `json:"predictedSeconds"`
	PredictedP90Seconds *float64 `json:"predictedP90Seconds"`
	PredictionLevel     string   `json:"predictionLevel"`
	PredictedAt         string   `json:"predictedAt"`
	ActualSeconds       *float64 `json:"actualSeconds"`
}

func (p jobPrediction) String() string {
	f := func(x *float64) string {
		if x == nil {
			return "none"
		}
		return fmt.Sprintf("%.2f s", *x)
	}
	return fmt.Sprintf("%s: p50 %s p90 %s (%s, at %q), actual %s", p.State, f(p.PredictedSeconds), f(p.PredictedP90Seconds), p.PredictionLevel, p.PredictedAt, f(p.ActualSeconds))
}

func getPrediction(t *testing.T, api, id string) jobPrediction {
	t.Helper()
	resp, err := http.Get(api + "/api/v1/jobs/" + id)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var p jobPrediction
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &p) != nil {
		t.Fatalf("GET job %s: %d %s", id, resp.StatusCode, raw)
	}
	return p
}

// TestE2EJobViewKeepsTheStartPrediction: on the real stack (sparkpack
// over the emulated Mesos, PostgreSQL), a running job's view carries the
// prediction its scheduler made at its start (predictedAt "start", from
// the leader's core), and once it finished the one its run history
// recorded, the same, even after a later run of its signature taught the
// model more; before, the view showed the model's prediction of the
// moment, which drifted toward the run's actual time after it ended.
func TestE2EJobViewKeepsTheStartPrediction(t *testing.T) {
	emu := startEmulator(t, mesossim.Config{Cluster: smallCluster(2)})
	db := e2eDB(t)
	sp := startSparkpack(t, emu.URL, db)
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	st, err := store.Open(context.Background(), db, store.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()

	// A first run: the model knows nothing of the signature before it
	// (no prediction at its start), something after.
	first := submit(t, sp.API, sparkJob("first", 1, 1, 1024, 10))
	if v := waitState(t, sp.API, first, 3*time.Minute, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
		t.Fatalf("first job ended %s", v.State)
	}
	a := submit(t, sp.API, sparkJob("second", 1, 1, 1024, 10))
	waitState(t, sp.API, a, 3*time.Minute, "RUNNING", "FINISHED", "FAILED", "KILLED")
	running := getPrediction(t, sp.API, a)
	t.Logf("running: %v", running)
	if running.State == "RUNNING" && (running.PredictedAt != "start" || running.PredictedSeconds == nil) {
		t.Fatalf("running job's view: %v; want the start's prediction", running)
	}
	if v := waitState(t, sp.API, a, 3*time.Minute, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
		t.Fatalf("second job ended %s", v.State)
	}
	runs, err := st.JobRuns(ctx, a)
	if err != nil || len(runs) != 1 || !(runs[0].PredictedP50 > 0) {
		t.Fatalf("run history of the second job: %+v, %v; want one run with a prediction", runs, err)
	}
	rec := runs[0]
	if running.State == "RUNNING" && *running.PredictedSeconds != rec.PredictedP50 {
		t.Fatalf("running view predicted %v, the run history recorded %v: not the start's", *running.PredictedSeconds, rec.PredictedP50)
	}
	// A third run of the signature: the model learns from it.
	b := submit(t, sp.API, sparkJob("third", 1, 1, 1024, 10))
	if v := waitState(t, sp.API, b, 3*time.Minute, "FINISHED", "FAILED", "KILLED"); v.State != "FINISHED" {
		t.Fatalf("third job ended %s", v.State)
	}
	third, err := st.JobRuns(ctx, b)
	if err != nil || len(third) != 1 {
		t.Fatalf("run history of the third job: %+v, %v", third, err)
	}
	ended := getPrediction(t, sp.API, a)
	t.Logf("second run: predicted at its start p50 %.2f s p90 %.2f s (%s), ran %.2f s; the third's start predicted p50 %.2f s (%s); the second's view now: %v",
		rec.PredictedP50, rec.PredictedP90, rec.PredictionLevel, rec.Seconds, third[0].PredictedP50, third[0].PredictionLevel, ended)
	if ended.PredictedAt != "start" || ended.PredictedSeconds == nil || *ended.PredictedSeconds != rec.PredictedP50 ||
		*ended.PredictedP90Seconds != max(rec.PredictedP90, rec.PredictedP50) || ended.PredictionLevel != rec.PredictionLevel || ended.ActualSeconds == nil {
		t.Fatalf("finished job's view: %v; want the recorded start prediction p50 %.2f p90 %.2f (%s) and an actual", ended, rec.PredictedP50, rec.PredictedP90, rec.PredictionLevel)
	}
}
