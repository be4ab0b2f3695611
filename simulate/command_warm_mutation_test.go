package simulate

// --warm-history through the command (command.go; issue 33).

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/workload"
)

// TestCommandWarmHistory: with --warm-history the command runs as Run
// with the trace's hour before the window as the forecast's history (with
// --sample, drawn at the same N from that hour): hour 1's results equal
// Run's with hour 0 so built, and differ from Run's without a history.
func TestCommandWarmHistory(t *testing.T) {
	trace := tracePath(t)
	all := loadTrace(t)
	dap, _ := LookupPolicy("dap")
	type outcome struct {
		bill, jct float64
		missed    int
	}
	run := func(wl, past []workload.Job) outcome {
		r, err := Run(context.Background(), Options{Workload: wl, From: time.Hour, Cluster: clusterspec.Thesis14(), Policy: dap,
			DeadlineFraction: DefaultDeadlineFraction, Slack: DefaultSlack, Seed: 1, BootTime: time.Minute, PowerOffAfter: 2 * time.Minute,
			WarmPool: true, WarmHistory: past, Estimates: EstimatesOracle, EstimateError: 0.5})
		if err != nil {
			t.Fatal(err)
		}
		r = roundedResult(r) // as the JSON prints it
		return outcome{r.BillUSD, r.JCTMeanS, r.DeadlineMissed}
	}
	command := func(extra ...string) outcome {
		out, _, err := runCommand(t, append([]string{"--trace", trace, "--quiet", "--hour", "1", "--policies", "dap", "--format", "json",
			"--power-off-after", "2m", "--warm-pool", "--warm-history"}, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		var rs []Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 1 {
			t.Fatalf("%v\n%s", err, out)
		}
		return outcome{rs[0].BillUSD, rs[0].JCTMeanS, rs[0].DeadlineMissed}
	}
	m := workload.DefaultModel
	hour0, hour1 := workload.Window(all, 0, time.Hour), workload.Window(all, time.Hour, 2*time.Hour)
	for _, n := range []int{0, 20} {
		wl, past := hour1, hour0
		var extra []string
		if n > 0 {
			wl, past = SampleArrivals(hour1, n, 1), SampleArrivals(hour0, n, 1)
			extra = []string{"--sample", strconv.Itoa(n)}
		}
		with, without := run(m.FromTrace(wl), m.FromTrace(past)), run(m.FromTrace(wl), nil)
		if with == without {
			t.Fatalf("sample %d: the history changes nothing (%+v): this test cannot tell", n, with)
		}
		if got := command(extra...); got != with {
			t.Errorf("sample %d: the command %+v, Run with the hour before %+v (without it %+v)", n, got, with, without)
		}
	}
}
