package workload

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const goodMix = `{"name": "m", "kinds": [
 {"name": "a", "app": "sort", "share": 0.25, "inputGB": {"min": 1, "max": 3}, "shuffleRatio": 2, "outputRatio": 0.5},
 {"name": "b", "app": "pagerank", "share": 0.75, "inputGB": {"min": 2, "max": 2}, "iterations": {"min": 3, "max": 5},
  "shuffleRatio": 0.5, "outputRatio": 0, "computeMBps": 7, "cpuBound": 0.2}]}`

func TestParseMixAndGenerate(t *testing.T) {
	mix, err := ParseMix(strings.NewReader(goodMix))
	if err != nil {
		t.Fatal(err)
	}
	arr := arrivals(800, "j")
	jobs := DefaultModel.FromMix(arr, mix, 3)
	count := map[string]int{}
	for i, j := range jobs {
		p := j.Profile
		count[p.Kind]++
		if j.Submit != arr[i].Submit || p.JobID != arr[i].ID {
			t.Fatalf("job %d: %+v", i, j)
		}
		in := float64(p.InputBytes) / 1e9
		switch p.Kind {
		case "a":
			if p.App != Sort || in < 1 || in > 3 || p.Iterations != 1 || p.ShuffleBytes != 2*p.InputBytes || p.OutputBytes != p.InputBytes/2 || p.Perf != nil {
				t.Fatalf("kind a: %+v", p)
			}
		case "b":
			if p.App != PageRank || in != 2 || p.Iterations < 3 || p.Iterations > 5 ||
				p.ShuffleBytes != int64(float64(p.InputBytes)*0.5*float64(p.Iterations)) || p.OutputBytes != 0 {
				t.Fatalf("kind b: %+v", p)
			}
			if p.Perf == nil || p.Perf.ComputeMBps != 7 || p.Perf.CPUBound != 0.2 || p.Perf.ExecutorMemoryMB != DefaultModel.Apps[PageRank].ExecutorMemoryMB {
				t.Fatalf("kind b figures: %+v", p.Perf)
			}
		default:
			t.Fatalf("kind %q", p.Kind)
		}
		if p.Executors != DefaultModel.ExecutorsFor(p.InputBytes) {
			t.Fatalf("%+v: executors", p)
		}
	}
	if count["a"] < 150 || count["a"] > 250 {
		t.Errorf("kind a drawn %d of 800 times, want about 200", count["a"])
	}
	if again := DefaultModel.FromMix(arr, mix, 3); !reflect.DeepEqual(again, jobs) {
		t.Error("same seed, other jobs")
	}
	// The kind's own figures are the truth: a kind computing at 7 MB/s runs
	// longer than its app type's 15 MB/s would.
	var p Profile
	for _, j := range jobs {
		if j.Profile.Kind == "b" {
			p = j.Profile
			break
		}
	}
	slow := DefaultModel.Reference(p)
	p.Perf = nil
	if fast := DefaultModel.Reference(p); !(slow > fast) {
		t.Errorf("kind figures ignored: %v vs %v", slow, fast)
	}
}

func TestParseMixErrors(t *testing.T) {
	kind := `{"name": "a", "app": "sort", "share": 1, "inputGB": {"min": 1, "max": 3}, "shuffleRatio": 2, "outputRatio": 0.5}`
	with := func(old, new string) string {
		return `{"name": "m", "kinds": [` + strings.Replace(kind, old, new, 1) + `]}`
	}
	for _, c := range []struct{ in, field string }{
		{`{"kinds": [` + kind + `]}`, "name"},
		{`{"name": "m", "kinds": []}`, "kinds"},
		{`{"name": "m", "kinds": [` + kind + `], "extra": 1}`, "extra"},
		{with(`"name": "a"`, `"name": "a b"`), "kinds[0].name"},
		{`{"name": "m", "kinds": [` + strings.Replace(kind, `"share": 1`, `"share": 0.5`, 1) + `,` + strings.Replace(kind, `"share": 1`, `"share": 0.5`, 1) + `]}`, "kinds[1].name"},
		{with(`"app": "sort"`, `"app": "etl"`), "kinds[0].app"},
		{with(`"share": 1`, `"share": 0`), "kinds[0].share"},
		{with(`"share": 1`, `"share": 0.9`), "kinds[].share"},
		// A wrong JSON type is named with its kind's index too (encoding/json
		// says "kinds.share").
		{with(`"share": 1`, `"share": "1"`), "kinds[0].share"},
		{`{"name": "m", "kinds": [` + strings.Replace(kind, `"share": 1`, `"share": 0.5`, 1) + `,` + strings.Replace(strings.Replace(kind, `"max": 3`, `"max": [3]`, 1), `"a"`, `"b"`, 1) + `]}`, "kinds[1].inputGB.max"},
		{with(`"min": 1`, `"min": -1`), "kinds[0].inputGB.min"},
		{with(`"max": 3`, `"max": 0.5`), "kinds[0].inputGB.max"},
		{with(`"max": 3`, `"max": 1e9`), "kinds[0].inputGB.max"},
		{with(`"shuffleRatio": 2`, `"iterations": {"min": 0, "max": 2}, "shuffleRatio": 2`), "kinds[0].iterations.min"},
		{with(`"shuffleRatio": 2`, `"iterations": {"min": 3, "max": 2}, "shuffleRatio": 2`), "kinds[0].iterations.max"},
		{with(`"shuffleRatio": 2, `, ``), "kinds[0].shuffleRatio"},
		{with(`"shuffleRatio": 2`, `"shuffleRatio": -2`), "kinds[0].shuffleRatio"},
		{with(`"outputRatio": 0.5`, `"outputRatio": 5000`), "kinds[0].outputRatio"},
		{with(`"outputRatio": 0.5`, `"outputRatio": 0.5, "computeMBps": 0`), "kinds[0].computeMBps"},
		{with(`"outputRatio": 0.5`, `"outputRatio": 0.5, "cpuBound": 1.5`), "kinds[0].cpuBound"},
		// Unknown keys are named where they are (encoding/json names the
		// key alone: "speed" did not say which kind).
		{with(`"outputRatio": 0.5`, `"outputRatio": 0.5, "speed": 1`), "kinds[0].speed"},
		{with(`"max": 3`, `"max": 3, "mean": 2`), "kinds[0].inputGB.mean"},
		{`{"name": "m", "kinds": [` + strings.Replace(kind, `"share": 1`, `"share": 0.5`, 1) + `,` + strings.Replace(strings.Replace(kind, `"share": 1`, `"shares": 0.5`, 1), `"a"`, `"b"`, 1) + `]}`, "kinds[1].shares"},
		{`{"name": "m", "kinds": [` + kind + `]} {}`, ""},
		{`[1, 2]`, ""},
		{strings.Repeat(" ", MaxMixBytes+1), ""},
	} {
		_, err := ParseMix(strings.NewReader(c.in))
		var me *MixError
		if !errors.As(err, &me) || me.Field != c.field {
			t.Errorf("ParseMix(%.60s...) = %v, want a MixError on field %q", c.in, err, c.field)
		}
	}
}

// TestExampleMixes: the mixes shipped in examples/mixes parse.
func TestExampleMixes(t *testing.T) {
	files, _ := filepath.Glob("../examples/mixes/*.json")
	if len(files) < 3 {
		t.Fatalf("%d example mixes", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseMix(strings.NewReader(string(b))); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// FuzzParseMix: any input is a valid mix that generates sane jobs, or a
// MixError; never a panic.
func FuzzParseMix(f *testing.F) {
	f.Add(goodMix)
	f.Add(`{"name":"x","kinds":[{"name":"a","app":"sort","share":1,"inputGB":{"min":0.001,"max":10000},"shuffleRatio":1000,"outputRatio":0,"iterations":{"min":1000,"max":1000}}]}`)
	f.Add(`{"name":"x","kinds":[{"name":"a","app":"wordcount","share":NaN}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		mix, err := ParseMix(strings.NewReader(in))
		if err != nil {
			var me *MixError
			if !errors.As(err, &me) {
				t.Fatalf("%v is not a MixError", err)
			}
			return
		}
		for _, j := range DefaultModel.FromMix(arrivals(20, "f"), mix, 1) {
			p := j.Profile
			if p.InputBytes < 0 || p.ShuffleBytes < 0 || p.OutputBytes < 0 || p.Executors < 1 {
				t.Fatalf("%+v", p)
			}
			if d := DefaultModel.Reference(p); d <= 0 || math.IsNaN(float64(d)) {
				t.Fatalf("%+v: %v", p, d)
			}
		}
	})
}

// TestHabit: one count per signature, from HabitCounts, whatever the
// input; the same for the same seed, and not the same habit for every
// signature across seeds.
func TestHabit(t *testing.T) {
	arr := make([]TraceJob, 200)
	for i := range arr {
		arr[i] = TraceJob{ID: fmt.Sprintf("j%d", i)}
	}
	seen := map[int]bool{}
	for seed := uint64(1); seed <= 8; seed++ {
		a := Habit(DefaultModel.Thesis(arr, DefaultThesisMix, seed), seed)
		b := Habit(DefaultModel.Thesis(arr, DefaultThesisMix, seed), seed)
		per := map[AppType]int{}
		for i, j := range a {
			if j.Profile.Executors != b[i].Profile.Executors {
				t.Fatalf("seed %d: not deterministic", seed)
			}
			if n, ok := per[j.Profile.App]; ok && n != j.Profile.Executors {
				t.Fatalf("seed %d: %s has %d and %d executors", seed, j.Profile.App, n, j.Profile.Executors)
			}
			per[j.Profile.App] = j.Profile.Executors
			if !slices.Contains(HabitCounts, j.Profile.Executors) {
				t.Fatalf("count %d not a habit", j.Profile.Executors)
			}
			seen[j.Profile.Executors] = true
		}
	}
	if len(seen) < 3 {
		t.Fatalf("habits drawn: %v", seen)
	}
}
