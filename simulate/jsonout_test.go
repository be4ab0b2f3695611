package simulate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Tests of what --format json and --job-log's JSON lines print
// (2026-11-27 review): no deadline as null, not 0; the run named in a
// single run's JSON; dollars and seconds without float noise.

// decodeNumbers decodes JSON keeping each number's text (json.Number).
func decodeNumbers(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%v: %.200s", err, b)
	}
	return v
}

// jsonLines decodes a JSON lines file, numbers as text.
func jsonLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, decodeNumbers(t, sc.Bytes()).(map[string]any))
	}
	return out
}

// TestJobLogJSONNoDeadlineIsNull: a job without a deadline had deadline_s
// and slack_s 0 in the JSON lines (a deadline at the window's start, and
// no slack), where the CSV leaves them empty; they are null, the keys
// still there. A deadline job's are numbers.
func TestJobLogJSONNoDeadlineIsNull(t *testing.T) {
	log := filepath.Join(t.TempDir(), "jobs.jsonl")
	if _, _, err := runCommand(t, "--trace", tracePath(t), "--quiet", "--hour", "0", "--jobs", "20", "--deadline-fraction", "0.5",
		"--policies", "bfd", "--format", "json", "--job-log", log); err != nil {
		t.Fatal(err)
	}
	with, without := 0, 0
	for _, l := range jsonLines(t, log) {
		for _, k := range []string{"deadline_s", "slack_s"} {
			v, ok := l[k]
			switch {
			case !ok:
				t.Errorf("%s: no key %s: %v", l["id"], k, l)
			case l["deadline"] == true:
				if _, num := v.(json.Number); !num {
					t.Errorf("%s: a deadline job's %s is %v, want a number", l["id"], k, v)
				}
			case v != nil:
				t.Errorf("%s: a job without a deadline has %s %v, want null", l["id"], k, v)
			}
		}
		if l["deadline"] == true {
			with++
		} else {
			without++
		}
	}
	if with == 0 || without == 0 {
		t.Fatalf("%d jobs with a deadline, %d without: want both", with, without)
	}
}

// TestJSONNamesTheRun: a single run's JSON (one object per policy) had
// neither window nor seed, and no JSON said whether power management was
// on; each object now names its window, seed and power_off_after_s (0:
// off), and so does each run of the several-run JSON.
func TestJSONNamesTheRun(t *testing.T) {
	trace := tracePath(t)
	for _, c := range []struct {
		power string
		want  string
	}{{"0", "0"}, {"2m", "120"}} {
		out, _, err := runCommand(t, "--trace", trace, "--quiet", "--hour", "5", "--jobs", "5", "--seed", "3", "--policies", "bfd,dap",
			"--power-off-after", c.power, "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		rs, _ := decodeNumbers(t, []byte(out)).([]any)
		if len(rs) != 2 {
			t.Fatalf("--power-off-after %s: %d results, want 2: %s", c.power, len(rs), out)
		}
		for _, r := range rs {
			m := r.(map[string]any)
			if m["window"] != "hour 5" || m["seed"] != json.Number("3") || m["power_off_after_s"] != json.Number(c.want) {
				t.Errorf("--power-off-after %s, %v: window %v, seed %v, power_off_after_s %v; want hour 5, 3, %s",
					c.power, m["policy"], m["window"], m["seed"], m["power_off_after_s"], c.want)
			}
		}
		out, _, err = runCommand(t, "--trace", trace, "--quiet", "--hours", "5,6", "--jobs", "5", "--policies", "bfd",
			"--power-off-after", c.power, "--format", "json")
		if err != nil {
			t.Fatal(err)
		}
		runs, _ := decodeNumbers(t, []byte(out)).([]any)
		if len(runs) != 2 {
			t.Fatalf("%d runs, want 2", len(runs))
		}
		for _, run := range runs {
			if m := run.(map[string]any); m["power_off_after_s"] != json.Number(c.want) {
				t.Errorf("--power-off-after %s, %v: power_off_after_s %v, want %s", c.power, m["window"], m["power_off_after_s"], c.want)
			}
		}
	}
}

// decimalsOver walks v and reports every number under a key with a
// precision (precision returns -1 for none) that has more decimals than
// it allows.
func decimalsOver(v any, path string, precision func(key string) int, bad *[]string, seen map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if n, ok := e.(json.Number); ok {
				if p := precision(k); p >= 0 {
					seen[k] = true
					s := string(n)
					if strings.ContainsAny(s, "eE") {
						*bad = append(*bad, path+"."+k+" = "+s)
					} else if _, frac, ok := strings.Cut(s, "."); ok && len(frac) > p {
						*bad = append(*bad, path+"."+k+" = "+s)
					}
				}
				continue
			}
			decimalsOver(e, path+"."+k, precision, bad, seen)
		}
	case []any:
		for _, e := range x {
			decimalsOver(e, path+"[]", precision, bad, seen)
		}
	}
}

// TestJSONDollarsAndSecondsAreRounded: --format json and the JSON lines
// printed float noise (0.054934399999999994); dollars carry at most 6
// decimals, seconds 6 (a microsecond), milliseconds 3, cpu-hours 9 and
// the job log's cpus 6, in a run with power management and teams (every
// such key present).
func TestJSONDollarsAndSecondsAreRounded(t *testing.T) {
	log := filepath.Join(t.TempDir(), "jobs.jsonl")
	trace := tracePath(t)
	args := []string{"--trace", trace, "--quiet", "--workload", "thesis", "--hour", "5", "--sample", "20",
		"--policies", "fifo-consolidate,dap", "--preemption", "none,srt", "--power-off-after", "30s", "--team-mix", "a=0.5,b=0.5", "--format", "json"}
	results := func(key string) int {
		switch {
		case key == "cpu_hours":
			return 9
		case strings.HasSuffix(key, "_usd"), strings.HasSuffix(key, "_s"):
			return 6
		case strings.HasSuffix(key, "_ms"):
			return 3
		}
		return -1
	}
	logged := func(key string) int {
		if strings.HasSuffix(key, "_s") || strings.Contains(key, "cpus") {
			return 6
		}
		return -1
	}
	var bad []string
	seen := map[string]bool{}
	one, _, err := runCommand(t, append(args, "--seed", "4", "--job-log", log)...)
	if err != nil {
		t.Fatal(err)
	}
	decimalsOver(decodeNumbers(t, []byte(one)), "json", results, &bad, seen)
	several, _, err := runCommand(t, append(args, "--seeds", "4,5")...)
	if err != nil {
		t.Fatal(err)
	}
	decimalsOver(decodeNumbers(t, []byte(several)), "runs", results, &bad, seen)
	for _, l := range jsonLines(t, log) {
		decimalsOver(l, "jsonl", logged, &bad, seen)
	}
	for _, b := range bad {
		t.Errorf("too many decimals: %s", b)
	}
	for _, k := range []string{"total_cost_usd", "bill_usd", "cost_usd", "cpu_hours", "sched_delay_p99_ms", "jct_mean_s", "lost_work_s",
		"wait_p95_s", "submit_s", "slack_s", "free_cpus_at_arrival", "agent_used_cpus"} {
		if !seen[k] {
			t.Errorf("no %s in the output: the test checks nothing of it", k)
		}
	}
}

// TestRoundedResultByHand: the rounding keeps each value to its precision
// (half away from zero) and rounds nothing else; the tables' result is
// not touched (a copy is rounded, its teams too).
func TestRoundedResultByHand(t *testing.T) {
	r := Result{Policy: "dap", Jobs: 3, TotalCostUSD: 0.054934399999999994, BillUSD: 1.0000005, AlwaysOnUSD: 2.0000004,
		JCTMeanS: 16.749824561403514, JCTP95S: 1.0000004, SchedDelayMeanMS: 0.12345, SchedDelayP99MS: 9.99951, AgentActiveS: 3599.9999999999995,
		WaitMeanS: 1.2345675, WaitP95S: 2.00000049, MakespanS: 7.0000006, LostWorkS: 0.0000006, LostCPUS: 5.5555555,
		DeadlineViolationPct: 33.333333333333336, Stretch: 1.23456789, MeanOnCPUs: 4.123456789,
		Teams: []TeamResult{{Team: "a", CostUSD: 0.1234565, WaitMeanS: 1.0000005, WaitP95S: 2.0000004, CPUHours: 0.3333333333333, DeadlineMetPct: 66.66666666666667}}}
	got := roundedResult(r)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"total_cost_usd", got.TotalCostUSD, 0.054934}, {"bill_usd", got.BillUSD, 1.000001}, {"always_on_usd", got.AlwaysOnUSD, 2},
		{"jct_mean_s", got.JCTMeanS, 16.749825}, {"jct_p95_s", got.JCTP95S, 1}, {"sched_delay_mean_ms", got.SchedDelayMeanMS, 0.123},
		{"sched_delay_p99_ms", got.SchedDelayP99MS, 10}, {"agent_active_s", got.AgentActiveS, 3600}, {"wait_mean_s", got.WaitMeanS, 1.234568},
		{"wait_p95_s", got.WaitP95S, 2}, {"makespan_s", got.MakespanS, 7.000001}, {"lost_work_s", got.LostWorkS, 0.000001}, {"lost_cpu_s", got.LostCPUS, 5.555556},
		{"deadline_violation_pct", got.DeadlineViolationPct, 33.333333333333336}, {"stretch", got.Stretch, 1.23456789}, {"mean_on_cpus", got.MeanOnCPUs, 4.123456789},
		{"teams cost_usd", got.Teams[0].CostUSD, 0.123457}, {"teams wait_mean_s", got.Teams[0].WaitMeanS, 1.000001}, {"teams wait_p95_s", got.Teams[0].WaitP95S, 2},
		{"teams cpu_hours", got.Teams[0].CPUHours, 0.333333333}, {"teams deadline_met_pct", got.Teams[0].DeadlineMetPct, 66.66666666666667},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.TotalCostUSD != 0.054934399999999994 || r.Teams[0].CostUSD != 0.1234565 {
		t.Errorf("the result itself was rounded: %v, team %v", r.TotalCostUSD, r.Teams[0].CostUSD)
	}
	if got.Policy != "dap" || got.Jobs != 3 {
		t.Errorf("%+v", got)
	}
}

// TestRoundedRecordByHand: a job log record's seconds and cpus are
// rounded to 6 decimals, a deadline's and slack's too (nil stays nil),
// and the record itself is not touched.
func TestRoundedRecordByHand(t *testing.T) {
	d, sl := 160.0000004, 50.0000006
	r := JobRecord{ID: "j", Executors: 3, CPUs: 6, SubmitS: 0.1 + 0.2, StartS: 12.0000005, EndS: 3599.9999999999995, WaitS: 1.0000004,
		RunS: 2.0000006, ProfiledS: 3.0000004, EstimateS: 4.0000006, Noise: 1.23456789, FreeCPUs: 3.9999999999, MaxAgentFreeCPUs: 1.0000006,
		DeadlineS: &d, SlackS: &sl, Shares: []JobShare{{Executors: 3, AgentCPUs: 7.9999999999, AgentUsedCPUs: 2.0000006}}}
	got := roundedRecord(r)
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"submit_s", got.SubmitS, 0.3}, {"start_s", got.StartS, 12.000001}, {"end_s", got.EndS, 3600}, {"wait_s", got.WaitS, 1},
		{"run_s", got.RunS, 2.000001}, {"profiled_s", got.ProfiledS, 3}, {"estimate_s", got.EstimateS, 4.000001}, {"noise", got.Noise, 1.23456789},
		{"free_cpus_at_arrival", got.FreeCPUs, 4}, {"max_agent_free_cpus", got.MaxAgentFreeCPUs, 1.000001},
		{"deadline_s", *got.DeadlineS, 160}, {"slack_s", *got.SlackS, 50.000001},
		{"agent_cpus", got.Shares[0].AgentCPUs, 8}, {"agent_used_cpus", got.Shares[0].AgentUsedCPUs, 2.000001},
	} {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	if d != 160.0000004 || sl != 50.0000006 || r.Shares[0].AgentCPUs != 7.9999999999 || r.SubmitS != 0.1+0.2 {
		t.Errorf("the record itself was rounded: %v %v %v %v", d, sl, r.Shares[0].AgentCPUs, r.SubmitS)
	}
	if got.Executors != 3 || got.CPUs != 6 || got.Shares[0].Executors != 3 {
		t.Errorf("%+v", got)
	}
	if n := roundedRecord(JobRecord{ID: "none"}); n.DeadlineS != nil || n.SlackS != nil || n.Shares != nil {
		t.Errorf("no deadline, no shares: %+v", n)
	}
}
