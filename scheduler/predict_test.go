package scheduler

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// tableModel is a RunModel with fixed answers per signature: run time
// base / executors x (1 + crossing share), p90 = 1.5 x p50 (the shape of
// learned.Model's answers; package learned is tested on its own and
// cannot be imported here). It records what it observed.
type tableModel struct {
	mu      sync.Mutex
	base    map[string]float64 // signature -> seconds on one executor
	traits  map[string]perfmodel.Traits
	seen    []RunRecord
	version uint64
}

func (m *tableModel) Predict(k RunKey, e int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	b, ok := m.base[k.Signature]
	if !ok {
		return perfmodel.Prediction{}, false
	}
	p50 := b / float64(e) * (1 + pl.CrossShare)
	return perfmodel.Prediction{P50: p50, P90: 1.5 * p50, Level: perfmodel.LevelSignature, Runs: 10}, true
}

func (m *tableModel) Traits(k RunKey) (perfmodel.Traits, bool) {
	t, ok := m.traits[k.Signature]
	return t, ok
}

func (m *tableModel) Predictor(k RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	return func(e int) (perfmodel.Prediction, error) {
		p, ok := m.Predict(k, e, pl)
		if !ok {
			return perfmodel.Prediction{}, perfmodel.ErrNoModel
		}
		return p, nil
	}
}

func (m *tableModel) Observe(r RunRecord) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, r)
	m.version++
}

func (m *tableModel) Version() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.version
}

const xSig = "local:///x.jar X" // mkJob's signature

// learnEntries are entriesOf with the jobs' keys for the model, as a
// core with a model makes them (Core.newEntry).
func learnEntries(jobs ...Job) []*Entry {
	es := entriesOf(jobs...)
	for i, e := range es {
		e.learn = &entryLearn{key: RunKeyOf(&jobs[i])}
	}
	return es
}

// TestDecideWithModel: transcripts of passes whose run times come from
// the model: p90 on the plan decides at risk and the feasible-EDF order,
// a model that knows nothing leaves the pass as it was without a model.
func TestDecideWithModel(t *testing.T) {
	one := []placement.Agent{agent("a1", 4, 16384, 0.24)}
	two := []placement.Agent{agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24)}
	knows := &tableModel{base: map[string]float64{xSig: 3600}} // 1 h on one executor
	knowsNothing := &tableModel{base: map[string]float64{}}
	for _, c := range []struct {
		name     string
		model    RunModel
		snap     placement.Snapshot
		deadline []Job
		want     []string
	}{{
		// The user says 10 minutes; the model says p90 1.5 h on 1 executor:
		// started now it misses its 1 h deadline.
		name:     "the model's p90 on the plan flags a start at risk",
		model:    knows,
		snap:     snapOf(one),
		deadline: []Job{mkJob("d", 1, 1, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		want:     []string{"start d on a1x1 activating a1 at risk"},
	}, {
		name:     "without a model the user's estimate decides (not at risk)",
		snap:     snapOf(one),
		deadline: []Job{mkJob("d", 1, 1, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		want:     []string{"start d on a1x1 activating a1"},
	}, {
		name:     "a model that knows nothing of the job decides as without one",
		model:    knowsNothing,
		snap:     snapOf(one),
		deadline: []Job{mkJob("d", 1, 1, withDeadline(time.Hour), withEstimate(10*time.Minute))},
		want:     []string{"start d on a1x1 activating a1"},
	}, {
		// 4 executors: p50 15 min, p90 22.5 min on one agent, well within
		// the hour; the user's 2 h estimate would have made it hopeless
		// and ordered it after "other".
		name:  "the model's p90 (not the user's estimate) orders feasible EDF",
		model: knows,
		snap:  snapOf(one),
		deadline: []Job{mkJob("pessimist", 4, 1, withDeadline(time.Hour), withEstimate(2*time.Hour)),
			{Spec: Spec{ID: "other", Executors: 4, ExecutorCores: 1, ExecutorMemoryMB: 1024, App: App{AppResource: "local:///y.jar", MainClass: "Y"},
				EstimatedDurationSeconds: 600}, SubmittedAt: t0, DeadlineAt: ptr(t0.Add(2 * time.Hour))}},
		want: []string{"start pessimist on a1x4 activating a1", "wait other: does not fit now: short of cpus"},
	}, {
		// Without the model the pessimist's own estimate makes it hopeless.
		name: "the same without a model",
		snap: snapOf(one),
		deadline: []Job{mkJob("pessimist", 4, 1, withDeadline(time.Hour), withEstimate(2*time.Hour)),
			{Spec: Spec{ID: "other", Executors: 4, ExecutorCores: 1, ExecutorMemoryMB: 1024, App: App{AppResource: "local:///y.jar", MainClass: "Y"},
				EstimatedDurationSeconds: 600}, SubmittedAt: t0, DeadlineAt: ptr(t0.Add(2 * time.Hour))}},
		want: []string{"start other on a1x4 activating a1", "wait pessimist: does not fit now: short of cpus [at risk]"},
	}, {
		// 6 executors of 1 cpu on two 4-cpu agents: spread 4+2, crossing
		// share 1 - (4/6)^2 - (2/6)^2 = 0.44: p90 = 1.5 x 600 x 1.44 = 21.6
		// min > 20 min: at risk on this plan, though on one agent (15 min)
		// it would not be.
		name:     "the plan's shape counts: a spread plan is slower",
		model:    knows,
		snap:     snapOf(two),
		deadline: []Job{mkJob("d", 6, 1, withDeadline(20*time.Minute))},
		want:     []string{"start d on a1x4,a2x2 activating a1,a2 at risk"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{}
			if c.model != nil {
				cfg.Model = c.model
			}
			d := testDecider(t, cfg)
			dq := learnEntries(c.deadline...)
			slices.SortFunc(dq, edfLess)
			out := d.decide(passInput{now: t0, snap: c.snap, deadline: dq, deadlineQueued: len(dq), full: true})
			if got := describe(out.decisions, 0); !slices.Equal(got, c.want) {
				t.Fatalf("decisions:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(c.want, "\n  "))
			}
		})
	}
}

// recordingPlacer records the demands it is asked to place (and places
// nothing).
type recordingPlacer struct{ got []placement.Demand }

func (p *recordingPlacer) Name() string { return "recording" }
func (p *recordingPlacer) Place(_ placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	p.got = append(p.got, d)
	return placement.Plan{}, &placement.NoFit{Resource: "cpus", Short: 1}
}

// TestDemandCarriesLearnedTraits: dap is given the signature's learned
// traits, its p50 as the estimate that prices a plan and its p90 as the
// one that tests the deadline; a job the model does not know keeps the
// prior (no traits) and its user's estimate for both.
func TestDemandCarriesLearnedTraits(t *testing.T) {
	rp := &recordingPlacer{}
	m := &tableModel{base: map[string]float64{xSig: 600}, traits: map[string]perfmodel.Traits{xSig: {ShuffleShare: 0.4, CPUBound: 0.2}}}
	d := testDecider(t, Config{Placer: rp, Model: m})
	other := mkJob("other", 1, 1, withEstimate(time.Minute))
	other.App.MainClass = "Other"
	in := passInput{now: t0, snap: snapOf([]placement.Agent{agent("a1", 4, 16384, 0.24)}),
		regular: learnEntries(mkJob("known", 2, 1, withEstimate(time.Minute)), other), full: true}
	d.decide(in)
	if len(rp.got) != 2 {
		t.Fatalf("placer asked %d times", len(rp.got))
	}
	k, o := rp.got[0], rp.got[1]
	if k.Traits == nil || k.Traits.ShuffleShare != 0.4 || k.Traits.CPUBound != 0.2 || k.EstimatedDuration != 300*time.Second ||
		k.DeadlineDuration != 450*time.Second {
		t.Fatalf("known job's demand: traits %+v estimates %v/%v; want the learned traits, p50 300s and p90 450s",
			k.Traits, k.EstimatedDuration, k.DeadlineDuration)
	}
	if o.Traits != nil || o.EstimatedDuration != time.Minute || o.DeadlineDuration != time.Minute {
		t.Fatalf("unknown job's demand: traits %+v estimates %v/%v; want the prior and the user's minute for both",
			o.Traits, o.EstimatedDuration, o.DeadlineDuration)
	}
}

// TestDemandAtEstimates: demandAt's two run times in wall time
// (DurationScale 2): the model's p50 and p90 (on the plans the signature
// usually gets: 1200 s / 4 executors = 300 s and 450 s, not scaled: the
// model answers in wall seconds) when it knows the job, else the told
// estimate scaled, for both; without a model the same.
func TestDemandAtEstimates(t *testing.T) {
	m := &tableModel{base: map[string]float64{xSig: 1200}}
	other := mkJob("other", 4, 1, withEstimate(time.Minute))
	other.App.MainClass = "Other"
	for _, c := range []struct {
		name     string
		model    RunModel
		job      Job
		p50, p90 time.Duration
	}{
		{"known to the model", m, mkJob("known", 4, 1, withEstimate(time.Minute)), 300 * time.Second, 450 * time.Second},
		{"unknown to the model", m, other, 2 * time.Minute, 2 * time.Minute},
		{"no model", nil, mkJob("known", 4, 1, withEstimate(time.Minute)), 2 * time.Minute, 2 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{DurationScale: 2}
			if c.model != nil {
				cfg.Model = c.model
			}
			d := testDecider(t, cfg)
			e := learnEntries(c.job)[0]
			if c.model == nil {
				e.learn = nil
			}
			dm := d.demandAt(e, t0)
			if dm.EstimatedDuration != c.p50 || dm.DeadlineDuration != c.p90 || !dm.Now.Equal(t0) {
				t.Fatalf("demand: estimate %v, deadline estimate %v, now %v; want %v, %v, %v",
					dm.EstimatedDuration, dm.DeadlineDuration, dm.Now, c.p50, c.p90, t0)
			}
		})
	}
}

// markingStore is the test store with the at-risk marker of package store.
type markingStore struct {
	*testStore
	mu     sync.Mutex
	marked []string
}

func (s *markingStore) MarkRunningAtRisk(_ context.Context, id, reason string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.marked = append(s.marked, id+": "+reason)
	return nil
}

// TestRunsRecordedAndOverrunFlagged: a started job's run is recorded when
// it ends (outcome, run time, the plan's shape, the prediction on it) and
// handed to the model; a running job is flagged at risk once it runs past
// its p90, not before; a retried run is recorded as RETRIED.
func TestRunsRecordedAndOverrunFlagged(t *testing.T) {
	m := &tableModel{base: map[string]float64{xSig: 1200}}
	ms := &markingStore{testStore: newTestStore()}
	clock := newManualClock(t0)
	cluster := newTestCluster(agent("a1", 4, 16384, 0.24))
	c, err := New(Config{Model: m, Log: DiscardLogger()}, cluster, ms, clock)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j := mkJob("j", 2, 1, withEstimate(time.Minute), func(j *Job) { j.InputSizeGB = 5; j.Iterations = 2 })
	ms.add(j)
	if _, err := c.Submit(ctx, j); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Schedule(ctx); err != nil || n != 1 {
		t.Fatalf("schedule: %d, %v", n, err)
	}
	for _, st := range []State{Launching, Running} {
		if err := c.Report(ctx, "j", st, ""); err != nil {
			t.Fatal(err)
		}
	}
	// p50 600 s, p90 900 s on 2 executors on one agent.
	clock.Advance(899 * time.Second)
	if _, err := c.Schedule(ctx); err != nil {
		t.Fatal(err)
	}
	if len(ms.marked) != 0 {
		t.Fatalf("flagged before its p90: %v", ms.marked)
	}
	if w, ok := c.NextWake(); !ok || !w.Equal(t0.Add(900*time.Second)) {
		t.Fatalf("next wake %v %v; want at the p90 (t0+900s)", w, ok)
	}
	clock.Advance(2 * time.Second)
	for range 2 { // flagged once
		if _, err := c.Schedule(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(ms.marked) != 1 || ms.marked[0] != "j: "+overrunReason {
		t.Fatalf("marked %v; want j once", ms.marked)
	}
	if err := c.Report(ctx, "j", Queued, "driver lost"); err != nil {
		t.Fatal(err)
	}
	if len(m.seen) != 1 {
		t.Fatalf("model saw %d runs", len(m.seen))
	}
	r := m.seen[0]
	if r.Outcome != RunRetried || r.JobID != "j" || r.Signature != xSig || r.Executors != 2 || r.InputSizeGB != 5 || r.Iterations != 2 ||
		r.Agents != 1 || r.MaxPerAgent != 2 || len(r.PerAgent) != 1 || r.PerAgent[0] != 2 || r.CrossShare != 0 || r.BusiestLoad != 0.5 || math.Abs(r.Seconds-901) > 1e-9 ||
		r.PredictedP50 != 600 || r.PredictedP90 != 900 || r.EstimateSeconds != 60 {
		t.Fatalf("recorded %+v", r)
	}
	if got := ms.get("j"); got.EndedRun == nil || got.EndedRun.Outcome != RunRetried {
		t.Fatalf("the store's transition carried no run: %+v", got.EndedRun)
	}
}

// TestAdmissionAsksTheModel: in reject mode a deadline job whose user's
// estimate fits its deadline is rejected when the model's median does not
// (the reason quotes the median); one that only the model's p90 misses is
// accepted and flagged at risk (a rejection is final; the p90 is a spread:
// a signature of 1 s and 20 s runs got a p90 above every run seen, and
// most of its deadline jobs were rejected); without a model it is queued.
func TestAdmissionAsksTheModel(t *testing.T) {
	for _, c := range []struct {
		base           float64 // the model's p50 on one executor; 0: no model
		reject, atRisk bool
		about          string
	}{{0, false, false, ""}, {7200, true, false, "needs about 2h"}, {3000, false, true, "needs about 1h15m"}, {1200, false, false, ""}} {
		cfg := Config{Log: DiscardLogger()}
		if c.base > 0 {
			cfg.Model = &tableModel{base: map[string]float64{xSig: c.base}}
		}
		core, err := New(cfg, newTestCluster(agent("a1", 4, 16384, 0.24)), newTestStore(), newManualClock(t0))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := core.Schedule(context.Background()); err != nil {
			t.Fatal(err)
		}
		j := mkJob("d", 1, 1, withDeadline(time.Hour), withEstimate(10*time.Minute))
		d := core.Decide(&j, t0)
		if (d.Reject != "") != c.reject || (d.AtRisk != "") != c.atRisk || !strings.Contains(d.Reject+d.AtRisk, c.about) {
			t.Errorf("model p50 %v s: decision %+v; want reject %v, at risk %v, saying %q", c.base, d, c.reject, c.atRisk, c.about)
		}
		if c.reject != (core.Admit(&j, t0) != "") {
			t.Errorf("model p50 %v s: Admit disagrees with Decide", c.base)
		}
	}
}

// TestSizeHintsAndAutoValidated: bad size hints and executor bounds are
// 400s naming the field; "executors": "auto" decodes into a Sizing.
func TestSizeHintsAndAutoValidated(t *testing.T) {
	base := `{"app": {"appResource": "local:///a.jar", "mainClass": "com.example.A"}, "executorCores": 1, "executorMemoryMB": 1024, `
	for _, c := range []struct{ body, field string }{
		{`"executors": 2, "inputSizeGB": -1}`, "inputSizeGB"},
		{`"executors": 2, "inputSizeGB": 1e300}`, "inputSizeGB"},
		{`"executors": 2, "iterations": -3}`, "iterations"},
		{`"executors": 2, "iterations": 99999999}`, "iterations"},
		{`"executors": 2, "labels": {"sparkpack.io/input-size-gb": "NaN"}}`, "labels.sparkpack.io/input-size-gb"},
		{`"executors": 2, "labels": {"sparkpack.io/input-size-gb": "-4"}}`, "labels.sparkpack.io/input-size-gb"},
		{`"executors": 2, "labels": {"sparkpack.io/iterations": "lots"}}`, "labels.sparkpack.io/iterations"},
		{`"executors": "many"}`, "executors"},
		{`"executors": 2, "minExecutors": 1}`, "minExecutors"},
		{`"executors": "auto", "minExecutors": 8, "maxExecutors": 4}`, "maxExecutors"},
		{`"executors": "auto", "maxExecutors": 20000}`, "maxExecutors"},
		{`"executors": 2, "sizing": {"auto": true}}`, "sizing"},
	} {
		_, err := DecodeSpec(strings.NewReader(base + c.body))
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v; want a field error on %s", c.body, err, c.field)
		}
	}
	s, err := DecodeSpec(strings.NewReader(base + `"executors": "auto", "minExecutors": 2, "maxExecutors": 6, "inputSizeGB": 20, "iterations": 3}`))
	if err != nil || !s.AutoExecutors() || s.Executors != 0 || s.MinExecutors != 2 || s.MaxExecutors != 6 || s.InputSizeGB != 20 {
		t.Fatalf("auto: %+v, %v", s, err)
	}
	j := Job{Spec: s, SubmittedAt: t0}
	if err := RightSize(nil, &j, t0); err != nil || j.Executors < 2 || j.Executors > 6 || j.Sizing.Executors != j.Executors || j.Sizing.Reason == "" {
		t.Fatalf("right-sized by the prior: %d, %+v, %v", j.Executors, j.Sizing, err)
	}
}

// TestStartKeepsAgentsForTheP50: a start marks its agents active for the
// model's p50 on the plan (what later placements in the pass price), not
// the user's estimate; without a model, for the estimate.
func TestStartKeepsAgentsForTheP50(t *testing.T) {
	one := []placement.Agent{agent("a1", 4, 16384, 0.24)}
	for _, c := range []struct {
		model RunModel
		want  time.Duration
	}{{nil, time.Hour}, {&tableModel{base: map[string]float64{xSig: 1200}}, 600 * time.Second}} {
		cfg := Config{}
		if c.model != nil {
			cfg.Model = c.model
		}
		d := testDecider(t, cfg)
		out := d.decide(passInput{now: t0, snap: snapOf(one), regular: learnEntries(mkJob("j", 2, 1, withEstimate(time.Hour))), full: true})
		if got := out.snap.Agents[0].RemainingActive; got != c.want {
			t.Errorf("model %v: agent active for %v, want %v", c.model != nil, got, c.want)
		}
	}
}

// TestEstimatesInWallTime: with a DurationScale (the demo's simulated
// estimates) the model is told the estimate in wall time, as it sees the
// runs, in the entry's key and in the recorded run.
func TestEstimatesInWallTime(t *testing.T) {
	m := &tableModel{base: map[string]float64{}}
	h := newHarness(t, Config{Model: m, DurationScale: 0.5}, agent("a1", 4, 16384, 0.24))
	h.submit(mkJob("j", 1, 1, withEstimate(time.Minute)))
	h.core.passMu.Lock()
	e := h.core.byID["j"]
	h.core.passMu.Unlock()
	if e == nil || e.learn == nil || e.learn.key.EstimateSeconds != 30 {
		t.Fatalf("entry key %+v; want the estimate of 30 wall seconds", e)
	}
	h.schedule()
	if err := h.finish("j"); err != nil {
		t.Fatal(err)
	}
	if len(m.seen) != 1 || m.seen[0].EstimateSeconds != 30 || m.seen[0].Outcome != RunFinished {
		t.Fatalf("recorded %+v", m.seen)
	}
}

// learn makes m know sig with base seconds on one executor, as the model
// does when it learns runs: its version changes.
func (m *tableModel) learn(sig string, base float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.base[sig] = base
	m.version++
}

// TestWaitingPredictionFollowsTheModel: a waiting deadline job's run time
// is the model's as the model is now, not as it was at the job's
// submission: when the model learns (its Version changes) with nothing
// else happening in the cluster (no job ended, no timer due), the next
// pass recomputes the job's p90, its at-risk flag and its wake-up timer.
func TestWaitingPredictionFollowsTheModel(t *testing.T) {
	m := &tableModel{base: map[string]float64{}}
	h := newHarness(t, Config{Model: m}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	blocker := mkJob("blocker", 1, 4, withEstimate(time.Hour))
	blocker.App.MainClass = "Blocker"
	h.submit(blocker)
	h.schedule()
	// The user says 10 minutes for a 1 h deadline: not at risk, the timer
	// is set for when it would be (50 minutes from now).
	h.submit(mkJob("d", 1, 2, withDeadline(time.Hour), withEstimate(10*time.Minute)))
	h.schedule()
	if j := h.store.get("d"); j.AtRisk || j.State != Queued {
		t.Fatalf("d at risk before the model knew it: %+v", j)
	}
	if at, ok := h.core.NextWake(); !ok || !at.Equal(t0.Add(50*time.Minute+time.Nanosecond)) {
		t.Fatalf("next wake %v %v; want t0+50m", at, ok)
	}
	// Runs of d's signature are learned elsewhere: p50 1 h, p90 1.5 h on
	// one executor. Nothing else changes.
	m.learn(xSig, 3600)
	h.clock.Advance(time.Minute)
	h.schedule()
	if j := h.store.get("d"); !j.AtRisk {
		t.Fatalf("d not at risk after the model learned its p90 of 1.5 h: %+v", j)
	}
	if v := h.core.Queues(); len(v.Deadline) != 1 || !v.Deadline[0].AtRisk {
		t.Fatalf("queues view: %+v", v.Deadline)
	}
	// The model learns it is fast after all (p90 15 min): no longer at
	// risk, and the timer follows the new p90 (t0+45m).
	m.learn(xSig, 600)
	h.clock.Advance(time.Minute)
	h.schedule()
	if j := h.store.get("d"); j.AtRisk {
		t.Fatalf("d still at risk after the model learned its p90 of 15 min: %+v", j)
	}
	if at, ok := h.core.NextWake(); !ok || !at.Equal(t0.Add(45*time.Minute+time.Nanosecond)) {
		t.Fatalf("next wake %v %v; want t0+45m (the deadline less the new p90)", at, ok)
	}
}

// TestEstimateKeyIsTheTeam: a job's estimate is learned with its team's
// (issue 27, 3a: "if a team underestimates by 40%, sparkpack learns it"),
// else its token's, else the default team's; the model is asked with it
// and its recorded run carries it.
func TestEstimateKeyIsTheTeam(t *testing.T) {
	for _, c := range []struct{ team, by, want string }{
		{"data", "alice", "team:data"}, {"", "alice", "token:alice"}, {"", "", "team:"}, {"data", "", "team:data"},
	} {
		j := mkJob("j", 1, 1)
		j.Team, j.SubmittedBy = c.team, c.by
		if got := EstimateKeyOf(&j); got != c.want {
			t.Errorf("team %q, token %q: %q, want %q", c.team, c.by, got, c.want)
		}
	}
	m := &tableModel{base: map[string]float64{}}
	h := newHarness(t, Config{Model: m}, agent("a1", 4, 16384, 0.24))
	j := mkJob("j", 1, 1, withEstimate(time.Minute))
	j.Team = "data"
	h.submit(j)
	h.core.passMu.Lock()
	e := h.core.byID["j"]
	h.core.passMu.Unlock()
	if e == nil || e.learn == nil || e.learn.key.EstimateKey != "team:data" {
		t.Fatalf("entry key %+v; want the team's", e)
	}
	h.schedule()
	if err := h.finish("j"); err != nil {
		t.Fatal(err)
	}
	if len(m.seen) != 1 || m.seen[0].EstimateKey != "team:data" || m.seen[0].Signature != xSig {
		t.Fatalf("recorded %+v", m.seen)
	}
}

// TestRunPredictionIsTheStarts: RunPrediction (the leader's job view of a
// running job, api.Config.RunPrediction) is what the model predicted at
// the run's start, which the overrun check uses, even after the model
// changed; none once the run ended, nor for a job that never started.
func TestRunPredictionIsTheStarts(t *testing.T) {
	m := &tableModel{base: map[string]float64{xSig: 1200}}
	ms := newTestStore()
	c, err := New(Config{Model: m, Log: DiscardLogger()}, newTestCluster(agent("a1", 4, 16384, 0.24)), ms, newManualClock(t0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	j := mkJob("j", 2, 1, withEstimate(time.Minute))
	ms.add(j)
	if _, err := c.Submit(ctx, j); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.RunPrediction("j"); ok {
		t.Fatal("a waiting job has a run prediction")
	}
	if n, err := c.Schedule(ctx); err != nil || n != 1 {
		t.Fatalf("schedule: %d, %v", n, err)
	}
	for _, st := range []State{Launching, Running} {
		if err := c.Report(ctx, "j", st, ""); err != nil {
			t.Fatal(err)
		}
	}
	m.mu.Lock()
	m.base[xSig] = 2400 // the model learns the job is slower
	m.mu.Unlock()
	// p50 600 s, p90 900 s on 2 executors on one agent, at the start.
	if p, ok := c.RunPrediction("j"); !ok || p.P50 != 600 || p.P90 != 900 || p.Level != perfmodel.LevelSignature {
		t.Fatalf("run prediction %+v %v; want the start's p50 600 s, p90 900 s", p, ok)
	}
	if err := c.Report(ctx, "j", Finished, ""); err != nil {
		t.Fatal(err)
	}
	if p, ok := c.RunPrediction("j"); ok {
		t.Fatalf("an ended run's prediction is still served: %+v", p)
	}
}
