package warmlive

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/sparkpack/sparkpack/store"
	"github.com/sparkpack/sparkpack/warmpool"
)

func tp(t time.Time) *time.Time { return &t }

// TestJobs: sizes are executors plus driver, the shape one executor; a
// finished job's run time is measured, others use the estimate (scaled);
// slack is deadline - submission - run, unknown (-1) without a run time;
// a rejected job is left out.
func TestJobs(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	rows := []store.Submission{
		{SubmittedAt: t0, State: "FINISHED", Executors: 3, ExecutorCores: 2, ExecutorMemMB: 1408, DriverCores: 1, DriverMemMB: 1024,
			EstimatedSeconds: 100, StartedAt: tp(t0.Add(10 * time.Second)), FinishedAt: tp(t0.Add(70 * time.Second)), DeadlineAt: tp(t0.Add(5 * time.Minute))},
		{SubmittedAt: t0, State: "QUEUED", Executors: 1, ExecutorCores: 1, ExecutorMemMB: 1408, DriverCores: 1, DriverMemMB: 1024,
			EstimatedSeconds: 100, DeadlineAt: tp(t0.Add(5 * time.Minute))},
		{SubmittedAt: t0, State: "QUEUED", Executors: 1, ExecutorCores: 1, ExecutorMemMB: 1408, DriverCores: 1, DriverMemMB: 1024,
			DeadlineAt: tp(t0.Add(5 * time.Minute))},
		{SubmittedAt: t0, State: "QUEUED", Executors: math.NaN(), ExecutorCores: 1, ExecutorMemMB: 1408, DriverCores: 1, DriverMemMB: 1024},
		// Rejected (97 cpus on a 100-cpu cluster with a deadline already
		// past): it never asked for room, the forecast leaves it out.
		{SubmittedAt: t0, State: "REJECTED", Executors: 48, ExecutorCores: 2, ExecutorMemMB: 1408, DriverCores: 1, DriverMemMB: 1024},
	}
	got := Jobs(rows, 0.5)
	if len(got) != 4 {
		t.Fatalf("%d jobs", len(got))
	}
	if j := got[0]; j.CPUs != 7 || j.MemMB != 3*1408+1024 || j.ExecutorCPUs != 2 || j.ExecutorMemMB != 1408 || j.RunSeconds != 60 || !j.Deadline || j.SlackSeconds != 240 {
		t.Errorf("finished job: %+v", j)
	}
	if j := got[1]; j.RunSeconds != 50 || j.SlackSeconds != 250 {
		t.Errorf("queued job with an estimate (scale 0.5): %+v", j)
	}
	if j := got[2]; j.RunSeconds != 0 || j.SlackSeconds != -1 || !j.Deadline {
		t.Errorf("queued job without an estimate: %+v", j)
	}
	if j := got[3]; !math.IsNaN(j.CPUs) || j.Deadline {
		t.Errorf("corrupt row: %+v (want NaN cpus)", j)
	}
}

// TestQueueDelay: the mean wait beyond a boot (60 s) of the ten jobs
// started last: of eleven started jobs, the oldest start (waited 500 s)
// is left out; the others waited 0, 30, 60, 90, 120, 150, 180, 210, 240
// and 270 s: beyond the boot 0+0+0+30+60+90+120+150+180+210 = 840 s, a
// mean of 84 s. Jobs not started count for nothing; none started is 0.
func TestQueueDelay(t *testing.T) {
	t0 := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	rows := []store.Submission{{SubmittedAt: t0, StartedAt: tp(t0.Add(500 * time.Second))}, {SubmittedAt: t0.Add(time.Hour), State: "QUEUED"}}
	for k := 0; k < 10; k++ {
		sub := t0.Add(time.Duration(k+10) * time.Minute)
		rows = append(rows, store.Submission{SubmittedAt: sub, StartedAt: tp(sub.Add(time.Duration(30*k) * time.Second))})
	}
	if got := QueueDelay(rows, time.Minute); got != 84*time.Second {
		t.Fatalf("queue delay %s, want 1m24s", got)
	}
	if got := QueueDelay(rows[:2], time.Minute); got != 440*time.Second {
		t.Fatalf("one started job: %s, want 7m20s", got)
	}
	if got := QueueDelay(nil, time.Minute); got != 0 {
		t.Fatalf("no job: %s", got)
	}
}

// TestActionsOf: kept and powered-on agents are wanted; only agents that
// are off are powered on; those the plan lets go are not kept.
func TestActionsOf(t *testing.T) {
	agents := []warmpool.Agent{{ID: "a", State: warmpool.On}, {ID: "b", State: warmpool.On}, {ID: "c", State: warmpool.Off},
		{ID: "d", State: warmpool.Booting}, {ID: "e", State: warmpool.Off}, {ID: "f", State: warmpool.Off}}
	p := warmpool.Plan{
		KeepOn:      []warmpool.Decision{{AgentID: "a"}, {AgentID: "d"}},
		PowerOnNow:  []warmpool.Decision{{AgentID: "e"}, {AgentID: "c"}, {AgentID: "d"}},
		MayPowerOff: []warmpool.Decision{{AgentID: "b"}},
	}
	a := ActionsOf(p, agents)
	if !slices.Equal(a.PowerOn, []string{"c", "e"}) {
		t.Errorf("power on %v; want [c e]", a.PowerOn)
	}
	for id, want := range map[string]bool{"a": true, "b": false, "c": true, "d": true, "e": true, "f": false} {
		if a.Keep[id] != want {
			t.Errorf("keep %s = %v; want %v", id, a.Keep[id], want)
		}
	}
}

// fake is the live product's side, recorded.
type fake struct {
	rows    []store.Submission
	histErr error
	agents  []warmpool.Agent
	powered []string
	reasons []string // PowerOn's, for power management's log line
}

func (f *fake) sources() Sources {
	return Sources{
		History: func(ctx context.Context, since time.Time, limit int) ([]store.Submission, error) {
			var out []store.Submission
			for _, r := range f.rows {
				if !r.SubmittedAt.Before(since) {
					out = append(out, r)
				}
			}
			return out, f.histErr
		},
		Agents: func(context.Context) ([]warmpool.Agent, error) { return f.agents, nil },
		PowerOn: func(_ context.Context, id, why string) error {
			f.powered, f.reasons = append(f.powered, id), append(f.reasons, why)
			return nil
		},
	}
}

// recurring is a deadline job of 2 cpus (1 executor and the driver)
// every period over the span before now, with a slack of 10 s.
func recurring(now time.Time, period, span time.Duration) []store.Submission {
	var out []store.Submission
	for t := now.Add(-span); t.Before(now); t = t.Add(period) {
		out = append(out, store.Submission{SubmittedAt: t, State: "FINISHED", Executors: 1, ExecutorCores: 1, ExecutorMemMB: 1408,
			DriverCores: 1, DriverMemMB: 1024, EstimatedSeconds: 5, DeadlineAt: tp(t.Add(15 * time.Second))})
	}
	return out
}

// cluster: a cheap 4-cpu agent and dear ones (in the state given).
func cluster(s warmpool.State) []warmpool.Agent {
	return []warmpool.Agent{
		{ID: "cheap", CPUs: 4, MemMB: 16384, PricePerHour: 0.20, State: s},
		{ID: "dear-1", CPUs: 4, MemMB: 16384, PricePerHour: 4, State: s},
		{ID: "dear-2", CPUs: 8, MemMB: 32768, PricePerHour: 8, State: s},
	}
}

func quiet() logrus.FieldLogger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return l
}

// TestRunnerFallback: an empty or corrupt history (or one the store
// cannot read) keeps nothing and powers nothing on or off: today's
// behaviour, with the reason.
func TestRunnerFallback(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	corrupt := recurring(now, 20*time.Second, time.Hour)
	for i := range corrupt {
		if i%3 != 0 {
			corrupt[i].ExecutorCores = math.NaN()
		}
	}
	for _, tc := range []struct {
		name string
		rows []store.Submission
		want string
	}{
		{"empty", nil, "empty history"},
		{"corrupt", corrupt, "corrupt history"},
		{"too old", recurring(now.Add(-60*24*time.Hour), 20*time.Second, time.Hour), "empty history"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, s := range []warmpool.State{warmpool.On, warmpool.Off} {
				f := &fake{rows: tc.rows, agents: cluster(s)}
				r, err := New(Config{Every: 10 * time.Second, BootTime: 20 * time.Second, Log: quiet(), Now: func() time.Time { return now }}, f.sources())
				if err != nil {
					t.Fatal(err)
				}
				if err := r.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
				st := r.Status()
				if !strings.Contains(st.Fallback, tc.want) {
					t.Errorf("fallback %q; want it to say %q", st.Fallback, tc.want)
				}
				if len(f.powered) > 0 {
					t.Errorf("powered on %v without a forecast", f.powered)
				}
				for _, a := range f.agents {
					if r.Wanted(a.ID) {
						t.Errorf("agents %s: kept without a forecast", a.ID)
					}
				}
				if s == warmpool.On && len(st.Plan.MayPowerOff) != 3 {
					t.Errorf("plan %+v: every idle agent may power off", st.Plan)
				}
			}
		})
	}

	// A store that fails: the last decision stands three intervals, then
	// goes.
	clock := now
	f := &fake{rows: recurring(now, 20*time.Second, time.Hour), agents: cluster(warmpool.On)}
	r, _ := New(Config{Every: 10 * time.Second, BootTime: 20 * time.Second, MissCostUSD: 0.05, Log: quiet(), Now: func() time.Time { return clock }}, f.sources())
	if err := r.Step(context.Background()); err != nil || !r.Wanted("cheap") {
		t.Fatalf("step: %v; cheap kept %v", err, r.Wanted("cheap"))
	}
	f.histErr = errors.New("database down")
	clock = now.Add(20 * time.Second)
	if err := r.Step(context.Background()); err == nil || !r.Wanted("cheap") {
		t.Fatalf("a failed read must keep the last decision a while (err %v)", err)
	}
	clock = now.Add(31 * time.Second)
	if err := r.Step(context.Background()); err == nil || r.Wanted("cheap") {
		t.Fatalf("after three intervals the last decision must go (err %v)", err)
	}
}

// TestRunnerRecurringDeadlineJob: a deadline job every 20 s whose slack
// cannot absorb a 20 s boot keeps the cheap agent warm and lets the dear
// ones go; with everything off, the cheap agent is powered on ahead and
// only it.
func TestRunnerRecurringDeadlineJob(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	cfg := Config{Every: 10 * time.Second, BootTime: 20 * time.Second, MissCostUSD: 0.05, Log: quiet(), Now: func() time.Time { return now }}
	f := &fake{rows: recurring(now, 20*time.Second, time.Hour), agents: cluster(warmpool.On)}
	r, _ := New(cfg, f.sources())
	if err := r.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := r.Status()
	if st.Fallback != "" || !r.Wanted("cheap") || r.Wanted("dear-1") || r.Wanted("dear-2") || len(f.powered) > 0 {
		t.Fatalf("all on: fallback %q, wanted cheap %v dear-1 %v dear-2 %v, powered %v; plan %+v",
			st.Fallback, r.Wanted("cheap"), r.Wanted("dear-1"), r.Wanted("dear-2"), f.powered, st.Plan)
	}

	f.agents = cluster(warmpool.Off)
	if err := r.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(f.powered, []string{"cheap"}) || r.Status().PoweredOnAhead != 1 {
		t.Fatalf("all off: powered on %v (want [cheap]); plan %+v", f.powered, r.Status().Plan)
	}
	// Power management logs why: the plan's reason for the agent.
	if want := "warm pool: " + r.Status().Plan.PowerOnNow[0].Reason; len(f.reasons) != 1 || f.reasons[0] != want || !strings.Contains(want, "forecast") {
		t.Errorf("power-on reasons %q, want [%q]", f.reasons, want)
	}

	// The view: a step behind now shows the actual arrivals.
	v := r.View(time.Minute, 20*time.Second)
	if len(v.Steps) != 6 || v.WarmPool == nil || len(v.WarmPool.PowerOnNow) != 1 {
		t.Fatalf("view: %+v", v)
	}
	for i, s := range v.Steps {
		if past := i < 3; past != (s.Actual != nil) {
			t.Fatalf("step %d (%s): actual %v", i, s.From, s.Actual)
		}
		if s.Actual != nil && (s.Actual.Jobs != 1 || s.Actual.DeadlineJobs != 1 || s.Actual.CPUs != 2) {
			t.Errorf("step %d actual %+v; want the one recurring job", i, *s.Actual)
		}
		if s.Jobs.Mean < 0.5 || s.Jobs.Mean > 1.5 || s.Jobs.P10 > s.Jobs.P50 || s.Jobs.P50 > s.Jobs.P90 {
			t.Errorf("step %d band %+v; want about one job", i, s.Jobs)
		}
	}
}

// TestRunnerForecastOnly: without power management the Runner forecasts
// (the view has steps and a model) and keeps nothing; the view has no
// warm pool.
func TestRunnerForecastOnly(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	f := &fake{rows: recurring(now, 20*time.Second, time.Hour)}
	src := f.sources()
	src.Agents, src.PowerOn = nil, nil
	var applied int
	src.Applied = func(Status) { applied++ }
	r, err := New(Config{Log: quiet(), Now: func() time.Time { return now }}, src)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	v := r.View(time.Hour, 15*time.Minute)
	if !v.Model.OK || v.Model.Jobs != 180 || len(v.Steps) != 8 || v.WarmPool != nil || applied != 1 || r.Wanted("cheap") {
		t.Fatalf("view %+v, applied %d", v, applied)
	}
	if got := r.Status().Expect(now, now.Add(time.Hour)).Jobs; got < 150 || got > 210 {
		t.Errorf("the next hour forecasts %.1f jobs; want about 180", got)
	}
}

// TestRunnerConcurrent: power management's Wanted and the API's View
// read while Run decides (run with -race); Run ends with its context.
func TestRunnerConcurrent(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	f := &fake{rows: recurring(now, 20*time.Second, time.Hour), agents: cluster(warmpool.On)}
	r, _ := New(Config{Every: time.Millisecond, BootTime: 20 * time.Second, MissCostUSD: 0.05, Log: quiet(), Now: func() time.Time { return now }}, f.sources())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	for i := 0; i < 200; i++ {
		r.Wanted("cheap")
		_ = r.View(time.Minute, time.Minute)
	}
	cancel()
	<-done
	if !r.Wanted("cheap") {
		t.Fatal("the cheap agent is not kept")
	}
}

// TestRunnerDecisionLog: the decision's log line is one message with the
// figures in fields, and the forecast's level does not take logrus's own
// "level" key (which the formatters move to "fields.level").
func TestRunnerDecisionLog(t *testing.T) {
	now := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	var buf strings.Builder
	log := logrus.New()
	log.SetOutput(&buf)
	log.SetFormatter(&logrus.JSONFormatter{})
	f := &fake{rows: recurring(now, 20*time.Second, time.Hour), agents: cluster(warmpool.On)}
	r, _ := New(Config{Every: 10 * time.Second, BootTime: 20 * time.Second, MissCostUSD: 0.05, Log: log, Now: func() time.Time { return now }}, f.sources())
	if err := r.Step(context.Background()); err != nil {
		t.Fatal(err)
	}
	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		if strings.HasPrefix(m["msg"].(string), "warm pool: new decision") {
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no decision logged:\n%s", buf.String())
	}
	if line["msg"] != "warm pool: new decision" {
		t.Errorf("msg %q: the figures belong in fields", line["msg"])
	}
	if _, ok := line["fields.level"]; ok || line["level"] != "info" || line["forecast_level"] == nil || line["forecast_level"] == "" {
		t.Errorf("level fields: %v", line)
	}
	if s, _ := line["reason"].(string); !strings.Contains(s, "expected misses") {
		t.Errorf("reason %q", line["reason"])
	}
}
