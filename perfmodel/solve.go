package perfmodel

import (
	"math"
	"slices"
)

// The linear part of a fit: at given exponents, the form's features,
// their weighted least squares and the objective the search minimises.

// features fills x with the form's linear features of p at exponents ex.
func features(f Form, ex [7]float64, p *point, x []float64) {
	b := ex[0]
	if f == FormFullBeta {
		b += ex[ixBetaU] * math.Exp(ex[ixBetaV]*p.lnI)
	}
	eb := math.Exp(b * p.lnE)
	switch f {
	case FormSizeFree:
		x[0], x[1] = eb, 1
	case FormScaled:
		x[0], x[1] = math.Exp(ex[1]*p.lnI)*eb, 1
	default:
		x[0], x[1], x[2], x[3] = math.Exp(ex[1]*p.lnI)*eb, eb, math.Exp(ex[2]*p.lnI), 1
	}
}

// solve is the weighted linear least squares of the form at exponents ex:
// it minimises sum ((f_i x_i . theta - t_i) / t_i)^2 over theta >= 0 (every
// feature is positive, so the curve is then positive at every size and
// executor count, not only at the runs'). ok is false when the system is
// singular or the fitted curve is not positive at every run.
func solve(f Form, ex [7]float64, pts []point) (theta [4]float64, sse float64, ok bool) {
	k := nLinear(f)
	var ata [4][4]float64
	var atb [4]float64
	for i := range pts {
		p := &pts[i]
		x := &p.x // weighted features, kept for the residuals
		features(f, ex, p, x[:k])
		w := (1 + ex[ixShuffle]*p.r) * (1 + ex[ixContention]*p.l) / p.t
		for a := 0; a < k; a++ {
			x[a] *= w
			atb[a] += x[a]
			for b := 0; b <= a; b++ {
				ata[a][b] += x[a] * x[b]
			}
		}
	}
	for a := 0; a < k; a++ {
		for b := 0; b < a; b++ {
			ata[b][a] = ata[a][b]
		}
	}
	// A tiny ridge keeps collinear features (one executor count, one size)
	// solvable.
	tr := 0.0
	for a := 0; a < k; a++ {
		tr += ata[a][a]
	}
	for a := 0; a < k; a++ {
		ata[a][a] += 1e-10*tr/float64(k) + 1e-300
	}
	sol, good := nonNegative(ata, atb, k)
	if !good {
		return theta, 0, false
	}
	// Each run's weighted prediction is its prediction over its time: the
	// fitted curve must be positive at every run (weights are positive).
	for i := range pts {
		z := 0.0
		for a := 0; a < k; a++ {
			z += sol[a] * pts[i].x[a]
		}
		if !(z > 0) || !finite(z) {
			return theta, 0, false
		}
		sse += (z - 1) * (z - 1)
	}
	return sol, sse, true
}

// nonNegative is the least squares solution of the normal equations
// a x = b with x >= 0. The unconstrained solution when it is nonnegative
// (the usual case); otherwise, as the objective is convex, the best of the
// unconstrained solutions restricted to each subset of the variables
// (the others at 0) that is nonnegative, the empty one included: at most
// 2^4 small systems.
func nonNegative(a [4][4]float64, b [4]float64, k int) ([4]float64, bool) {
	x, ok := gauss(a, b, k)
	if !ok {
		return x, false
	}
	if !slices.ContainsFunc(x[:k], func(v float64) bool { return v < 0 }) {
		return x, true
	}
	// All coefficients at 0 (the objective's constant: 0) is the empty
	// subset; solve then refuses the curve, 0 at every run.
	var best [4]float64
	bestF := 0.0
	for set := 1; set < 1<<k; set++ {
		var sub [4][4]float64
		var sb [4]float64
		var idx [4]int
		n := 0
		for i := 0; i < k; i++ {
			if set&(1<<i) != 0 {
				idx[n] = i
				n++
			}
		}
		for r := 0; r < n; r++ {
			sb[r] = b[idx[r]]
			for c := 0; c < n; c++ {
				sub[r][c] = a[idx[r]][idx[c]]
			}
		}
		y, ok := gauss(sub, sb, n)
		if !ok || slices.ContainsFunc(y[:n], func(v float64) bool { return v < 0 }) {
			continue
		}
		var full [4]float64
		for r := 0; r < n; r++ {
			full[idx[r]] = y[r]
		}
		// The objective less its constant: x.a.x - 2 x.b.
		f := 0.0
		for r := 0; r < k; r++ {
			ax := 0.0
			for c := 0; c < k; c++ {
				ax += a[r][c] * full[c]
			}
			f += full[r]*ax - 2*full[r]*b[r]
		}
		if f < bestF {
			best, bestF = full, f
		}
	}
	return best, true
}

// gauss solves the k x k system by elimination with partial pivoting.
func gauss(a [4][4]float64, b [4]float64, k int) ([4]float64, bool) {
	for c := 0; c < k; c++ {
		piv := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if a[piv][c] == 0 || !finite(a[piv][c]) {
			return b, false
		}
		a[c], a[piv] = a[piv], a[c]
		b[c], b[piv] = b[piv], b[c]
		for r := c + 1; r < k; r++ {
			m := a[r][c] / a[c][c]
			for q := c; q < k; q++ {
				a[r][q] -= m * a[c][q]
			}
			b[r] -= m * b[c]
		}
	}
	var x [4]float64
	for r := k - 1; r >= 0; r-- {
		s := b[r]
		for q := r + 1; q < k; q++ {
			s -= a[r][q] * x[q]
		}
		x[r] = s / a[r][r]
		if !finite(x[r]) {
			return x, false
		}
	}
	return x, true
}

// objective is the penalised mean squared relative error at exponents ex.
func objective(f Form, ex [7]float64, pts []point, pri *[7]float64) (float64, [4]float64, float64) {
	theta, sse, ok := solve(f, ex, pts)
	if !ok {
		return math.Inf(1), theta, math.Inf(1)
	}
	pen := 0.0
	for _, j := range expIdx(f) {
		d := ex[j] - pri[j]
		pen += d * d
	}
	n := float64(len(pts))
	place := 0.0
	for _, j := range []int{ixShuffle, ixContention} {
		d := ex[j] - pri[j]
		place += d * d
	}
	return sse/n + expPenalty*pen + placePenalty/n*place, theta, sse
}
