package simulate

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/sparkpack/sparkpack/scheduler"
)

// Baselines are the policies the default must beat (issue 13): Spark's own
// schedulers, Morpheus-style packing and the thesis' BFD.
var Baselines = []string{"fifo-spread", "fifo-consolidate", "morpheus", "bfd"}

// DefaultPolicy is the simulator policy that `sparkpack serve` uses by
// default: the placement policy scheduler.DefaultPolicy under the core's
// default queue discipline.
func DefaultPolicy() PolicySpec {
	p, err := LookupPolicy(scheduler.DefaultPolicy)
	if err != nil {
		panic("simulate: the default policy is not registered: " + err.Error())
	}
	return p
}

// RunResult is every policy's result on one window and seed.
type RunResult struct {
	// Workload is WorkloadTrace or WorkloadThesis; the targets
	// apply to the thesis-like workload only.
	Workload string `json:"workload"`
	Window   string `json:"window"`
	Hour     int    `json:"hour"`
	Class    string `json:"class,omitempty"`
	Seed     uint64 `json:"seed"`
	Jobs     int    `json:"jobs"`
	// PowerOffAfterS is --power-off-after in seconds: 0 when power
	// management was off (every agent on; the bill is the always-on bill).
	PowerOffAfterS float64  `json:"power_off_after_s"`
	Results        []Result `json:"results"`
	// PowerOff: the run had power management (--power-off-after), so
	// its bill differs from the always-on bill and the tables show both.
	PowerOff bool `json:"-"`
}

// Hour classes of the FB-2009 trace by the number of jobs it submits in
// the hour (docs/simulation.md, evaluation protocol).
const (
	ClassLight = "light" // at most LightMaxJobs jobs in the hour
	ClassBusy  = "busy"  // at least BusyMinJobs jobs in the hour
	// LightMaxJobs and BusyMinJobs separate the six lightest hours (78-149
	// jobs) and the six busiest (351-554) of the FB-2009 trace.
	LightMaxJobs = 150
	BusyMinJobs  = 300
)

// HourClass names the class of an hour with n trace jobs ("" for neither).
func HourClass(n int) string {
	switch {
	case n <= 0:
		return ""
	case n <= LightMaxJobs:
		return ClassLight
	case n >= BusyMinJobs:
		return ClassBusy
	}
	return ""
}

// Stat is the mean, the sample standard deviation and the range of a
// metric over runs.
type Stat struct {
	Mean, SD, Min, Max float64
}

func statOf(xs []float64) Stat {
	if len(xs) == 0 {
		return Stat{}
	}
	s := Stat{Min: xs[0], Max: xs[0]}
	for _, x := range xs {
		s.Mean += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		var v float64
		for _, x := range xs {
			v += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(v / float64(len(xs)-1))
	}
	return s
}

// PolicyAggregate is one policy's results over the seeds of a window.
type PolicyAggregate struct {
	Policy  string
	Default bool
	Runs    int
	// Cost in $, Missed deadlines (count), MetPct (% of all deadline jobs),
	// AdmittedViolationPct (% of admitted deadline jobs), JCT mean and p95 (s).
	Cost, Missed, MetPct, AdmittedViolationPct, JCTMean, JCTP95, SchedP99MS Stat
	Rejected                                                                int
	// DeadlineJobs counts the deadline jobs of all its runs (0: the met and
	// violation shares mean nothing and the tables print "-").
	DeadlineJobs int
	// Evicted counts evictions, LostWorkS the run time they lost (s).
	Evicted, LostWorkS Stat
	// Bill and AlwaysOn: what a cloud would bill ($), and the same
	// cluster never powered off.
	Bill, AlwaysOn Stat
}

// What a verdict compares: the core's cost meter (active agents only), or,
// with power management (--power-off-after), the bill, what the operator
// then pays (powered-on agents, idle or not; powered-off ones nothing).
const (
	MeasureMeter = "cost meter"
	MeasureBill  = "bill"
)

// Verdict compares the default policy with the baselines on one window.
type Verdict struct {
	Default string
	// Measure is what "not dearer" and the cost change compare:
	// MeasureMeter, or MeasureBill when the window had power management.
	Measure string
	Runs    int
	// ParetoRuns counts runs where the default was no dearer than the
	// cheapest baseline AND missed no more deadlines than the best one.
	ParetoRuns int
	// NotDearerRuns and NoMoreMissesRuns count the two halves separately.
	NotDearerRuns, NoMoreMissesRuns int
	// CostVsConsolidatePct is the default's mean cost (on Measure)
	// relative to fifo-consolidate's (negative: cheaper).
	CostVsConsolidatePct float64
	// MissesDefault and MissesConsolidate are mean missed deadlines.
	MissesDefault, MissesConsolidate float64
	// Target is the target for the window's class, TargetMet
	// whether the means meet it ("" and false for unclassified windows and
	// for the trace-sized workload: the targets are the thesis-like
	// workload's).
	Target    string
	TargetMet bool
}

// WindowAggregate is the results of one window over its seeds.
type WindowAggregate struct {
	Workload string
	Window   string
	Hour     int
	Class    string
	Jobs     int
	Seeds    []uint64
	// PowerOff: some run of the window had power management.
	PowerOff bool
	Policies []PolicyAggregate
	Verdict  *Verdict // nil unless the default and fifo-consolidate both ran
}

// Aggregate groups runs by window (in order of first appearance) and
// summarises every policy over the seeds.
func Aggregate(runs []RunResult) []WindowAggregate {
	var out []WindowAggregate
	idx := map[string]int{}
	groups := [][]RunResult{}
	for _, r := range runs {
		i, ok := idx[r.Window]
		if !ok {
			i = len(groups)
			idx[r.Window] = i
			groups = append(groups, nil)
			out = append(out, WindowAggregate{Workload: r.Workload, Window: r.Window, Hour: r.Hour, Class: r.Class, Jobs: r.Jobs})
		}
		groups[i] = append(groups[i], r)
		out[i].Seeds = append(out[i].Seeds, r.Seed)
		out[i].PowerOff = out[i].PowerOff || r.PowerOff
	}
	for i, g := range groups {
		var names []string
		for _, r := range g {
			for _, x := range r.Results {
				if !slices.Contains(names, x.Policy) {
					names = append(names, x.Policy)
				}
			}
		}
		for _, name := range names {
			pa := PolicyAggregate{Policy: name}
			var cost, missed, met, adm, jm, jp, sp, ev, lw, bill, on []float64
			for _, r := range g {
				for _, x := range r.Results {
					if x.Policy != name {
						continue
					}
					pa.Runs++
					pa.Default = pa.Default || x.Default
					pa.Rejected += x.Rejected
					pa.DeadlineJobs += x.DeadlineJobs
					cost = append(cost, x.TotalCostUSD)
					missed = append(missed, float64(x.DeadlineMissed))
					met = append(met, x.DeadlineMetPct)
					adm = append(adm, x.AdmittedViolationPct)
					jm = append(jm, x.JCTMeanS)
					jp = append(jp, x.JCTP95S)
					sp = append(sp, x.SchedDelayP99MS)
					ev = append(ev, float64(x.Preemptions))
					lw = append(lw, x.LostWorkS)
					bill = append(bill, x.BillUSD)
					on = append(on, x.AlwaysOnUSD)
				}
			}
			pa.Cost, pa.Missed, pa.MetPct, pa.AdmittedViolationPct = statOf(cost), statOf(missed), statOf(met), statOf(adm)
			pa.JCTMean, pa.JCTP95, pa.SchedP99MS = statOf(jm), statOf(jp), statOf(sp)
			pa.Evicted, pa.LostWorkS = statOf(ev), statOf(lw)
			pa.Bill, pa.AlwaysOn = statOf(bill), statOf(on)
			out[i].Policies = append(out[i].Policies, pa)
		}
		out[i].Verdict = verdict(g, out[i])
	}
	return out
}

func verdict(g []RunResult, wa WindowAggregate) *Verdict {
	def := ""
	for _, p := range wa.Policies {
		if p.Default {
			def = p.Policy
		}
	}
	if def == "" {
		return nil
	}
	v := &Verdict{Default: def, Measure: MeasureMeter}
	cost := func(x *Result) float64 { return x.TotalCostUSD }
	if wa.PowerOff {
		// The meter counts active agents only: under power management
		// the idle agents still on are billed too, and a policy that
		// leaves more of them on can be cheaper on the meter and
		// dearer on the bill.
		v.Measure = MeasureBill
		cost = func(x *Result) float64 { return x.BillUSD }
	}
	var dc, cc []float64
	for _, r := range g {
		var d *Result
		cheapest, fewest := math.Inf(1), math.MaxInt
		haveBase := false
		for k := range r.Results {
			x := &r.Results[k]
			switch {
			case x.Policy == def:
				d = x
			case slices.Contains(Baselines, x.Policy):
				haveBase = true
				cheapest = min(cheapest, cost(x))
				fewest = min(fewest, x.DeadlineMissed)
			}
			if x.Policy == "fifo-consolidate" {
				cc = append(cc, cost(x))
				v.MissesConsolidate += float64(x.DeadlineMissed)
			}
		}
		if d == nil || !haveBase {
			continue
		}
		v.Runs++
		dc = append(dc, cost(d))
		v.MissesDefault += float64(d.DeadlineMissed)
		// Costs are sums of float products: allow rounding noise only.
		notDearer := cost(d) <= cheapest*(1+1e-9)
		noMore := d.DeadlineMissed <= fewest
		if notDearer {
			v.NotDearerRuns++
		}
		if noMore {
			v.NoMoreMissesRuns++
		}
		if notDearer && noMore {
			v.ParetoRuns++
		}
	}
	if v.Runs == 0 || len(cc) != v.Runs {
		return nil
	}
	v.MissesDefault /= float64(v.Runs)
	v.MissesConsolidate /= float64(len(cc))
	mc, md := statOf(cc).Mean, statOf(dc).Mean
	if mc > 0 {
		v.CostVsConsolidatePct = 100 * (md/mc - 1)
	}
	if wa.Workload != WorkloadThesis {
		return v
	}
	measure := "cost"
	if v.Measure == MeasureBill {
		measure = "bill"
	}
	switch wa.Class {
	case ClassLight:
		v.Target = measure + " <= -15% vs fifo-consolidate, misses <= fifo-consolidate's"
		v.TargetMet = v.CostVsConsolidatePct <= -15 && v.MissesDefault <= v.MissesConsolidate+1e-9
	case ClassBusy:
		v.Target = measure + " <= fifo-consolidate's, misses <= 0.9 x fifo-consolidate's"
		v.TargetMet = v.CostVsConsolidatePct <= 1e-7 && v.MissesDefault <= 0.9*v.MissesConsolidate+1e-9
	}
	return v
}

func pm(s Stat, prec int) string {
	return fmt.Sprintf("%.*f ± %.*f", prec, s.Mean, prec, s.SD)
}

// deadlineShares is p's met % (all) and violations % (admitted), or "-"
// for both when its runs had no deadline job (a 0% met would read as
// every deadline missed).
func deadlineShares(p PolicyAggregate) (met, viol string) {
	if p.DeadlineJobs == 0 {
		return "-", "-"
	}
	return pm(p.MetPct, 1), pm(p.AdmittedViolationPct, 1)
}

func aggName(p PolicyAggregate) string {
	if p.Default {
		return p.Policy + " (default)"
	}
	return p.Policy
}

func windowTitle(wa WindowAggregate) string {
	t := wa.Window
	if wa.Class != "" {
		t += " (" + wa.Class + ")"
	}
	return fmt.Sprintf("%s, %d jobs, seeds %s", t, wa.Jobs, seedList(wa.Seeds))
}

func seedList(s []uint64) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, fmt.Sprint(x))
	}
	return strings.Join(parts, ",")
}

// writeAggregateTable prints one block per window: every policy's mean ±
// standard deviation over the seeds.
func writeAggregateTable(w io.Writer, was []WindowAggregate) error {
	for i, wa := range was {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, windowTitle(wa))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		// With power management the bill is what --power-off-after is
		// about: shown beside the core's meter, as in the one-run table.
		billHead := ""
		if wa.PowerOff {
			billHead = "bill $\talways-on $\t"
		}
		fmt.Fprintln(tw, "policy\tcost $\t"+billHead+"missed\tmet % (all)\tviolations % (admitted)\tJCT mean s\tJCT p95 s\tsched p99 ms (max)\t")
		for _, p := range wa.Policies {
			bill := ""
			if wa.PowerOff {
				bill = pm(p.Bill, 2) + "\t" + pm(p.AlwaysOn, 2) + "\t"
			}
			met, viol := deadlineShares(p)
			fmt.Fprintf(tw, "%s\t%s\t%s%s\t%s\t%s\t%s\t%s\t%.3f\t\n", aggName(p), pm(p.Cost, 2), bill, pm(p.Missed, 1), met,
				viol, pm(p.JCTMean, 1), pm(p.JCTP95, 1), p.SchedP99MS.Max)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// verdictMeasure is what the verdicts of was compare, as their tables
// name it: the short name ("cost" or "bill", for the column) and the
// sentence. Runs of one command share one measure; should windows differ,
// both are named.
func verdictMeasure(was []WindowAggregate) (short, long string) {
	var ms []string
	for _, wa := range was {
		if wa.Verdict != nil && !slices.Contains(ms, wa.Verdict.Measure) {
			ms = append(ms, wa.Verdict.Measure)
		}
	}
	// Ifs, not a switch: gremlins does not count a case's condition as
	// covered, so it would not mutate it.
	if len(ms) > 1 {
		return "cost", "the bill where the window had --power-off-after, else the cost meter"
	}
	if len(ms) == 1 && ms[0] == MeasureBill {
		return "bill", "the bill (bill $: with --power-off-after, what the operator pays: agents billed while on, idle or not; off, nothing)"
	}
	return "cost", "the cost meter (cost $: active agents only, idle ones free; with --power-off-after, the bill)"
}

// writeVerdict prints, per window, whether the default beat every baseline
// in every run and how it compares with fifo-consolidate.
func writeVerdict(w io.Writer, was []WindowAggregate) error {
	short, long := verdictMeasure(was)
	fmt.Fprintf(w, "\ndefault policy: %s; baselines: %s; compared on %s\n", DefaultPolicy().Name, strings.Join(Baselines, ", "), long)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "window\tclass\tPareto-better runs\tnot dearer\tno more misses\t"+short+" vs consolidate\tmisses default / consolidate\ttarget met")
	for _, wa := range was {
		v := wa.Verdict
		if v == nil {
			fmt.Fprintf(tw, "%s\t%s\t(the default or fifo-consolidate did not run)\n", wa.Window, wa.Class)
			continue
		}
		tm := "-"
		if v.Target != "" {
			tm = fmt.Sprintf("%v (%s)", yesNo(v.TargetMet), v.Target)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d/%d\t%d/%d\t%+.1f%%\t%.1f / %.1f\t%s\n", wa.Window, wa.Class, v.ParetoRuns, v.Runs,
			v.NotDearerRuns, v.Runs, v.NoMoreMissesRuns, v.Runs, v.CostVsConsolidatePct, v.MissesDefault, v.MissesConsolidate, tm)
	}
	return tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

// writeMarkdown prints the aggregated tables as Markdown (docs/simulation.md).
func writeMarkdown(w io.Writer, was []WindowAggregate, verdicts bool) error {
	for _, wa := range was {
		fmt.Fprintf(w, "**%s**\n\n", windowTitle(wa))
		billHead, billRule := "", ""
		if wa.PowerOff {
			billHead, billRule = " bill $ | always-on $ |", "---:|---:|"
		}
		fmt.Fprintln(w, "| policy | cost $ |"+billHead+" deadlines missed | deadline met % (all) | violations % (admitted) | JCT mean s | JCT p95 s |")
		fmt.Fprintln(w, "|---|---:|"+billRule+"---:|---:|---:|---:|---:|")
		for _, p := range wa.Policies {
			name := p.Policy
			if p.Default {
				name = "**" + p.Policy + "** (default)"
			}
			bill := ""
			if wa.PowerOff {
				bill = " " + pm(p.Bill, 2) + " | " + pm(p.AlwaysOn, 2) + " |"
			}
			met, viol := deadlineShares(p)
			fmt.Fprintf(w, "| %s | %s |%s %s | %s | %s | %s | %s |\n", name, pm(p.Cost, 2), bill, pm(p.Missed, 1), met,
				viol, pm(p.JCTMean, 1), pm(p.JCTP95, 1))
		}
		fmt.Fprintln(w)
	}
	if !verdicts {
		return nil
	}
	short, long := verdictMeasure(was)
	fmt.Fprintf(w, "Default policy `%s` against the baselines (%s), run by run, compared on %s:\n\n", DefaultPolicy().Name, strings.Join(Baselines, ", "), long)
	fmt.Fprintln(w, "| window | class | Pareto-better runs | not dearer | no more misses | "+short+" vs fifo-consolidate | misses default / consolidate (mean) | issue target met |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|")
	for _, wa := range was {
		v := wa.Verdict
		if v == nil {
			continue
		}
		tm := "-"
		if v.Target != "" {
			tm = yesNo(v.TargetMet)
		}
		fmt.Fprintf(w, "| %s | %s | %d/%d | %d/%d | %d/%d | %+.1f%% | %.1f / %.1f | %s |\n", wa.Window, wa.Class, v.ParetoRuns, v.Runs,
			v.NotDearerRuns, v.Runs, v.NoMoreMissesRuns, v.Runs, v.CostVsConsolidatePct, v.MissesDefault, v.MissesConsolidate, tm)
	}
	fmt.Fprintln(w)
	return nil
}

// Preemption targets of issue 16: at least 30% fewer missed deadlines than
// the same policy without preemption, at no more than 10% extra cost (on
// the means over the seeds of a window).
const (
	PreemptionMissTarget = 0.70
	PreemptionCostTarget = 1.10
)

// PreemptionRow compares a policy with preemption ("dap+mdf") with the
// same policy without it ("dap") on one window.
type PreemptionRow struct {
	Window, Class, Policy, Base string
	Runs                        int
	// MissesBase and Misses are mean missed deadlines; MissesChangePct and
	// CostChangePct the relative changes of the means.
	MissesBase, Misses, MissesChangePct, CostChangePct float64
	Evicted, LostWorkH                                 float64
	TargetMet                                          bool
}

// PreemptionRows pairs every "<base>+<policy>" with its "<base>".
func PreemptionRows(was []WindowAggregate) []PreemptionRow {
	var out []PreemptionRow
	for _, wa := range was {
		byName := map[string]PolicyAggregate{}
		for _, p := range wa.Policies {
			byName[p.Policy] = p
		}
		for _, p := range wa.Policies {
			base, _, ok := strings.Cut(p.Policy, "+")
			b, found := byName[base]
			if !ok || !found {
				continue
			}
			r := PreemptionRow{Window: wa.Window, Class: wa.Class, Policy: p.Policy, Base: base, Runs: p.Runs,
				MissesBase: b.Missed.Mean, Misses: p.Missed.Mean, Evicted: p.Evicted.Mean, LostWorkH: p.LostWorkS.Mean / 3600}
			if b.Missed.Mean > 0 {
				r.MissesChangePct = 100 * (p.Missed.Mean/b.Missed.Mean - 1)
			}
			if b.Cost.Mean > 0 {
				r.CostChangePct = 100 * (p.Cost.Mean/b.Cost.Mean - 1)
			}
			r.TargetMet = p.Missed.Mean <= PreemptionMissTarget*b.Missed.Mean+1e-9 && p.Cost.Mean <= PreemptionCostTarget*b.Cost.Mean+1e-9
			out = append(out, r)
		}
	}
	return out
}

// missesChange is a preemption row's change in misses, "-" when the
// policy without preemption missed none (there is no share of nothing;
// it read +0%).
func missesChange(r PreemptionRow) string {
	if r.MissesBase == 0 {
		return "-"
	}
	return fmt.Sprintf("%+.0f%%", r.MissesChangePct)
}

// preemptionTargetMet is a preemption row's "target met": with no miss
// with preemption or without, there was nothing to cut and nothing to
// judge (it read "yes").
func preemptionTargetMet(r PreemptionRow) string {
	if r.MissesBase == 0 && r.Misses == 0 {
		return "- (no misses either way)"
	}
	return yesNo(r.TargetMet)
}

// writePreemption prints the preemption comparison (nothing when no
// policy ran with preemption next to itself without).
func writePreemption(w io.Writer, was []WindowAggregate, markdown bool) error {
	rows := PreemptionRows(was)
	if len(rows) == 0 {
		return nil
	}
	if markdown {
		fmt.Fprintln(w, "Preemption against the same policy without it (means over the seeds; target: misses at most 70%, cost at most 110%):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| window | class | policy | missed (without → with) | misses change | cost change | evictions | lost work h | target met |")
		fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---|")
		for _, r := range rows {
			fmt.Fprintf(w, "| %s | %s | %s | %.1f → %.1f | %s | %+.1f%% | %.1f | %.2f | %s |\n", r.Window, r.Class, r.Policy,
				r.MissesBase, r.Misses, missesChange(r), r.CostChangePct, r.Evicted, r.LostWorkH, preemptionTargetMet(r))
		}
		fmt.Fprintln(w)
		return nil
	}
	fmt.Fprintln(w, "\npreemption against the same policy without it (means; target: misses -30% or better, cost +10% or less)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "window\tclass\tpolicy\tmissed without -> with\tmisses\tcost\tevictions\tlost work h\ttarget met")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f -> %.1f\t%s\t%+.1f%%\t%.1f\t%.2f\t%s\n", r.Window, r.Class, r.Policy,
			r.MissesBase, r.Misses, missesChange(r), r.CostChangePct, r.Evicted, r.LostWorkH, preemptionTargetMet(r))
	}
	return tw.Flush()
}
