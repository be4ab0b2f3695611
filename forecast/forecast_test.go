package forecast

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday

func at(h, m int) time.Time { return t0.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute) }

func approx(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.IsNaN(got) || math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v (±%v)", name, got, want, tol)
	}
}

func jobsAt(ts ...time.Time) []Job {
	var out []Job
	for _, t := range ts {
		out = append(out, Job{SubmittedAt: t, CPUs: 4, MemMB: 8192, ExecutorCPUs: 2, ExecutorMemMB: 4096, Deadline: true, SlackSeconds: 50, RunSeconds: 100})
	}
	return out
}

// TestNoForecast: an empty, short, old or corrupt history gives no
// forecast, a reason, and a zero Demand that is not OK.
func TestNoForecast(t *testing.T) {
	now := at(12, 0)
	nan := jobsAt(at(11, 0), at(11, 1), at(11, 2), at(11, 3), at(11, 4), at(11, 5))
	for i := range nan {
		nan[i].CPUs = math.NaN()
	}
	future := jobsAt(at(13, 0), at(13, 1), at(13, 2), at(11, 3), at(11, 4))
	neg := jobsAt(at(11, 0), at(11, 1), at(11, 2), at(11, 3), at(11, 4), at(11, 5))
	for i := range neg {
		neg[i].MemMB = -1
	}
	inf := jobsAt(at(11, 0), at(11, 1), at(11, 2), at(11, 3), at(11, 4), at(11, 5))
	for i := range inf {
		inf[i].RunSeconds = math.Inf(1)
	}
	for _, c := range []struct {
		name    string
		history []Job
		reason  string
	}{
		{"nil", nil, "empty history"},
		{"short", jobsAt(at(11, 0), at(11, 30)), "history too short: 2 jobs (need 5)"},
		{"zero times", []Job{{CPUs: 1}, {CPUs: 1}}, "corrupt history: 2 of 2 jobs invalid (first: no submission time)"},
		{"NaN cpus", nan, "corrupt history: 6 of 6 jobs invalid (first: cpus or memory not a non-negative number)"},
		{"negative memory", neg, "corrupt history: 6 of 6 jobs invalid"},
		{"infinite run time", inf, "corrupt history: 6 of 6 jobs invalid (first: run time"},
		{"mostly future", future, "corrupt history: 3 of 5 jobs invalid (first: submitted in the future)"},
		{"too old", jobsAt(now.Add(-9*7*24*time.Hour), now.Add(-10*7*24*time.Hour)), "no job in the last 1344h0m0s (2 older ones ignored)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := Fit(c.history, now, Options{})
			if m.OK || m.Level != LevelNone || !strings.HasPrefix(m.Reason, c.reason) {
				t.Fatalf("Fit: OK %v level %q reason %q, want not OK with %q", m.OK, m.Level, m.Reason, c.reason)
			}
			d := m.Expect(now, now.Add(time.Hour))
			if d.OK || d.Reason != m.Reason || d.Jobs != 0 || d.CPUs != 0 || d.JobsP90 != 0 || d.Excess(0) != 0 {
				t.Fatalf("Expect: %+v", d)
			}
		})
	}
	var zero Model
	if d := zero.Expect(now, now.Add(time.Hour)); d.OK || d.Reason == "" {
		t.Fatalf("zero model: %+v", d)
	}
}

// TestMeanLevelByHand: six jobs, all 30 minutes ago (span 30 min, less
// than two days: the mean level). Mean rate 6/1800 s. Recent rate with
// tau = 30 min: 6 e^-1 / (1800 (1 - e^-1)) = 6 / (1800 (e - 1)). Weights:
// exposures 1800 s (mean) and 2 tau = 3600 s (recent): the recent rate
// weighs 2/3 at now, fading with time constant 3600 s. One hour:
// 3600 mean + 2/3 (recent - mean) 3600 (1 - 1/e) = 9.8861.
func TestMeanLevelByHand(t *testing.T) {
	now := at(12, 0)
	h := jobsAt(at(11, 30), at(11, 30), at(11, 30), at(11, 30), at(11, 30), at(11, 30))
	h[0].Deadline = false
	h[1].ExecutorCPUs = 6 // the p90 executor shape of 6 jobs is the largest
	m := Fit(h, now, Options{})
	if !m.OK || m.Level != LevelMean || m.Reason != "" {
		t.Fatalf("%+v", m)
	}
	approx(t, "mean rate", m.MeanRate, 6.0/1800, 1e-12)
	approx(t, "recent rate", m.RecentRate, 6/(1800*(math.E-1)), 1e-12)
	d := m.Expect(now, now.Add(time.Hour))
	want := 12 + 2.0/3*(12/(math.E-1)-12)*(1-1/math.E)
	approx(t, "by hand", want, 9.8861, 1e-4)
	approx(t, "jobs", d.Jobs, want, 1e-9)
	approx(t, "cpus", d.CPUs, 4*want, 1e-9)
	approx(t, "mem", d.MemMB, 8192*want, 1e-6)
	approx(t, "deadline jobs", d.DeadlineJobs, want*5/6, 1e-9)
	approx(t, "cpu-seconds", d.CPUSeconds, want*400, 1e-6)
	approx(t, "exec cpus p90", d.ExecCPUs, 6, 0)
	approx(t, "exec mem p90", d.ExecMemMB, 4096, 0)
	// Fewer than 8 complete buckets: Poisson. Poisson(9.886): P(N<=5) =
	// 0.0715, P(N<=6) = 0.1375; P(N<=9) = 0.4723, P(N<=10) = 0.5973;
	// P(N<=13) = 0.8726, P(N<=14) = 0.9223.
	if d.Dispersion != 1 || d.JobsP10 != 6 || d.JobsP50 != 10 || d.JobsP90 != 14 {
		t.Fatalf("band: dispersion %v p10 %v p50 %v p90 %v", d.Dispersion, d.JobsP10, d.JobsP50, d.JobsP90)
	}
	approx(t, "tight share below 60 s", m.TightShare(time.Minute), 1, 0)
	approx(t, "tight share below 50 s", m.TightShare(50*time.Second), 0, 0)
	// The demand carries the slacks (all 50 s): the same shares.
	approx(t, "demand's tight share below 60 s", d.TightShare(time.Minute), 1, 0)
	approx(t, "demand's tight share below 50 s", d.TightShare(50*time.Second), 0, 0)
	if len(d.Slacks) != SizeSample || (Demand{}).TightShare(time.Hour) != 1 {
		t.Fatalf("slacks %v", d.Slacks)
	}
	// An empty or reversed interval forecasts nothing, OK.
	if d := m.Expect(now, now); !d.OK || d.Jobs != 0 || d.JobsP90 != 0 {
		t.Fatalf("empty interval: %+v", d)
	}
}

// TestDayLevelByHand: four jobs at 10:05 on each of three days (Mon-Wed);
// now is Thursday 09:00 (history 2 d 23 h: time of day). Slot 10:00-10:15
// was seen 3 times with 12 jobs: s = 4 per 900 s, exposure 2700 s; the
// recent rate (23 h after the last job) is nil and weighs 3600/6300 = 4/7,
// fading with time constant R = 3600 s from now: Expect(Thu 10:00, 10:15)
// = 900 s - 4/7 s R (e^-1 - e^-1.25) = 3.2560; an empty slot forecasts 0.
func TestDayLevelByHand(t *testing.T) {
	var h []Job
	for day := 0; day < 3; day++ {
		for k := 0; k < 4; k++ {
			h = append(h, jobsAt(at(24*day+10, 5))...)
		}
	}
	h = append(h, Job{SubmittedAt: at(30, 0), CPUs: math.NaN()}) // one bad entry of 13: dropped, said
	now := at(72+9, 0)
	m := Fit(h, now, Options{})
	if !m.OK || m.Level != LevelDay || m.Dropped != 1 || !strings.Contains(m.Reason, "1 invalid jobs dropped") {
		t.Fatalf("%+v", m)
	}
	s := 4.0 / 900
	slot := 900*s - 4.0/7*s*3600*(math.Exp(-1)-math.Exp(-1.25))
	approx(t, "by hand", slot, 3.2560, 1e-4)
	approx(t, "10:00-10:15", m.Expect(at(82, 0), at(82, 15)).Jobs, slot, 1e-9)
	approx(t, "10:00-10:05", m.Expect(at(82, 0), at(82, 5)).Jobs, 300*s-4.0/7*s*3600*(math.Exp(-1)-math.Exp(-13.0/12)), 1e-9)
	approx(t, "11:00-12:00", m.Expect(at(83, 0), at(84, 0)).Jobs, 0, 1e-9)
	approx(t, "09:00-11:00", m.Expect(at(81, 0), at(83, 0)).Jobs, slot, 1e-9)
	// 284 complete buckets, 3 of 4 jobs: dispersion = var/mean > 1.
	if m.Dispersion <= 1 {
		t.Fatalf("dispersion %v", m.Dispersion)
	}
}

// TestWeekLevel: three weeks in which only Mondays 09:00-10:00 see jobs
// (20 each); on a Tuesday at 08:00 the forecast of 09:00-10:00 is ~0 and
// that of next Monday's is 60 jobs in 3 observations = 20 (the recent
// rate has faded six days ahead).
func TestWeekLevel(t *testing.T) {
	var h []Job
	for w := 0; w < 3; w++ {
		for k := 0; k < 20; k++ {
			h = append(h, jobsAt(at(w*168+9, k*3))...)
		}
	}
	now := at(2*168+24+8, 0) // Tuesday of week 3, 08:00
	m := Fit(h, now, Options{})
	if !m.OK || m.Level != LevelWeek {
		t.Fatalf("%+v", m)
	}
	approx(t, "Tuesday 9-10", m.Expect(at(2*168+24+9, 0), at(2*168+24+10, 0)).Jobs, 0, 1e-6)
	approx(t, "Monday 9-10", m.Expect(at(3*168+9, 0), at(3*168+10, 0)).Jobs, 20, 1e-6)
}

// TestCountDistribution: Poisson(2) by hand: P(0) = e^-2 = 0.1353,
// P(<=1) = 0.4060, P(<=2) = 0.6767, P(<=3) = 0.8571, P(<=4) = 0.9473;
// E[(N-1)+] = 2 - 1 + P(0) = 1.1353. A dispersion widens the band;
// large means use the normal approximation.
func TestCountDistribution(t *testing.T) {
	d := Demand{OK: true, Jobs: 2, Dispersion: 1}
	if d.Quantile(0.1) != 0 || d.Quantile(0.5) != 2 || d.Quantile(0.9) != 4 {
		t.Fatalf("quantiles %v %v %v", d.Quantile(0.1), d.Quantile(0.5), d.Quantile(0.9))
	}
	approx(t, "excess 1", d.Excess(1), 1+math.Exp(-2), 1e-12)
	approx(t, "excess 0", d.Excess(0), 2, 1e-12)
	approx(t, "excess 50", d.Excess(50), 0, 1e-12)
	wide := Demand{OK: true, Jobs: 2, Dispersion: 4}
	if wide.Quantile(0.9) <= d.Quantile(0.9) || wide.Excess(3) <= d.Excess(3) {
		t.Fatalf("dispersion 4: p90 %v excess %v", wide.Quantile(0.9), wide.Excess(3))
	}
	// NB mean: sum k p(k) is the mean.
	mean := 0.0
	wide.pmfIter(func(k int, p float64) bool { mean += float64(k) * p; return true })
	approx(t, "NB mean", mean, 2, 1e-6)
	big := Demand{OK: true, Jobs: 10000, Dispersion: 1}
	approx(t, "normal p50", big.Quantile(0.5), 10000, 0)
	approx(t, "normal p90", big.Quantile(0.9), 10128, 0) // 10000 + 1.2816 x 100
	approx(t, "normal excess at mean", big.Excess(10000), 100/math.Sqrt(2*math.Pi), 1e-6)
}

// poisson is a stationary Poisson stream of rate per second over [from, to).
func poisson(rng *rand.Rand, rate float64, from, to time.Time) []Job {
	var out []Job
	for t := from; ; {
		t = t.Add(time.Duration(rng.ExpFloat64() / rate * float64(time.Second)))
		if !t.Before(to) {
			return out
		}
		out = append(out, Job{SubmittedAt: t, CPUs: 2, MemMB: 2048, RunSeconds: 60})
	}
}

// TestStationaryPoissonConverges (property): for stationary Poisson
// streams of several rates, history lengths and seeds, the forecast of the
// next day is within 4 standard errors of rate x 86400 (the rate estimate
// from n jobs has a relative error of 1/sqrt(n)), and within 12% once the
// history holds 3,000 jobs or more; the band is Poisson-wide (p90 - p10
// about 2.56 sd of the count).
func TestStationaryPoissonConverges(t *testing.T) {
	now := at(24*21+13, 17)
	for _, rate := range []float64{0.002, 0.01, 0.05} {
		for _, days := range []int{1, 3, 21} {
			for seed := uint64(1); seed <= 3; seed++ {
				rng := rand.New(rand.NewPCG(seed, uint64(days)))
				h := poisson(rng, rate, now.Add(-time.Duration(days)*24*time.Hour), now)
				m := Fit(h, now, Options{})
				d := m.Expect(now, now.Add(24*time.Hour))
				want := rate * 86400
				tol := 4 / math.Sqrt(float64(len(h)))
				if len(h) >= 3000 {
					tol = min(tol, 0.12)
				}
				if !m.OK || math.Abs(d.Jobs-want) > tol*want {
					t.Errorf("rate %v, %d days, seed %d (%s, %d jobs): %.1f jobs, want %.1f ±%.0f%%", rate, days, seed, m.Level, len(h), d.Jobs, want, 100*tol)
				}
				sd := math.Sqrt(d.Jobs)
				if w := d.JobsP90 - d.JobsP10; w < 2.56*sd-2 || w > 1.3*2.56*sd+2 || d.JobsP10 > d.Jobs || d.JobsP90 < d.Jobs {
					t.Errorf("rate %v, %d days, seed %d: band [%v, %v] around %.1f (dispersion %.2f)", rate, days, seed, d.JobsP10, d.JobsP90, d.Jobs, d.Dispersion)
				}
			}
		}
	}
}

// FuzzFit: any history, however corrupt, gives a model without a panic;
// an OK model's forecasts are finite and non-negative.
func FuzzFit(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32})
	f.Add(make([]byte, 320))
	f.Fuzz(func(t *testing.T, b []byte) {
		now := at(100, 0)
		var h []Job
		for len(b) >= 32 {
			off := int64(binary.LittleEndian.Uint64(b[0:]))
			cpus := math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
			mem := math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
			run := math.Float64frombits(binary.LittleEndian.Uint64(b[24:]))
			h = append(h, Job{SubmittedAt: now.Add(-time.Duration(off % int64(30*24*time.Hour))), CPUs: cpus, MemMB: mem, RunSeconds: run,
				ExecutorCPUs: cpus / 2, Deadline: off%2 == 0, SlackSeconds: run - 5})
			b = b[32:]
		}
		m := Fit(h, now, Options{})
		if !m.OK {
			if m.Reason == "" {
				t.Fatal("no forecast without a reason")
			}
			return
		}
		for _, span := range []time.Duration{0, time.Minute, time.Hour, 30 * 24 * time.Hour} {
			d := m.Expect(now, now.Add(span))
			xs := []float64{d.Jobs, d.CPUs, d.MemMB, d.DeadlineJobs, d.CPUSeconds, d.JobsP10, d.JobsP50, d.JobsP90, d.Excess(3),
				d.CPUsP90, d.MemMBP90, d.ExecCPUs, d.ExecMemMB}
			for _, x := range append(xs, d.JobCPUs...) {
				if !finiteNonNeg(x) {
					t.Fatalf("forecast %v over %s: %+v", x, span, d)
				}
			}
			for _, x := range d.Slacks {
				if math.IsNaN(x) || math.IsInf(x, 0) {
					t.Fatalf("slack %v: %+v", x, d)
				}
			}
		}
	})
}

func BenchmarkFit100k(b *testing.B) {
	now := at(24*28, 0)
	h := poisson(rand.New(rand.NewPCG(1, 1)), 100000.0/(28*86400), at(0, 0), now)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if m := Fit(h, now, Options{}); !m.OK {
			b.Fatal(m.Reason)
		}
	}
}

func BenchmarkExpect(b *testing.B) {
	now := at(24*28, 0)
	h := poisson(rand.New(rand.NewPCG(1, 1)), 100000.0/(28*86400), at(0, 0), now)
	m := Fit(h, now, Options{})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := m.Expect(now, now.Add(2*time.Minute))
		_ = d.Excess(2)
	}
}

// TestBeyond: with every job the same size s, the jobs beyond c cpus are
// E[(N - floor(c/s))+] (Excess). With half the jobs of 2 cpus and half of
// 8 (mean 5, sd 3) and one job expected (Poisson), 4 cpus leave out the
// first arrival half the time (P(N>=1) = 0.63212 x 0.5) and the k-th
// (k >= 2) when k sizes exceed 4 (normal: 1 - Phi((4 - 5k)/(3 sqrt k))):
// 0.31606 + 0.26424 x 0.92135 + 0.08030 x 0.98287 + ... = 0.66171.
func TestBeyond(t *testing.T) {
	d := Demand{OK: true, Jobs: 2, CPUs: 8, Dispersion: 1}
	tails := d.Tails()
	for _, c := range []float64{0, 3.9, 4, 7, 8, 12, 100} {
		approx(t, "constant sizes", d.Beyond(c, tails), d.Excess(math.Floor(c/4+1e-9)), 1e-9)
	}
	mixed := Demand{OK: true, Jobs: 1, CPUs: 5, Dispersion: 1}
	for i := 0; i < SizeSample; i++ {
		mixed.JobCPUs = append(mixed.JobCPUs, []float64{2, 8}[i%2])
	}
	approx(t, "mixed sizes", mixed.Beyond(4, mixed.Tails()), 0.66171, 1e-5)
	if (Demand{}).Beyond(4, tails) != 0 || len((Demand{}).Tails()) != 0 {
		t.Fatal("no forecast: nothing beyond")
	}
	// The model carries the quantiles of the history's sizes.
	now := at(12, 0)
	var h []Job
	for i := 0; i < 10; i++ {
		h = append(h, Job{SubmittedAt: at(11, i), CPUs: float64(2 + 6*(i%2)), MemMB: 1024})
	}
	m := Fit(h, now, Options{})
	e := m.Expect(now, now.Add(time.Minute))
	if len(e.JobCPUs) != SizeSample || e.JobCPUs[0] != 2 || e.JobCPUs[SizeSample-1] != 8 {
		t.Fatalf("%v", e.JobCPUs)
	}
}

// TestClockSkew: submissions stored by an instance whose clock runs up to
// ClockSkew ahead count (as submitted now), not as a corrupt history;
// beyond it they are dropped as submitted in the future.
func TestClockSkew(t *testing.T) {
	now := at(12, 0)
	h := jobsAt(at(11, 0), at(11, 10), at(11, 20), now.Add(10*time.Second), now.Add(20*time.Second), now.Add(30*time.Second))
	m := Fit(h, now, Options{})
	if !m.OK || m.Jobs != 6 || m.Dropped != 0 {
		t.Fatalf("three jobs up to 30 s ahead: %+v, want a forecast from all six", m)
	}
	h = jobsAt(at(11, 0), at(11, 10), at(11, 20), now.Add(ClockSkew+time.Second), now.Add(2*ClockSkew), now.Add(time.Hour))
	if m = Fit(h, now, Options{}); m.Dropped != 3 {
		t.Fatalf("three jobs beyond the skew: %+v, want them dropped", m)
	}
}
