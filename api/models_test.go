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

// TestJobViewKeepsTheStartPrediction: the job view's prediction is the
// one made at the start of the job's run, which the scheduler decided
// with, not what the model predicts after it learned from that very run
// (a demo's "p90 16 s" read 15 s after its end contradicted the job's own
// "at risk: running past its p90"): while it runs, the scheduler's
// (Config.RunPrediction); once it ended, its run history's; a waiting job's,
// or one whose start had none, is the model's now, labelled so.
func TestJobViewKeepsTheStartPrediction(t *testing.T) {
	model := JobPrediction{P50Seconds: 100, P90Seconds: 130, Level: perfmodel.LevelSignature}
	var atStart *JobPrediction
	e := newEnv(t, func(c *Config) {
		c.JobPrediction = func(scheduler.Job) *JobPrediction { p := model; return &p }
		c.RunPrediction = func(string) *JobPrediction { return atStart }
	})
	view := func(id string) map[string]any {
		t.Helper()
		resp, m := e.do(t, "GET", "/api/v1/jobs/"+id, "", "", nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET job %s: %d %v", id, resp.StatusCode, m)
		}
		return m
	}
	want := func(what string, m map[string]any, p50, p90 float64, level, at string) {
		t.Helper()
		if m["predictedSeconds"] != p50 || m["predictedP90Seconds"] != p90 || m["predictionLevel"] != level || m["predictedAt"] != at {
			t.Fatalf("%s: predicted %v p90 %v level %v at %v; want %v p90 %v level %v at %q", what,
				m["predictedSeconds"], m["predictedP90Seconds"], m["predictionLevel"], m["predictedAt"], p50, p90, level, at)
		}
	}
	ctx := context.Background()
	run := func(id string, seconds float64, unknown bool) {
		t.Helper()
		from := scheduler.Submitted
		s := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
		f := s.Add(time.Duration(seconds * float64(time.Second)))
		for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running, scheduler.Finished} {
			if to == scheduler.Running && unknown {
				continue
			}
			if _, err := e.store.Transition(ctx, id, from, to, "test", func(j *scheduler.Job) {
				if to == scheduler.Running || (to == scheduler.Finished && unknown) {
					j.StartedAt, j.LastStartedAt = &s, &s
				}
				if to == scheduler.Finished {
					j.Attempt, j.FinishedAt = 1, &f
					j.EndedRun = &scheduler.RunRecord{JobID: id, Attempt: 1, Signature: "sig", Executors: 2, StartedAt: s, EndedAt: f,
						Seconds: seconds, RunTimeUnknown: unknown, Outcome: scheduler.RunFinished,
						PredictedP50: 100, PredictedP90: 130, PredictionLevel: string(perfmodel.LevelSignature)}
				}
			}); err != nil {
				t.Fatalf("%s -> %s: %v", from, to, err)
			}
			from = to
			if to == scheduler.Running {
				// The scheduler predicted 100 s (p90 130 s) at the start;
				// the model then learns the run is slower.
				atStart, model = &JobPrediction{P50Seconds: 100, P90Seconds: 130, Level: perfmodel.LevelSignature}, JobPrediction{P50Seconds: 110, P90Seconds: 140, Level: perfmodel.LevelSignature}
				want("running job", view(id), 100, 130, "signature", PredictedAtStart)
				atStart = nil // the run ends: the scheduler forgets it
			}
		}
	}

	resp, m := e.post(t, goodJob)
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	id := m["id"].(string)
	want("queued job", view(id), 100, 130, "signature", PredictedAtNow)
	run(id, 200, false)
	// The model learned from the 200 s run: it predicts 150 s now.
	model = JobPrediction{P50Seconds: 150, P90Seconds: 190, Level: perfmodel.LevelSignature}
	m = view(id)
	want("finished job", m, 100, 130, "signature", PredictedAtStart)
	if m["actualSeconds"] != 200.0 {
		t.Fatalf("finished job: actualSeconds %v, want 200", m["actualSeconds"])
	}

	// A run never seen running: the start's prediction, no actual time
	// (so no error against it).
	resp, m = e.post(t, withField(withField(goodJob, "name", "unseen"), "id", "6f1d2c1e-8a7b-4c1d-9e2f-000000000003"))
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	unseen := m["id"].(string)
	run(unseen, 0, true)
	m = view(unseen)
	want("run never seen running", m, 100, 130, "signature", PredictedAtStart)
	if _, ok := m["actualSeconds"]; ok || m["runTimeUnknown"] != true {
		t.Fatalf("run never seen running: actual %v, runTimeUnknown %v", m["actualSeconds"], m["runTimeUnknown"])
	}

	// A running job the scheduler made no prediction for (a follower, or
	// no model at its start): the model's now, labelled so.
	resp, m = e.post(t, withField(withField(goodJob, "name", "nostart"), "id", "6f1d2c1e-8a7b-4c1d-9e2f-000000000004"))
	if resp.StatusCode != 201 {
		t.Fatalf("submit: %d %v", resp.StatusCode, m)
	}
	nostart := m["id"].(string)
	from := scheduler.Submitted
	for _, to := range []scheduler.State{scheduler.Queued, scheduler.Placing, scheduler.Reserving, scheduler.Launching, scheduler.Running} {
		if _, err := e.store.Transition(ctx, nostart, from, to, "test", nil); err != nil {
			t.Fatalf("%s -> %s: %v", from, to, err)
		}
		from = to
	}
	want("running job without a start prediction", view(nostart), 150, 190, "signature", PredictedAtNow)
}
