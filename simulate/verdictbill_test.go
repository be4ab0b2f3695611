package simulate

import (
	"strings"
	"testing"
)

// TestVerdictComparesTheBillUnderPowerOff: with power management
// (--power-off-after) what the operator pays is the bill, so
// --compare-default judges the bill, and says so; without it, the meter.
//
// One light thesis-like run: fifo-consolidate meter $10, bill $20; bfd
// meter $12, bill $15; dap (the default) meter $9, bill $16, one miss
// each. On the meter dap is the cheapest (not dearer, -10% against
// consolidate's $10); on the bill bfd is ($15 < $16: dearer, so not
// Pareto-better), and dap is -20% against consolidate's $20.
func TestVerdictComparesTheBillUnderPowerOff(t *testing.T) {
	run := func(powerOff bool) []WindowAggregate {
		return Aggregate([]RunResult{{Workload: WorkloadThesis, Window: "hour 1", Class: ClassLight, Seed: 1, PowerOff: powerOff, Results: []Result{
			{Policy: "fifo-consolidate", TotalCostUSD: 10, BillUSD: 20, DeadlineMissed: 1},
			{Policy: "bfd", TotalCostUSD: 12, BillUSD: 15, DeadlineMissed: 1},
			{Policy: "dap", Default: true, TotalCostUSD: 9, BillUSD: 16, DeadlineMissed: 1},
		}}})
	}
	off := run(true)
	v := off[0].Verdict
	if v == nil || v.Measure != MeasureBill || v.NotDearerRuns != 0 || v.ParetoRuns != 0 || v.NoMoreMissesRuns != 1 {
		t.Fatalf("power off: %+v, want the bill compared: dearer than bfd, not Pareto-better", v)
	}
	near(t, "bill vs consolidate", v.CostVsConsolidatePct, -20)
	if !strings.HasPrefix(v.Target, "bill <= -15%") {
		t.Errorf("power off: target %q, want it stated on the bill", v.Target)
	}
	var sb strings.Builder
	if err := writeVerdict(&sb, off); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"compared on the bill (bill $", "bill vs consolidate", "0/1"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("power off, table: no %q in\n%s", want, sb.String())
		}
	}
	sb.Reset()
	if err := writeMarkdown(&sb, off, true); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"compared on the bill (bill $", "| bill vs fifo-consolidate |", "| hour 1 | light | 0/1 | 0/1 | 1/1 | -20.0% |"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("power off, markdown: no %q in\n%s", want, sb.String())
		}
	}

	on := run(false)
	v = on[0].Verdict
	if v == nil || v.Measure != MeasureMeter || v.NotDearerRuns != 1 || v.ParetoRuns != 1 {
		t.Fatalf("always on: %+v, want the meter compared: not dearer, Pareto-better", v)
	}
	near(t, "cost vs consolidate", v.CostVsConsolidatePct, -10)
	sb.Reset()
	if err := writeVerdict(&sb, on); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"compared on the cost meter (cost $", "cost vs consolidate"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("always on, table: no %q in\n%s", want, sb.String())
		}
	}
}

// TestVerdictMeasureByHand: the sentence and column name of the verdict
// for windows all on the meter, all on the bill, and (were a caller to
// mix them) both; windows without a verdict do not count.
func TestVerdictMeasureByHand(t *testing.T) {
	w := func(m string) WindowAggregate { return WindowAggregate{Verdict: &Verdict{Measure: m}} }
	for _, tc := range []struct {
		was          []WindowAggregate
		short, start string
	}{
		{[]WindowAggregate{w(MeasureMeter), {}}, "cost", "the cost meter (cost $"},
		{[]WindowAggregate{{}, w(MeasureBill), w(MeasureBill)}, "bill", "the bill (bill $"},
		{[]WindowAggregate{w(MeasureBill), w(MeasureMeter)}, "cost", "the bill where the window had --power-off-after, else the cost meter"},
		{[]WindowAggregate{w(MeasureMeter), w(MeasureBill)}, "cost", "the bill where the window had --power-off-after, else the cost meter"},
	} {
		short, long := verdictMeasure(tc.was)
		if short != tc.short || !strings.HasPrefix(long, tc.start) {
			t.Errorf("%+v: %q, %q; want %q, %q...", tc.was, short, long, tc.short, tc.start)
		}
	}
}
