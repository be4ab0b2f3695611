package simulate

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

var palette = []string{"#d62728", "#ff7f0e", "#9467bd", "#1f77b4", "#2ca02c", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// niceMax rounds v up to 1, 2 or 5 times a power of ten.
func niceMax(v float64) float64 {
	if v <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

// writeChart writes a hand-made SVG: bars of total cost and of deadline
// violations per policy, and the cumulative cost over time per policy
// (like thesis Figure 4.5c/d).
func writeChart(path string, rs []Result, subtitle string) error {
	var buf bytes.Buffer
	renderChart(&buf, rs, subtitle)
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func renderChart(w io.Writer, rs []Result, subtitle string) {
	const W, H = 960, 760
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", W, H, W, H)
	fmt.Fprintf(w, `<rect width="%d" height="%d" fill="white"/>`+"\n", W, H)
	fmt.Fprintf(w, `<text x="%d" y="24" font-size="16" text-anchor="middle" font-weight="bold">sparkpack simulate: cost and deadline violations per policy</text>`+"\n", W/2)
	// The subtitle's lines (a second one says whose costs are drawn
	// under power management), one under the other above the bars.
	for i, line := range strings.Split(subtitle, "\n") {
		if i == 0 {
			fmt.Fprintf(w, `<text x="%d" y="42" text-anchor="middle" fill="#555">%s</text>`+"\n", W/2, esc(line))
			continue
		}
		// Smaller, to fit between the first line and the bars' titles.
		fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" font-size="11" fill="#555">%s</text>`+"\n", W/2, 42+13*i, esc(line))
	}

	bars := func(x0, y0, width, height float64, title string, val func(Result) float64, unit string) {
		maxV := 0.0
		for _, r := range rs {
			maxV = max(maxV, val(r))
		}
		top := niceMax(maxV)
		fmt.Fprintf(w, `<text x="%.0f" y="%.0f" font-size="14" text-anchor="middle">%s</text>`+"\n", x0+width/2, y0-10, esc(title))
		for i := 0; i <= 4; i++ {
			y := y0 + height - height*float64(i)/4
			fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x0+width, y)
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", x0-4, y+4, fmtTick(top*float64(i)/4))
		}
		n := float64(max(1, len(rs)))
		slot := width / n
		for i, r := range rs {
			v := val(r)
			h := height * v / top
			x := x0 + slot*float64(i) + slot*0.15
			fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %.2f%s</title></rect>`+"\n",
				x, y0+height-h, slot*0.7, h, palette[i%len(palette)], esc(r.Policy), v, unit)
			fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="11">%s</text>`+"\n", x+slot*0.35, y0+height-h-3, fmtTick(v))
			fmt.Fprintf(w, `<text transform="translate(%.1f %.1f) rotate(30)" font-size="11">%s</text>`+"\n", x+slot*0.2, y0+height+14, esc(r.Policy))
		}
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0, y0+height, x0+width, y0+height)
	}
	bars(70, 80, 370, 220, "Total cost ($)", func(r Result) float64 { return r.TotalCostUSD }, " $")
	bars(560, 80, 370, 220, "Deadline violations (%)", func(r Result) float64 { return r.DeadlineViolationPct }, " %")

	// Cumulative cost over time.
	x0, y0, width, height := 70.0, 420.0, 700.0, 280.0
	maxT, maxC := 0.0, 0.0
	for _, r := range rs {
		for _, p := range r.Series {
			maxT, maxC = max(maxT, p.S), max(maxC, p.USD)
		}
	}
	topT, topC := niceMax(maxT/3600)*3600, niceMax(maxC)
	fmt.Fprintf(w, `<text x="%.0f" y="%.0f" font-size="14" text-anchor="middle">Cumulative cost ($) over time (h)</text>`+"\n", x0+width/2, y0-12)
	for i := 0; i <= 4; i++ {
		y := y0 + height - height*float64(i)/4
		fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0, y, x0+width, y)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="end" fill="#555">%s</text>`+"\n", x0-4, y+4, fmtTick(topC*float64(i)/4))
		x := x0 + width*float64(i)/4
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#555">%s</text>`+"\n", x, y0+height+16, fmtTick(topT/3600*float64(i)/4))
	}
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0, y0+height, x0+width, y0+height)
	fmt.Fprintf(w, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0, y0, x0, y0+height)
	for i, r := range rs {
		var pts []string
		for _, p := range r.Series {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x0+width*p.S/topT, y0+height-height*p.USD/topC))
		}
		c := palette[i%len(palette)]
		if len(pts) > 0 {
			fmt.Fprintf(w, `<polyline fill="none" stroke="%s" stroke-width="1.8" points="%s"><title>%s</title></polyline>`+"\n", c, strings.Join(pts, " "), esc(r.Policy))
		}
		ly := y0 + 10 + float64(i)*18
		fmt.Fprintf(w, `<rect x="%.1f" y="%.1f" width="14" height="4" fill="%s"/>`+"\n", x0+width+20, ly-4, c)
		fmt.Fprintf(w, `<text x="%.1f" y="%.1f">%s ($%.2f)</text>`+"\n", x0+width+40, ly, esc(r.Policy), r.TotalCostUSD)
	}
	fmt.Fprintln(w, `</svg>`)
}

func fmtTick(v float64) string {
	switch {
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2f", v)
}
