package perftruth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func randomApp(rng *rand.Rand) (string, string) {
	return fmt.Sprintf("local:///jobs/app-%d.jar", rng.IntN(1000)), fmt.Sprintf("com.example.Job%d", rng.IntN(1000))
}

func randomRun(rng *rand.Rand) Run {
	agents := 1 + rng.IntN(5)
	per := make([]int, agents)
	for i := range per {
		per[i] = 1 + rng.IntN(4)
	}
	return Run{InputGB: 0.5 + rng.Float64()*20, Iterations: 1 + rng.IntN(5), Seed: rng.Uint64(),
		Placement: Placement{PerAgent: per, ExecutorCores: float64(1 + rng.IntN(4)), BusiestLoad: rng.Float64()}}
}

// TestDerivedIsDeterministicPerSignature: a signature's hidden parameters
// and a run's time depend on nothing but the signature and the run, and
// different signatures get different parameters.
func TestDerivedIsDeterministicPerSignature(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	distinct := map[Params]bool{}
	for i := 0; i < 500; i++ {
		res, class := randomApp(rng)
		sig := Signature(res, class)
		p, q := Derive(sig), Derive(strings.Clone(sig))
		if p != q {
			t.Fatalf("%s: derived %+v then %+v", sig, p, q)
		}
		distinct[p] = true
		if err := p.Validate(); err != nil {
			t.Fatalf("%s: derived parameters invalid: %v", sig, err)
		}
		r := randomRun(rng)
		a, b := p.Seconds(r).Total(), Default().For(res, class).Seconds(r).Total()
		if a != b || !(a > 0) || math.IsInf(a, 0) {
			t.Fatalf("%s: %v then %v", sig, a, b)
		}
	}
	if len(distinct) < 400 {
		t.Fatalf("only %d distinct parameter sets for 500 random signatures", len(distinct))
	}
}

// TestMonotone: with everything else the same, a run is never faster with
// more input or iterations, a busier agent, or its shuffle crossing more
// agents (same executors, same crowding), and never slower with more
// executors in the same proportions on the same agents.
func TestMonotone(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	sec := func(p Params, r Run) float64 { return p.Seconds(r).Total() }
	const eps = 1e-9
	for i := 0; i < 2000; i++ {
		res, class := randomApp(rng)
		p := Default().For(res, class)
		r := randomRun(rng)
		base := sec(p, r)

		more := r
		more.InputGB *= 1 + rng.Float64()
		if sec(p, more) <= base {
			t.Fatalf("%+v: more input not slower: %v -> %v", p, base, sec(p, more))
		}
		more = r
		more.Iterations++
		if sec(p, more) <= base {
			t.Fatalf("%+v: one more iteration not slower", p)
		}
		busy := r
		busy.BusiestLoad = min(1, r.BusiestLoad+rng.Float64())
		if sec(p, busy) < base-eps {
			t.Fatalf("%+v: busier agent faster: %v -> %v", p, base, sec(p, busy))
		}
		// k times the executors on the same agents, same proportions.
		k := 2 + rng.IntN(3)
		wide := r
		wide.PerAgent = nil
		for _, n := range r.PerAgent {
			wide.PerAgent = append(wide.PerAgent, k*n)
		}
		if sec(p, wide) > base+eps {
			t.Fatalf("%+v: %dx executors %v slower: %v -> %v", p, k, wide.PerAgent, base, sec(p, wide))
		}
		// Split an agent's executors onto a new agent, crowding aside.
		q := p
		q.Crowding = 0
		split := r
		split.PerAgent = append([]int(nil), r.PerAgent...)
		j := rng.IntN(len(split.PerAgent))
		if n := split.PerAgent[j]; n >= 2 {
			split.PerAgent[j] = n / 2
			split.PerAgent = append(split.PerAgent, n-n/2)
			if split.CrossShare() <= r.CrossShare() {
				t.Fatalf("split %v -> %v: cross share %v -> %v", r.PerAgent, split.PerAgent, r.CrossShare(), split.CrossShare())
			}
			if sec(q, split) < sec(q, r)-eps {
				t.Fatalf("%+v: spreading %v -> %v faster", q, r.PerAgent, split.PerAgent)
			}
		}
	}
}

// TestNoiseIsPerRun: the same run takes the same time; runs with other
// seeds spread around the formula by about the configured noise.
func TestNoiseIsPerRun(t *testing.T) {
	p := Derive(Signature("local:///a.jar", "A"))
	p.Noise = 0.1
	r := Run{InputGB: 4, Iterations: 1, Placement: Placement{PerAgent: []int{2, 2}, ExecutorCores: 2}}
	exact := p
	exact.Noise = 0
	want := exact.Seconds(r).Total()
	var sum, ss float64
	const n = 4000
	for i := 0; i < n; i++ {
		r.Seed = HashSeed(fmt.Sprint("task-", i))
		a, b := p.Seconds(r).Total(), p.Seconds(r).Total()
		if a != b {
			t.Fatalf("seed %d: %v then %v", r.Seed, a, b)
		}
		l := math.Log(a / want)
		sum += l
		ss += l * l
	}
	mean := sum / n
	sd := math.Sqrt(ss/n - mean*mean)
	if math.Abs(mean) > 0.01 || math.Abs(sd-0.1) > 0.01 {
		t.Fatalf("log noise mean %.4f sd %.4f, want ~0 and ~0.1", mean, sd)
	}
}

func TestParseFile(t *testing.T) {
	tr, err := Parse([]byte(`{"noise": 0, "signatures": [
		{"appResource": "local:///etl.jar", "mainClass": "com.example.ETL", "coreSecondsPerGB": 60, "scaling": 0.9},
		{"appResource": "local:///x.jar", "mainClass": "X"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p := tr.For("local:///etl.jar", "com.example.ETL")
	d := Derive(Signature("local:///etl.jar", "com.example.ETL"))
	if p.CoreSecondsPerGB != 60 || p.Scaling != 0.9 || p.Noise != 0 || p.StartupSeconds != d.StartupSeconds {
		t.Fatalf("listed signature: %+v (derived %+v)", p, d)
	}
	if q := tr.For("local:///other.jar", "Y"); q.Noise != 0 || q.CoreSecondsPerGB != Derive(Signature("local:///other.jar", "Y")).CoreSecondsPerGB {
		t.Fatalf("unlisted signature: %+v", q)
	}
	for _, c := range []struct{ in, field string }{
		{`{"signatures": [{"appResource": "a", "mainClass": "B", "scaling": 0}]}`, "signatures[0].scaling"},
		{`{"signatures": [{"appResource": "a", "mainClass": "B"}, {"appResource": "a", "mainClass": "B"}]}`, "signatures[1]"},
		{`{"signatures": [{"appResource": "a#b", "mainClass": "C"}, {"appResource": "a", "mainClass": "b#C"}]}`, "signatures[1].mainClass"},
		{`{"signatures": [{"appResource": "a", "mainClass": "B", "cpuBound": 2}]}`, "signatures[0].cpuBound"},
		{`{"noise": -1}`, "noise"},
		{`{"signatures": [{"app": "a"}]}`, "unknown field"},
		{`{"noise": 0} {"noise": 1}`, "more after the JSON object"},
		{`{"noise": 0} x`, "more after the JSON object"},
		{`{"noise": 0} }`, "more after the JSON object"},
	} {
		if _, err := Parse([]byte(c.in)); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: error %v, want one naming %s", c.in, err, c.field)
		}
	}
}
