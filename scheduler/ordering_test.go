package scheduler

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestFeasibleEDF: one 4-cpu agent, busy with r0. Two deadline jobs of 4
// cpus wait: "hopeless" (deadline in 5 min, estimate 10 min: at risk, let
// in by accept-and-flag) and "feasible" (deadline in 20 min, estimate 5
// min). When r0 ends, Algorithm 3 starts the earliest deadline (hopeless,
// which misses anyway); feasible-edf starts feasible, which then makes its
// deadline, and hopeless after it.
func TestFeasibleEDF(t *testing.T) {
	for _, tc := range []struct {
		ordering Ordering
		first    string
	}{
		{OrderAlgorithm3, "hopeless"},
		{OrderFeasibleEDF, "feasible"},
		{"", "feasible"}, // the default
	} {
		name := string(tc.ordering)
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{Ordering: tc.ordering, Admission: AdmitFlag, Policy: "exact"}, agent("a1", 4, 16384, 0.24))
			h.schedule()
			h.submit(mkJob("r0", 1, 4))
			h.schedule()
			h.submit(
				mkJob("hopeless", 1, 4, withDeadline(5*time.Minute), withEstimate(10*time.Minute)),
				mkJob("feasible", 1, 4, withDeadline(20*time.Minute), withEstimate(5*time.Minute)),
			)
			h.schedule()
			v := h.core.Queues()
			if ids := queuedIDs(v.Deadline); !slices.Equal(ids, []string{"hopeless", "feasible"}) {
				t.Fatalf("deadline queue %v: the view stays in EDF order", ids)
			}
			if !v.Deadline[0].AtRisk || v.Deadline[1].AtRisk {
				t.Fatalf("at-risk flags %v %v", v.Deadline[0].AtRisk, v.Deadline[1].AtRisk)
			}
			if err := h.finish("r0"); err != nil {
				t.Fatal(err)
			}
			h.schedule()
			if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"r0", tc.first}) {
				t.Fatalf("started %v, want r0 then %s", got, tc.first)
			}
		})
	}
}

// TestFeasibleLPTTranscript: one 4-cpu agent, busy with r0 until t0.
// Three deadline jobs of one 2-cpu executor wait (accept-and-flag), each
// running exactly its estimate: "feasible" (deadline 20 min, 5 min),
// "short" (deadline 1 min, 2 min: hopeless) and "long" (deadline 3 min,
// 10 min: hopeless). Worked by hand:
//
//	feasible-edf: t0 feasible + short; t2 short ends, long starts; t5
//	  feasible ends; t12 long ends. The agent is paid until t12, half
//	  idle from t5: 14 idle cpu-minutes.
//	feasible-lpt: t0 feasible + long; t5 feasible ends, short starts;
//	  t7 short ends; t10 long ends. Paid until t10, half idle from t7:
//	  6 idle cpu-minutes.
//
// Under both, feasible starts at t0 (hopeless jobs never go before it)
// and meets its deadline; the hopeless jobs miss theirs either way.
func TestFeasibleLPTTranscript(t *testing.T) {
	run := map[string]time.Duration{"feasible": 5 * time.Minute, "short": 2 * time.Minute, "long": 10 * time.Minute}
	for _, tc := range []struct {
		ordering Ordering
		order    []string
		start    map[string]time.Duration
		end      time.Duration
		idle     float64 // cpu-minutes on the agent from t0 to end
	}{
		{OrderFeasibleEDF, []string{"r0", "feasible", "short", "long"},
			map[string]time.Duration{"feasible": 0, "short": 0, "long": 2 * time.Minute}, 12 * time.Minute, 14},
		{OrderFeasibleLPT, []string{"r0", "feasible", "long", "short"},
			map[string]time.Duration{"feasible": 0, "long": 0, "short": 5 * time.Minute}, 10 * time.Minute, 6},
		{"", []string{"r0", "feasible", "long", "short"}, // the default
			map[string]time.Duration{"feasible": 0, "long": 0, "short": 5 * time.Minute}, 10 * time.Minute, 6},
	} {
		name := string(tc.ordering)
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, Config{Ordering: tc.ordering, Admission: AdmitFlag, Policy: "exact"}, agent("a1", 4, 16384, 0.24))
			h.schedule()
			h.submit(mkJob("r0", 2, 2))
			h.schedule()
			h.submit(
				mkJob("feasible", 1, 2, withDeadline(20*time.Minute), withEstimate(run["feasible"])),
				mkJob("short", 1, 2, withDeadline(time.Minute), withEstimate(run["short"])),
				mkJob("long", 1, 2, withDeadline(3*time.Minute), withEstimate(run["long"])),
			)
			h.schedule()
			if err := h.finish("r0"); err != nil {
				t.Fatal(err)
			}
			start, end := map[string]time.Duration{}, map[string]time.Duration{}
			seen, last, idle := 1, time.Duration(0), 0.0
			for {
				h.schedule()
				now := h.clock.Now().Sub(t0)
				applied := h.cluster.appliedIDs()
				for _, id := range applied[seen:] {
					start[id], end[id] = now, now+run[id]
				}
				seen = len(applied)
				next, nextID := time.Duration(-1), ""
				for id, e := range end {
					if e > now && (next < 0 || e < next || e == next && id < nextID) {
						next, nextID = e, id
					}
				}
				if next < 0 {
					break
				}
				used := 0.0
				for id, s := range start {
					if s <= now && end[id] > now {
						used += 2
					}
				}
				idle += (4 - used) * (next - now).Minutes()
				h.clock.Advance(next - now)
				if err := h.finish(nextID); err != nil {
					t.Fatal(err)
				}
				last = next
			}
			if got := h.cluster.appliedIDs(); !slices.Equal(got, tc.order) {
				t.Fatalf("started %v, want %v", got, tc.order)
			}
			for id, want := range tc.start {
				if start[id] != want {
					t.Errorf("%s started at %v, want %v", id, start[id], want)
				}
			}
			if last != tc.end || idle != tc.idle {
				t.Errorf("the agent was busy until %v with %g idle cpu-minutes, want %v and %g", last, idle, tc.end, tc.idle)
			}
		})
	}
}

// TestHopelessOrder: deadlineOrder's result for the four orderings on one
// queue (in EDF order: a, b, c, d): a (estimate 10 min) and c (4 min)
// cannot make their deadline any more, b and d can; under feasible-lpt
// the hopeless ones come last longest first, equal estimates in EDF order.
func TestHopelessOrder(t *testing.T) {
	now := t0
	mk := func(id string, deadline, est time.Duration) *Entry {
		j := mkJob(id, 1, 1, withDeadline(deadline), withEstimate(est))
		return NewEntry(&j)
	}
	q := []*Entry{mk("a", 2*time.Minute, 10*time.Minute), mk("b", 5*time.Minute, time.Minute),
		mk("c", 6*time.Minute, 7*time.Minute), mk("d", 9*time.Minute, time.Minute),
		mk("e", 10*time.Minute, 11*time.Minute), mk("f", 10*time.Minute, 11*time.Minute)}
	for _, tc := range []struct {
		ordering Ordering
		want     []string
	}{
		{OrderAlgorithm3, []string{"a", "b", "c", "d", "e", "f"}},
		{OrderFIFO, []string{"a", "b", "c", "d", "e", "f"}},
		{OrderFeasibleEDF, []string{"b", "d", "a", "c", "e", "f"}},
		{OrderFeasibleLPT, []string{"b", "d", "e", "f", "a", "c"}},
	} {
		d := &decider{cfg: Config{Ordering: tc.ordering, DurationScale: 1}}
		var got []string
		for _, e := range d.deadlineOrder(q, now) {
			got = append(got, e.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.ordering, got, tc.want)
		}
	}
}

func queuedIDs(q []QueuedJob) []string {
	var out []string
	for _, j := range q {
		out = append(out, j.ID)
	}
	return out
}

// TestFeasibleEDFBecomesLate: a job feasible at submission that waits
// until it can no longer make it moves behind a feasible one.
func TestFeasibleEDFBecomesLate(t *testing.T) {
	h := newHarness(t, Config{Policy: "exact"}, agent("a1", 4, 16384, 0.24))
	h.schedule()
	h.submit(mkJob("r0", 1, 4))
	h.schedule()
	h.submit(
		mkJob("early", 1, 4, withDeadline(10*time.Minute), withEstimate(8*time.Minute)),
		mkJob("later", 1, 4, submittedAt(time.Second), withDeadline(30*time.Minute), withEstimate(5*time.Minute)),
	)
	h.schedule()
	h.clock.Advance(3 * time.Minute) // early: 3 + 8 > 10, at risk now
	if err := h.finish("r0"); err != nil {
		t.Fatal(err)
	}
	h.schedule()
	if got := h.cluster.appliedIDs(); !slices.Equal(got, []string{"r0", "later"}) {
		t.Fatalf("started %v, want r0 then later", got)
	}
	if j := h.store.get("early"); j.State != Queued || !j.AtRisk {
		t.Fatalf("early: %+v", j)
	}
}

func TestAppType(t *testing.T) {
	for _, tc := range []struct {
		class  string
		labels map[string]string
		want   string
	}{
		{"org.apache.spark.examples.JavaWordCount", nil, placement.AppWordCount},
		{"org.apache.spark.examples.SparkPageRank", nil, placement.AppPageRank},
		{"org.apache.spark.examples.SortByKey", nil, placement.AppSort},
		{"com.example.TeraSort", nil, placement.AppSort},
		{"com.example.wordcount.Main", nil, ""}, // the package does not count
		{"org.apache.spark.examples.SparkPi", nil, ""},
		{"org.apache.spark.examples.SparkPi", map[string]string{AppTypeLabel: "PageRank "}, placement.AppPageRank},
		{"org.apache.spark.examples.JavaWordCount", map[string]string{AppTypeLabel: "sort"}, placement.AppSort},
		{"org.apache.spark.examples.JavaWordCount", map[string]string{AppTypeLabel: "bogus"}, placement.AppWordCount},
		{"", nil, ""},
	} {
		j := mkJob("j", 1, 1)
		j.App.MainClass, j.Labels = tc.class, tc.labels
		if got := AppType(&j); got != tc.want {
			t.Errorf("AppType(%q, %v) = %q, want %q", tc.class, tc.labels, got, tc.want)
		}
	}
}

// capture is a policy that records what it was given and places with exact.
type capture struct {
	snaps   []placement.Snapshot
	demands []placement.Demand
}

func (c *capture) Name() string { return "capture" }

func (c *capture) Place(s placement.Snapshot, d placement.Demand) (placement.Plan, error) {
	c.snaps = append(c.snaps, s)
	c.demands = append(c.demands, d)
	p, _ := placement.Get("exact")
	return p.Place(s, d)
}

// TestPolicyInputs: the policy gets the decision time, the estimate in
// wall time (DurationScale), the application type and the deadline, and
// the agents' RemainingActive from the core's running jobs.
func TestPolicyInputs(t *testing.T) {
	c := &capture{}
	h := newHarness(t, Config{Placer: c, DurationScale: 0.5}, agent("a1", 4, 16384, 0.24), agent("a2", 4, 16384, 0.24))
	h.schedule()
	first := mkJob("first", 1, 2, withEstimate(20*time.Minute))
	first.App.MainClass = "org.apache.spark.examples.SparkPageRank"
	h.submit(first)
	h.schedule()
	ctx := context.Background()
	for _, st := range []State{Launching, Running} {
		if err := h.core.Report(ctx, "first", st, ""); err != nil {
			t.Fatal(err)
		}
	}
	h.clock.Advance(4 * time.Minute)
	h.submit(mkJob("second", 1, 2, submittedAt(4*time.Minute), withDeadline(time.Hour), withEstimate(30*time.Minute)))
	h.schedule()
	if len(c.demands) != 2 {
		t.Fatalf("%d placements", len(c.demands))
	}
	d0, d1 := c.demands[0], c.demands[1]
	if d0.App != placement.AppPageRank || !d0.Deadline.IsZero() || !d0.Now.Equal(t0) || d0.EstimatedDuration != 10*time.Minute {
		t.Errorf("first demand %+v", d0)
	}
	if d1.App != "" || !d1.Deadline.Equal(t0.Add(4*time.Minute+time.Hour)) || !d1.Now.Equal(t0.Add(4*time.Minute)) || d1.EstimatedDuration != 15*time.Minute {
		t.Errorf("second demand %+v", d1)
	}
	// first started at t0 with 10 min (wall) to run: 6 min left on its agent.
	agent := c.snaps[1].Agents[0]
	if !agent.Active || agent.RemainingActive != 6*time.Minute {
		t.Errorf("agent %s: active %v, remaining %v, want 6m", agent.ID, agent.Active, agent.RemainingActive)
	}
	if other := c.snaps[1].Agents[1]; other.Active || other.RemainingActive != 0 {
		t.Errorf("idle agent %+v", other)
	}
	if a := c.snaps[0].Agents[0]; a.RemainingActive != 0 {
		t.Errorf("before any job: %+v", a)
	}
}

// TestHopelessOnTheMedian: the feasible orderings demote a job only when
// its median run time (the model's p50) cannot meet its deadline; a job
// that only its p90 puts at risk keeps its EDF place (and is still
// flagged at risk). The model answers p50 = base / executors and p90 =
// 1.5 x p50 (tableModel): "lost" p50 4 min against a deadline 3 min away
// (hopeless); "maybe" p50 6 min, p90 9 min, deadline in 8 (at risk, not
// hopeless); "sure" p50 2 min, p90 3 min, deadline in 10. EDF order is
// lost, maybe, sure; feasible-LPT puts maybe and sure (EDF) before lost.
// With the p90 as the test, maybe was demoted behind sure.
func TestHopelessOnTheMedian(t *testing.T) {
	m := &tableModel{base: map[string]float64{"lost": 240, "maybe": 360, "sure": 120}}
	mk := func(id string, deadline time.Duration) *Entry {
		j := mkJob(id, 1, 1, withDeadline(deadline), withEstimate(time.Minute))
		e := NewEntry(&j)
		e.learn = &entryLearn{key: RunKey{Signature: id}}
		return e
	}
	q := []*Entry{mk("lost", 3*time.Minute), mk("maybe", 8*time.Minute), mk("sure", 10*time.Minute)}
	for _, o := range []Ordering{OrderFeasibleEDF, OrderFeasibleLPT} {
		d := &decider{cfg: Config{Ordering: o, DurationScale: 1, Model: m}}
		var got []string
		for _, e := range d.deadlineOrder(q, t0) {
			got = append(got, e.ID)
		}
		if want := []string{"maybe", "sure", "lost"}; !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", o, got, want)
		}
		if !d.atRisk(q[1], t0) || d.hopeless(q[1], t0) {
			t.Errorf("%s: maybe at risk %v, hopeless %v; want at risk, not hopeless", o, d.atRisk(q[1], t0), d.hopeless(q[1], t0))
		}
	}
}
