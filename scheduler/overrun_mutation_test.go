package scheduler

// Tests written from the mutants scripts/mutation.sh found alive in
// overrun.go (docs/testing.md, "Mutation testing"); expected figures by
// hand: tableModel's p50 is base / executors (one agent: no crossing),
// its p90 1.5 x p50.

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/sirupsen/logrus"
	logtest "github.com/sirupsen/logrus/hooks/test"

	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/placement"
)

// priorModel answers like tableModel but at the prior's level.
type priorModel struct{ *tableModel }

func (m priorModel) Predict(k RunKey, e int, pl perfmodel.Placement) (perfmodel.Prediction, bool) {
	p, ok := m.tableModel.Predict(k, e, pl)
	p.Level = perfmodel.LevelPrior
	return p, ok
}

func (m priorModel) Predictor(k RunKey, pl perfmodel.Placement) perfmodel.Predictor {
	return func(e int) (perfmodel.Prediction, error) {
		p, ok := m.Predict(k, e, pl)
		if !ok {
			return perfmodel.Prediction{}, perfmodel.ErrNoModel
		}
		return p, nil
	}
}

// estimateOf is the run time the core expects of a job holding resources.
func estimateOf(t *testing.T, c *Core, id string) time.Duration {
	t.Helper()
	for _, r := range c.runningJobs() {
		if r.id == id {
			return r.estimate
		}
	}
	t.Fatalf("%s holds no resources", id)
	return 0
}

// TestLearnedRunTime: a started job's expected run time is the model's
// p50 on its plan (1200 s / 2 executors = 600 s), not the user's minute;
// a prediction at the prior's level leaves the user's minute.
func TestLearnedRunTime(t *testing.T) {
	for _, c := range []struct {
		name  string
		model RunModel
		want  time.Duration
	}{
		{"learned", &tableModel{base: map[string]float64{xSig: 1200}}, 600 * time.Second},
		{"the prior", priorModel{&tableModel{base: map[string]float64{xSig: 1200}}}, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t, Config{Model: c.model}, agent("a1", 4, 16384, 0.24))
			h.schedule()
			h.submit(mkJob("j", 2, 1, withEstimate(time.Minute)))
			if n := h.schedule(); n != 1 {
				t.Fatalf("started %d", n)
			}
			if got := estimateOf(t, h.core, "j"); got != c.want {
				t.Fatalf("expected run time %s, want %s", got, c.want)
			}
		})
	}
}

// TestRecoveredRunTime: after a restart, a running job with a saved plan
// (2 executors on a1) is expected to run the model's p50 on it (600 s);
// without a saved plan (or one of no agent), or without a model, the
// user's minute.
func TestRecoveredRunTime(t *testing.T) {
	for _, c := range []struct {
		name  string
		model bool
		plan  bool
		want  time.Duration
		empty bool // the saved plan has no assignment
	}{
		{"a model and a plan", true, true, 600 * time.Second, false},
		{"a model, no plan", true, false, time.Minute, false},
		{"a plan, no model", false, true, time.Minute, false},
		{"a model, a saved plan of no agent", true, true, time.Minute, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Config{}
			if c.model {
				cfg.Model = &tableModel{base: map[string]float64{xSig: 1200}}
			}
			h := newHarness(t, cfg, agent("a1", 4, 16384, 0.24))
			r := mkJob("r", 2, 1, withEstimate(time.Minute))
			r.State = Running
			h.store.add(r)
			if c.plan {
				p := placement.Plan{Assignments: []placement.Assignment{{AgentID: "a1", Executors: 2}}}
				if c.empty {
					p.Assignments = nil
				}
				if err := h.store.SavePlacement(context.Background(), "r", p); err != nil {
					t.Fatal(err)
				}
			}
			if err := h.core.Recover(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := estimateOf(t, h.core, "r"); got != c.want {
				t.Fatalf("expected run time %s, want %s", got, c.want)
			}
		})
	}
}

// failMarking is markingStore whose marks fail.
type failMarking struct{ *markingStore }

func (s failMarking) MarkRunningAtRisk(context.Context, string, string) error {
	return errors.New("injected failure: the store is away")
}

// TestOverrunFlags: a running job is flagged at risk once past its p90
// (1.5 x 1200 s / 2 = 900 s), and a failed flag is logged (at debug
// level) naming the job; a prediction of 0 s (no run time known) never
// flags it.
func TestOverrunFlags(t *testing.T) {
	for _, c := range []struct {
		name   string
		base   float64
		fail   bool
		marked []string
		logged []string
	}{
		{"past its p90", 1200, false, []string{"j: " + overrunReason}, nil},
		{"the flag fails", 1200, true, nil, []string{"j"}},
		{"a prediction of 0 s", 0, false, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			log, hook := logtest.NewNullLogger()
			log.SetLevel(logrus.DebugLevel)
			ms := &markingStore{testStore: newTestStore()}
			var st Store = ms
			if c.fail {
				st = failMarking{ms}
			}
			core, clock := runningOnModel(t, st, ms, log, c.base)
			ctx := context.Background()
			clock.Advance(901 * time.Second)
			if _, err := core.Schedule(ctx); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ms.marked, c.marked) {
				t.Fatalf("marked %v, want %v", ms.marked, c.marked)
			}
			var logged []string
			for _, e := range hook.AllEntries() {
				if e.Message == "flag overrun" {
					logged = append(logged, e.Data["job"].(string))
				}
			}
			if !slices.Equal(logged, c.logged) {
				t.Fatalf("failed flags logged for %v, want %v", logged, c.logged)
			}
			// The at-risk line says how long the job ran against its p90,
			// in snake_case fields like the other lines.
			atRisk := 0
			for _, e := range hook.AllEntries() {
				if e.Message != "running job past its p90 prediction: at risk" {
					continue
				}
				atRisk++
				if e.Data["job"] != "j" || e.Data["p90_seconds"] != 900.0 || e.Data["ran_seconds"] != 901.0 || e.Data["model_level"] == "" {
					t.Errorf("at-risk line fields %v: want job, p90_seconds 900, ran_seconds 901 and model_level", e.Data)
				}
			}
			if want := len(c.marked) + len(c.logged); atRisk != want {
				t.Errorf("%d at-risk lines, want %d", atRisk, want)
			}
		})
	}
}
