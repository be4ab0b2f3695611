package api

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

const etlSig = "local:///jobs/etl.jar#com.example.ETL"

// etlTruth is the run time the synthetic runs follow: 300 x E^-0.8 + 20.
func etlTruth(e int) float64 { return 300*math.Pow(float64(e), -0.8) + 20 }

func modelsServer(t *testing.T) (*httptest.Server, *BookModels) {
	t.Helper()
	m := NewBookModels(nil)
	for i := 0; i < 15; i++ {
		e := 1 + i%8
		noise := 1 + 0.02*math.Sin(float64(7*i))
		if err := m.Observe(etlSig, "", perfmodel.Run{Executors: e, Size: 1, Seconds: etlTruth(e) * noise}); err != nil {
			t.Fatal(err)
		}
	}
	// A signature with too few runs of its own.
	for _, e := range []int{2, 4} {
		if err := m.Observe("adhoc", "", perfmodel.Run{Executors: e, Size: 1, Seconds: 50}); err != nil {
			t.Fatal(err)
		}
	}
	quiet := logrus.New()
	quiet.SetOutput(io.Discard)
	srv := httptest.NewServer(New(Config{Models: m, Log: quiet}).Handler())
	t.Cleanup(srv.Close)
	return srv, m
}

func getJSON(t *testing.T, u string, v any) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return resp.StatusCode
}

// TestModelsView: GET /api/v1/models shows each signature's runs, fitted
// model, honest error and a curve close to the runs' truth; one model is
// served by its id; bad parameters are 400s naming the field.
func TestModelsView(t *testing.T) {
	srv, _ := modelsServer(t)
	var all ModelsView
	if st := getJSON(t, srv.URL+"/api/v1/models", &all); st != 200 || len(all.Models) != 2 {
		t.Fatalf("GET /api/v1/models: %d %+v", st, all)
	}
	adhoc, etl := all.Models[0], all.Models[1]
	if etl.Signature != etlSig || etl.Runs != 15 || etl.Level != perfmodel.LevelSignature || etl.Params == nil ||
		etl.MAPEPercent == nil || etl.MAPERuns != 15-perfmodel.MinRuns || etl.FitMAPEPercent == nil || *etl.FitMAPEPercent > 5 {
		t.Fatalf("etl model: %+v", etl)
	}
	if len(etl.Curve) != len(DefaultCurveExecutors) {
		t.Fatalf("etl curve: %+v", etl.Curve)
	}
	for i, p := range etl.Curve {
		if p.Executors != DefaultCurveExecutors[i] || p.Level != perfmodel.LevelSignature || p.P90Seconds < p.P50Seconds {
			t.Fatalf("curve point %+v", p)
		}
		if i > 0 && p.P50Seconds > etl.Curve[i-1].P50Seconds {
			t.Fatalf("curve rises from %+v to %+v", etl.Curve[i-1], p)
		}
		if p.Executors <= 8 {
			if d := math.Abs(p.P50Seconds-etlTruth(p.Executors)) / etlTruth(p.Executors); d > 0.1 {
				t.Errorf("%d executors: p50 %.1f s, truth %.1f s", p.Executors, p.P50Seconds, etlTruth(p.Executors))
			}
		}
	}
	if adhoc.Signature != "adhoc" || adhoc.Runs != 2 || adhoc.Level == perfmodel.LevelSignature || adhoc.MAPEPercent != nil {
		t.Fatalf("adhoc model: %+v", adhoc)
	}

	var one ModelView
	if st := getJSON(t, srv.URL+"/api/v1/models/"+etl.ID+"?executors=3", &one); st != 200 || one.Signature != etlSig ||
		len(one.Curve) != 1 || one.Curve[0].Executors != 3 {
		t.Fatalf("GET by id: %d %+v", st, one)
	}
	if st := getJSON(t, srv.URL+"/api/v1/models/adhoc", &one); st != 200 || one.Signature != "adhoc" {
		t.Fatalf("GET by a signature without slashes: %d %+v", st, one)
	}
	var filtered ModelsView
	if st := getJSON(t, srv.URL+"/api/v1/models?signature="+url.QueryEscape(etlSig)+"&size=2", &filtered); st != 200 ||
		len(filtered.Models) != 1 || filtered.Models[0].Size != 2 {
		t.Fatalf("filtered: %d %+v", st, filtered)
	}
	for _, c := range []struct {
		path   string
		status int
		field  string
	}{
		{"/api/v1/models/0123456789abcdef", 404, "signature"},
		{"/api/v1/models?executors=0", 400, "executors"},
		{"/api/v1/models?executors=1,x", 400, "executors"},
		{"/api/v1/models?size=-1", 400, "size"},
		{"/api/v1/models?size=NaN", 400, "size"},
		{"/api/v1/models/" + etl.ID + "?size=1e999", 400, "size"},
		{"/api/v1/models?bogus=1", 400, "bogus"},
	} {
		var e ErrorBody
		if st := getJSON(t, srv.URL+c.path, &e); st != c.status || e.Field != c.field || e.Error == "" {
			t.Errorf("GET %s: %d %+v, want %d naming %q", c.path, st, e, c.status, c.field)
		}
	}
}

// TestJobViewShowsPredictedAndActual: the job view carries the predicted
// run time when there is one, and the actual one once the job finished.
func TestJobViewShowsPredictedAndActual(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.DurationScale = 0.5 // a wall second is two estimate seconds
		c.JobPrediction = func(j scheduler.Job) *JobPrediction {
			if j.Name != "wordcount" {
				return nil
			}
			return &JobPrediction{P50Seconds: 120, P90Seconds: 150, Level: perfmodel.LevelSignature}
		}
	})
	resp, m := e.post(t, goodJob)
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	id := m["id"].(string)
	_, m = e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
	if m["predictedSeconds"] != 120.0 || m["predictedP90Seconds"] != 150.0 || m["predictionLevel"] != "signature" || m["actualSeconds"] != nil {
		t.Fatalf("queued job view: %v", m)
	}
	ctx := context.Background()
	from := scheduler.Submitted
	for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running, scheduler.Finished} {
		if _, err := e.store.Transition(ctx, id, from, to, "test", func(j *scheduler.Job) {
			if to == scheduler.Running {
				s := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
				j.StartedAt, j.LastStartedAt = &s, &s
			}
			if to == scheduler.Finished {
				f := time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC) // 60 wall seconds
				j.FinishedAt = &f
			}
		}); err != nil {
			t.Fatalf("%s -> %s: %v", from, to, err)
		}
		from = to
	}
	_, m = e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
	if m["state"] != "FINISHED" || m["actualSeconds"] != 120.0 || m["predictedSeconds"] != 120.0 {
		t.Fatalf("finished job view: state %v actual %v predicted %v", m["state"], m["actualSeconds"], m["predictedSeconds"])
	}
	// A job whose driver ended before it was seen running: a start (its
	// launch), no actual run time (docs/learning.md).
	resp, m = e.post(t, withField(withField(goodJob, "name", "unseen"), "id", "6f1d2c1e-8a7b-4c1d-9e2f-000000000002"))
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	unseen := m["id"].(string)
	from = scheduler.Submitted
	for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Finished} {
		if _, err := e.store.Transition(ctx, unseen, from, to, "test", func(j *scheduler.Job) {
			if to == scheduler.Finished {
				s, f := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC)
				j.Attempt, j.StartedAt, j.LastStartedAt, j.FinishedAt = 1, &s, &s, &f
				j.EndedRun = &scheduler.RunRecord{JobID: unseen, Attempt: 1, Signature: "sig", Executors: 1, StartedAt: s, EndedAt: f,
					RunTimeUnknown: true, Outcome: scheduler.RunFinished}
			}
		}); err != nil {
			t.Fatalf("%s -> %s: %v", from, to, err)
		}
		from = to
	}
	_, m = e.do(t, "GET", "/api/v1/jobs/"+unseen, "", "", nil)
	if _, ok := m["actualSeconds"]; ok || m["runTimeUnknown"] != true || m["startedAt"] == nil {
		t.Fatalf("job never seen running: actual %v, runTimeUnknown %v, startedAt %v", m["actualSeconds"], m["runTimeUnknown"], m["startedAt"])
	}
	_, m = e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
	if _, ok := m["runTimeUnknown"]; ok {
		t.Fatalf("a job seen running has runTimeUnknown: %v", m)
	}
	// The list (the dashboard's jobs table, which shows how long each job
	// ran) says so too.
	_, m = e.do(t, "GET", "/api/v1/jobs?state=FINISHED", "", "", nil)
	listed := map[string]any{}
	for _, x := range m["jobs"].([]any) {
		v := x.(map[string]any)
		listed[v["id"].(string)] = v["runTimeUnknown"]
	}
	if len(listed) != 2 || listed[unseen] != true || listed[id] != nil {
		t.Fatalf("listed runTimeUnknown by job: %v; want true for %s only", listed, unseen)
	}
	resp, m = e.post(t, withField(withField(goodJob, "name", "other"), "id", "6f1d2c1e-8a7b-4c1d-9e2f-000000000001"))
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	_, m = e.do(t, "GET", "/api/v1/jobs/"+m["id"].(string), "", "", nil)
	if _, ok := m["predictedSeconds"]; ok {
		t.Fatalf("a job without a prediction shows one: %v", m)
	}
}

// TestRunTimeUnknownOnAnyEnd: a job whose driver ran but ended FAILED or
// KILLED before it was seen running (its executor's FAILED or KILLED
// without a reason: docs/framework.md) has no known run time either: its
// view and the list say runTimeUnknown, as for a FINISHED one (its
// finishedAt minus startedAt is only its launch-to-end span).
func TestRunTimeUnknownOnAnyEnd(t *testing.T) {
	e := newEnv(t, nil)
	ctx := context.Background()
	ids := map[scheduler.State]string{}
	for i, end := range []scheduler.State{scheduler.Failed, scheduler.Killed} {
		resp, m := e.post(t, withField(withField(goodJob, "name", strings.ToLower(string(end))), "id", fmt.Sprintf("6f1d2c1e-8a7b-4c1d-9e2f-00000000000%d", i)))
		if resp.StatusCode != 201 {
			t.Fatalf("submit: %d %v", resp.StatusCode, m)
		}
		id := m["id"].(string)
		ids[end] = id
		from := scheduler.Submitted
		for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, end} {
			if _, err := e.store.Transition(ctx, id, from, to, "test", func(j *scheduler.Job) {
				if to == end {
					s, f := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 10, 1, 0, 0, time.UTC)
					j.Attempt, j.StartedAt, j.LastStartedAt, j.FinishedAt = 1, &s, &s, &f
					j.EndedRun = &scheduler.RunRecord{JobID: id, Attempt: 1, Signature: "sig", Executors: 1, StartedAt: s, EndedAt: f,
						RunTimeUnknown: true, Outcome: scheduler.RunFailed}
				}
			}); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
		}
	}
	_, m := e.do(t, "GET", "/api/v1/jobs", "", "", nil)
	listed := map[string]any{}
	for _, x := range m["jobs"].([]any) {
		j := x.(map[string]any)
		listed[j["id"].(string)] = j["runTimeUnknown"]
	}
	for end, id := range ids {
		_, v := e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
		if v["state"] != string(end) || v["runTimeUnknown"] != true || listed[id] != true {
			t.Errorf("%s job never seen running: state %v, runTimeUnknown %v in its view, %v in the list; want true", end, v["state"], v["runTimeUnknown"], listed[id])
		}
	}
}
