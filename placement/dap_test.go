package placement

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"
)

// perCPU is the thesis cluster's price: $0.06 per cpu-hour.
const perCPU = 60000

// ag is an agent of cpus cores (4 GiB each) at $0.06 per cpu-hour.
func ag(id string, cpus, free float64, active bool) Agent {
	return Agent{ID: id, Hostname: id, CPUs: cpus, MemMB: cpus * 4096, FreeCPUs: free, FreeMemMB: free * 4096,
		PriceMicroUSDPerHour: int64(cpus) * perCPU, Active: active}
}

// TestDAPHandChecked checks dap's choice on small clusters against the
// scores of docs/placement.md computed by hand (prices in micro-dollars
// per hour; est = 100 s unless said).
func TestDAPHandChecked(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// a1, a2: active 8-cpu agents with 4 cpus free; a3 idle.
	leftovers := func(a3cpus float64) Snapshot {
		return Snapshot{Agents: []Agent{ag("a1", 8, 4, true), ag("a2", 8, 4, true), ag("a3", a3cpus, a3cpus, false)}}
	}
	job := func(app string) Demand {
		return Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second, App: app}
	}
	withDeadline := func(d Demand, left float64) Demand {
		d.Now = t0
		d.Deadline = t0.Add(time.Duration(left * float64(time.Second)))
		return d
	}
	withR := func(s Snapshot, r time.Duration) Snapshot {
		s.Agents = slices.Clone(s.Agents)
		s.Agents[0].RemainingActive = r
		return s
	}
	// e1: a 12-cpu agent, active with 8 cpus free; e2: an idle 8-cpu agent.
	ext := Snapshot{Agents: []Agent{ag("e1", 12, 8, true), ag("e2", 8, 8, false)}}
	// thesis14's shapes, all idle: two 12-cpu, two 8-cpu and a 4-cpu agent.
	sizes := Snapshot{Agents: []Agent{ag("b12", 12, 12, false), ag("c12", 12, 12, false), ag("m8a", 8, 8, false),
		ag("m8b", 8, 8, false), ag("s4", 4, 4, false)}}
	seven := job("")
	// b12, c12 idle; m8a, m8b and a 2-cpu s2 active with 10 s left.
	exactRest := Snapshot{Agents: []Agent{ag("b12", 12, 12, false), ag("c12", 12, 12, false), ag("m8a", 8, 8, true),
		ag("m8b", 8, 6, true), ag("s2", 2, 2, true)}}
	for i := 2; i < 5; i++ {
		exactRest.Agents[i].RemainingActive = 10 * time.Second
	}
	seven.Executors = 7
	tests := []struct {
		name  string
		s     Snapshot
		d     Demand
		want  asg
		exact asg
	}{
		{
			// 7 executors of 2 cpus, unknown type: no agent holds them
			// whole. On m8a+m8b (4+3; exact's plan, tied at 960000 with
			// b12+s4): r = 24/49, factor 0.93925 + 0.15 x 2.46939 =
			// 1.30966, own 840000 + spare 0.25 x 1/4 x 480000: score
			// 1139404. Fewest agents, b12+c12 (6+1): r = 12/49, factor
			// 1.19945, own 840000 + spare 0.25 x 10/12 x 720000: 1187456.
			// The same 6+1 with the rest on s4 (fewestRest): own 840000 +
			// spare 0.25 x 1/2 x 240000: 1043522, the lowest.
			name: "the rest goes on the best agent that holds it", s: sizes, d: seven,
			want: asg{"b12": 6, "s4": 1}, exact: asg{"m8a": 4, "m8b": 3},
		},
		{
			// The rest fits exactly on s2 (2 cpus, 1 executor): active
			// agents with 10 s left, so each executor there extends them
			// (DAPExtensionWeight x the rest x 0.9). b12+s2 (6+1): factor
			// 1.19945, own 720000 + 120000, no spare: 1007538; b12+m8a
			// pays m8a's extension 0.0625 x 3/4 x 480000 x 0.9 = 20250
			// more; exact's 4+3 on the active 8-cpu agents (price 0):
			// factor 1.30966 x (840000 + 0.0625 x 1/4 x 480000 x 0.9).
			name: "the rest on an agent that holds exactly the rest", s: exactRest, d: seven,
			want: asg{"b12": 6, "s2": 1}, exact: asg{"m8a": 4, "m8b": 3},
		},
		{
			// Sort, shuffle share 0.2, cpu-bound 0.3. On a1+a2: r = 0.5,
			// both agents full: factor = 0.8 x 1.045 + 0.2 x 2.5 = 1.336,
			// own = 2 x 0.5 x 480000 = 480000: score 641280. On a3 alone:
			// factor = 0.8 x 1.045 + 0.2 = 1.036, own 480000, no spare:
			// 497280. exact takes the free leftovers (price 0).
			name: "sort stays on one agent", s: leftovers(8), d: job(AppSort),
			want: asg{"a3": 4}, exact: asg{"a1": 2, "a2": 2},
		},
		{
			// Unknown type (0.15, 0.7): a1+a2 0.85 x 1.105 + 0.15 x 2.5 =
			// 1.31425 -> 630840; a3 1.08925 -> 522840.
			name: "unknown type values locality", s: leftovers(8), d: job(""),
			want: asg{"a3": 4}, exact: asg{"a1": 2, "a2": 2},
		},
		{
			// WordCount (0.01, 1.0) with a 12-cpu a3: a1+a2 factor 0.99 x
			// 1.15 + 0.01 x 2.5 = 1.1635, score 558480; a3 takes 2/3 of
			// it, u = 2/3: factor 0.99 x 1.05 + 0.01 = 1.0495, own 480000
			// + 0.25 x 1/3 x 720000 spare = 540000: score 566730.
			name: "wordcount fills the leftovers", s: leftovers(12), d: job(AppWordCount),
			want: asg{"a1": 2, "a2": 2}, exact: asg{"a1": 2, "a2": 2},
		},
		{
			// The same with 115 s left to the deadline: the cheapest plan
			// takes 116.35 s, a3 104.95 s (its price 720000 is within
			// exact's 0 + 2 x 8 cpus x 60000 = 960000).
			name: "deadline mode picks the plan that ends in time", s: leftovers(12), d: withDeadline(job(AppWordCount), 115),
			want: asg{"a3": 4}, exact: asg{"a1": 2, "a2": 2},
		},
		{
			name: "enough slack keeps the cheapest", s: leftovers(12), d: withDeadline(job(AppWordCount), 120),
			want: asg{"a1": 2, "a2": 2}, exact: asg{"a1": 2, "a2": 2},
		},
		{
			// Nothing ends in time (90 s left): the cheapest plan stays.
			name: "hopeless deadline keeps the cheapest", s: leftovers(12), d: withDeadline(job(AppWordCount), 90),
			want: asg{"a1": 2, "a2": 2}, exact: asg{"a1": 2, "a2": 2},
		},
		{
			// WordCount 4 x 2 cpus on e1 (full after it: factor 1.1485) or
			// e2 (full: 1.1485). Both own 480000. e1's remaining active
			// time unknown: no extension, a tie, exact's key (price 0)
			// picks e1.
			name: "active agent, remaining time unknown", s: ext, d: job(AppWordCount),
			want: asg{"e1": 4}, exact: asg{"e1": 4},
		},
		{
			// e1 stays active for 10 s only: the job (114.85 s) extends it
			// by 91.3%: spare 0.0625 x 1/3 x 720000 x 0.913 = 13695, score
			// 567009 > e2's 551280.
			name: "active agent about to go idle", s: withR(ext, 10*time.Second), d: job(AppWordCount),
			want: asg{"e2": 4}, exact: asg{"e1": 4},
		},
		{
			name: "active agent that stays active", s: withR(ext, 200*time.Second), d: job(AppWordCount),
			want: asg{"e1": 4}, exact: asg{"e1": 4},
		},
	}
	dap, _ := Get("dap")
	exact, _ := Get("exact")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl, err := dap.Place(tc.s, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if err := Check(tc.s, tc.d, pl); err != nil {
				t.Fatal(err)
			}
			if got := toAsg(pl); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("dap = %v, want %v", got, tc.want)
			}
			ex, err := exact.Place(tc.s, tc.d)
			if err != nil {
				t.Fatal(err)
			}
			if got := toAsg(ex); !reflect.DeepEqual(got, tc.exact) {
				t.Errorf("exact = %v, want %v", got, tc.exact)
			}
		})
	}
}

// TestDAPProperties: on thousands of random clusters and jobs (every app
// type, with and without tight deadlines), dap returns a valid plan or the
// same NoFit as every policy, never more than DAPPriceLimit, and its
// deadline mode is exercised (it changes the plan in some cases) within
// that bound.
func TestDAPProperties(t *testing.T) {
	seeds := 4000
	if testing.Short() {
		seeds = 400
	}
	dap, _ := Get("dap")
	exact, _ := Get("exact")
	apps := []string{"", AppWordCount, AppSort, AppPageRank, "something-else"}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	placed, speedChanged, aboveExact, p90Changed := 0, 0, 0, 0
	for seed := range seeds {
		r := rand.New(rand.NewPCG(uint64(seed), 1313))
		s := genSnapshot(r, 1+r.IntN(40))
		d := genDemand(r, 40)
		d.App = apps[r.IntN(len(apps))]
		if r.IntN(5) == 0 {
			d.EstimatedDuration = 0
		}
		want := oracleNoFit(s, d)
		pl, err := dap.Place(s, d)
		if want != nil {
			var nf *NoFit
			if !errors.As(err, &nf) || !reflect.DeepEqual(*nf, *want) {
				t.Fatalf("seed %d: got %+v, %v; want NoFit %+v", seed, pl, err, want)
			}
			continue
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		placed++
		check := func(what string, d Demand, pl Plan) {
			t.Helper()
			if err := Check(s, d, pl); err != nil {
				t.Fatalf("seed %d %s: invalid plan: %v", seed, what, err)
			}
			ex, err := exact.Place(s, d)
			if err != nil {
				t.Fatal(err)
			}
			limit, ok := DAPPriceLimit(s, d)
			if !ok || float64(pl.CostMicroUSDPerHour) > limit {
				t.Fatalf("seed %d %s: price %d above the bound %.0f (exact %d)", seed, what, pl.CostMicroUSDPerHour, limit, ex.CostMicroUSDPerHour)
			}
			if pl.CostMicroUSDPerHour < ex.CostMicroUSDPerHour {
				t.Fatalf("seed %d %s: cheaper than exact", seed, what)
			}
			if pl.CostMicroUSDPerHour > ex.CostMicroUSDPerHour {
				aboveExact++
			}
			again, _ := dap.Place(s, d)
			if !reflect.DeepEqual(again, pl) {
				t.Fatalf("seed %d %s: not deterministic", seed, what)
			}
		}
		check("cost mode", d, pl)
		// A deadline a little under the estimate: deadline mode looks
		// for a faster plan.
		if d.EstimatedDuration > 0 {
			dd := d
			dd.Now = t0
			dd.Deadline = t0.Add(time.Duration(float64(d.EstimatedDuration) * (1 + r.Float64()*0.2)))
			sp, err := dap.Place(s, dd)
			if err != nil {
				t.Fatalf("seed %d deadline mode: %v", seed, err)
			}
			check("deadline mode", dd, sp)
			if !reflect.DeepEqual(sp.Assignments, pl.Assignments) {
				speedChanged++
			}
			// The same deadline tested on a p90 up to 1.6 x the p50: the
			// deadline mode of DeadlineDuration, within the same bound.
			dd.DeadlineDuration = time.Duration(float64(d.EstimatedDuration) * (1 + r.Float64()*0.6))
			p90, err := dap.Place(s, dd)
			if err != nil {
				t.Fatalf("seed %d p90 deadline mode: %v", seed, err)
			}
			check("p90 deadline mode", dd, p90)
			if !reflect.DeepEqual(p90.Assignments, sp.Assignments) {
				p90Changed++
			}
		}
	}
	if placed < seeds/3 || speedChanged == 0 || aboveExact == 0 || p90Changed == 0 {
		t.Fatalf("%d placed, deadline mode changed %d plans (on a p90 %d), %d plans dearer than exact: the generator does not exercise dap",
			placed, speedChanged, p90Changed, aboveExact)
	}
	t.Logf("%d placed; deadline mode changed %d plans, a p90 %d more; %d plans dearer than exact (within the bound)", placed, speedChanged, p90Changed, aboveExact)
}

func TestDAPUsesDemandHints(t *testing.T) {
	// Bad demands and no-fits are the shared ones.
	dap, _ := Get("dap")
	if _, err := dap.Place(Snapshot{Agents: []Agent{ag("a", 4, 4, false)}}, Demand{Executors: 0, CPUs: 1}); !errors.Is(err, ErrBadDemand) {
		t.Fatalf("bad demand: %v", err)
	}
	if got := traitsOf("no-such-app"); got != DAPTraits[""] {
		t.Fatalf("unknown app traits %+v", got)
	}
	for _, app := range []string{AppWordCount, AppSort, AppPageRank} {
		if _, ok := DAPTraits[app]; !ok {
			t.Errorf("no traits for %s", app)
		}
	}
}

// TestExactIdleOnly: the idle-only plan read from exact's DP is as cheap
// as the exact DP run on the idle agents alone, and uses only idle agents.
func TestExactIdleOnly(t *testing.T) {
	for seed := range 2000 {
		r := rand.New(rand.NewPCG(uint64(seed), 77))
		s := genSnapshot(r, 1+r.IntN(30))
		d := genDemand(r, 30)
		p, err := prepare(s, d)
		if err != nil {
			continue
		}
		_, _, idle := p.solveExactIdle(p.pruned(), true)
		q := *p
		q.caps = slices.Clone(p.caps)
		for i := range q.caps {
			if s.Agents[i].Active {
				q.caps[i] = 0
			}
		}
		want, wantKey := q.solveExact(q.pruned())
		fitsIdle := p.sum-p.activeSum >= d.Executors
		if (idle != nil) != fitsIdle {
			t.Fatalf("seed %d: idle-only plan %v, idle agents hold the job: %v", seed, idle, fitsIdle)
		}
		if idle == nil {
			continue
		}
		if got := p.planKey(idle); got != wantKey || got.idle != got.n {
			t.Fatalf("seed %d: idle-only key %+v, want %+v (%v vs %v)", seed, got, wantKey, idle, want)
		}
		if err := Check(s, d, p.plan("x", "", idle)); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
}

// TestDAPLearnedTraits: a job of unknown type whose learned traits are a
// WordCount's is placed as a WordCount (on leftovers(12): a1+a2 score
// 558480 against a3's 566730, see TestDAPHandChecked), while without them
// it values locality as unknown jobs do (a3: 0.85 x 1.035 + 0.15 =
// 1.02975 x 540000 = 556065 against a1+a2's 1.31425 x 480000 = 630840);
// invalid learned traits fall back to the type's.
func TestDAPLearnedTraits(t *testing.T) {
	s := Snapshot{Agents: []Agent{ag("a1", 8, 4, true), ag("a2", 8, 4, true), ag("a3", 12, 12, false)}}
	d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, EstimatedDuration: 100 * time.Second}
	place := func(d Demand) asg {
		t.Helper()
		pl, err := dapPolicy{}.Place(s, d)
		if err != nil {
			t.Fatal(err)
		}
		out := asg{}
		for _, a := range pl.Assignments {
			out[a.AgentID] = a.Executors
		}
		return out
	}
	if got := place(d); !reflect.DeepEqual(got, asg{"a3": 4}) {
		t.Errorf("unknown type: %v", got)
	}
	wc := DAPTraits[AppWordCount]
	learned := d
	learned.Traits = &wc
	if got := place(learned); !reflect.DeepEqual(got, asg{"a1": 2, "a2": 2}) {
		t.Errorf("learned wordcount traits: %v", got)
	}
	for _, bad := range []AppTraits{{ShuffleShare: -0.1, CPUBound: 1}, {ShuffleShare: 0.01, CPUBound: 2}} {
		b := d
		b.Traits = &bad
		if got := place(b); !reflect.DeepEqual(got, asg{"a3": 4}) {
			t.Errorf("invalid traits %+v not ignored: %v", bad, got)
		}
	}
}
