package forecast

// count.go checked against a second, naive implementation (the negative
// binomial / Poisson pmf from its closed form with lgamma, sums taken far
// into the tail), written from the mutants scripts/mutation.sh found
// alive (docs/testing.md, "Mutation testing").

import (
	"math"
	"testing"
	"time"
)

// naivePMF is P(N = k) for mean mu and dispersion disp (variance / mean).
func naivePMF(mu, disp float64, k int) float64 {
	kf := float64(k)
	lk, _ := math.Lgamma(kf + 1)
	if disp <= 1 {
		return math.Exp(-mu + kf*math.Log(mu) - lk)
	}
	r, q := mu/(disp-1), 1/disp
	a, _ := math.Lgamma(kf + r)
	b, _ := math.Lgamma(r)
	return math.Exp(a - b - lk + r*math.Log(q) + kf*math.Log(1-q))
}

// naiveDist is the pmf up to far beyond the mean.
func naiveDist(mu, disp float64) []float64 {
	n := int(mu + 40*math.Sqrt(math.Max(disp, 1)*mu) + 200)
	out := make([]float64, n)
	for k := range out {
		out[k] = naivePMF(mu, disp, k)
	}
	return out
}

func TestCountAgainstNaiveSums(t *testing.T) {
	for _, c := range []struct{ mu, disp float64 }{{0.3, 1}, {2.5, 1}, {12, 1}, {2.5, 1.5}, {12, 3}, {60, 2}} {
		d := Demand{OK: true, Jobs: c.mu, Dispersion: c.disp, CPUs: 4 * c.mu}
		pmf := naiveDist(c.mu, c.disp)
		// Quantile: the smallest k with P(N <= k) >= q (q clamped to [1e-9, 1-1e-9]).
		for _, q := range []float64{0.1, 0.5, 0.9, 0.99, 1} {
			qq := math.Min(q, 1-1e-9)
			cdf, want := 0.0, -1
			for k, p := range pmf {
				cdf += p
				if cdf >= qq-1e-12 {
					want = k
					break
				}
			}
			if got := d.Quantile(q); got != float64(want) {
				t.Errorf("mean %v disp %v: Quantile(%v) = %v, want %d", c.mu, c.disp, q, got, want)
			}
		}
		// Excess: E[max(0, N-m)].
		for _, m := range []float64{0, 0.5, 1, 2, 3.7, 10, 100} {
			want := 0.0
			for k, p := range pmf {
				want += math.Max(0, float64(k)-m) * p
			}
			if got := d.Excess(m); math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Errorf("mean %v disp %v: Excess(%v) = %v, want %v", c.mu, c.disp, m, got, want)
			}
		}
		// Tails: P(N >= k), k = 1, 2, ...
		tails := d.Tails()
		below := 0.0
		for k := 1; k <= len(tails); k++ {
			below += pmf[k-1]
			if want := 1 - below; math.Abs(tails[k-1]-want) > 1e-9 {
				t.Errorf("mean %v disp %v: P(N >= %d) = %v, want %v", c.mu, c.disp, k, tails[k-1], want)
			}
		}
		// Beyond with every job of the mean size (4 cpus): the k-th arrival
		// finds no room in c cpus when 4k > c, so Beyond(c) = E[(N -
		// floor(c/4))+].
		for _, cpus := range []float64{0, 3, 4, 10, 40} {
			m := math.Floor(cpus / 4)
			want := 0.0
			for k, p := range pmf {
				want += math.Max(0, float64(k)-m) * p
			}
			if got := d.Beyond(cpus, tails); math.Abs(got-want) > 1e-8*math.Max(1, want) {
				t.Errorf("mean %v disp %v: Beyond(%v) = %v, want %v", c.mu, c.disp, cpus, got, want)
			}
		}
	}
}

// TestNormalRegimeAgainstNaiveSums: from a mean of 400 the normal
// approximation is used; it stays within 5% (Excess; no continuity correction) and one job
// (Quantile) of the exact sums.
func TestNormalRegimeAgainstNaiveSums(t *testing.T) {
	for _, c := range []struct{ mu, disp float64 }{{500, 1}, {500, 2}} {
		d := Demand{OK: true, Jobs: c.mu, Dispersion: c.disp}
		pmf := naiveDist(c.mu, c.disp)
		for _, m := range []float64{450, 500, 530} {
			want := 0.0
			for k, p := range pmf {
				want += math.Max(0, float64(k)-m) * p
			}
			if got := d.Excess(m); math.Abs(got-want) > 0.05*want {
				t.Errorf("mean %v disp %v: Excess(%v) = %v, want %v within 5%%", c.mu, c.disp, m, got, want)
			}
		}
		for _, q := range []float64{0.1, 0.9} {
			cdf, want := 0.0, 0
			for k, p := range pmf {
				cdf += p
				if cdf >= q {
					want = k
					break
				}
			}
			if got := d.Quantile(q); math.Abs(got-float64(want)) > 1 {
				t.Errorf("mean %v disp %v: Quantile(%v) = %v, want %d within 1", c.mu, c.disp, q, got, want)
			}
		}
	}
}

// TestBeyondWithSizesByHand: job sizes 2, 4 and 6 cpus (mean 4,
// population sd sqrt(8/3)), 0.5 jobs (Poisson): P(N >= 1) = 1 - e^-0.5 =
// 0.393469, P(N >= 2) = 1 - 1.5 e^-0.5 = 0.090204, P(N >= 3) = 0.014388.
// In 4 cpus the first arrival finds no room when it asks 6 (1/3); the k-th
// (k >= 2) when the sum of k sizes, normal with mean 4k and sd sqrt(k 8/3),
// is above 4.
func TestBeyondWithSizesByHand(t *testing.T) {
	d := Demand{OK: true, Jobs: 0.5, Dispersion: 1, CPUs: 2, JobCPUs: []float64{2, 4, 6}}
	tails := d.Tails()
	sd := math.Sqrt(8.0 / 3)
	want := tails[0] / 3
	for k := 2; k <= len(tails); k++ {
		kf := float64(k)
		z := (4 - 4*kf) / (math.Sqrt(kf) * sd)
		want += tails[k-1] * (1 - 0.5*math.Erfc(-z/math.Sqrt2))
	}
	if math.Abs(tails[0]-0.393469) > 1e-6 || math.Abs(tails[1]-0.090204) > 1e-6 {
		t.Fatalf("tails %v", tails[:2])
	}
	if got := d.Beyond(4, tails); math.Abs(got-want) > 1e-12 {
		t.Fatalf("Beyond(4) = %v, want %v", got, want)
	}
}

// TestDispersionByHand: jobs in eight complete 15-minute buckets, 4, 0,
// 0, 0, 4, 0, 0, 0 (and one in the current bucket): mean 1 a bucket,
// sample variance (2 x 9 + 6 x 1) / 7 = 24/7, dispersion (variance /
// mean) 24/7 = 3.428571. With 8, 0, ... (one busy bucket, 1 a bucket on
// average) it is (49 + 7) / 7 = 8; with every bucket at 1 it is 1 (the
// floor: Poisson). Fewer than eight complete buckets give no estimate:
// 1.
func TestDispersionByHand(t *testing.T) {
	start := time.Date(2026, 11, 2, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		counts []int
		want   float64
	}{
		{[]int{8, 0, 0, 0, 0, 0, 0}, 1},
		{[]int{4, 0, 0, 0, 4, 0, 0, 0}, 24.0 / 7},
		{[]int{8, 0, 0, 0, 0, 0, 0, 0}, 8},
		{[]int{1, 1, 1, 1, 1, 1, 1, 1}, 1},
	} {
		now := start.Add(time.Duration(len(c.counts))*15*time.Minute + 5*time.Minute)
		var h []Job
		for b, n := range c.counts {
			for i := 0; i < n; i++ {
				h = append(h, Job{SubmittedAt: start.Add(time.Duration(b)*15*time.Minute + time.Duration(i)*time.Second), CPUs: 4, MemMB: 8192})
			}
		}
		h = append(h, Job{SubmittedAt: now.Add(-time.Minute), CPUs: 4, MemMB: 8192})
		m := Fit(h, now, Options{})
		if !m.OK || math.Abs(m.Dispersion-c.want) > 1e-9 {
			t.Errorf("counts %v: dispersion %v (ok %v %s), want %v", c.counts, m.Dispersion, m.OK, m.Reason, c.want)
		}
	}
}

// TestBucketDefault: a bucket must divide the day and be at least a
// minute; otherwise it is 15 minutes.
func TestBucketDefault(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, 15 * time.Minute}, {-time.Hour, 15 * time.Minute}, {7 * time.Minute, 15 * time.Minute},
		{30 * time.Second, 15 * time.Minute}, {59 * time.Second, 15 * time.Minute},
		{time.Minute, time.Minute}, {30 * time.Minute, 30 * time.Minute}, {24 * time.Hour, 24 * time.Hour},
	} {
		if got := (Options{Bucket: c.in}).withDefaults().Bucket; got != c.want {
			t.Errorf("bucket %v: %v, want %v", c.in, got, c.want)
		}
	}
}
