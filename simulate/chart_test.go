package simulate

// The chart's geometry, derived by hand from renderChart's layout (cost
// bars at x 70-440, violation bars at 560-930, both y 80-300; the
// cumulative cost at x 70-770, y 420-700; axes topped at niceMax).

import (
	"math"
	"strings"
	"testing"
)

func TestNiceMaxByHand(t *testing.T) {
	for _, tc := range []struct{ v, want float64 }{
		{0, 1}, {-3, 1}, {math.NaN(), 1}, {math.Inf(1), 1},
		{1, 1}, {1.5, 2}, {2, 2}, {3, 5}, {5, 5}, {7, 10}, {10, 10}, {11, 20}, {25, 50}, {50, 50}, {100, 100}, {0.3, 0.5}, {0.07, 0.1},
	} {
		if got := niceMax(tc.v); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("niceMax(%v) = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestFmtTickByHand(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{3, "3"}, {0, "0"}, {-10, "-10"}, {12.5, "12.5"}, {-12.5, "-12.5"}, {10.25, "10.2"}, {2.5, "2.50"}, {-2.5, "-2.50"}, {9.75, "9.75"}} {
		if got := fmtTick(tc.v); got != tc.want {
			t.Errorf("fmtTick(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// TestChartByHand: two policies. A costs $3 (axis to $5), misses 50%
// (axis to 50), its cost rises 0, 1, 3 at 0, 0.5, 1 h; B costs $1, misses
// none, 0 then 1 at 2 h (time axis to 2 h).
//
// Bars: two slots of 370/2 = 185, each bar 0.7 x 185 = 129.5 wide from
// 0.15 x 185 = 27.75 into its slot. A's cost bar: 220 x 3/5 = 132 high,
// top at 300 - 132 = 168; B's: 44 high at 256. A's violation bar fills
// the 220; B's is 0 high at 300. Ticks every quarter of the axis. The
// cumulative cost: x = 70 + 700 x t / 7200 s, y = 700 - 280 x $ / 5.
func TestChartByHand(t *testing.T) {
	rs := []Result{
		{Policy: "A", TotalCostUSD: 3, DeadlineViolationPct: 50, Series: []SeriesPoint{{0, 0}, {1800, 1}, {3600, 3}}},
		{Policy: "B", TotalCostUSD: 1, DeadlineViolationPct: 0, Series: []SeriesPoint{{0, 0}, {7200, 1}}},
	}
	var b strings.Builder
	renderChart(&b, rs, "hour 7 & co")
	svg := b.String()
	for _, want := range []string{
		`<text x="480" y="24" font-size="16" text-anchor="middle" font-weight="bold">`,
		`<text x="480" y="42" text-anchor="middle" fill="#555">hour 7 &amp; co</text>`,
		// Cost bars.
		`<text x="255" y="70" font-size="14" text-anchor="middle">Total cost ($)</text>`,
		`<line x1="70.0" y1="300.0" x2="440.0" y2="300.0" stroke="#ddd"/>`,
		`<text x="66.0" y="304.0" text-anchor="end" fill="#555">0</text>`,
		`<line x1="70.0" y1="245.0" x2="440.0" y2="245.0" stroke="#ddd"/>`,
		`<text x="66.0" y="249.0" text-anchor="end" fill="#555">1.25</text>`,
		`<text x="66.0" y="194.0" text-anchor="end" fill="#555">2.50</text>`,
		`<text x="66.0" y="84.0" text-anchor="end" fill="#555">5</text>`,
		`<rect x="97.8" y="168.0" width="129.5" height="132.0" fill="#d62728"><title>A: 3.00 $</title></rect>`,
		`<text x="162.5" y="165.0" text-anchor="middle" font-size="11">3</text>`,
		`<text transform="translate(134.8 314.0) rotate(30)" font-size="11">A</text>`,
		`<rect x="282.8" y="256.0" width="129.5" height="44.0" fill="#ff7f0e"><title>B: 1.00 $</title></rect>`,
		`<line x1="70.0" y1="300.0" x2="440.0" y2="300.0" stroke="#333"/>`,
		// Violation bars.
		`<text x="745" y="70" font-size="14" text-anchor="middle">Deadline violations (%)</text>`,
		`<text x="556.0" y="249.0" text-anchor="end" fill="#555">12.5</text>`,
		`<text x="556.0" y="84.0" text-anchor="end" fill="#555">50</text>`,
		`<rect x="587.8" y="80.0" width="129.5" height="220.0" fill="#d62728"><title>A: 50.00 %</title></rect>`,
		`<rect x="772.8" y="300.0" width="129.5" height="0.0" fill="#ff7f0e"><title>B: 0.00 %</title></rect>`,
		// Cumulative cost.
		`<text x="420" y="408" font-size="14" text-anchor="middle">Cumulative cost ($) over time (h)</text>`,
		`<line x1="70.0" y1="630.0" x2="770.0" y2="630.0" stroke="#ddd"/>`,
		`<text x="66.0" y="634.0" text-anchor="end" fill="#555">1.25</text>`,
		`<line x1="70.0" y1="560.0" x2="770.0" y2="560.0" stroke="#ddd"/>`,
		`<text x="66.0" y="564.0" text-anchor="end" fill="#555">2.50</text>`,
		`<text x="420.0" y="716.0" text-anchor="middle" fill="#555">1</text>`,
		`<text x="245.0" y="716.0" text-anchor="middle" fill="#555">0.50</text>`,
		`<text x="770.0" y="716.0" text-anchor="middle" fill="#555">2</text>`,
		`<line x1="70.0" y1="700.0" x2="770.0" y2="700.0" stroke="#333"/>`,
		`<line x1="70.0" y1="420.0" x2="70.0" y2="700.0" stroke="#333"/>`,
		`points="70.0,700.0 245.0,644.0 420.0,532.0"><title>A</title></polyline>`,
		`points="70.0,700.0 770.0,644.0"><title>B</title></polyline>`,
		`<rect x="790.0" y="426.0" width="14" height="4" fill="#d62728"/>`,
		`<text x="810.0" y="430.0">A ($3.00)</text>`,
		`<rect x="790.0" y="444.0" width="14" height="4" fill="#ff7f0e"/>`,
		`<text x="810.0" y="448.0">B ($1.00)</text>`,
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s", want)
		}
	}
	if n := strings.Count(svg, "<rect "); n != 1+4+2 {
		t.Errorf("%d rects, want the background, 4 bars and 2 legend marks", n)
	}
	if t.Failed() {
		t.Log(svg)
	}
	// A policy without a cost series draws no curve.
	b.Reset()
	renderChart(&b, []Result{{Policy: "Z", TotalCostUSD: 1}}, "")
	if strings.Contains(b.String(), "<polyline") {
		t.Error("a curve for a policy without a cost series")
	}
}
