package simulate

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sparkpack/sparkpack/clusterspec"
	"github.com/sparkpack/sparkpack/placement"
	"github.com/sparkpack/sparkpack/scheduler"
	"github.com/sparkpack/sparkpack/workload"
)

// TestClusterByHand: the simulated cluster's bookkeeping. Agents a (8
// cpus, 16 GiB, in the cloud by default) and b (4 cpus, 8 GiB, local); executors of 2 cpus and 1 GiB (+
// Spark's 384 MiB overhead: 1408 MiB each).
//
//	j1, 3 executors, a:2 b:1 -> a 4 cpus / 16384-2816 = 13568 MiB free, b 2 / 6784
//	j2, 2 executors on b: 4 cpus > 2 free: refused, nothing changes
//	j3, 1 executor on b: exactly the 2 cpus left: b 0 / 5376
//	release j1 -> a 8 / 16384, b 2 / 6784
func TestClusterByHand(t *testing.T) {
	spec, err := clusterspec.ParseBytes([]byte(`{"name": "two", "agents": [
		{"id": "a", "hostname": "a", "cpus": 8, "memMB": 16384, "pricePerHour": 0.48},
		{"id": "b", "hostname": "b", "cpus": 4, "memMB": 8192, "pricePerHour": 0.24, "location": "local"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	c := NewCluster(spec, NewVirtualClock(Epoch))
	ctx := context.Background()
	job := func(id string, e int) scheduler.Job {
		return scheduler.Job{Spec: scheduler.Spec{ID: id, Executors: e, ExecutorCores: 2, ExecutorMemoryMB: 1024}}
	}
	plan := func(as ...placement.Assignment) placement.Plan { return placement.Plan{Assignments: as} }
	free := func(want map[string][2]float64) {
		t.Helper()
		s, err := c.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range s.Agents {
			if w := want[a.ID]; a.FreeCPUs != w[0] || a.FreeMemMB != w[1] {
				t.Errorf("%s free %v cpus, %v MiB; want %v, %v", a.ID, a.FreeCPUs, a.FreeMemMB, w[0], w[1])
			}
		}
		if s.Agents[0].Location != placement.LocationCloud || s.Agents[1].Location != placement.LocationLocal {
			t.Errorf("locations %q, %q; want cloud (the default), local", s.Agents[0].Location, s.Agents[1].Location)
		}
	}
	if err := c.Apply(ctx, job("j1", 3), plan(placement.Assignment{AgentID: "a", Executors: 2}, placement.Assignment{AgentID: "b", Executors: 1})); err != nil {
		t.Fatal(err)
	}
	free(map[string][2]float64{"a": {4, 13568}, "b": {2, 6784}})
	want := []workload.AgentShare{{Executors: 2, CPUs: 8, UsedCPUs: 4}, {Executors: 1, CPUs: 4, UsedCPUs: 2}}
	if got := c.Shares("j1"); !reflect.DeepEqual(got, want) {
		t.Errorf("shares %+v, want %+v", got, want)
	}
	if err := c.Apply(ctx, job("j2", 2), plan(placement.Assignment{AgentID: "b", Executors: 2})); err == nil {
		t.Error("a plan that does not fit was applied")
	}
	free(map[string][2]float64{"a": {4, 13568}, "b": {2, 6784}})
	// 2 executors of 1 cpu and 8 GiB (+10%: 9011 MiB each) on a: the cpus
	// fit, 18022 MiB do not.
	big := scheduler.Job{Spec: scheduler.Spec{ID: "j4", Executors: 2, ExecutorCores: 1, ExecutorMemoryMB: 8192}}
	if err := c.Apply(ctx, big, plan(placement.Assignment{AgentID: "a", Executors: 2})); err == nil {
		t.Error("a plan short of memory was applied")
	}
	if err := c.Apply(ctx, job("j3", 1), plan(placement.Assignment{AgentID: "b", Executors: 1})); err != nil {
		t.Fatalf("an exact fit refused: %v", err)
	}
	free(map[string][2]float64{"a": {4, 13568}, "b": {0, 5376}})
	if err := c.Release(ctx, "j1"); err != nil {
		t.Fatal(err)
	}
	free(map[string][2]float64{"a": {8, 16384}, "b": {2, 6784}})
}

// TestCommandBounds: the flags' bounds, inclusive where the help says so:
// --deadline-fraction in [0, 1], --preempt-max-share in (0, 1], --scale
// and --slack > 0; without --hour (or --hours, --from) the whole trace.
func TestCommandBounds(t *testing.T) {
	base := []string{"--workload", "thesis", "--jobs", "2", "--policies", "bfd", "--format", "json"}
	for _, args := range [][]string{
		{"--hour", "0", "--deadline-fraction", "0"},
		{"--hour", "0", "--deadline-fraction", "1"},
		{"--hour", "0", "--preemption", "mdf", "--preempt-max-share", "1"},
	} {
		if _, stderr, err := runCommand(t, append(append([]string{}, base...), args...)...); err != nil {
			t.Errorf("%v refused: %v %s", args, err, stderr)
		}
	}
	for _, args := range [][]string{{"--scale", "0"}, {"--preempt-max-share", "1.5"}, {"--deadline-fraction", "-0.1"}} {
		if _, _, err := runCommand(t, append(append([]string{"--quiet"}, base...), args...)...); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
	// No window flag: the whole trace, whose first two jobs are hour 0's.
	all, _, err := runCommand(t, append([]string{"--quiet"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	hour0, _, err := runCommand(t, append([]string{"--quiet", "--hour", "0"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	hour1, _, err := runCommand(t, append([]string{"--quiet", "--hour", "1"}, base...)...)
	if err != nil {
		t.Fatal(err)
	}
	// The scheduling delays are real time: left out.
	results := func(out string) []Result {
		var rs []Result
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatal(err)
		}
		for i := range rs {
			rs[i].SchedDelayMeanMS, rs[i].SchedDelayP99MS = 0, 0
		}
		return rs
	}
	if a, h0, h1 := results(all), results(hour0), results(hour1); !reflect.DeepEqual(a, h0) || reflect.DeepEqual(a, h1) {
		t.Errorf("without a window flag the run is not the whole trace's first jobs:\n%+v\nhour 0:\n%+v", a, h0)
	}
}
