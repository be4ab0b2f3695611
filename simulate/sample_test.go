package simulate

import (
	"encoding/json"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/workload"
)

// TestSampleArrivals: on every hour of the trace, for several seeds and
// sizes, the draw holds min(n, hour's jobs) distinct jobs of that hour with
// their own submission times, sorted; the same seed gives the same draw,
// n >= the hour's count gives the whole hour.
func TestSampleArrivals(t *testing.T) {
	all := loadTrace(t)
	for h := 0; h < 24; h++ {
		hour := workload.Hour(all, h)
		submit := map[string]time.Duration{}
		for _, j := range hour {
			submit[j.ID] = j.Submit
		}
		for _, n := range []int{1, 10, 50, len(hour) - 1, len(hour), len(hour) + 5} {
			if n < 1 {
				continue
			}
			var draws [][]workload.TraceJob
			for seed := uint64(1); seed <= 4; seed++ {
				got := SampleArrivals(hour, n, seed)
				if want := min(n, len(hour)); len(got) != want {
					t.Fatalf("hour %d, n %d, seed %d: %d jobs, want %d", h, n, seed, len(got), want)
				}
				seen := map[string]bool{}
				for i, j := range got {
					at, ok := submit[j.ID]
					if !ok || seen[j.ID] {
						t.Fatalf("hour %d, n %d, seed %d: job %s not of the hour or drawn twice", h, n, seed, j.ID)
					}
					seen[j.ID] = true
					if j.Submit != at || j.Submit < time.Duration(h)*time.Hour || j.Submit >= time.Duration(h+1)*time.Hour {
						t.Fatalf("hour %d: job %s at %s, the trace says %s", h, j.ID, j.Submit, at)
					}
					if i > 0 && got[i-1].Submit > j.Submit {
						t.Fatalf("hour %d, n %d, seed %d: not sorted at %d", h, n, seed, i)
					}
				}
				if again := SampleArrivals(hour, n, seed); !slices.Equal(got, again) {
					t.Fatalf("hour %d, n %d, seed %d: two draws with the same seed differ", h, n, seed)
				}
				if n >= len(hour) && !slices.Equal(got, hour) {
					t.Fatalf("hour %d, n %d >= %d: not the whole hour", h, n, len(hour))
				}
				draws = append(draws, got)
			}
			if n > 1 && n < len(hour)-1 && slices.Equal(draws[0], draws[1]) && slices.Equal(draws[1], draws[2]) {
				t.Errorf("hour %d, n %d: seeds 1-3 draw the same jobs", h, n)
			}
		}
	}
	if got := SampleArrivals(nil, 5, 1); len(got) != 0 {
		t.Errorf("empty window: %v", got)
	}
}

// TestSampleArrivalsUniform: over 2,000 seeds, every job of hour 0 (78
// jobs) is drawn about 50/78 of the time (within 6 standard deviations
// of the binomial), and the mean submission time of the draws is the
// hour's: the sample spans the hour, where the first 50 end at 47 min.
// (First N would draw the first 50 every time.)
func TestSampleArrivalsUniform(t *testing.T) {
	hour := workload.Hour(loadTrace(t), 0)
	const n, seeds = 50, 2000
	count := map[string]int{}
	var sum, hourSum float64
	for _, j := range hour {
		hourSum += j.Submit.Seconds()
	}
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, j := range SampleArrivals(hour, n, seed) {
			count[j.ID]++
			sum += j.Submit.Seconds()
		}
	}
	p := float64(n) / float64(len(hour))
	mean, sd := seeds*p, math.Sqrt(seeds*p*(1-p))
	for _, j := range hour {
		if c := float64(count[j.ID]); math.Abs(c-mean) > 6*sd {
			t.Errorf("job %s drawn %v times, want %.0f ± %.0f", j.ID, c, mean, 6*sd)
		}
	}
	got, want := sum/(seeds*n), hourSum/float64(len(hour))
	if math.Abs(got-want) > 30 {
		t.Errorf("mean submission of the draws %.0f s, the hour's %.0f s", got, want)
	}
}

// TestCommandSample: --sample replays N jobs of each hour, the same for
// the same seed, and is checked against --jobs.
func TestCommandSample(t *testing.T) {
	trace := tracePath(t)
	for _, args := range [][]string{
		{"--sample", "0"},
		{"--sample", "-3"},
		{"--sample", "50", "--jobs", "50"},
		{"--sample", "many"},
	} {
		if _, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet", "--hour", "5"}, args...)...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	args := []string{"--trace", trace, "--quiet", "--workload", "thesis", "--hours", "5", "--seeds", "4-5", "--sample", "12",
		"--policies", "fifo-consolidate", "--power-off-after", "2m", "--format", "json"}
	out, _, err := runCommand(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := runCommand(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	var runs, runs2 []RunResult
	if err := json.Unmarshal([]byte(out), &runs); err != nil || len(runs) != 2 {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if err := json.Unmarshal([]byte(again), &runs2); err != nil || len(runs2) != 2 {
		t.Fatalf("json: %v\n%s", err, again)
	}
	// (The scheduling delays are measured in real time: the rest is
	// deterministic.)
	for i := range runs {
		a, b := runs[i].Results[0], runs2[i].Results[0]
		if a.BillUSD != b.BillUSD || a.AlwaysOnUSD != b.AlwaysOnUSD || a.DeadlineMissed != b.DeadlineMissed || a.JCTMeanS != b.JCTMeanS {
			t.Errorf("seed %d: the same seed gave other results: %+v, then %+v", runs[i].Seed, a, b)
		}
	}
	if runs[0].Results[0].JCTMeanS == runs[1].Results[0].JCTMeanS {
		t.Error("seeds 4 and 5 replayed the same jobs")
	}
	for _, r := range runs {
		if r.Jobs != 12 || len(r.Results) != 1 || r.Results[0].Jobs != 12 {
			t.Errorf("seed %d: %d jobs replayed, want 12", r.Seed, r.Jobs)
		}
	}
}
