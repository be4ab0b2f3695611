package workload

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func arrivals(n int, prefix string) []TraceJob {
	out := make([]TraceJob, n)
	for i := range out {
		out[i] = TraceJob{ID: fmt.Sprintf("%s%d", prefix, i), Submit: time.Duration(i) * 10 * time.Second, InputBytes: 1}
	}
	return out
}

// TestThesisMix checks the generator against its definition.
func TestThesisMix(t *testing.T) {
	m, mix := DefaultModel, DefaultThesisMix
	arr := arrivals(600, "job")
	jobs := m.Thesis(arr, mix, 7)
	if len(jobs) != len(arr) {
		t.Fatalf("%d jobs", len(jobs))
	}
	count := map[AppType]int{}
	for i, j := range jobs {
		p := j.Profile
		count[p.App]++
		if j.Submit != arr[i].Submit || p.JobID != arr[i].ID {
			t.Fatalf("job %d keeps neither arrival nor id: %+v", i, j)
		}
		in := float64(p.InputBytes) / 1e9
		switch p.App {
		case WordCount, Sort:
			if in < 1 || in > 20 || p.Iterations != 0 {
				t.Fatalf("%v: input %.3f GB", p, in)
			}
			want := map[AppType][2]float64{WordCount: {0.05, 0.01}, Sort: {1, 1}}[p.App]
			if p.ShuffleBytes != int64(float64(p.InputBytes)*want[0]+0.5) || p.OutputBytes != int64(float64(p.InputBytes)*want[1]+0.5) {
				t.Fatalf("%v: shuffle/output", p)
			}
		case PageRank:
			if in < 1 || in > 4 || p.Iterations < 5 || p.Iterations > 15 {
				t.Fatalf("%v: graph %.3f GB", p, in)
			}
			if p.ShuffleBytes != int64(float64(p.InputBytes)*0.5*float64(p.Iterations)+0.5) {
				t.Fatalf("%v: shuffle", p)
			}
		default:
			t.Fatalf("app %q", p.App)
		}
		if p.Executors != m.ExecutorsFor(p.InputBytes) || p.ExecutorCores != 2 || p.ExecutorMemoryMB != m.Apps[p.App].ExecutorMemoryMB {
			t.Fatalf("%v: sizing", p)
		}
		if p.InputBytes%1_000_000 != 0 {
			t.Fatalf("%v: not whole MB", p)
		}
	}
	for _, app := range ThesisApps {
		if count[app] < 150 || count[app] > 250 {
			t.Errorf("%s drawn %d times of 600, want about 200", app, count[app])
		}
	}
	if again := m.Thesis(arr, mix, 7); !reflect.DeepEqual(again, jobs) {
		t.Error("same seed and window, other jobs")
	}
	if other := m.Thesis(arr, mix, 8); reflect.DeepEqual(other, jobs) {
		t.Error("seeds 7 and 8 gave the same jobs")
	}
	if other := m.Thesis(arrivals(600, "other"), mix, 7); reflect.DeepEqual(other[0].Profile.InputBytes, jobs[0].Profile.InputBytes) &&
		reflect.DeepEqual(other[1].Profile.InputBytes, jobs[1].Profile.InputBytes) {
		t.Error("another window with the same seed gave the same jobs")
	}
	if got := First(arr, 50); len(got) != 50 || got[49].ID != "job49" {
		t.Errorf("First(50) = %d jobs", len(got))
	}
	if got := First(arr, 0); len(got) != 600 {
		t.Errorf("First(0) = %d jobs", len(got))
	}
}

// TestIterationsHandComputed: a PageRank of 10 iterations over 1.5 GB on
// 2 executors x 2 cores, packed and uncontended: compute = 1500 x 10 / 15
// / 4 = 250 s; shuffle = 7500 / 4 / 100 = 18.75 s; output 75 MB / 60 / 4 =
// 0.3125 s of compute; total 10 + 250.3125 + 18.75.
func TestIterationsHandComputed(t *testing.T) {
	p := Profile{App: PageRank, InputBytes: 1.5e9, ShuffleBytes: 7.5e9, OutputBytes: 75e6, Iterations: 10, Executors: 2, ExecutorCores: 2}
	b := DefaultModel.Duration(p, []AgentShare{{Executors: 2}})
	if b.Compute != 250313*time.Millisecond || b.Shuffle != 18750*time.Millisecond {
		t.Fatalf("%+v", b)
	}
	p.Iterations = 0 // one pass, as every trace job
	if b := DefaultModel.Duration(p, []AgentShare{{Executors: 2}}); b.Compute != 25313*time.Millisecond {
		t.Fatalf("one pass: %+v", b)
	}
}
