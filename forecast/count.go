package forecast

import (
	"math"
	"slices"
	"sort"
)

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
// all when JobCPUs is nil). tails are d.Tails(). A caller that asks for
// many c (one per agent) makes a BeyondTable once instead: Beyond is
// d.BeyondTable(tails).At(c).
func (d Demand) Beyond(c float64, tails []float64) float64 {
	return d.BeyondTable(tails).At(c)
}

// BeyondTable answers Beyond for one demand at any room c in O(log n)
// plus the few arrivals whose chance of finding no room is neither 0 nor
// 1 (those whose size sum is within 9 standard deviations of c: about 18
// sd/mean sqrt(c/mean) of them), instead of O(n), n the tails' length
// (which grows with the jobs expected): the warm pool asks once per agent.
type BeyondTable struct {
	ok       bool
	tails    []float64
	suffix   []float64 // suffix[i] = tails[i] + ... + tails[n-1]
	sizes    []float64 // JobCPUs ascending
	mean, sd float64
}

// zExact bounds the normal part: for |z| >= zExact, 1 - normCDF(z) is
// exactly 0 (z > 0) or 1 (z < 0) in float64 (it is from about 8.3 on), so
// those arrivals are summed from suffix without changing the answer.
const zExact = 9.0

// BeyondTable prepares Beyond's answers for d (tails are d.Tails()).
func (d Demand) BeyondTable(tails []float64) *BeyondTable {
	b := &BeyondTable{}
	if !d.OK || !(d.Jobs > 0) {
		return b
	}
	b.ok, b.tails = true, tails
	b.mean = d.CPUs / d.Jobs
	if n := len(d.JobCPUs); n > 0 {
		b.mean = 0
		for _, x := range d.JobCPUs {
			b.mean += x
		}
		b.mean /= float64(n)
		for _, x := range d.JobCPUs {
			b.sd += (x - b.mean) * (x - b.mean)
		}
		b.sd = math.Sqrt(b.sd / float64(n))
		b.sizes = slices.Clone(d.JobCPUs)
		slices.Sort(b.sizes)
	}
	b.suffix = make([]float64, len(tails)+1)
	for i := len(tails) - 1; i >= 0; i-- {
		b.suffix[i] = b.suffix[i+1] + tails[i]
	}
	return b
}

// At is Beyond(c).
func (b *BeyondTable) At(c float64) float64 {
	if !b.ok || math.IsNaN(c) || len(b.tails) == 0 {
		return 0
	}
	out, from := 0.0, 0
	if len(b.sizes) > 0 {
		// The first arrival: the share of the sizes above c.
		above := len(b.sizes) - sort.Search(len(b.sizes), func(i int) bool { return b.sizes[i] > c+1e-9 })
		out, from = b.tails[0]*(float64(above)/float64(len(b.sizes))), 1
	}
	lo, hi := b.window(c, from)
	for i := lo; i < hi; i++ {
		out += b.tails[i] * b.p(i, c)
	}
	return out + b.suffix[hi]
}

// window is the arrivals [lo, hi) At sums one by one (from is the first
// one At does not answer itself): those before lo find room for sure (p
// is exactly 0), those from hi on find none (p is exactly 1), summed from
// suffix.
func (b *BeyondTable) window(c float64, from int) (lo, hi int) {
	n := len(b.tails)
	lo, hi = from, n
	switch {
	case !(b.mean > 0) || !(c >= 0) || math.IsNaN(b.sd):
		// Not monotone in k (sizes 0 or less, no room, corrupt sizes):
		// every arrival one by one.
	case b.sd == 0:
		// The k-th finds no room iff k mean > c: from the first such k on.
		lo = from + sort.Search(n-from, func(i int) bool { return b.p(from+i, c) == 1 })
		hi = lo
	default:
		// z falls as k grows: the arrivals before lo (z >= zExact) count
		// 0, those from hi on (z <= -zExact) their whole tail.
		lo = from + sort.Search(n-from, func(i int) bool { return b.z(from+i, c) < zExact })
		hi = lo + sort.Search(n-lo, func(i int) bool { return b.z(lo+i, c) <= -zExact })
	}
	return lo, hi
}

// p is the chance that the arrivals up to the (i+1)-th ask for more than
// c together (i >= 1 when the table has sizes: the first is At's).
func (b *BeyondTable) p(i int, c float64) float64 {
	if b.sd == 0 {
		if float64(i+1)*b.mean > c+1e-9 {
			return 1
		}
		return 0
	}
	return 1 - normCDF(b.z(i, c))
}

// z is the standard score of c against the sum of i+1 sizes.
func (b *BeyondTable) z(i int, c float64) float64 {
	k := float64(i + 1)
	return (c - k*b.mean) / (math.Sqrt(k) * b.sd)
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
