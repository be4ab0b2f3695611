package main

import (
	"github.com/sparkpack/sparkpack/api"
	"github.com/sparkpack/sparkpack/learned"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
)

// modelsView serves the live learned model as the API's models view
// (GET /api/v1/models) and a job's predicted run time on its page.
type modelsView struct {
	m *learned.Model
	// scale turns a job's estimate into wall time as the core does
	// (1/--sim-speed in the demo; 0 means 1): the model learned the
	// estimates scaled, so an unscaled one would inflate the prediction.
	scale float64
}

func (v modelsView) Summaries() []perfmodel.Summary { return v.m.Summaries() }

func (v modelsView) Predict(sig, app string, q perfmodel.Query) (perfmodel.Prediction, error) {
	return v.m.PredictQuery(sig, app, q)
}

// jobPrediction is what the model predicts for j with its executors (a
// plan-free shape: the job view has no plan for a waiting job); nil when
// the model knows nothing of it.
func (v modelsView) jobPrediction(j scheduler.Job) *api.JobPrediction {
	e := j.Executors
	if j.Sizing != nil && j.Sizing.Executors > 0 {
		e = j.Sizing.Executors
	}
	if e <= 0 {
		return nil
	}
	k := scheduler.RunKeyOf(&j)
	if v.scale > 0 {
		k.EstimateSeconds *= v.scale
	}
	p, ok := v.m.Predict(k, e, perfmodel.Placement{})
	if !ok {
		return nil
	}
	return &api.JobPrediction{P50Seconds: p.P50, P90Seconds: p.P90, Level: p.Level}
}
