package scheduler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// Labels that feed the learned run-time model (docs/learning.md).
const (
	// SignatureLabel names the job's signature (which past runs it is
	// like); default appResource + " " + mainClass.
	SignatureLabel = "sparkpack.io/app"
	// InputSizeLabel and IterationsLabel give the size hints when the
	// spec's inputSizeGB and iterations do not.
	InputSizeLabel  = "sparkpack.io/input-size-gb"
	IterationsLabel = "sparkpack.io/iterations"
)

// Limits of the size hints.
const (
	MaxInputSizeGB = 1e6 // an exabyte
	MaxIterations  = 1_000_000
)

// Outcomes of a run in the run history.
const (
	RunFinished  = "FINISHED"
	RunFailed    = "FAILED"
	RunKilled    = "KILLED"
	RunRetried   = "RETRIED"
	RunPreempted = "PREEMPTED"
)

// Signature is the job's signature for the run-time model: the
// SignatureLabel label if set, else appResource + " " + mainClass.
func Signature(j *Job) string {
	if v := strings.TrimSpace(j.Labels[SignatureLabel]); v != "" {
		return v
	}
	return j.App.AppResource + " " + j.App.MainClass
}

// EstimateKeyOf is whose estimates j's estimate is learned with beyond
// its signature (docs/learning.md): its team's ("team:" + Team), else,
// with no team, the submitting token's ("token:" + SubmittedBy), else the
// default team's ("team:"). A team that underestimates by 40% on its jobs
// has a new signature's estimate corrected as much.
func EstimateKeyOf(j *Job) string {
	if j.Team == "" && j.SubmittedBy != "" {
		return "token:" + j.SubmittedBy
	}
	return "team:" + j.Team
}

// SizeHints are the job's input size (GB, 0 when unknown) and iterations
// (0 when unknown): the spec's fields, else its labels (validated at
// submission; a label that does not parse counts as unknown).
func SizeHints(j *Job) (inputGB float64, iterations int) {
	inputGB, iterations = j.InputSizeGB, j.Iterations
	if inputGB == 0 {
		if v, err := strconv.ParseFloat(strings.TrimSpace(j.Labels[InputSizeLabel]), 64); err == nil && v > 0 && v <= MaxInputSizeGB {
			inputGB = v
		}
	}
	if iterations == 0 {
		if v, err := strconv.Atoi(strings.TrimSpace(j.Labels[IterationsLabel])); err == nil && v > 0 && v <= MaxIterations {
			iterations = v
		}
	}
	return inputGB, iterations
}

// ModelSize is the job's size I for the model: input GB (1 when unknown)
// times iterations (1 when unknown).
func ModelSize(inputGB float64, iterations int) float64 {
	if !(inputGB > 0) {
		inputGB = 1
	}
	return inputGB * float64(max(1, iterations))
}

// checkSizeHints validates the spec's size hints and their labels.
func (s *Spec) checkSizeHints() error {
	if v := s.InputSizeGB; math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxInputSizeGB {
		return fieldErr("inputSizeGB", "must be a size in GB from 0 to %g, got %s", float64(MaxInputSizeGB), formatSeconds(v))
	}
	if s.Iterations < 0 || s.Iterations > MaxIterations {
		return fieldErr("iterations", "must be a whole number from 0 to %d, got %d", MaxIterations, s.Iterations)
	}
	if v, ok := s.Labels[InputSizeLabel]; ok {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > MaxInputSizeGB {
			return fieldErr("labels."+InputSizeLabel, "must be a size in GB from 0 to %g, got %q", float64(MaxInputSizeGB), truncate(v, 40))
		}
	}
	if v, ok := s.Labels[IterationsLabel]; ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > MaxIterations {
			return fieldErr("labels."+IterationsLabel, "must be a whole number from 0 to %d, got %q", MaxIterations, truncate(v, 40))
		}
	}
	auto := s.AutoExecutors()
	if !auto && (s.MinExecutors != 0 || s.MaxExecutors != 0) {
		return fieldErr("minExecutors", "minExecutors and maxExecutors bound \"executors\": \"auto\" only")
	}
	if s.MinExecutors < 0 || s.MinExecutors > MaxExecutors {
		return fieldErr("minExecutors", "must be from 1 to %d, got %d", MaxExecutors, s.MinExecutors)
	}
	if s.MaxExecutors < 0 || s.MaxExecutors > MaxExecutors {
		return fieldErr("maxExecutors", "must be from 1 to %d, got %d", MaxExecutors, s.MaxExecutors)
	}
	if s.MaxExecutors > 0 && s.MinExecutors > s.MaxExecutors {
		return fieldErr("maxExecutors", "must be at least minExecutors (%d), got %d", s.MinExecutors, s.MaxExecutors)
	}
	return nil
}

// RunRecord is one finished attempt of a job (a row of the run history).
type RunRecord struct {
	// ID is the run's row in the run history, in the order rows were
	// inserted (0 until it is stored; the store does not set it on the
	// core's record).
	ID        int64
	JobID     string
	Attempt   int
	Signature string
	AppType   string
	// EstimateKey is whose estimates the attempt's estimate belongs to
	// beyond its signature (EstimateKeyOf: its team's, or its token's);
	// rows written before teams were learned hold the signature.
	EstimateKey      string
	InputSizeGB      float64
	Iterations       int
	Executors        int
	ExecutorCores    int
	ExecutorMemoryMB int
	RunShape
	StartedAt, EndedAt time.Time
	Seconds            float64
	// RunTimeUnknown: the driver ran but was never seen running (its
	// TASK_RUNNING was not taken), so when it started is not known:
	// StartedAt is a bound (its launch) or its end, Seconds is 0 (NULL in
	// the history) and the run teaches the model nothing.
	RunTimeUnknown bool
	Outcome        string
	// EstimateSeconds is the user's estimate (0 when none).
	EstimateSeconds float64
	// PredictedP50/P90 and PredictionLevel are what the model predicted
	// for the attempt on its plan at its start (0 and "" when no model).
	PredictedP50, PredictedP90 float64
	PredictionLevel            string
}

// Size is the record's model size (ModelSize).
func (r RunRecord) Size() float64 { return ModelSize(r.InputSizeGB, r.Iterations) }

// Run is the record as the model's run (valid only for finished runs).
func (r RunRecord) Run() perfmodel.Run {
	return perfmodel.Run{Executors: r.Executors, Size: r.Size(), Seconds: r.Seconds,
		Placement: perfmodel.Placement{CrossShare: r.CrossShare, BusiestLoad: r.BusiestLoad}}
}

// RunShape is the shape of a plan as the run history keeps it.
type RunShape struct {
	Agents      int
	MaxPerAgent int
	// PerAgent is the executors on each agent, most first.
	PerAgent []int
	// CrossShare is the share of shuffle crossing agents (perfmodel.
	// CrossShareOf); BusiestLoad the cpu load of the busiest agent holding
	// the job, its own executors included (0 when unknown).
	CrossShare    float64
	BusiestLoad   float64
	InstanceTypes []string
}

// Placement is the shape as the model sees it.
func (s RunShape) Placement() perfmodel.Placement {
	return perfmodel.Placement{CrossShare: s.CrossShare, BusiestLoad: s.BusiestLoad}
}

// InstanceTypeAttribute is the agent attribute the run history takes an
// agent's instance type from.
const InstanceTypeAttribute = "instance_type"

// shapeOf is the shape of plan on snap (the snapshot before the plan's
// executors were taken, cpus per executor cpus); agents not in snap (e.g.
// powered off) count with their executors only.
func shapeOf(plan placement.Plan, snap placement.Snapshot, cpus float64) RunShape {
	var s RunShape
	counts := make([]int, 0, len(plan.Assignments))
	for _, as := range plan.Assignments {
		if as.Executors <= 0 {
			continue
		}
		counts = append(counts, as.Executors)
		s.Agents++
		s.MaxPerAgent = max(s.MaxPerAgent, as.Executors)
		for i := range snap.Agents {
			a := &snap.Agents[i]
			if a.ID != as.AgentID {
				continue
			}
			if a.CPUs > 0 {
				used := a.CPUs - a.FreeCPUs + float64(as.Executors)*cpus
				s.BusiestLoad = max(s.BusiestLoad, min(1, max(0, used/a.CPUs)))
			}
			if t := a.Attributes[InstanceTypeAttribute]; t != "" && !slices.Contains(s.InstanceTypes, t) {
				s.InstanceTypes = append(s.InstanceTypes, t)
			}
			break
		}
	}
	slices.Sort(s.InstanceTypes)
	s.CrossShare = perfmodel.CrossShareOf(counts)
	s.PerAgent = slices.Clone(counts)
	slices.SortFunc(s.PerAgent, func(a, b int) int { return b - a })
	return s
}

// runRecord is the record of a's run ending at now with outcome.
// The estimate is recorded in wall time (times scale, Config.DurationScale).
func runRecord(a *activeJob, j *Job, now time.Time, outcome string, scale float64) *RunRecord {
	if j.LastStartedAt == nil || j.Executors < 1 {
		return nil
	}
	in, it := SizeHints(j)
	shape := a.shape
	if !a.shapeKnown && a.plan != nil {
		shape = shapeOf(*a.plan, placement.Snapshot{}, 0)
	}
	sig := Signature(j)
	return &RunRecord{JobID: j.ID, Attempt: j.Attempt, Signature: sig, AppType: AppType(j), EstimateKey: EstimateKeyOf(j),
		InputSizeGB: in, Iterations: it, Executors: j.Executors, ExecutorCores: j.ExecutorCores, ExecutorMemoryMB: j.ExecutorMemoryMB,
		RunShape: shape, StartedAt: *j.LastStartedAt, EndedAt: now, Seconds: max(0, now.Sub(*j.LastStartedAt).Seconds()),
		Outcome: outcome, EstimateSeconds: j.EstimatedDurationSeconds * scale,
		PredictedP50: a.pred.P50, PredictedP90: a.pred.P90, PredictionLevel: string(a.pred.Level)}
}

// runOutcome is the run history's outcome of a run that ended moving to.
func runOutcome(to State, preempted bool) string {
	switch {
	case to == Queued && preempted:
		return RunPreempted
	case to == Queued:
		return RunRetried
	}
	return string(to)
}

// autoExecutors takes "executors": "auto" out of a job's JSON (the count
// is chosen at submission, RightSize): the JSON without it and whether it
// was there. Another string is a *FieldError.
func autoExecutors(data []byte) ([]byte, bool, error) {
	if !bytes.Contains(data, []byte(`"executors"`)) {
		return data, false, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return data, false, nil // the strict decoder says what is wrong
	}
	raw, ok := top["executors"]
	if !ok || len(raw) == 0 || raw[0] != '"' {
		return data, false, nil
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil || !strings.EqualFold(strings.TrimSpace(v), "auto") {
		return nil, false, fieldErr("executors", "must be a whole number from 1 to %d, or \"auto\" to have sparkpack choose (optional minExecutors, maxExecutors)", MaxExecutors)
	}
	delete(top, "executors")
	out, err := json.Marshal(top)
	if err != nil {
		return nil, false, fmt.Errorf("re-encode the job: %w", err)
	}
	return out, true, nil
}
