package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// beyondRef is Beyond as it was before BeyondTable (O(len(tails)) a
// call): the reference the table is checked against.
func beyondRef(d Demand, c float64, tails []float64) float64 {
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

// TestBeyondTableMatchesReference (property): on random demands (few to
// thousands of jobs, Poisson or over-dispersed, sizes unknown, all equal,
// spread, with zeros) and rooms (negative, zero, multiples of the mean
// size, up to past every job, NaN), the table answers what the reference
// does, up to the order of the float sums.
func TestBeyondTableMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for trial := 0; trial < 3000; trial++ {
		jobs := []float64{0.2, 3, 40, 399, 400, 1500, 3000}[rng.IntN(7)] * (0.5 + rng.Float64())
		d := Demand{OK: true, Jobs: jobs, Dispersion: []float64{1, 1, 1.7, 4}[rng.IntN(4)], CPUs: jobs * (0.5 + 8*rng.Float64())}
		switch rng.IntN(4) {
		case 1: // all the same size
			x := float64(1 + rng.IntN(8))
			for i := 0; i < SizeSample; i++ {
				d.JobCPUs = append(d.JobCPUs, x)
			}
		case 2, 3: // spread, sometimes with zeros
			for i := 0; i < SizeSample; i++ {
				x := float64(rng.IntN(17))
				if rng.IntN(2) == 0 {
					x = 0.5 + 16*rng.Float64()
				}
				d.JobCPUs = append(d.JobCPUs, x)
			}
			slices.Sort(d.JobCPUs)
		}
		tails := d.Tails()
		tab := d.BeyondTable(tails)
		mean := d.CPUs / d.Jobs
		if len(d.JobCPUs) > 0 {
			mean = 0
			for _, x := range d.JobCPUs {
				mean += x / float64(len(d.JobCPUs))
			}
		}
		total := mean * float64(len(tails))
		for q := 0; q < 40; q++ {
			var c float64
			switch rng.IntN(6) {
			case 0:
				c = -10 * rng.Float64()
			case 1:
				c = 0
			case 2:
				c = math.Round(rng.Float64()*float64(len(tails))) * mean
			case 3:
				c = float64(rng.IntN(int(total) + 2))
			case 4:
				c = rng.Float64() * total * 1.2
			default:
				c = []float64{math.NaN(), math.Inf(1), 1e-9, mean}[rng.IntN(4)]
			}
			want, got := beyondRef(d, c, tails), tab.At(c)
			if d.Beyond(c, tails) != got {
				t.Fatalf("Beyond and the table differ")
			}
			if !(math.Abs(got-want) <= 1e-10*math.Max(1, math.Abs(want))) {
				t.Fatalf("trial %d: %+v (%d tails) at c=%v: table %v, reference %v", trial, d, len(tails), c, got, want)
			}
		}
	}
	if (Demand{}).BeyondTable(nil).At(4) != 0 {
		t.Fatal("no forecast: nothing beyond")
	}
}

// TestNormalTailExactPastZExact: what the table sums from its suffix
// instead of one by one is exactly what the reference adds: 1 - normCDF(z)
// is 0 for z >= zExact and 1 for z <= -zExact in float64.
func TestNormalTailExactPastZExact(t *testing.T) {
	for z := zExact; z < 60; z += 1e-3 {
		if p := 1 - normCDF(z); p != 0 {
			t.Fatalf("z=%v: %v, want 0", z, p)
		}
		if p := 1 - normCDF(-z); p != 1 {
			t.Fatalf("z=%v: %v, want 1", -z, p)
		}
	}
}

// BenchmarkBeyondRef300Agents is BenchmarkBeyond300Agents with the
// reference (the cost before BeyondTable).
func BenchmarkBeyondRef300Agents(b *testing.B) {
	d := heavyDemand(b)
	tails := d.Tails()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := 0.0
		for k := 1; k <= 300; k++ {
			s += beyondRef(d, 8*float64(k), tails)
		}
		if math.IsNaN(s) {
			b.Fatal(s)
		}
	}
}

// heavyDemand is the forecast of a busy boot window: 2000 jobs of history
// submitted over the last 20 minutes, sizes 1 to 16 cpus, and the demand
// expected in the next 10 minutes (about 1000 jobs, the normal
// approximation of the count).
func heavyDemand(tb testing.TB) Demand {
	now := at(24*7, 0)
	rng := rand.New(rand.NewPCG(7, 7))
	var h []Job
	for i := 0; i < 2000; i++ {
		c := float64(1 + rng.IntN(16))
		h = append(h, Job{SubmittedAt: now.Add(-time.Duration(rng.Int64N(int64(20 * time.Minute)))), CPUs: c, MemMB: 2048 * c,
			ExecutorCPUs: 1, ExecutorMemMB: 2048, Deadline: i%3 == 0, SlackSeconds: 120, RunSeconds: 300})
	}
	m := Fit(h, now, Options{})
	d := m.Expect(now, now.Add(10*time.Minute))
	if !d.OK || d.Jobs < 100 || len(d.JobCPUs) == 0 {
		tb.Fatalf("heavy demand: %+v", d)
	}
	return d
}

// BenchmarkBeyond300Agents: the warm pool's question for 300 agents of 8
// cpus, one more at a time (what its best prefix asks): the jobs beyond
// the room of the first k agents, k = 1..300.
func BenchmarkBeyond300Agents(b *testing.B) {
	d := heavyDemand(b)
	tab := d.BeyondTable(d.Tails())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := 0.0
		for k := 1; k <= 300; k++ {
			s += tab.At(8 * float64(k))
		}
		if math.IsNaN(s) {
			b.Fatal(s)
		}
	}
}

// TestBeyondWindowIsTheUncertainArrivals (property): At sums one by one
// exactly the arrivals whose size sum is within 9 standard deviations of c
// (-zExact < z < zExact; none when the sizes are all equal), the few its
// cost depends on, for any room c >= 0 (0 included: a full agent); the
// others are 0 or their whole tail (p exactly 0 or 1,
// TestNormalTailExactPastZExact). Also at z exactly +-9: mean 2 and sd 0.5
// make the 4th arrival's z exactly 9 at c = 17 and the 9th's exactly -9 at
// c = 4.5.
func TestBeyondWindowIsTheUncertainArrivals(t *testing.T) {
	type room struct {
		d Demand
		c float64
	}
	var rooms []room
	half := Demand{OK: true, Jobs: 30, Dispersion: 1, CPUs: 60}
	for i := 0; i < SizeSample/2; i++ {
		half.JobCPUs = append(half.JobCPUs, 1.5, 2.5)
	}
	rooms = append(rooms, room{half, 17}, room{half, 4.5})
	rng := rand.New(rand.NewPCG(5, 11))
	for trial := 0; trial < 300; trial++ {
		jobs := []float64{3, 40, 400, 1500}[rng.IntN(4)] * (0.5 + rng.Float64())
		d := Demand{OK: true, Jobs: jobs, Dispersion: []float64{1, 1.7}[rng.IntN(2)], CPUs: jobs * (0.5 + 8*rng.Float64())}
		switch rng.IntN(3) {
		case 1:
			x := float64(1 + rng.IntN(8))
			for i := 0; i < SizeSample; i++ {
				d.JobCPUs = append(d.JobCPUs, x)
			}
		case 2:
			for i := 0; i < SizeSample; i++ {
				d.JobCPUs = append(d.JobCPUs, 0.5+16*rng.Float64())
			}
		}
		total := d.CPUs / d.Jobs * float64(len(d.Tails()))
		rooms = append(rooms, room{d, 0}) // a full agent: the commonest room
		for q := 0; q < 10; q++ {
			rooms = append(rooms, room{d, rng.Float64() * total})
		}
	}
	for ri, r := range rooms {
		tab := r.d.BeyondTable(r.d.Tails())
		from := 0
		if len(tab.sizes) > 0 {
			from = 1
		}
		lo, hi := tab.window(r.c, from)
		if ri < 2 { // the exact cases
			if i, z := []int{3, 8}[ri], []float64{zExact, -zExact}[ri]; tab.z(i, r.c) != z {
				t.Fatalf("c=%v: z of arrival %d is %v, want exactly %v", r.c, i, tab.z(i, r.c), z)
			}
		}
		for i := from; i < len(tab.tails); i++ {
			in := lo <= i && i < hi
			if tab.sd == 0 {
				if in || (i < lo) != (tab.p(i, r.c) == 0) {
					t.Fatalf("%+v c=%v: sizes all equal, window [%d, %d), arrival %d p=%v", r.d, r.c, lo, hi, i, tab.p(i, r.c))
				}
				continue
			}
			z := tab.z(i, r.c)
			if want := -zExact < z && z < zExact; in != want || (i < lo && !(z >= zExact)) {
				t.Fatalf("%+v c=%v: window [%d, %d), arrival %d has z=%v", r.d, r.c, lo, hi, i, z)
			}
		}
	}
}

// TestBeyondSizesOfAnInexactValue: 32 sizes of 0.1 cpu average to
// 0.10000000000000005 in float64, so their sd is rounding noise (1e-17),
// not NaN: with c = 0.25 two jobs fit and the third never does.
func TestBeyondSizesOfAnInexactValue(t *testing.T) {
	d := Demand{OK: true, Jobs: 5, Dispersion: 1, CPUs: 0.5}
	for i := 0; i < SizeSample; i++ {
		d.JobCPUs = append(d.JobCPUs, 0.1)
	}
	tails := d.Tails()
	want := 0.0
	for _, x := range tails[2:] {
		want += x
	}
	got := d.Beyond(0.25, tails)
	if !(math.Abs(got-want) <= 1e-12) || math.Abs(got-beyondRef(d, 0.25, tails)) > 1e-12 {
		t.Fatalf("Beyond(0.25) = %v, want %v (the tails from the third arrival on)", got, want)
	}
}

// TestBeyondToleranceIsInclusive: a size within 1e-9 of the room fits,
// for the first arrival (sizes known) and for the k-th (all equal sizes).
func TestBeyondToleranceIsInclusive(t *testing.T) {
	c := 1.0
	one := Demand{OK: true, Jobs: 3, Dispersion: 1, CPUs: 3, JobCPUs: []float64{c + 1e-9}}
	tails := one.Tails()
	// The first fits (1 + 1e-9 is not above 1 + 1e-9), the second does not.
	want := 0.0
	for _, x := range tails[1:] {
		want += x
	}
	if got := one.Beyond(c, tails); math.Abs(got-want) > 1e-12 || math.Abs(got-beyondRef(one, c, tails)) > 1e-12 {
		t.Fatalf("one size of c+1e-9 at c=%v: %v, want %v (the tails from the second arrival on)", c, got, want)
	}
	two := Demand{OK: true, Jobs: 4, Dispersion: 1, CPUs: 8} // mean size 2
	c = 4 - 1e-9
	if c+1e-9 != 4 {
		t.Fatalf("4 - 1e-9 + 1e-9 = %v, the case needs exactly 4", c+1e-9)
	}
	tails = two.Tails()
	want = 0.0
	for _, x := range tails[2:] {
		want += x
	}
	if got := two.Beyond(c, tails); math.Abs(got-want) > 1e-12 || math.Abs(got-beyondRef(two, c, tails)) > 1e-12 {
		t.Fatalf("size 2 at c=4-1e-9: %v, want %v (two fit)", got, want)
	}
}
