package simulate

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/perfmodel"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

func thesisHour(t *testing.T, hour, n int, seed uint64) []workload.Job {
	arr := workload.First(workload.Hour(loadTrace(t), hour), n)
	return workload.DefaultModel.Thesis(arr, workload.DefaultThesisMix, seed)
}

// TestEstimatorRewritesOnlyWhatTheSchedulerIsTold: user estimates change
// the estimates (log-normal with the given sigma) and nothing else; hidden
// application types leave placement no type to infer but keep one
// signature per kind; oracle with known types changes nothing.
func TestEstimatorRewritesOnlyWhatTheSchedulerIsTold(t *testing.T) {
	m := workload.DefaultModel
	wl := thesisHour(t, 6, 400, 1)
	base, profiles := BuildWorkload(wl, m, 1, 1.5, 1)
	build := func() []scheduler.Job { j, _ := BuildWorkload(wl, m, 1, 1.5, 1); return j }

	same := build()
	if _, err := newEstimator(same, profiles, m, EstimatesOracle, 0.5, false, 1); err != nil {
		t.Fatal(err)
	}
	for i := range same {
		if same[i].Spec.Fingerprint() != base[i].Spec.Fingerprint() {
			t.Fatalf("oracle/known changed job %s", base[i].ID)
		}
	}

	user := build()
	if _, err := newEstimator(user, profiles, m, EstimatesUser, 0.5, true, 1); err != nil {
		t.Fatal(err)
	}
	var sum, sq float64
	sigs := map[string]bool{}
	for i := range user {
		u, b := user[i], base[i]
		if *u.DeadlineAt != *b.DeadlineAt || u.Executors != b.Executors || u.SubmittedAt != b.SubmittedAt {
			t.Fatalf("job %s: more than the estimate changed", u.ID)
		}
		if got := scheduler.AppType(&u); got != "" {
			t.Fatalf("hidden: job %s (%s) still reads as %q", u.ID, u.App.MainClass, got)
		}
		if u.Fingerprint != u.Spec.Fingerprint() {
			t.Fatalf("job %s: stale fingerprint", u.ID)
		}
		sigs[u.App.AppResource+" "+u.App.MainClass] = true
		l := math.Log(u.EstimatedDurationSeconds / b.EstimatedDurationSeconds)
		sum += l
		sq += l * l
	}
	n := float64(len(user))
	if mean, sd := sum/n, math.Sqrt(sq/n-(sum/n)*(sum/n)); math.Abs(mean) > 0.08 || math.Abs(sd-0.5) > 0.06 {
		t.Errorf("log(user / profiled): mean %.3f sd %.3f, want about 0 and 0.5", mean, sd)
	}
	if len(sigs) != len(workload.ThesisApps) {
		t.Errorf("%d signatures, want one per application type (%d)", len(sigs), len(workload.ThesisApps))
	}
	if _, err := newEstimator(build(), profiles, m, "psychic", 0.5, false, 1); err == nil {
		t.Error("unknown mode accepted")
	}
	if _, err := newEstimator(build(), profiles, m, EstimatesUser, math.NaN(), false, 1); err == nil {
		t.Error("NaN sigma accepted")
	}
}

// TestEstimatesDoNotChangeTheTruth: a policy that ignores estimates
// (fifo-spread) gets the same run whatever the scheduler is told.
func TestEstimatesDoNotChangeTheTruth(t *testing.T) {
	wl := thesisHour(t, 0, 50, 2)
	spread, _ := LookupPolicy("fifo-spread")
	var first Result
	for i, mode := range []string{EstimatesOracle, EstimatesUser, EstimatesLearned} {
		r, err := Run(context.Background(), Options{Workload: wl, From: 0, Cluster: clusterspec.Thesis14(), Policy: spread,
			DeadlineFraction: 1, Slack: 1.5, Seed: 2, Estimates: mode, EstimateError: 0.5, HideAppType: true})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = r
			continue
		}
		if r.TotalCostUSD != first.TotalCostUSD || r.JCTMeanS != first.JCTMeanS || r.DeadlineMissed != first.DeadlineMissed {
			t.Errorf("%s: cost %v JCT %v missed %d; oracle %v %v %d", mode, r.TotalCostUSD, r.JCTMeanS, r.DeadlineMissed, first.TotalCostUSD, first.JCTMeanS, first.DeadlineMissed)
		}
	}
}

// TestLearnedEstimatesBeatTheUsers: with users off by a log-normal factor
// of sigma 0.5 and hidden types, learned estimates are closer to the truth
// than the users', and the model's error after ten runs of a signature is
// within 15% even with 10% noise on every run.
func TestLearnedEstimatesBeatTheUsers(t *testing.T) {
	wl := thesisHour(t, 22, 50, 3)
	dap, _ := LookupPolicy("dap")
	run := func(mode string) Result {
		r, err := Run(context.Background(), Options{Workload: wl, From: 22 * 3600e9, Cluster: clusterspec.Thesis14(), Policy: dap,
			DeadlineFraction: 1, Slack: 1.5, Seed: 3, Estimates: mode, EstimateError: 0.5, HideAppType: true, RunNoise: 0.1})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	user, learned := run(EstimatesUser), run(EstimatesLearned)
	if !(learned.EstimateErrorPct < 0.7*user.EstimateErrorPct) {
		t.Errorf("estimate error: learned %.1f%%, users %.1f%%", learned.EstimateErrorPct, user.EstimateErrorPct)
	}
	if learned.ModelMAPERuns < 10 || learned.ModelMAPEPct > 15 {
		t.Errorf("model MAPE %.1f%% over %d runs", learned.ModelMAPEPct, learned.ModelMAPERuns)
	}
	if user.ModelMAPERuns != 0 {
		t.Errorf("user mode reports a model: %+v", user)
	}
}

func TestCommandEstimateFlags(t *testing.T) {
	trace := tracePath(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"name": "x", "kinds": [{"name": "a", "app": "sort", "share": 1, "inputGB": {"min": 1, "max": 2}, "shuffleRatio": -1, "outputRatio": 0}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--estimates", "psychic"}, "--estimates"},
		{[]string{"--estimate-error", "-1"}, "--estimate-error"},
		{[]string{"--estimate-error", "NaN"}, "--estimate-error"},
		{[]string{"--run-noise", "9"}, "--run-noise"},
		{[]string{"--app-type", "guessed"}, "--app-type"},
		{[]string{"--executors", "many"}, "--executors"},
		{[]string{"--learned-decisions", "guessed"}, "--learned-decisions"},
		{[]string{"--user-executors", "sometimes"}, "--user-executors"},
		{[]string{"--learn-history"}, "--learn-history"},
		{[]string{"--user-executors", "habit", "--workload", "trace"}, "--user-executors"},
		{[]string{"--mix", "/nonexistent.json"}, "--mix"},
		{[]string{"--mix", bad}, "kinds[0].shuffleRatio"},
		{[]string{"--mix", "../examples/mixes/iterative-graph.json", "--workload", "trace"}, "--mix"},
	} {
		_, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet", "--hour", "0", "--jobs", "5", "--policies", "bfd"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
	}
	for _, decisions := range []string{LearnedDecisionsTold, LearnedDecisionsModel} {
		out, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "0", "--jobs", "20", "--policies", "dap",
			"--mix", "../examples/mixes/iterative-graph.json", "--estimates", "learned", "--app-type", "hidden", "--learned-decisions", decisions)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "learned estimates:") || !strings.Contains(out, "mean estimate error") {
			t.Errorf("%s: output:\n%s", decisions, out)
		}
	}
	// Users of habit run other counts than users who size by input.
	mean := func(users string) float64 {
		out, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "0", "--jobs", "20", "--policies", "dap", "--format", "json",
			"--mix", "../examples/mixes/iterative-graph.json", "--user-executors", users)
		if err != nil {
			t.Fatal(err)
		}
		var rs []Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("%s: %v\n%s", users, err, out)
		}
		return rs[0].MeanExecutors
	}
	if p, h := mean("proportional"), mean("habit"); p == h || !(p > 0) || !(h >= 2) {
		t.Errorf("mean executors: proportional %g, habit %g", p, h)
	}
}

// TestLearnHistory: with a learning history (--learn-history) the model
// starts from the runs of the window before: the window's runs of
// signatures with 10 runs before them (the MAPE's) include those whose
// 10 runs were in the history, the window itself is the same, and the
// run stays deterministic.
func TestLearnHistory(t *testing.T) {
	dap, _ := LookupPolicy("dap")
	run := func(history []workload.Job) Result {
		r, err := Run(context.Background(), Options{Workload: thesisHour(t, 22, 50, 3), From: 22 * time.Hour, Cluster: clusterspec.Thesis14(), Policy: dap,
			DeadlineFraction: 1, Slack: 1.5, Seed: 3, Estimates: EstimatesLearned, EstimateError: 0.5, HideAppType: true, RunNoise: 0.1,
			LearnHistory: history, LearnHistoryFrom: 21 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cold, warm, again := run(nil), run(thesisHour(t, 21, 50, 3)), run(thesisHour(t, 21, 50, 3))
	if cold.Jobs != 50 || warm.Jobs != 50 || warm.DeadlineJobs != cold.DeadlineJobs {
		t.Fatalf("the window changed with a history: %d/%d jobs, %d/%d deadline jobs", cold.Jobs, warm.Jobs, cold.DeadlineJobs, warm.DeadlineJobs)
	}
	// The thesis mix has 3 signatures: without history at most 50 - 3 x 10
	// of the window's runs have 10 runs of their signature before them.
	if cold.ModelMAPERuns > 20 || warm.ModelMAPERuns <= cold.ModelMAPERuns+10 {
		t.Errorf("runs measured after 10 of their signature: %d without history, %d with", cold.ModelMAPERuns, warm.ModelMAPERuns)
	}
	if warm.TotalCostUSD != again.TotalCostUSD || warm.DeadlineMissed != again.DeadlineMissed || warm.ModelMAPEPct != again.ModelMAPEPct {
		t.Errorf("not deterministic: %+v\n%+v", warm, again)
	}
}

// TestAutoExecutors: with --executors auto the learned model sizes the
// jobs of signatures it knows (and the truth runs the count it chose, seen
// in the mean), never beyond the counts the signature's runs had; with the
// users' counts nothing is sized.
func TestAutoExecutors(t *testing.T) {
	wl := thesisHour(t, 22, 50, 3)
	dap, _ := LookupPolicy("dap")
	run := func(ex string) Result {
		r, err := Run(context.Background(), Options{Workload: wl, From: 22 * 3600e9, Cluster: clusterspec.Thesis14(), Policy: dap,
			DeadlineFraction: 1, Slack: 1.5, Seed: 3, Estimates: EstimatesLearned, EstimateError: 0.5, HideAppType: true, RunNoise: 0.1, Executors: ex})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	user, auto := run(ExecutorsUser), run(ExecutorsAuto)
	if user.AutoSizedJobs != 0 || auto.AutoSizedJobs == 0 || auto.AutoChangedJobs == 0 {
		t.Fatalf("sized: user %d, auto %d (%d changed)", user.AutoSizedJobs, auto.AutoSizedJobs, auto.AutoChangedJobs)
	}
	if auto.MeanExecutors == user.MeanExecutors || auto.MeanExecutors > 16 {
		t.Errorf("mean executors: auto %.2f, user %.2f (the users' at most 16)", auto.MeanExecutors, user.MeanExecutors)
	}
	if _, err := Run(context.Background(), Options{Workload: wl, Cluster: clusterspec.Thesis14(), Policy: dap, Executors: "many"}); err == nil {
		t.Error("unknown --executors mode accepted")
	}
}

// TestLearnedTraitsReachDap: in learned mode the scheduler's model gives
// dap a signature's traits once its fit tells its placement sensitivities
// apart, the prior's before (ok false); run times of its own unless told.
func TestLearnedTraitsReachDap(t *testing.T) {
	e := &estimator{book: perfmodel.NewBook()}
	m := &traitsModel{e: e}
	k := scheduler.RunKey{Signature: "local:///a.jar A", Size: 4}
	if _, ok := m.Traits(k); ok {
		t.Fatal("traits before any run")
	}
	v := m.Version()
	for i := 0; i < 30; i++ {
		n := 1 + i%6
		pl := perfmodel.Placement{CrossShare: float64(i%5) / 5, BusiestLoad: float64(i%4) / 3}
		secs := (10 + 40*float64(1+i%7)/float64(n)) * (1 + 2*pl.CrossShare)
		if err := e.book.Observe(k.Signature, "", perfmodel.Run{Executors: n, Size: float64(1 + i%7), Placement: pl, Seconds: secs}); err != nil {
			t.Fatal(err)
		}
		e.learnt++
	}
	tr, ok := m.Traits(k)
	if !ok || tr.ShuffleShare < 0.5 {
		t.Errorf("traits %+v (ok %v), want the signature's: a heavy shuffle (2x when all crosses)", tr, ok)
	}
	if m.Version() == v {
		t.Error("version did not change as the model learned")
	}
	if _, ok := m.Predict(k, 4, perfmodel.Placement{}); !ok {
		t.Error("--learned-decisions model: no run time from a signature with a model")
	}
	m.told = true
	if _, ok := m.Predict(k, 4, perfmodel.Placement{}); ok {
		t.Error("--learned-decisions told: the model predicts run times: the told estimates would not be what learned mode measures")
	}
}
