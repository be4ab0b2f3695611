package forecast

import "math"

// The job count of an interval is negative binomial with mean Jobs and
// variance Dispersion x Jobs (Poisson when Dispersion is 1). Large means
// use the normal approximation, so every call is bounded.

const normalFrom = 400.0 // mean from which the normal approximation is used

// pmfIter calls f(k, p(k)) for k = 0, 1, ... until f returns false or
// the distribution is exhausted (about mean + 12 sd).
func (d Demand) pmfIter(f func(k int, p float64) bool) {
	mu := d.Jobs
	disp := math.Max(d.Dispersion, 1)
	limit := int(mu+12*math.Sqrt(disp*mu)) + 30
	if disp < 1+1e-9 {
		p := math.Exp(-mu)
		for k := 0; k <= limit; k++ {
			if !f(k, p) {
				return
			}
			p *= mu / float64(k+1)
		}
		return
	}
	r := mu / (disp - 1)           // NB size
	q := 1 / disp                  // success probability: mean r(1-q)/q = mu
	p := math.Exp(r * math.Log(q)) // P(0) = q^r
	for k := 0; k <= limit; k++ {
		if !f(k, p) {
			return
		}
		p *= (float64(k) + r) / float64(k+1) * (1 - q)
	}
}

// Quantile is the smallest count whose cumulative probability is at
// least q (0 < q < 1).
func (d Demand) Quantile(q float64) float64 {
	if !d.OK || !(d.Jobs > 0) || math.IsNaN(q) {
		return 0
	}
	q = math.Min(math.Max(q, 1e-9), 1-1e-9)
	sd := math.Sqrt(math.Max(d.Dispersion, 1) * d.Jobs)
	if d.Jobs >= normalFrom {
		return math.Max(0, math.Round(d.Jobs+sd*normQuantile(q)))
	}
	cdf, at := 0.0, -1
	d.pmfIter(func(k int, p float64) bool {
		cdf += p
		at = k
		return cdf < q
	})
	return float64(at)
}

// Excess is the expected number of jobs beyond the first m: E[max(0, N-m)].
func (d Demand) Excess(m float64) float64 {
	if !d.OK || !(d.Jobs > 0) || math.IsNaN(m) {
		return 0
	}
	m = math.Max(m, 0)
	if d.Jobs >= normalFrom {
		sd := math.Sqrt(math.Max(d.Dispersion, 1) * d.Jobs)
		z := (m - d.Jobs) / sd
		return sd * (normPDF(z) - z*(1-normCDF(z)))
	}
	// E[(N-m)+] = mean - m + E[(m-N)+], the last a finite sum.
	below := 0.0
	d.pmfIter(func(k int, p float64) bool {
		if float64(k) >= m {
			return false
		}
		below += (m - float64(k)) * p
		return true
	})
	return math.Max(0, d.Jobs-m+below)
}

// Tails are P(N >= k) for k = 1, 2, ... while it is at least 1e-9 (at
// most mean + 12 sd + 30 of them).
func (d Demand) Tails() []float64 {
	if !d.OK || !(d.Jobs > 0) {
		return nil
	}
	var out []float64
	if d.Jobs >= normalFrom {
		sd := math.Sqrt(math.Max(d.Dispersion, 1) * d.Jobs)
		for k := 1; ; k++ {
			t := 1 - normCDF((float64(k)-0.5-d.Jobs)/sd)
			if t < 1e-9 {
				return out
			}
			out = append(out, t)
		}
	}
	cdf := 0.0
	d.pmfIter(func(k int, p float64) bool {
		cdf += p
		if t := 1 - cdf; t >= 1e-9 {
			out = append(out, t)
			return true
		}
		return false
	})
	return out
}

// Beyond is the expected number of jobs that find no room in c cpus: the
// k-th arrival finds none when the first k ask for more than c together,
// so it is the sum over k of P(N >= k) P(S_1 + ... + S_k > c), the sizes S
// drawn from JobCPUs (exact for k = 1, normal for more; the mean size for
// all when JobCPUs is nil). tails are d.Tails() (computed once by a
// caller that asks often).
func (d Demand) Beyond(c float64, tails []float64) float64 {
	if !d.OK || !(d.Jobs > 0) || math.IsNaN(c) {
		return 0
	}
	mean, sd := d.CPUs/d.Jobs, 0.0
	if n := len(d.JobCPUs); n > 0 {
		mean = 0
		for _, x := range d.JobCPUs {
			mean += x
		}
		mean /= float64(n)
		for _, x := range d.JobCPUs {
			sd += (x - mean) * (x - mean)
		}
		sd = math.Sqrt(sd / float64(n))
	}
	out := 0.0
	for i, t := range tails {
		k := float64(i + 1)
		var p float64
		switch {
		case k == 1 && len(d.JobCPUs) > 0:
			above := 0
			for _, x := range d.JobCPUs {
				if x > c+1e-9 {
					above++
				}
			}
			p = float64(above) / float64(len(d.JobCPUs))
		case sd == 0:
			if k*mean > c+1e-9 {
				p = 1
			}
		default:
			p = 1 - normCDF((c-k*mean)/(math.Sqrt(k)*sd))
		}
		out += t * p
	}
	return out
}

func normPDF(z float64) float64 { return math.Exp(-z*z/2) / math.Sqrt(2*math.Pi) }
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normQuantile is the standard normal quantile (by bisection: exact enough,
// bounded work).
func normQuantile(q float64) float64 {
	lo, hi := -10.0, 10.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if normCDF(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}
