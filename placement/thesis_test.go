package placement

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// fig42 is a Figure 4.2/4.3-style cluster: four agents of 2, 4, 6 and 8
// cores (4 GiB per core), priced per core ($0.03 per core-hour).
func fig42(free [4]float64, active [4]bool) Snapshot {
	var s Snapshot
	for i, c := range []float64{2, 4, 6, 8} {
		s.Agents = append(s.Agents, Agent{
			ID: []string{"a2", "a4", "a6", "a8"}[i], CPUs: c, MemMB: c * 4096,
			FreeCPUs: free[i], FreeMemMB: free[i] * 4096,
			PriceMicroUSDPerHour: int64(c) * 30000, Active: active[i],
		})
	}
	return s
}

// asg is a compact plan: agent id -> executors.
type asg map[string]int

func toAsg(pl Plan) asg {
	out := asg{}
	for _, a := range pl.Assignments {
		out[a.AgentID] = a.Executors
	}
	return out
}

func TestThesisFigureCluster(t *testing.T) {
	allIdle := fig42([4]float64{2, 4, 6, 8}, [4]bool{})
	tests := []struct {
		name string
		s    Snapshot
		d    Demand
		want map[string]asg // policy -> assignment
		cost map[string]int64
	}{
		{
			// All idle; 3 executors of 2 cores. The cheapest covers are
			// {a6} and {a2, a4} (both $0.18/h): exact and ilp take the
			// single agent; bfd and firstfit activate the cheapest agent
			// that fits one executor first.
			name: "all idle, 3x2 cores",
			s:    allIdle,
			d:    Demand{Executors: 3, CPUs: 2, MemMB: 2048},
			want: map[string]asg{
				"exact": {"a6": 3}, "ilp": {"a6": 3},
				"bfd": {"a2": 1, "a4": 2}, "firstfit": {"a2": 1, "a4": 2},
				"spread": {"a8": 1, "a6": 1, "a4": 1}, "consolidate": {"a8": 3},
			},
			cost: map[string]int64{"exact": 180000, "ilp": 180000, "bfd": 180000, "spread": 540000, "consolidate": 240000},
		},
		{
			// All active and partly used (free 1/3/2/5 cores): nothing
			// costs extra. bfd fills by ascending RA (a2, a6, a4); exact
			// uses the fewest agents (a8 alone); spread goes round-robin
			// by free cores.
			name: "all active, 4x1 core",
			s:    fig42([4]float64{1, 3, 2, 5}, [4]bool{true, true, true, true}),
			d:    Demand{Executors: 4, CPUs: 1, MemMB: 1024},
			want: map[string]asg{
				"bfd": {"a2": 1, "a6": 2, "a4": 1}, "exact": {"a8": 4}, "ilp": {"a8": 4},
				"spread": {"a8": 1, "a4": 1, "a6": 1, "a2": 1}, "consolidate": {"a8": 4},
			},
			cost: map[string]int64{"bfd": 0, "exact": 0, "ilp": 0, "spread": 0},
		},
		{
			// a2 and a4 active with 2 free cores each hold 2 of 5
			// executors; bfd then activates the cheapest idle agent that
			// fits one (a6, 3 executors). That is also optimal.
			name: "mixed, 5x2 cores",
			s:    fig42([4]float64{2, 2, 6, 8}, [4]bool{true, true, false, false}),
			d:    Demand{Executors: 5, CPUs: 2, MemMB: 2048},
			want: map[string]asg{
				"bfd": {"a2": 1, "a4": 1, "a6": 3}, "exact": {"a2": 1, "a4": 1, "a6": 3},
				"ilp": {"a2": 1, "a4": 1, "a6": 3}, "consolidate": {"a8": 4, "a6": 1},
			},
			cost: map[string]int64{"bfd": 180000, "exact": 180000, "ilp": 180000, "consolidate": 420000},
		},
	}
	pols := allPolicies(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for name, p := range pols {
				pl, err := p.Place(tc.s, tc.d)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if err := Check(tc.s, tc.d, pl); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if w, ok := tc.want[name]; ok && !reflect.DeepEqual(toAsg(pl), w) {
					t.Errorf("%s: placed %v, want %v", name, toAsg(pl), w)
				}
				if c, ok := tc.cost[name]; ok && pl.CostMicroUSDPerHour != c {
					t.Errorf("%s: cost %d, want %d", name, pl.CostMicroUSDPerHour, c)
				}
			}
		})
	}
}

func TestThesisFigureNoFit(t *testing.T) {
	s := fig42([4]float64{2, 4, 6, 8}, [4]bool{})
	tests := []struct {
		name string
		d    Demand
		want NoFit
	}{
		// 20 cores free, 20 needed, but 4-core executors fit 0/1/1/2 times.
		{"fragmented", Demand{Executors: 5, CPUs: 4, MemMB: 1024}, NoFit{Resource: "agent", MaxPerAgent: 2, Placeable: 4}},
		{"short of cpus", Demand{Executors: 11, CPUs: 2, MemMB: 1024}, NoFit{Resource: "cpus", Short: 2, MaxPerAgent: 4, Placeable: 10}},
		{"short of mem", Demand{Executors: 3, CPUs: 1, MemMB: 30000}, NoFit{Resource: "mem", Short: 90000 - 81920, MaxPerAgent: 1, Placeable: 1}},
		{"never", Demand{Executors: 1, CPUs: 9, MemMB: 1024}, NoFit{Resource: "agent", Never: true}},
		{"never, short", Demand{Executors: 3, CPUs: 9, MemMB: 1024}, NoFit{Resource: "cpus", Short: 7, Never: true}},
	}
	for _, tc := range tests {
		for name, p := range allPolicies(t) {
			_, err := p.Place(s, tc.d)
			var nf *NoFit
			if !errors.As(err, &nf) || *nf != tc.want {
				t.Errorf("%s/%s: err %v (%+v), want %+v", tc.name, name, err, nf, tc.want)
			}
		}
	}
	// A partly used cluster is not "never": the job fits an empty agent.
	busy := fig42([4]float64{0, 0, 1, 1}, [4]bool{true, true, true, true})
	_, err := Get1(t, "bfd").Place(busy, Demand{Executors: 1, CPUs: 8, MemMB: 1})
	var nf *NoFit
	if !errors.As(err, &nf) || nf.Never || nf.Resource != "cpus" || nf.Short != 6 {
		t.Errorf("busy cluster: %+v", nf)
	}
	// No agents at all (e.g. before the first offers) is not "never".
	_, err = Get1(t, "exact").Place(Snapshot{}, Demand{Executors: 1, CPUs: 1, MemMB: 1})
	if !errors.As(err, &nf) || nf.Never {
		t.Errorf("empty cluster: %+v", nf)
	}
}

func Get1(t *testing.T, name string) Policy {
	p, ok := Get(name)
	if !ok {
		t.Fatalf("no policy %q", name)
	}
	return p
}

func TestGIO(t *testing.T) {
	mk := func(id string, loc Location, active bool, remain time.Duration, price int64) Agent {
		return Agent{ID: id, CPUs: 8, MemMB: 32768, FreeCPUs: 8, FreeMemMB: 32768, Location: loc,
			Active: active, RemainingActive: remain, PriceMicroUSDPerHour: price}
	}
	s := Snapshot{Agents: []Agent{
		mk("cloud-idle-cheap", LocationCloud, false, 0, 100000),
		mk("cloud-active-long", LocationCloud, true, 3*time.Hour, 500000),
		mk("cloud-active-short", LocationCloud, true, 10*time.Minute, 480000),
		mk("local-1", LocationLocal, false, 0, 0),
		mk("local-2", LocationLocal, true, 0, 0),
	}}
	gio := Get1(t, "gio")
	// 4 executors of 4 cores: the two local agents hold them.
	pl, err := gio.Place(s, Demand{Executors: 4, CPUs: 4, MemMB: 1024, EstimatedDuration: time.Hour})
	if err != nil || !reflect.DeepEqual(toAsg(pl), asg{"local-2": 2, "local-1": 2}) {
		t.Fatalf("local: %v %v", toAsg(pl), err)
	}
	// 8 executors: local first (free), then the agent that stays active
	// anyway (extra cost 0), then extra cost: cheap idle $0.10 * 1h <
	// short-lived active $0.48 * 50min.
	pl, err = gio.Place(s, Demand{Executors: 9, CPUs: 4, MemMB: 1024, EstimatedDuration: time.Hour})
	want := asg{"local-2": 2, "local-1": 2, "cloud-active-long": 2, "cloud-idle-cheap": 2, "cloud-active-short": 1}
	if err != nil || !reflect.DeepEqual(toAsg(pl), want) {
		t.Fatalf("hybrid: %v %v, want %v", toAsg(pl), err, want)
	}
	if err := Check(s, Demand{Executors: 9, CPUs: 4, MemMB: 1024}, pl); err != nil {
		t.Fatal(err)
	}
}

// TestBFDThresholds checks that alpha/beta decide bfd's order: RA weighs
// free cpus against free memory.
func TestBFDThresholds(t *testing.T) {
	s := Snapshot{Agents: []Agent{
		{ID: "cpu-rich", CPUs: 8, MemMB: 8192, FreeCPUs: 6, FreeMemMB: 2048, Active: true},
		{ID: "mem-rich", CPUs: 8, MemMB: 8192, FreeCPUs: 2, FreeMemMB: 6144, Active: true},
	}}
	d := Demand{Executors: 1, CPUs: 1, MemMB: 1024}
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{}, "mem-rich"},                      // 0.8/0.2: cpu-heavy RA, mem-rich has less
		{Options{Alpha: 1}, "mem-rich"},              // cpus only
		{Options{Alpha: 0.1, Beta: 0.9}, "cpu-rich"}, // memory dominates
	} {
		p, err := New("bfd", tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Place(s, d)
		if err != nil || len(pl.Assignments) != 1 || pl.Assignments[0].AgentID != tc.want {
			t.Errorf("%+v: %+v %v, want %s", tc.opts, pl.Assignments, err, tc.want)
		}
	}
}
