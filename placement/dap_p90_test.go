package placement

import (
	"reflect"
	"testing"
	"time"
)

// TestDAPDeadlineOnP90ByHand: dap prices a plan on the p50
// (EstimatedDuration) and tests the deadline on the p90 (DeadlineDuration):
// the cheapest plan that ends in time on the p90; if none, the cheapest,
// even when another would end in time on the p50. The cluster of
// TestDAPDeadlineKeepsExactByHand, a WordCount of 4 executors of 2 cpus
// and 8 GiB; its candidates, cheapest first (their scores do not depend on
// the run time: no agent has a RemainingActive):
//
//	i2 + i3: factor 1.1635, score 116,350
//	a1 + a2: factor 1.015,  score 487,200
//	x:       factor 1,      score 562,500
func TestDAPDeadlineOnP90ByHand(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s := dapDeadlineCluster()
	cheapest, exacts, single := asg{"i2": 2, "i3": 2}, asg{"a1": 2, "a2": 2}, asg{"x": 4}
	for _, tc := range []struct {
		name          string
		p50, p90      float64 // seconds; p90 0: unset
		left          float64 // seconds to the deadline
		want          asg
		wantOldOnP50  bool // the choice dap made when it tested the deadline on EstimatedDuration too
		wantOldOnBoth bool // ... and the same with the p90 as EstimatedDuration
	}{
		// p90 unset: the deadline is tested on EstimatedDuration, as before.
		{"p90 unset, cheapest late", 100, 0, 110, exacts, true, true},
		{"p90 unset, cheapest in time", 100, 0, 120, cheapest, true, true},
		// i2 + i3 ends at 104.7 s on the p50 but 110.5 s on the p90: late.
		{"cheapest late on the p90 only", 90, 95, 110, exacts, false, true},
		// On the p90 (109.5 s) a1 + a2 ends at 111.1 s, x at 109.5 s.
		{"only the fastest meets the p90", 100, 109.5, 110, single, false, true},
		// On the p90 (120 s) none ends in time (x at 120 s): the
		// cheapest, though on the p50 a1 + a2 (101.5 s) and x (100 s) do.
		{"none meets the p90: the cheapest", 100, 120, 110, cheapest, false, true},
		// ... the cheapest itself ends in time on the p50 (116.35 s).
		{"none meets the p90: the cheapest meets the p50", 100, 120, 117, cheapest, true, true},
		// Nothing ends in time even on the p50 (x at 100 s): the cheapest.
		{"none meets either: the cheapest", 100, 120, 99, cheapest, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 8192, App: AppWordCount,
				EstimatedDuration: time.Duration(tc.p50 * float64(time.Second)),
				DeadlineDuration:  time.Duration(tc.p90 * float64(time.Second)),
				Now:               t0, Deadline: t0.Add(time.Duration(tc.left * float64(time.Second)))}
			if got := dapPlace(t, s, d); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("dap = %v, want %v", got, tc.want)
			}
			// The rule is not what testing one run time alone gives: the
			// p50 alone or the p90 alone choose otherwise where the case
			// says so.
			for _, alone := range []struct {
				est  float64
				same bool
			}{{tc.p50, tc.wantOldOnP50}, {max(tc.p50, tc.p90), tc.wantOldOnBoth}} {
				one := d
				one.EstimatedDuration, one.DeadlineDuration = time.Duration(alone.est*float64(time.Second)), 0
				if got := dapPlace(t, s, one); reflect.DeepEqual(got, tc.want) != alone.same {
					t.Errorf("on %g s alone: dap = %v; want the same as the rule's %v: %v", alone.est, got, tc.want, alone.same)
				}
			}
		})
	}
}

// TestDAPPricesOnP50ByHand: the run time that prices a plan (how long it
// keeps an active agent active) is EstimatedDuration, not DeadlineDuration.
// A WordCount of 4 executors of 2 cpus, no deadline, on e1 (active 12
// cpus, 8 free, active for 110 s more) or e2 (idle 8 cpus): both factor
// 1.1485, own 480,000 (e2: 551,280). On the p50 (90 s) the job ends at
// 103.4 s on e1: no extension, a tie that exact's key (price 0) gives to
// e1. On the p90 (100 s) it would end at 114.85 s, extending e1 by 4.2%:
// spare 0.0625 x 1/3 x 720,000 x 0.042, score 552,007 > 551,280: e2.
func TestDAPPricesOnP50ByHand(t *testing.T) {
	e1 := ag("e1", 12, 8, true)
	e1.RemainingActive = 110 * time.Second
	s := Snapshot{Agents: []Agent{e1, ag("e2", 8, 8, false)}}
	d := Demand{JobID: "j", Executors: 4, CPUs: 2, MemMB: 1024, App: AppWordCount,
		EstimatedDuration: 90 * time.Second, DeadlineDuration: 100 * time.Second}
	for _, tc := range []struct {
		p50  time.Duration
		want asg
	}{{90 * time.Second, asg{"e1": 4}}, {100 * time.Second, asg{"e2": 4}}} {
		d.EstimatedDuration = tc.p50
		if got := dapPlace(t, s, d); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("p50 %v, p90 %v: dap = %v, want %v", tc.p50, d.DeadlineDuration, got, tc.want)
		}
	}
}
