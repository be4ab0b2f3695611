package forecast

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// Job is one past submission.
type Job struct {
	SubmittedAt time.Time
	// CPUs and MemMB the job asked for in all (driver and executors).
	CPUs, MemMB float64
	// ExecutorCPUs and ExecutorMemMB are the size of one executor (0:
	// unknown, the job's whole size is used as its shape).
	ExecutorCPUs, ExecutorMemMB float64
	// Deadline: the job carried a deadline.
	Deadline bool
	// SlackSeconds is the deadline minus submission minus run time (how
	// long the job could wait and still meet it); negative or NaN: unknown.
	SlackSeconds float64
	// RunSeconds is the run time (estimate or measured; 0: unknown).
	RunSeconds float64
}

// Options tune Fit; the zero value takes every default.
type Options struct {
	// Bucket is the width of a time-of-day slot (default 15 minutes; it
	// must divide a day).
	Bucket time.Duration
	// Recent is the time constant of the exponentially weighted recent
	// rate (default 30 minutes).
	Recent time.Duration
	// MinJobs: fewer valid jobs than this is no forecast (default 5).
	MinJobs int
	// MinSpan: rates over a shorter history are computed over this span
	// (default 10 minutes), so that two jobs a second apart do not make a
	// rate of one a second.
	MinSpan time.Duration
	// MaxAge: older jobs are ignored (default 8 weeks); it also bounds
	// Fit's work.
	MaxAge time.Duration
	// Location gives time of day and day of week (default UTC).
	Location *time.Location
}

func (o Options) withDefaults() Options {
	if o.Bucket <= 0 || (24*time.Hour)%o.Bucket != 0 || o.Bucket < time.Minute {
		o.Bucket = 15 * time.Minute
	}
	if o.Recent <= 0 {
		o.Recent = 30 * time.Minute
	}
	if o.MinJobs <= 0 {
		o.MinJobs = 5
	}
	if o.MinSpan <= 0 {
		o.MinSpan = 10 * time.Minute
	}
	if o.MaxAge <= 0 {
		o.MaxAge = 8 * 7 * 24 * time.Hour
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	return o
}

// Level names the seasonal profile a Model uses.
type Level string

const (
	// LevelWeek: by time of day and day of week (two weeks of history or more).
	LevelWeek Level = "week"
	// LevelDay: by time of day (two days or more).
	LevelDay Level = "day"
	// LevelMean: the mean rate over the history (less than two days).
	LevelMean Level = "mean"
	// LevelNone: no forecast (see Reason).
	LevelNone Level = "none"
)

// Model is a fitted forecast. The zero Model is "no forecast".
type Model struct {
	// OK: the model forecasts; otherwise Reason says why not.
	OK     bool
	Reason string
	Level  Level
	// Jobs is the number of valid jobs fitted; Dropped the invalid ones
	// (and Old those older than MaxAge, ignored).
	Jobs, Dropped, Old int
	// MeanRate and RecentRate are jobs per second over the history and
	// the exponentially weighted recent rate.
	MeanRate, RecentRate float64
	// Dispersion is the variance over the mean of the past buckets'
	// counts (>= 1; 1 is Poisson).
	Dispersion float64
	// Per job: mean cpus, memory, share with a deadline, cpu-seconds of
	// work; the p90 executor shape.
	CPUsPerJob, MemMBPerJob, DeadlineShare, CPUSecondsPerJob float64
	ExecCPUsP90, ExecMemMBP90                                float64

	now    time.Time
	span   time.Duration // of the history (at least MinSpan)
	opt    Options
	slots  []slot // LevelWeek: 7 x per day; LevelDay: per day
	slacks []float64
	sizes  []float64 // SizeSample cpus quantiles of the jobs
	// slackSample: SizeSample quantiles of slacks (nil without any).
	slackSample []float64
}

// SizeSample is how many quantiles of the jobs' cpus a Demand carries.
const SizeSample = 32

type slot struct {
	jobs float64
	obs  int // how often the slot was observed in the history
}

// noForecast is the result of a history that cannot be used.
func noForecast(reason string, jobs, dropped, old int) Model {
	return Model{Reason: reason, Level: LevelNone, Jobs: jobs, Dropped: dropped, Old: old}
}

func finiteNonNeg(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) && x >= 0 }

// ClockSkew is how far after now a submission may be and still count
// (as submitted now): in a highly available deployment the instance that
// stored it may run a little ahead of the one that fits.
const ClockSkew = time.Minute

// Bounds past which a history entry is taken for corrupt: above the
// largest job the API admits (10000 executors of 1024 cpus and 4 TiB
// with as much overhead, and a driver as large: 1e7 cpus, 8.4e10 MB), so
// no valid job is dropped, and far enough below the float range that
// every forecast (a count times a mean size) stays finite.
const (
	MaxJobCPUs    = 1e8
	MaxJobMemMB   = 1e12
	MaxRunSeconds = 10 * 365 * 24 * 3600
)

// valid reports whether a history entry can be used, and why not.
func valid(j Job, now time.Time) string {
	switch {
	case j.SubmittedAt.IsZero():
		return "no submission time"
	case j.SubmittedAt.After(now.Add(ClockSkew)):
		return "submitted in the future"
	case !finiteNonNeg(j.CPUs) || !finiteNonNeg(j.MemMB):
		return "cpus or memory not a non-negative number"
	case !finiteNonNeg(j.ExecutorCPUs) || !finiteNonNeg(j.ExecutorMemMB):
		return "executor size not a non-negative number"
	case !finiteNonNeg(j.RunSeconds):
		return "run time not a non-negative number"
	case j.CPUs > MaxJobCPUs || j.ExecutorCPUs > MaxJobCPUs:
		return fmt.Sprintf("cpus above %g", float64(MaxJobCPUs))
	case j.MemMB > MaxJobMemMB || j.ExecutorMemMB > MaxJobMemMB:
		return fmt.Sprintf("memory above %g MB", float64(MaxJobMemMB))
	case j.RunSeconds > MaxRunSeconds:
		return fmt.Sprintf("run time above %s", time.Duration(MaxRunSeconds)*time.Second)
	}
	return ""
}

// Fit learns a Model from the history as of now. It never panics; a
// history that gives no forecast yields a Model with OK false and a
// Reason. Invalid entries are dropped (counted in Dropped); when more
// than half of the recent entries are invalid, the history is
// considered corrupt and there is no forecast.
func Fit(history []Job, now time.Time, opt Options) Model {
	o := opt.withDefaults()
	if now.IsZero() {
		return noForecast("no current time", 0, 0, 0)
	}
	oldest := now.Add(-o.MaxAge)
	var (
		n, dropped, old int
		first           time.Time
		firstReason     string
		sumCPU, sumMem  float64
		sumWork         float64
		deadlines       int
		execC, execM    []float64
		cpus            []float64
		slacks          []float64
		recent          float64
	)
	tau := o.Recent.Seconds()
	for _, j := range history {
		if why := valid(j, now); why != "" {
			dropped++
			if firstReason == "" {
				firstReason = why
			}
			continue
		}
		j.SubmittedAt = notAfter(j.SubmittedAt, now)
		if j.SubmittedAt.Before(oldest) {
			old++
			continue
		}
		n++
		if first.IsZero() || j.SubmittedAt.Before(first) {
			first = j.SubmittedAt
		}
		sumCPU += j.CPUs
		cpus = append(cpus, j.CPUs)
		sumMem += j.MemMB
		sumWork += j.CPUs * j.RunSeconds
		ec, em := j.ExecutorCPUs, j.ExecutorMemMB
		if ec == 0 {
			ec = j.CPUs
		}
		if em == 0 {
			em = j.MemMB
		}
		execC, execM = append(execC, ec), append(execM, em)
		if j.Deadline {
			deadlines++
			if s := j.SlackSeconds; !math.IsNaN(s) && s >= 0 {
				slacks = append(slacks, math.Min(s, 1e12))
			} else {
				slacks = append(slacks, 0) // unknown: as tight as it gets
			}
		}
		recent += math.Exp(-now.Sub(j.SubmittedAt).Seconds() / tau)
	}
	if n == 0 && dropped == 0 {
		if old > 0 {
			return noForecast(fmt.Sprintf("no job in the last %s (%d older ones ignored)", o.MaxAge, old), 0, 0, old)
		}
		return noForecast("empty history", 0, 0, 0)
	}
	if dropped > n {
		return noForecast(fmt.Sprintf("corrupt history: %d of %d jobs invalid (first: %s)", dropped, n+dropped, firstReason), n, dropped, old)
	}
	if n < o.MinJobs {
		return noForecast(fmt.Sprintf("history too short: %d jobs (need %d)", n, o.MinJobs), n, dropped, old)
	}
	if !finiteNonNeg(sumCPU) || !finiteNonNeg(sumMem) || !finiteNonNeg(sumWork) {
		return noForecast("corrupt history: sizes overflow", n, dropped, old)
	}
	span := now.Sub(first)
	m := Model{OK: true, Jobs: n, Dropped: dropped, Old: old, now: now, opt: o, Dispersion: 1, span: max(span, o.MinSpan)}
	spanS := m.span.Seconds()
	m.MeanRate = float64(n) / spanS
	// The EW rate over a history shorter than a few time constants is
	// normalised by the weight the history could have had.
	m.RecentRate = recent / (tau * (1 - math.Exp(-spanS/tau)))
	m.CPUsPerJob, m.MemMBPerJob = sumCPU/float64(n), sumMem/float64(n)
	m.DeadlineShare = float64(deadlines) / float64(n)
	m.CPUSecondsPerJob = sumWork / float64(n)
	m.ExecCPUsP90, m.ExecMemMBP90 = quantile(execC, 0.9), quantile(execM, 0.9)
	sort.Float64s(slacks)
	m.slacks = slacks
	m.slackSample = sample(slacks)
	sort.Float64s(cpus)
	m.sizes = sample(cpus)
	if dropped > 0 {
		m.Reason = fmt.Sprintf("%d invalid jobs dropped (first: %s)", dropped, firstReason)
	}

	// The seasonal profile and the dispersion of the past buckets.
	perDay := int(24 * time.Hour / o.Bucket)
	switch {
	case span >= 14*24*time.Hour:
		m.Level, m.slots = LevelWeek, make([]slot, 7*perDay)
	case span >= 2*24*time.Hour:
		m.Level, m.slots = LevelDay, make([]slot, perDay)
	default:
		m.Level = LevelMean
	}
	b0 := m.bucketStart(first)
	nb := int(now.Sub(b0)/o.Bucket) + 1 // buckets of the history, the current (partial) one last
	counts := make([]float64, nb)
	for _, j := range history {
		if valid(j, now) != "" || j.SubmittedAt.Before(oldest) {
			continue
		}
		k := int(notAfter(j.SubmittedAt, now).Sub(b0) / o.Bucket)
		if k >= 0 && k < nb {
			counts[k]++
		}
	}
	if m.slots != nil {
		for k := 0; k < nb-1; k++ { // complete buckets only
			s := &m.slots[m.slotOf(b0.Add(time.Duration(k)*o.Bucket))]
			s.jobs += counts[k]
			s.obs++
		}
	}
	if nb-1 >= 8 {
		var mean, sq float64
		for _, c := range counts[:nb-1] {
			mean += c
		}
		mean /= float64(nb - 1)
		for _, c := range counts[:nb-1] {
			sq += (c - mean) * (c - mean)
		}
		if mean > 0 {
			m.Dispersion = math.Min(math.Max(sq/float64(nb-2)/mean, 1), 20)
		}
	}
	return m
}

// bucketStart is the start of the time-of-day bucket holding t.
func (m *Model) bucketStart(t time.Time) time.Time {
	lt := t.In(m.opt.Location)
	day := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, m.opt.Location)
	return day.Add(lt.Sub(day) / m.opt.Bucket * m.opt.Bucket)
}

// slotOf is t's seasonal slot.
func (m *Model) slotOf(t time.Time) int {
	lt := t.In(m.opt.Location)
	perDay := int(24 * time.Hour / m.opt.Bucket)
	tod := time.Duration(lt.Hour())*time.Hour + time.Duration(lt.Minute())*time.Minute + time.Duration(lt.Second())*time.Second
	k := int(tod / m.opt.Bucket)
	if m.Level == LevelWeek {
		k += int(lt.Weekday()) * perDay
	}
	return k
}

// Rate is the blended arrival rate (jobs per second) at t: the seasonal
// rate of t's slot and the recent rate, each weighted by the exposure
// behind it (inverse variance for a Poisson rate: the seasonal slot saw
// obs x Bucket seconds, or the whole span at LevelMean; the recent rate
// 2 x Recent), the recent rate's weight fading as t lies further ahead of
// now (time constant 2 x Recent): it speaks for the near future only.
func (m *Model) Rate(t time.Time) float64 {
	if !m.OK {
		return 0
	}
	seasonal, wr := m.parts(t)
	ahead := math.Max(0, t.Sub(m.now).Seconds())
	wr *= math.Exp(-ahead / (2 * m.opt.Recent.Seconds()))
	return (1-wr)*seasonal + wr*m.RecentRate
}

// parts are t's seasonal rate and the recent rate's weight before fading.
func (m *Model) parts(t time.Time) (seasonal, wr float64) {
	seasonal, exposure := m.MeanRate, m.span.Seconds()
	if m.slots != nil {
		s := m.slots[m.slotOf(t)]
		if s.obs > 0 {
			seasonal = s.jobs / float64(s.obs) / m.opt.Bucket.Seconds()
			exposure = float64(s.obs) * m.opt.Bucket.Seconds()
		}
	}
	recent := 2 * m.opt.Recent.Seconds()
	return seasonal, recent / (recent + exposure)
}

// integral is the number of jobs expected in [a, b), within one bucket:
// the integral of Rate, the fading in closed form.
func (m *Model) integral(a, b time.Time) float64 {
	seasonal, wr := m.parts(a)
	r := 2 * m.opt.Recent.Seconds()
	x, y := a.Sub(m.now).Seconds(), b.Sub(m.now).Seconds()
	fade := 0.0 // integral of exp(-max(0, s)/r) over [x, y)
	if x < 0 {
		fade += math.Min(y, 0) - x
		x = 0
	}
	if y > x {
		fade += r * (math.Exp(-x/r) - math.Exp(-y/r))
	}
	return seasonal*(y-a.Sub(m.now).Seconds()) + wr*(m.RecentRate-seasonal)*fade
}

// MaxHorizon bounds Expect's interval (longer ones are cut).
const MaxHorizon = 7 * 24 * time.Hour

// Demand is the forecast of the jobs arriving in an interval.
type Demand struct {
	// OK: a forecast; otherwise Reason says why not and every figure is 0.
	OK     bool
	Reason string
	// Expected (mean) jobs, their cpus, memory, deadline jobs and
	// cpu-seconds of work.
	Jobs, CPUs, MemMB, DeadlineJobs, CPUSeconds float64
	// The band of the job count (negative binomial quantiles).
	JobsP10, JobsP50, JobsP90 float64
	// CPUsP90 and MemMBP90 are JobsP90 jobs of the mean size.
	CPUsP90, MemMBP90 float64
	// Dispersion of the count (variance / mean, >= 1).
	Dispersion float64
	// The p90 executor shape of the jobs (what an agent must hold).
	ExecCPUs, ExecMemMB float64
	// JobCPUs are SizeSample equally spaced quantiles of the jobs' cpus
	// (nil: every job asks for CPUs/Jobs).
	JobCPUs []float64
	// Slacks are SizeSample equally spaced quantiles of the deadline jobs'
	// slack in seconds, ascending (nil: no deadline job in the history).
	Slacks []float64
}

// TightShare is the share of the deadline jobs whose slack is below wait:
// those that miss their deadline if they wait that long to start (an
// agent's boot and the queue); 1 when nothing is known of their slack.
func (d Demand) TightShare(wait time.Duration) float64 {
	if len(d.Slacks) == 0 {
		return 1
	}
	return float64(sort.SearchFloat64s(d.Slacks, wait.Seconds())) / float64(len(d.Slacks))
}

// Expect forecasts the jobs submitted in [from, to). An interval longer
// than MaxHorizon is cut to it; an empty one forecasts nothing.
func (m *Model) Expect(from, to time.Time) Demand {
	if !m.OK {
		r := m.Reason
		if r == "" {
			r = "no forecast"
		}
		return Demand{Reason: r}
	}
	d := Demand{OK: true, Reason: m.Reason, Dispersion: m.Dispersion, ExecCPUs: m.ExecCPUsP90, ExecMemMB: m.ExecMemMBP90, JobCPUs: m.sizes,
		Slacks: m.slackSample}
	if !to.After(from) {
		return d
	}
	if to.Sub(from) > MaxHorizon {
		to = from.Add(MaxHorizon)
	}
	// Piecewise over the buckets (the seasonal rate changes with the slot).
	var mu float64
	for t := from; t.Before(to); {
		next := m.bucketStart(t).Add(m.opt.Bucket)
		if next.After(to) {
			next = to
		}
		if !next.After(t) { // a zone transition: step a bucket
			next = t.Add(m.opt.Bucket)
		}
		mu += m.integral(t, next)
		t = next
	}
	d.Jobs = mu
	d.CPUs, d.MemMB = mu*m.CPUsPerJob, mu*m.MemMBPerJob
	d.DeadlineJobs, d.CPUSeconds = mu*m.DeadlineShare, mu*m.CPUSecondsPerJob
	d.JobsP10, d.JobsP50, d.JobsP90 = d.Quantile(0.1), d.Quantile(0.5), d.Quantile(0.9)
	d.CPUsP90, d.MemMBP90 = d.JobsP90*m.CPUsPerJob, d.JobsP90*m.MemMBPerJob
	return d
}

// TightShare is the share of the deadline jobs of the history whose
// slack is below wait (they miss their deadline if they wait that long
// for an agent to boot); 1 without deadline jobs... of which nothing is
// known.
func (m *Model) TightShare(wait time.Duration) float64 {
	if len(m.slacks) == 0 {
		return 1
	}
	k := sort.SearchFloat64s(m.slacks, wait.Seconds())
	return float64(k) / float64(len(m.slacks))
}

// sample is SizeSample equally spaced quantiles of sorted xs (nil when
// empty).
func sample(xs []float64) []float64 {
	if len(xs) == 0 {
		return nil
	}
	out := make([]float64, SizeSample)
	for i := range out {
		out[i] = xs[min(int((float64(i)+0.5)/SizeSample*float64(len(xs))), len(xs)-1)]
	}
	return out
}

func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	k := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(k, 0), len(xs)-1)]
}

// notAfter is t, or now when t is later (a submission within ClockSkew
// ahead counts as submitted now).
func notAfter(t, now time.Time) time.Time {
	if t.After(now) {
		return now
	}
	return t
}
