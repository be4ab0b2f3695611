package simulate

import "math"

// What --format json and --job-log's JSON lines print: the results and
// records with their dollars and seconds rounded (the float noise of
// 0.054934399999999994 dropped), and, for one run, the run it was. The
// tables, CSV and every figure are computed from the unrounded values.

// JSON precision (docs/simulation.md): dollars to a millionth, seconds to
// a microsecond (6 decimals), milliseconds to a microsecond (3),
// cpu-hours to 9 decimals (3.6 us), the job log's cpus to 6. Finer than
// any figure the tables print, so that a reader that aggregates the JSON
// gets the tables' figures: at 3 decimals, a mean JCT of 16.7498 s read
// back as 16.750 and printed 16.8 where the table (and docs/simulation.md)
// say 16.7 (TestDocFigures reads the JSON).
const (
	jsonUSDDecimals      = 6
	jsonSecondsDecimals  = 6
	jsonMillisDecimals   = 3
	jsonCPUHoursDecimals = 9
	jsonCPUsDecimals     = 6
)

// roundTo rounds x to the given decimals.
func roundTo(x float64, decimals int) float64 {
	p := math.Pow10(decimals)
	return math.Round(x*p) / p
}

// oneRunResult is one policy's result of a single run in --format json:
// the result, then the run it belongs to (the several-run JSON gives them
// once per run; a single run's array had neither window nor seed).
type oneRunResult struct {
	Result
	Window         string  `json:"window"`
	Seed           uint64  `json:"seed"`
	PowerOffAfterS float64 `json:"power_off_after_s"`
}

// oneRunJSON is --format json for one window and seed: an array of one
// object per policy, as before, each naming its run.
func oneRunJSON(run RunResult) []oneRunResult {
	out := []oneRunResult{}
	for _, r := range run.Results {
		out = append(out, oneRunResult{Result: roundedResult(r), Window: run.Window, Seed: run.Seed, PowerOffAfterS: run.PowerOffAfterS})
	}
	return out
}

// runsJSON is --format json for several runs: the runs, rounded.
func runsJSON(runs []RunResult) []RunResult {
	out := make([]RunResult, len(runs))
	for i, run := range runs {
		run.Results = append([]Result(nil), run.Results...)
		for j, r := range run.Results {
			run.Results[j] = roundedResult(r)
		}
		out[i] = run
	}
	return out
}

// roundedResult is r with its dollars and seconds (and its teams')
// rounded for JSON.
func roundedResult(r Result) Result {
	usd := func(x *float64) { *x = roundTo(*x, jsonUSDDecimals) }
	sec := func(x *float64) { *x = roundTo(*x, jsonSecondsDecimals) }
	for _, x := range []*float64{&r.TotalCostUSD, &r.BillUSD, &r.AlwaysOnUSD} {
		usd(x)
	}
	for _, x := range []*float64{&r.JCTMeanS, &r.JCTP95S, &r.AgentActiveS, &r.WaitMeanS, &r.WaitP95S, &r.MakespanS, &r.LostWorkS, &r.LostCPUS} {
		sec(x)
	}
	r.SchedDelayMeanMS = roundTo(r.SchedDelayMeanMS, jsonMillisDecimals)
	r.SchedDelayP99MS = roundTo(r.SchedDelayP99MS, jsonMillisDecimals)
	if r.Teams != nil {
		teams := make([]TeamResult, len(r.Teams))
		for i, t := range r.Teams {
			usd(&t.CostUSD)
			sec(&t.WaitMeanS)
			sec(&t.WaitP95S)
			t.CPUHours = roundTo(t.CPUHours, jsonCPUHoursDecimals)
			teams[i] = t
		}
		r.Teams = teams
	}
	return r
}

// roundedRecord is a job log record with its seconds and cpus rounded
// for JSON.
func roundedRecord(r JobRecord) JobRecord {
	sec := func(x *float64) { *x = roundTo(*x, jsonSecondsDecimals) }
	cpus := func(x *float64) { *x = roundTo(*x, jsonCPUsDecimals) }
	for _, x := range []*float64{&r.SubmitS, &r.StartS, &r.EndS, &r.WaitS, &r.RunS, &r.ProfiledS, &r.EstimateS} {
		sec(x)
	}
	cpus(&r.FreeCPUs)
	cpus(&r.MaxAgentFreeCPUs)
	for _, p := range []**float64{&r.DeadlineS, &r.SlackS} {
		if *p != nil {
			v := roundTo(**p, jsonSecondsDecimals)
			*p = &v
		}
	}
	if r.Shares != nil {
		shares := make([]JobShare, len(r.Shares))
		for i, s := range r.Shares {
			cpus(&s.AgentCPUs)
			cpus(&s.AgentUsedCPUs)
			shares[i] = s
		}
		r.Shares = shares
	}
	return r
}
