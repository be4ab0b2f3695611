package scheduler

import (
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/placement"
)

// TestSizeHintsByHand: the spec's size hints win; a label counts only when
// the spec's field is 0 and the label is a number in (0, 1e6] GB or
// [1, 1,000,000] iterations (validated at submission; here an out-of-range
// or unparsable label is unknown: 0).
func TestSizeHintsByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		specGB float64
		specIt int
		labels map[string]string
		wantGB float64
		wantIt int
	}{
		{"no hints", 0, 0, nil, 0, 0},
		{"the spec's fields win over labels", 5, 3, map[string]string{InputSizeLabel: "7", IterationsLabel: "9"}, 5, 3},
		{"labels when the spec has none, spaces trimmed", 0, 0, map[string]string{InputSizeLabel: " 7.5 ", IterationsLabel: " 9 "}, 7.5, 9},
		{"labels of 0 are unknown", 0, 0, map[string]string{InputSizeLabel: "0", IterationsLabel: "0"}, 0, 0},
		{"negative labels are unknown", 0, 0, map[string]string{InputSizeLabel: "-3", IterationsLabel: "-2"}, 0, 0},
		{"the largest labels count", 0, 0, map[string]string{InputSizeLabel: "1000000", IterationsLabel: "1000000"}, 1e6, 1_000_000},
		{"past the largest: unknown", 0, 0, map[string]string{InputSizeLabel: "1000000.5", IterationsLabel: "1000001"}, 0, 0},
		{"unparsable: unknown", 0, 0, map[string]string{InputSizeLabel: "big", IterationsLabel: "2.5"}, 0, 0},
		{"the smallest counts", 0, 0, map[string]string{InputSizeLabel: "0.001", IterationsLabel: "1"}, 0.001, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := mkJob("j", 1, 1)
			j.InputSizeGB, j.Iterations, j.Labels = tc.specGB, tc.specIt, tc.labels
			gb, it := SizeHints(&j)
			if gb != tc.wantGB || it != tc.wantIt {
				t.Fatalf("SizeHints = %v GB, %d iterations; want %v, %d", gb, it, tc.wantGB, tc.wantIt)
			}
		})
	}
}

// TestModelSizeByHand: I = input GB (1 when unknown: 0, negative, NaN)
// times iterations (1 when unknown: 0 or less).
func TestModelSizeByHand(t *testing.T) {
	for _, tc := range []struct {
		gb   float64
		it   int
		want float64
	}{
		{0, 0, 1},
		{2.5, 0, 2.5},
		{0, 4, 4},
		{2.5, 4, 10},
		{-1, 3, 3},
		{math.NaN(), 2, 2},
		{0.5, -7, 0.5},
	} {
		if got := ModelSize(tc.gb, tc.it); got != tc.want {
			t.Errorf("ModelSize(%v, %d) = %v, want %v", tc.gb, tc.it, got, tc.want)
		}
	}
}

// TestCheckSizeHintsBounds: the size hints' bounds, both ends, by hand:
// input size 0 to 1e6 GB, iterations 0 to 1,000,000 (fields and labels
// alike), min and max executors 0 to 10,000 and only with "auto", max at
// least min when set. want is the field named in the error ("" for none).
func TestCheckSizeHintsBounds(t *testing.T) {
	const inL, itL = "labels.sparkpack.io/input-size-gb", "labels.sparkpack.io/iterations"
	auto := func(min, max int) func(*Spec) {
		return func(s *Spec) { s.Sizing, s.MinExecutors, s.MaxExecutors = &Sizing{Auto: true}, min, max }
	}
	gb := func(v float64) func(*Spec) { return func(s *Spec) { s.InputSizeGB = v } }
	its := func(v int) func(*Spec) { return func(s *Spec) { s.Iterations = v } }
	label := func(k, v string) func(*Spec) { return func(s *Spec) { s.Labels = map[string]string{k: v} } }
	for _, tc := range []struct {
		name string
		set  func(*Spec)
		want string
	}{
		{"no hints", func(*Spec) {}, ""},
		{"input 1e6 GB", gb(1e6), ""},
		{"input 1e6 + 0.5 GB", gb(1e6 + 0.5), "inputSizeGB"},
		{"input -0.5 GB", gb(-0.5), "inputSizeGB"},
		{"1,000,000 iterations", its(1_000_000), ""},
		{"1,000,001 iterations", its(1_000_001), "iterations"},
		{"-1 iterations", its(-1), "iterations"},
		{"input label 1e6", label(InputSizeLabel, "1000000"), ""},
		{"input label 0", label(InputSizeLabel, " 0 "), ""},
		{"input label past 1e6", label(InputSizeLabel, "1000000.5"), inL},
		{"input label negative", label(InputSizeLabel, "-0.5"), inL},
		{"input label not a number", label(InputSizeLabel, "big"), inL},
		{"input label 7.5", label(InputSizeLabel, "7.5"), ""},
		{"iterations label 1,000,000", label(IterationsLabel, "1000000"), ""},
		{"iterations label 0", label(IterationsLabel, "0"), ""},
		{"iterations label 1,000,001", label(IterationsLabel, "1000001"), itL},
		{"iterations label -1", label(IterationsLabel, "-1"), itL},
		{"iterations label not whole", label(IterationsLabel, "2.5"), itL},
		{"iterations label 9", label(IterationsLabel, " 9 "), ""},
		{"min executors without auto", func(s *Spec) { s.MinExecutors = 2 }, "minExecutors"},
		{"max executors without auto", func(s *Spec) { s.MaxExecutors = 2 }, "minExecutors"},
		{"auto, no bounds", auto(0, 0), ""},
		{"auto, min 10,000", auto(10000, 0), ""},
		{"auto, min 10,001", auto(10001, 0), "minExecutors"},
		{"auto, min -1", auto(-1, 0), "minExecutors"},
		{"auto, max 10,000", auto(0, 10000), ""},
		{"auto, max 10,001", auto(0, 10001), "maxExecutors"},
		{"auto, max -1", auto(0, -1), "maxExecutors"},
		{"auto, min = max", auto(5, 5), ""},
		{"auto, min > max", auto(6, 5), "maxExecutors"},
		{"auto, min with no max", auto(6, 0), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s Spec
			tc.set(&s)
			err := s.checkSizeHints()
			got := ""
			if err != nil {
				var fe *FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FieldError", err)
				}
				got = fe.Field
			}
			if got != tc.want {
				t.Fatalf("checkSizeHints: %v (field %q), want field %q", err, got, tc.want)
			}
		})
	}
}

// TestShapeOfByHand: one executor takes 2 cpus. Agent a (8 cpus, 6 free,
// m5) gets 2: load (8-6+2x2)/8 = 0.75; b (4 cpus, all free, c5) gets 1:
// load 2/4 = 0.5; c gets none (not counted); "off" is not in the snapshot (powered
// off) and gets 3: counted with its executors only. An agent of 0 cpus
// (unknown size) gives no load.
func TestShapeOfByHand(t *testing.T) {
	snap := placement.Snapshot{Agents: []placement.Agent{
		{ID: "a", CPUs: 8, FreeCPUs: 6, Attributes: map[string]string{InstanceTypeAttribute: "m5"}},
		{ID: "b", CPUs: 4, FreeCPUs: 4, Attributes: map[string]string{InstanceTypeAttribute: "c5"}},
		{ID: "c", CPUs: 4, FreeCPUs: 4, Attributes: map[string]string{InstanceTypeAttribute: "r5"}},
		{ID: "z"},
	}}
	as := func(pairs ...any) placement.Plan {
		var p placement.Plan
		for i := 0; i < len(pairs); i += 2 {
			p.Assignments = append(p.Assignments, placement.Assignment{AgentID: pairs[i].(string), Executors: pairs[i+1].(int)})
		}
		return p
	}
	for _, tc := range []struct {
		name     string
		plan     placement.Plan
		agents   int
		maxPer   int
		perAgent []int
		load     float64
		types    []string
	}{
		{"three agents, one with none", as("a", 2, "b", 1, "c", 0, "off", 3), 3, 3, []int{3, 2, 1}, 0.75, []string{"c5", "m5"}},
		{"an agent of unknown size", as("z", 1), 1, 1, []int{1}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := shapeOf(tc.plan, snap, 2)
			if s.Agents != tc.agents || s.MaxPerAgent != tc.maxPer || !slices.Equal(s.PerAgent, tc.perAgent) ||
				s.BusiestLoad != tc.load || !slices.Equal(s.InstanceTypes, tc.types) {
				t.Fatalf("shape %+v, want %d agents, at most %d, %v, load %v, types %v", s, tc.agents, tc.maxPer, tc.perAgent, tc.load, tc.types)
			}
		})
	}
}

// TestRunRecordShape: a run's record keeps the shape measured at its start;
// without one (a job recovered after a restart, or started before shapes
// were kept), the shape is counted from its plan: 2 executors on a and 1
// on b are 2 agents, at most 2 on one, [2 1].
func TestRunRecordShape(t *testing.T) {
	plan := placement.Plan{Assignments: []placement.Assignment{{AgentID: "a", Executors: 2}, {AgentID: "b", Executors: 1}}}
	measured := RunShape{Agents: 1, MaxPerAgent: 3, PerAgent: []int{3}, BusiestLoad: 0.5}
	for _, tc := range []struct {
		name     string
		a        *activeJob
		agents   int
		perAgent []int
	}{
		{"measured at the start", &activeJob{plan: &plan, shape: measured, shapeKnown: true}, 1, []int{3}},
		{"not measured: from the plan", &activeJob{plan: &plan}, 2, []int{2, 1}},
		{"neither: no shape", &activeJob{}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := mkJob("j", 3, 1)
			start := t0
			j.LastStartedAt, j.Attempt = &start, 1
			rec := runRecord(tc.a, &j, t0.Add(time.Minute), RunFinished, 1)
			if rec == nil {
				t.Fatal("no record")
			}
			if rec.Agents != tc.agents || !slices.Equal(rec.PerAgent, tc.perAgent) || rec.Seconds != 60 {
				t.Fatalf("record shape %+v, %v s; want %d agents %v, 60 s", rec.RunShape, rec.Seconds, tc.agents, tc.perAgent)
			}
		})
	}
}

// TestRunOutcomeByHand: back to the queue is PREEMPTED when an eviction
// was asked, else RETRIED; an end is its state, eviction asked or not.
func TestRunOutcomeByHand(t *testing.T) {
	for _, tc := range []struct {
		to        State
		preempted bool
		want      string
	}{
		{Queued, true, "PREEMPTED"},
		{Queued, false, "RETRIED"},
		{Finished, false, "FINISHED"},
		{Finished, true, "FINISHED"},
		{Failed, false, "FAILED"},
		{Killed, true, "KILLED"},
	} {
		if got := runOutcome(tc.to, tc.preempted); got != tc.want {
			t.Errorf("runOutcome(%s, %v) = %s, want %s", tc.to, tc.preempted, got, tc.want)
		}
	}
}
